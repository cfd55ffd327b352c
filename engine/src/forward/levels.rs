//! Stage 1, levels and trust: which plugin levels an event reaches under each host, their
//! plugins discovered, and the untrusted project plugins the user is told about (once).

use super::*;

/// The hooks directories to consult, in order, for this host.
pub fn levels(
    request_cwd: Option<&str>,
    host: Host,
    var: &dyn Fn(&str) -> Option<String>,
) -> Vec<(Level, PathBuf)> {
    let home = var("HOME").map(PathBuf::from);
    let mut levels = Vec::new();
    if let Some(user) = home
        .as_ref()
        .map(|h| h.join(".amplifier/hooks"))
        .filter(|d| {
            d.is_dir() || discovery::amcp_file(d, Level::User).is_some() // dialects::amcp
        })
    {
        levels.push((Level::User, user));
    }
    let start = amplihack_env::project_root(var).or_else(|| request_cwd.map(str::to_string));
    let project = start.and_then(|s| discovery::project_with_hooks(Path::new(&s), home.as_deref()));
    let project_dir = project.map(|p| p.join(".amplifier/hooks"));
    if let Some(dir) =
        project_dir.filter(|dir| !levels.iter().any(|(_, d)| discovery::same_dir(d, dir)))
    {
        levels.push((Level::Project, dir));
    }
    // Under amplihack's native module the bridge is not running the project's plugins (unless it
    // is mounted too): forward both levels.
    let module_alone = var(amplihack_env::AMPLIHACK_VIA_MODULE).is_some()
        && var(amplihack_env::AMPLIHACK_BRIDGE_PRESENT).is_none();
    if host == Host::Amplifier && !module_alone {
        // The bridge runs its own directory (the project's); do not run those plugins twice.
        let bridge = var(amplihack_env::AMPLIFIER_HOOKS_DIR).map(PathBuf::from);
        levels.retain(|(level, dir)| match &bridge {
            Some(bridge) => !discovery::same_dir(dir, bridge),
            None => *level != Level::Project,
        });
    }
    levels
}

