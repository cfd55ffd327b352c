//! Stage 2, the plan: the handlers that match the event ([`Candidate`]s), each kind planning
//! itself through [`HandlerKind`], where each runs and where its plugin keeps its data.

use super::*;

pub(super) struct Candidate<'p> {
    pub(super) plugin: &'p Plugin,
    /// Its label: what the audit log names, and what identical handlers share.
    pub(super) command: String,
    /// The command as Claude Code names it to the model when the handler blocks.
    pub(super) shown: String,
    /// What runs: the program and its arguments.
    pub(super) argv: Vec<String>,
    pub(super) timeout: Duration,
    pub(super) priority: i64,
    /// Runs in the background (`async`, or `asyncRewake` with its message).
    pub(super) background: Option<Option<Rewake>>,
    /// What it reads and prints, and what its failure does (crate::dialects).
    pub(super) protocol: Protocol,
    pub(super) on_failure: OnFailure,
    /// Where it runs, and its `CLAUDE_PROJECT_DIR` (a project's plugin: the project root, where
    /// trust resolved what it names: crate::trust_scope::working_dir).
    pub(super) cwd: PathBuf,
    /// What it may read, write and reach: a project plugin's own code runs confined
    /// (crate::confinement); `None` runs it as the user's own.
    pub(super) confine: Option<amplihack_platform::confine::Rules>,
}

impl Candidate<'_> {
    /// `level:name`, as the audit log names plugins.
    pub(super) fn source(&self) -> String {
        format!("{}:{}", self.plugin.level.as_str(), self.plugin.name)
    }

    pub(super) fn run(
        &self,
        detached: bool,
        finished: Option<Finished>,
        reply: Reply,
        warning: Option<String>,
    ) -> Run {
        Run {
            plugin: self.plugin.name.clone(),
            level: self.plugin.level,
            command: self.command.clone(),
            priority: self.priority,
            detached,
            finished,
            reply,
            warning,
        }
    }
}

