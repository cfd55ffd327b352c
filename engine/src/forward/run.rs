//! Stage 4, run and merge: one priority's handlers in parallel, the priorities in order, `async`
//! handlers in the background; their answers merged (a deny ends the event, an `updatedInput`
//! feeds the next priority).

use super::*;

/// Starts a background handler; it never delays the answer.
pub(super) fn start_in_background(
    candidate: &Candidate<'_>,
    setting: &Setting,
    background: &Background<'_>,
    request: &Request<'_>,
) -> Run {
    let event = request.event;
    let mut env = handler_env(&setting.env, candidate, &setting.state);
    env.extend(dialects::env(candidate.protocol, event, &candidate.cwd));
    let stdin = dialects::input(candidate.protocol, event, request.raw);
    let spawn = Spawn {
        label: &candidate.command,
        argv: &candidate.argv,
        cwd: &candidate.cwd,
        env: &env,
        stdin: &stdin, // the host's bytes (in the handler's dialect), as every handler gets them
        timeout: candidate.timeout,
        confine: candidate.confine.as_ref(),
    };
    let rewake = candidate.background.as_ref().and_then(Option::as_ref);
    let warning = background
        .start(&spawn, &event.name, &candidate.source(), rewake)
        .err()
        .map(|e| {
            format!(
                "async hook from {} could not start: {e}",
                candidate.plugin.name
            )
        });
    candidate.run(true, None, Reply::default(), warning)
}