/// The plugins of every level this host leaves to amplihack, a project's only when trusted, and
/// the project's root when its plugins take part. `every_plugin`: also those that do not handle
/// the event (their handlers are matched later as always).
pub(super) fn discover(
    request: &Request<'_>,
    state: &StateDir,
    every_plugin: bool,
    outcome: &mut Outcome,
) -> (Vec<Plugin>, Option<PathBuf>) {
    let event = request.event;
    let mut plugins: Vec<Plugin> = Vec::new();
    let mut project_root: Option<PathBuf> = None;
    let chosen = levels(event.cwd.as_deref(), request.host, request.var);
    // Amplifier's bridge runs only Claude Code's hooks.json in its directory: the other dialects
    // there are amplihack's to run (Plugin::is_foreign).
    let all = match request.host {
        Host::Amplifier => levels(event.cwd.as_deref(), Host::ClaudeCode, request.var),
        _ => chosen.clone(),
    };
    for (level, dir) in all {
        let bridge_runs_it = !chosen.contains(&(level, dir.clone()));
        // Trust before work: a project never trusted is skipped before any of its files is read,
        // parsed or resolved, at the cost of its directory's names; the first call of a session
        // lists it to say how many plugins were skipped.
        if level == Level::Project && !bridge_runs_it {
            let project = crate::trust_scope::project_of(&dir);
            // Trusted before, changed since: said from the recorded stats (a file hashed only
            // when its metadata moved and not its size), then the listing's names, before any
            // file is parsed. Never trusted: said by the record alone.
            let present = || -> Vec<PathBuf> {
                discovery::listed_files(&dir)
                    .map(|l| l.files.into_iter().map(|f| f.file).collect())
                    .unwrap_or_default()
            };
            let quick = trust::unchanged(state, &project, present);
            if let Err(why @ trust::Untrusted::Changed(_)) = quick.clone() {
                let why = crate::trust_scope::NotRun::Untrusted(why);
                let session = event.session_id.as_deref();
                if first_notice(state, session, &notice_key(&project, &why)) {
                    // Listed once a session, for the notice.
                    let count = present().len();
                    let places = [dir.display().to_string()];
                    say_untrusted(&project, count, &places, &why, outcome);
                }
                outcome
                    .skipped
                    .push("project: changed since trusted".into());
                continue;
            }
            if quick == Err(trust::Untrusted::Never) {
                let session = event.session_id.as_deref();
                // A level too full to list is refused as such, as trust would refuse it.
                let why = match discovery::overfull(&dir) {
                    None => crate::trust_scope::NotRun::Untrusted(trust::Untrusted::Never),
                    Some(error) => {
                        crate::trust_scope::NotRun::Refused(crate::trust_scope::Refusal {
                            file: error.file,
                            problem: error.problem,
                            fix: error.fix,
                        })
                    }
                };
                if first_notice(state, session, &notice_key(&project, &why)) {
                    let amcp = discovery::amcp_file(&dir, level);
                    let listed = discovery::listed_files(&dir).map_or(1, |l| l.files.len());
                    let count = listed + usize::from(amcp.is_some());
                    if count > 0 {
                        let mut places = Vec::new();
                        if listed > 0 {
                            places.push(dir.display().to_string());
                        }
                        if let Some((root, _)) = amcp {
                            places.push(root.display().to_string());
                        }
                        say_untrusted(&project, count, &places, &why, outcome);
                    }
                }
                outcome.skipped.push("project: not trusted".into());
                continue;
            }
        }
        // The index says whether any plugin of the level handles this event at all: the idle
        // path costs the `stat`s that decide the level's files and one small read, not a
        // listing and a parse of every file.
        let indexed = plugin_index::may_handle(state, &dir, level, event);
        if indexed == Some(false) && !every_plugin {
            continue;
        }
        let listing = discovery::listed_files(&dir);
        let amcp = match indexed {
            None => plugin_index::amcp_probes(&dir, level),
            Some(_) => Vec::new(),
        };
        let mut found = discovery::load_listed(&dir, level, listing.clone());
        if indexed.is_none()
            && let Ok(listing) = &listing
        {
            plugin_index::store(state, &dir, level, (listing, &amcp), &found);
        }
        if bridge_runs_it && !found.iter().any(Plugin::is_foreign) {
            continue;
        }
        if level == Level::Project {
            let project = crate::trust_scope::project_of(&dir);
            let held = if found.is_empty() {
                Vec::new()
            } else {
                match crate::trust_scope::check(state, &project, &found) {
                    Ok(held) => held,
                    Err(why) => {
                        notify_untrusted(
                            state,
                            event.session_id.as_deref(),
                            (&project, &found),
                            why,
                            outcome,
                        );
                        outcome.skipped.extend(
                            found
                                .iter()
                                .map(|p| format!("project:{}: not trusted", p.name)),
                        );
                        continue;
                    }
                }
            };
            // A plugin running what trust cannot pin runs only once the user accepted it.
            if !held.is_empty() {
                let key = format!("held:{}:{}", project.display(), held.join(","));
                if first_notice(state, event.session_id.as_deref(), &key) {
                    let quoted =
                        amplihack_protocol::command::shell_quote(&project.to_string_lossy());
                    let message = format!(
                        "amplihack: hook plugin(s) {} of {} run what trust cannot pin and were skipped. Review them (`amplihack hooks trust` lists each part), then accept each by name: amplihack hooks trust --project {quoted} --accept NAME",
                        held.join(", "),
                        project.display()
                    );
                    outcome.problems.push(message.clone());
                    outcome.reply.system_message = Some(message);
                }
                outcome.skipped.extend(
                    held.iter()
                        .map(|name| format!("project:{name}: not accepted")),
                );
                found.retain(|p| !held.contains(&p.name));
            }
            project_root = Some(project);
        }
        if bridge_runs_it {
            found.retain(Plugin::is_foreign);
        }
        plugins.extend(found);
    }
    if plugins.is_empty() {
        return (plugins, project_root); // the common case: no file read for the disabled list
    }
    // AMCP: the project's hook file overrides the user's (dialects::amcp).
    let is_amcp = Plugin::is_amcp;
    if plugins
        .iter()
        .any(|p| p.level == Level::Project && is_amcp(p))
    {
        plugins.retain(|p| p.level == Level::Project || !is_amcp(p));
    }
    let disabled = plugins::disabled(state);
    plugins.retain(|plugin| {
        let enabled = plugin.config.as_ref().map_or(true, |c| c.enabled);
        if !enabled || disabled.contains(&plugin.root) {
            outcome.skipped.push(format!(
                "{}:{}: disabled",
                plugin.level.as_str(),
                plugin.name
            ));
        }
        enabled && !disabled.contains(&plugin.root)
    });
    (plugins, project_root)
}

pub(super) fn notify_untrusted(
    state: &StateDir,
    session: Option<&str>,
    (project, plugins): (&Path, &[Plugin]),
    why: crate::trust_scope::NotRun,
    outcome: &mut Outcome,
) {
    if !first_notice(state, session, &notice_key(project, &why)) {
        return;
    }
    // Where they are: `.amplifier/hooks`, `.amcp`, or both (an AMCP-only project has no
    // `.amplifier/hooks` to review).
    let mut places: Vec<String> = Vec::new();
    for plugin in plugins {
        let place = if plugin.is_amcp() {
            &plugin.root
        } else {
            &plugin.hooks_dir
        };
        let place = place.display().to_string();
        if !places.contains(&place) {
            places.push(place);
        }
    }
    say_untrusted(project, plugins.len(), &places, &why, outcome);
}