/// The handlers this event runs, in plugin order: matching group, enabled, its `if` holding for
/// the tool call, not amplihack itself, each distinct command once.
pub(super) fn candidates<'p>(
    plugins: &'p [Plugin],
    event: &HookEvent,
    state: &StateDir,
    cwd: &Path,
    (module_asks, python): (bool, Option<&str>),
    home: Option<&Path>,
    outcome: &mut Outcome,
) -> Vec<Candidate<'p>> {
    let target = event.matcher_target();
    let tool = event.tool();
    let mut candidates: Vec<Candidate<'_>> = Vec::new();
    // Each project's trusted files and their verified copies, made once per call.
    let mut exact = crate::confinement::ExactPins::default();
    for plugin in plugins {
        let config = match &plugin.config {
            Ok(config) => config,
            Err(error) => {
                outcome
                    .problems
                    .push(format!("skipped invalid hook plugin: {error}"));
                continue;
            }
        };
        let groups = config.groups.iter().filter(|g| {
            g.event == event.name.as_str()
                && matcher::matches(g.matcher.as_deref(), target.as_deref())
        });
        for handler in groups.flat_map(|g| &g.handlers) {
            if !handler.enabled {
                continue;
            }
            let applies = || {
                !runs_amplihack_hooks(&handler.command)
                    && handler.condition.as_deref().is_none_or(|rule| {
                        matcher::condition_holds(
                            rule,
                            tool.map(|t| t.name.as_str()),
                            tool.map(|t| &t.input),
                        )
                    })
            };
            let planning = Planning {
                event,
                applies: &applies,
                module_asks,
                python,
                timeout_secs: handler.timeout_secs,
                on_failure: handler.on_failure.as_str(),
            };
            let program = match handler.kind.plan(&planning) {
                Plan::Skip => continue,
                Plan::Answered(reply) => {
                    outcome.runs.push(Run {
                        plugin: plugin.name.clone(),
                        level: plugin.level,
                        command: handler.command.clone(),
                        priority: handler.priority,
                        detached: false,
                        finished: None,
                        reply: reply.clone(),
                        warning: None,
                    });
                    outcome.reply.merge(reply);
                    continue;
                }
                // What Claude Code refuses to run it reports as the hook's failure: so does
                // amplihack where it asks the model itself (Claude Code reports its own copy).
                Plan::Refused(why) => {
                    if module_asks {
                        outcome
                            .problems
                            .push(format!("hook from {} failed to run: {why}", plugin.name));
                    }
                    continue;
                }
                Plan::Ask(question) => {
                    outcome.reply.model_questions.push(question);
                    continue;
                }
                Plan::Process(program) => program,
            };
            let data = plugin_data_dir(state, plugin);
            let plugin_cwd = crate::trust_scope::working_dir(plugin).unwrap_or(cwd.to_path_buf());
            let context = Context {
                plugin_root: &plugin.root,
                plugin_data: &data,
                hooks_dir: &plugin.hooks_dir,
                project_dir: &plugin_cwd,
            };
            // A kind amplihack cannot run here (prompt, agent, mcp_tool; http under Claude Code,
            // which runs its own copy) is skipped; `hooks validate` and `hooks list` say so.
            let argv = match program {
                Some(argv) => argv,
                None => match handler.kind.program(&context) {
                    Ok(argv) => argv,
                    Err(_) => continue,
                },
            };
            let (command, shown) = handler.kind.names(&context, &handler.command);
            if candidates.iter().any(|c| c.command == command) {
                continue; // identical commands run once
            }
            let confine = (crate::confinement::applies(plugin) && handler.kind.runs_plugin_code())
                .then(|| {
                    let amplihack_state = [state.path().to_path_buf(), state.log_dir()];
                    let place = crate::confinement::Place {
                        project: &plugin_cwd,
                        plugin_data: &data,
                        home,
                        amplihack_state: &amplihack_state,
                    };
                    crate::confinement::rules(&config.needs, &place)
                });
            // Its pinned files shown as exactly the bytes trust hashed; a file whose bytes differ
            // now was changed since the check: the handler does not run (as trust refuses).
            let confine = match confine {
                Some(mut rules) => match exact.pins(state, &plugin_cwd) {
                    Ok(pins) => {
                        rules.pinned = pins;
                        Some(rules)
                    }
                    Err(file) => {
                        outcome.problems.push(format!(
                            "hook plugin {} of {} was skipped: {file} changed since it was trusted (review it, then `amplihack hooks trust`)",
                            plugin.name,
                            plugin_cwd.display()
                        ));
                        outcome
                            .skipped
                            .push(format!("project:{}: changed since trusted", plugin.name));
                        continue;
                    }
                },
                None => None,
            };
            candidates.push(Candidate {
                plugin,
                command,
                shown,
                argv,
                // Seconds, as Claude Code reads them (thousands are common); any size is safe.
                timeout: Duration::try_from_secs_f64(handler.timeout_secs).unwrap_or(Duration::MAX),
                priority: handler.priority,
                background: (handler.is_async || handler.rewake.is_some())
                    .then(|| handler.rewake.clone()),
                protocol: handler.protocol,
                on_failure: handler.on_failure,
                cwd: plugin_cwd,
                confine,
            });
        }
    }
    candidates
}

/// Where handlers run (and `CLAUDE_PROJECT_DIR` for them).
pub(super) fn handlers_dir(request: &Request<'_>, project_root: Option<PathBuf>) -> PathBuf {
    let var = request.var;
    let candidates: Vec<Option<PathBuf>> = amplihack_env::PROJECT_ROOT
        .iter()
        .map(|name| var(name).map(PathBuf::from))
        .chain([project_root, request.event.cwd.as_ref().map(PathBuf::from)])
        .collect();
    execute::working_dir(&candidates)
}

/// `CLAUDE_PLUGIN_DATA`: a plugin's own directory that outlives its updates, under amplihack's
/// state (Claude Code's is `~/.claude/plugins/data/<id>/`). A project's plugins are told apart by
/// their project.
pub(super) fn plugin_data_dir(state: &StateDir, plugin: &Plugin) -> PathBuf {
    let name = match plugin.level {
        Level::User => format!("user-{}", plugin.name),
        Level::Project => format!(
            "project-{}-{:016x}",
            plugin.name,
            fnv1a(plugin.hooks_dir.as_os_str().as_encoded_bytes())
        ),
    };
    state.dir("plugin-data").join(name)
}

/// FNV-1a, 64 bits: stable across builds (a std hasher need not be).
pub(super) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_is_the_standard_64_bit_hash() {
        // Reference values of FNV-1a 64: a project's data directory name must not change.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