/// Runs the other handlers: priorities in sequence (lower first), one priority's handlers in
/// parallel. A deny ends the event; an `updatedInput` is what the next priority receives.
pub(super) fn run_in_order(
    candidates: &[Candidate<'_>],
    setting: &Setting,
    background: &Background<'_>,
    request: &Request<'_>,
    outcome: &mut Outcome,
) {
    let event = request.event;
    let mut stdin: Vec<u8> = request.raw.to_vec();
    let mut priorities: Vec<i64> = candidates.iter().map(|c| c.priority).collect();
    priorities.sort_unstable();
    priorities.dedup();
    for priority in priorities {
        let batch: Vec<&Candidate<'_>> = candidates
            .iter()
            .filter(|c| c.priority == priority && c.background.is_none())
            .collect();
        let left = setting.deadline.saturating_duration_since(Instant::now());
        // (how long it ran, its reply), in plugin order.
        let mut answers: Vec<(Duration, Reply)> = Vec::new();
        for (candidate, ran) in run_batch(&batch, setting, event, &stdin, left) {
            let finished = match ran {
                Ran::Finished(finished) => finished,
                Ran::Declared(handoff) => {
                    let env = handler_env(&setting.env, candidate, &setting.state);
                    let spawn = Spawn {
                        label: &candidate.command,
                        argv: &candidate.argv,
                        cwd: &candidate.cwd,
                        env: &env,
                        stdin: &stdin,
                        timeout: candidate.timeout,
                        confine: candidate.confine.as_ref(),
                    };
                    let warning = background
                        .adopt(handoff, &spawn, &event.name, &candidate.source())
                        .err()
                        .map(|e| {
                            format!(
                                "async hook from {} could not be followed: {e}",
                                candidate.plugin.name
                            )
                        });
                    outcome
                        .runs
                        .push(candidate.run(true, None, Reply::default(), warning));
                    continue;
                }
            };
            // Another dialect's answer in Claude Code's words; its failure policy (dialects).
            let (finished, unreadable) = dialects::output(candidate.protocol, event, finished);
            // The plugin's id is read only for a block, the one answer that names it.
            let plugin_id = (finished.exit == Some(2))
                .then(|| plugin_id(candidate.plugin))
                .flatten();
            let origin = answer::Origin {
                plugin: &candidate.plugin.name,
                command: (candidate.protocol == Protocol::Claude).then_some(&*candidate.shown),
                plugin_id: plugin_id.as_deref(),
            };
            let (mut reply, warning) = answer::interpret(&event.name, &origin, &finished);
            let failed =
                unreadable.map(|why| format!("hook from {}: {why}", candidate.plugin.name));
            // A Claude Code handler fails closed as Claude Code counts failure (answer.rs).
            let mut on_failure = candidate.on_failure;
            if candidate.protocol == Protocol::Claude && on_failure == OnFailure::Block {
                on_failure = OnFailure::Warn;
                if let Some(reason) = answer::failure_block(&origin, &finished) {
                    reply = Reply::deny(reason);
                }
            }
            // A pinned file changed during the run: its answer is discarded and said so, never
            // turned into a block nor left unsaid (answer::interpret).
            let why = match finished.pinned_changed {
                Some(_) => {
                    on_failure = OnFailure::Warn;
                    warning
                }
                None => failed.or(warning),
            };
            let (mut reply, warning) =
                dialects::on_failure(on_failure, &candidate.plugin.name, reply, why);
            if let Some(warning) = &warning {
                outcome.problems.push(warning.clone());
                // Fail-open, never silent: a failure that lets the call through is shown to the
                // user as the host shows a non-blocking hook error (Claude Code: its first stderr
                // line in the session), not only in amplihack's stderr and log.
                if reply.decision != Some(Decision::Deny) {
                    reply.merge(Reply {
                        system_message: Some(warning.clone()),
                        ..Reply::default()
                    });
                }
            }
            if request.host == Host::ClaudeCode {
                persisted::keep_long_outputs(&mut reply, event, &setting.state);
            }
            if finished.truncated {
                outcome.problems.push(format!(
                    "output of hook from {} was over {} bytes; the rest was dropped",
                    candidate.plugin.name,
                    execute::OUTPUT_CAP
                ));
            }
            answers.push((finished.duration, reply.clone()));
            outcome
                .runs
                .push(candidate.run(false, Some(finished), reply, warning));
        }
        let merged_here = merge_batch(&event.name, answers);
        let denied = merged_here.decision == Some(Decision::Deny);
        if let Some(input) = &merged_here.updated_input {
            stdin = with_tool_input(&event.raw, input);
        }
        outcome.reply.merge(merged_here);
        if denied {
            break; // a deny ends the event: later priorities do not run
        }
    }
}

/// One batch's answers merged, in plugin order, as Claude Code 2.1.328 merges parallel handlers
/// (observed with --plugin-dir): contexts and messages are all kept; when several block, what the
/// model (or the user) is told depends on the event. PreToolUse and the others: the reason of the
/// handler that finished last. UserPromptSubmit: that of the first to finish (it ends the prompt).
/// Stop: every reason, in the order they finished, each its own `Stop hook feedback:` (Claude
/// Code adds that label to the first; the others carry it in the text).
pub(super) fn merge_batch(event: &EventName, mut answers: Vec<(Duration, Reply)>) -> Reply {
    let mut blockers: Vec<(Duration, Option<String>)> = answers
        .iter()
        .filter(|(_, reply)| reply.decision == Some(Decision::Deny))
        .map(|(took, reply)| (*took, reply.reason.clone()))
        .collect();
    blockers.sort_by_key(|(took, _)| *took); // stable: ties keep plugin order
    let reason = match event {
        EventName::Stop => Some(
            blockers
                .iter()
                .filter_map(|(_, reason)| reason.as_deref())
                .collect::<Vec<_>>()
                .join("\nStop hook feedback:\n"),
        )
        .filter(|joined| !joined.is_empty()),
        EventName::UserPromptSubmit => blockers.first().and_then(|(_, r)| r.clone()),
        _ => blockers.last().and_then(|(_, r)| r.clone()),
    };
    // Two handlers rewriting one call: Claude Code keeps the input of the one that finished last
    // (not the one listed last). Handlers of a batch start together, so the longest ran last.
    let last_rewrite = answers
        .iter()
        .enumerate()
        .filter(|(_, (_, reply))| reply.updated_input.is_some())
        .max_by_key(|(at, (took, _))| (*took, *at))
        .and_then(|(_, (_, reply))| reply.updated_input.clone());
    let mut merged = Reply::default();
    for (_, reply) in answers.drain(..) {
        merged.merge(reply);
    }
    if last_rewrite.is_some() {
        merged.updated_input = last_rewrite;
    }
    if !blockers.is_empty() && merged.decision == Some(Decision::Deny) {
        merged.reason = reason;
    }
    merged
}

/// One priority's handlers, in parallel, each bounded by its timeout and the time left.
pub(super) fn run_batch<'c, 'p>(
    batch: &[&'c Candidate<'p>],
    setting: &Setting,
    event: &HookEvent,
    stdin: &[u8],
    left: Duration,
) -> Vec<(&'c Candidate<'p>, Ran)> {
    let envs: Vec<Vec<(String, String)>> = batch
        .iter()
        .map(|candidate| {
            let mut env = handler_env(&setting.env, candidate, &setting.state);
            env.extend(dialects::env(candidate.protocol, event, &candidate.cwd));
            env
        })
        .collect();
    // Each handler's stdin in its dialect (the host's bytes for Claude Code's).
    let inputs: Vec<Vec<u8>> = batch
        .iter()
        .map(|candidate| match candidate.protocol {
            Protocol::Claude => Vec::new(),
            protocol => dialects::input(protocol, event, stdin),
        })
        .collect();
    let spawns: Vec<Spawn<'_>> = batch
        .iter()
        .zip(&envs)
        .zip(&inputs)
        .map(|((candidate, env), input)| Spawn {
            label: &candidate.command,
            argv: &candidate.argv,
            cwd: &candidate.cwd,
            env,
            stdin: match candidate.protocol {
                Protocol::Claude => stdin,
                _ => input,
            },
            timeout: candidate.timeout.min(left),
            confine: candidate.confine.as_ref(),
        })
        .collect();
    batch
        .iter()
        .copied()
        .zip(execute::run_all(&spawns, true))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deny(reason: &str) -> Reply {
        Reply {
            decision: Some(Decision::Deny),
            reason: Some(reason.into()),
            ..Reply::default()
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_deny_wins_and_its_reason_is_chosen_as_claude_code_would() {
        let answers = || {
            vec![
                (ms(30), deny("slow")),
                (ms(10), deny("fast")),
                (ms(5), Reply::default()),
            ]
        };
        // The last blocker to finish, by default; the first under UserPromptSubmit.
        let merged = merge_batch(&EventName::PreToolUse, answers());
        assert_eq!(merged.decision, Some(Decision::Deny));
        assert_eq!(merged.reason.as_deref(), Some("slow"));
        let merged = merge_batch(&EventName::UserPromptSubmit, answers());
        assert_eq!(merged.reason.as_deref(), Some("fast"));
        // Stop joins every blocker's reason, in the order they finished.
        let merged = merge_batch(&EventName::Stop, answers());
        assert_eq!(
            merged.reason.as_deref(),
            Some("fast\nStop hook feedback:\nslow")
        );
    }

    #[test]
    fn answers_without_a_deny_merge_their_context() {
        let with = |c: &str| Reply {
            context: vec![c.into()],
            ..Reply::default()
        };
        let merged = merge_batch(
            &EventName::PreToolUse,
            vec![(ms(1), with("a")), (ms(2), with("b"))],
        );
        assert_eq!(merged.decision, None);
        assert_eq!(merged.context, vec!["a".to_string(), "b".to_string()]);
    }

    #[test]
    fn the_rewrite_of_the_handler_that_finished_last_wins() {
        let rewrite = |command: &str| Reply {
            updated_input: Some(serde_json::json!({"command": command})),
            ..Reply::default()
        };
        for (answers, want) in [
            (
                vec![(ms(40), rewrite("slow")), (ms(5), rewrite("fast"))],
                "slow",
            ),
            (
                vec![(ms(5), rewrite("fast")), (ms(40), rewrite("slow"))],
                "slow",
            ),
            (
                vec![
                    (ms(5), rewrite("a")),
                    (ms(50), Reply::default()),
                    (ms(9), rewrite("b")),
                ],
                "b",
            ),
        ] {
            let merged = merge_batch(&EventName::PreToolUse, answers);
            assert_eq!(
                merged.updated_input,
                Some(serde_json::json!({"command": want}))
            );
        }
    }
}