/// What one notice about a project's plugins is remembered by, once per session.
fn notice_key(project: &Path, why: &crate::trust_scope::NotRun) -> String {
    use crate::trust_scope::NotRun;
    match why {
        NotRun::Untrusted(trust::Untrusted::Never) => format!("untrusted:{}", project.display()),
        NotRun::Untrusted(trust::Untrusted::Changed(file)) => {
            format!("changed:{}:{file}", project.display())
        }
        NotRun::Refused(refusal) => format!("refused:{}:{refusal}", project.display()),
    }
}

/// Whether this session has not been told `key` yet (and now has).
fn first_notice(state: &StateDir, session: Option<&str>, key: &str) -> bool {
    session::update(state, session, |s| s.first_notice(key)).unwrap_or(true)
}

/// Tells the user (once) that `count` plugins of `project`, in `places`, were skipped, and why.
fn say_untrusted(
    project: &Path,
    count: usize,
    places: &[String],
    why: &crate::trust_scope::NotRun,
    outcome: &mut Outcome,
) {
    use crate::trust_scope::NotRun;
    let quoted = amplihack_protocol::command::shell_quote(&project.to_string_lossy());
    let message = match why {
        NotRun::Refused(refusal) => format!(
            "amplihack: the {count} hook plugin(s) in {} were skipped: trust cannot cover what they run: {refusal}",
            places.join(" and "),
        ),
        NotRun::Untrusted(why) => {
            let what = match why {
                trust::Untrusted::Never => "are not trusted".to_string(),
                trust::Untrusted::Changed(file) => {
                    format!("changed since you trusted them ({file})")
                }
            };
            format!(
                "amplihack: {count} hook plugin(s) in {} {what} and were skipped. Review them, then run: amplihack hooks trust --project {quoted}",
                places.join(" and "),
            )
        }
    };
    outcome.problems.push(message.clone());
    outcome.reply.system_message = Some(message);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A home and a project, each with `.amplifier/hooks/`, and an environment naming both.
    fn home_and_project() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let root = tempfile::tempdir().expect("tempdir");
        let home = root.path().join("home");
        let project = root.path().join("project");
        for dir in [&home, &project] {
            std::fs::create_dir_all(dir.join(".amplifier/hooks")).expect("mkdir");
        }
        (root, home, project)
    }

    fn env<'a>(pairs: &'a [(&'a str, String)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn claude_code_reaches_both_levels_amplifier_only_what_its_bridge_does_not_run() {
        let (_root, home, project) = home_and_project();
        let text = |p: &Path| p.to_string_lossy().into_owned();
        let base = vec![
            ("HOME", text(&home)),
            (amplihack_env::CLAUDE_PROJECT_DIR, text(&project)),
        ];
        let user = (Level::User, home.join(".amplifier/hooks"));
        let proj = (Level::Project, project.join(".amplifier/hooks"));
        assert_eq!(
            levels(None, Host::ClaudeCode, &env(&base)),
            vec![user.clone(), proj.clone()]
        );
        // Amplifier's bridge runs the project's plugins itself.
        assert_eq!(
            levels(None, Host::Amplifier, &env(&base)),
            vec![user.clone()]
        );
        // Under amplihack's own module, with no bridge mounted, amplihack runs both.
        let mut module = base.clone();
        module.push((amplihack_env::AMPLIHACK_VIA_MODULE, "1".into()));
        assert_eq!(
            levels(None, Host::Amplifier, &env(&module)),
            vec![user.clone(), proj]
        );
        module.push((amplihack_env::AMPLIHACK_BRIDGE_PRESENT, "1".into()));
        assert_eq!(levels(None, Host::Amplifier, &env(&module)), vec![user]);
    }

    #[test]
    fn the_project_is_found_from_the_events_cwd_when_the_environment_names_none() {
        let (_root, home, project) = home_and_project();
        let base = vec![("HOME", home.to_string_lossy().into_owned())];
        let cwd = project.join("src");
        std::fs::create_dir_all(&cwd).expect("mkdir");
        let found = levels(cwd.to_str(), Host::ClaudeCode, &env(&base));
        assert_eq!(
            found.last(),
            Some(&(Level::Project, project.join(".amplifier/hooks")))
        );
    }
}
