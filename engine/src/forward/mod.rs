//! Forwarding one event to the user's plugins and merging their answers.
//!
//! Which plugins: under Claude Code, the user level and the (trusted) project level. Under
//! Amplifier, whose `hook-shell` bridge already runs the project's `.amplifier/hooks/`, only what
//! the bridge does not (the user level): each plugin runs exactly once per event under either host.
//!
//! How: matching handlers are grouped by priority (lower first); one priority's handlers run in
//! parallel, the priorities in sequence. A deny ends the event; an `updatedInput` becomes the
//! `tool_input` the next priority receives. Identical commands run once. `async` handlers start
//! detached and never delay the answer. amplihack's own registration is never run from here.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use amplihack_protocol::{Decision, EventName, HookEvent, Host, Reply};
use serde_json::Value;

use amplihack_protocol::command::runs_amplihack_hooks;
use amplihack_state::{StateDir, files, plugins, session, session_key, trust};

use crate::answer;
use crate::background::{self, Background, Rewake};
use crate::dialects::{self, OnFailure, Protocol};
use crate::discovery::{self, Level, Plugin};
use crate::execute::{self, Finished, Ran, Spawn};
use crate::handlers::{Context, HandlerKind, Plan, Planning};
use crate::matcher;
use crate::plugin_index;

mod audit_records;
mod breaker;
mod context_cap;
mod environment;
mod levels;
mod persisted;
mod plan;
mod plugin_bin;
mod run;

use audit_records::*;
use environment::*;
use levels::*;
use plan::*;
use run::*;

pub use audit_records::about;
pub use breaker::{PARKED, message as parked_message};
pub use context_cap::{CONTEXT_CAP, cap_context};
pub use environment::{parse_env_file, session_exports};
pub use levels::levels;
pub use persisted::OUTPUT_THRESHOLD;

/// Kept for callers of the old path; see [`crate::handlers::command::substitute_quoted`].
pub use crate::handlers::command::substitute_quoted;

/// Kills every handler still running (the host stopped amplihack, or its deadline passed).
pub fn kill_handlers() {
    execute::kill_all_groups();
}

pub struct Request<'a> {
    pub event: &'a HookEvent,
    /// The event exactly as the host sent it.
    pub raw: &'a [u8],
    pub host: Host,
    pub var: &'a dyn Fn(&str) -> Option<String>,
    /// Time left for the whole forward.
    pub budget: Duration,
}

/// One handler the forward ran (or started, or skipped).
#[derive(Debug, Clone)]
pub struct Run {
    pub plugin: String,
    pub level: Level,
    pub command: String,
    pub priority: i64,
    pub detached: bool,
    pub finished: Option<Finished>,
    pub reply: Reply,
    pub warning: Option<String>,
}

#[derive(Debug, Default)]
pub struct Outcome {
    pub reply: Reply,
    pub runs: Vec<Run>,
    /// Problems for one stderr line each (and the failure log): invalid plugins, failed hooks.
    pub problems: Vec<String>,
    /// Plugins discovered but not run (untrusted, disabled), as "level:name: why".
    pub skipped: Vec<String>,
}

pub fn forward(request: &Request<'_>) -> Outcome {
    let started = Instant::now();
    let var = request.var;
    let mut outcome = Outcome::default();
    if var(amplihack_env::AMPLIHACK_FORWARDED).is_some() {
        return outcome;
    }
    let event = request.event;
    let Some(state) = StateDir::locate(var) else {
        return outcome;
    };
    let session = event
        .session_id
        .clone()
        .or_else(|| var(amplihack_env::AMPLIFIER_SESSION_ID));
    let background = Background {
        state: &state,
        session: session.as_deref(),
        host: request.host,
    };
    if background::delivers_on(&event.name) {
        outcome.reply.merge(background.deliver());
    }
    // Claude Code cancels the handlers still running in the background before its SessionEnd
    // handlers run.
    let ending = event.name == EventName::SessionEnd;
    let had_background = ending
        && background.cancel(
            background::CANCEL_WAIT.min(request.budget / 4),
            &mut outcome.problems,
        );
    // At SessionStart under a host that gives an env file, every plugin amplihack runs, not only
    // those handling the event: their `bin/` goes on the Bash tool's PATH (plugin_bin).
    let own_env_file = (event.name == EventName::SessionStart)
        .then(|| session::env_file(&state, session.as_deref()))
        .filter(|own| host_env_file(var, own).is_some());
    let (plugins, project_root) = discover(request, &state, own_env_file.is_some(), &mut outcome);
    if let Some(own) = &own_env_file {
        plugin_bin::put_on_path(&plugins, request, own);
    }
    let cwd = (!plugins.is_empty()).then(|| handlers_dir(request, project_root));
    let cwd = cwd.unwrap_or_default();
    // amplihack's module puts model-backed handlers to the session's provider (host_model).
    let module_asks =
        request.host == Host::Amplifier && var(amplihack_env::AMPLIHACK_VIA_MODULE).is_some();
    // Under Amplifier an `http` handler's POST is made with the app's Python (handlers::http).
    let python = (request.host == Host::Amplifier)
        .then(|| var(amplihack_env::AMPLIHACK_PYTHON).unwrap_or_else(|| "python3".into()));
    let home = var("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let mut candidates = candidates(
        &plugins,
        event,
        &state,
        &cwd,
        (module_asks, python.as_deref()),
        home.as_deref(),
        &mut outcome,
    );
    if outcome.reply.decision == Some(Decision::Deny) {
        candidates.clear(); // a rule denied the call: no process starts (dialects::proposal)
    }
    let breaker = breaker::load(var, &state, session.as_deref(), !candidates.is_empty());
    if let Some((_, known)) = &breaker {
        breaker::leave_out_parked(&mut candidates, known, &mut outcome.skipped);
    }
    if !candidates.is_empty() || !outcome.runs.is_empty() {
        let setting = Setting::new(request, &state, session.as_deref(), cwd);
        for candidate in candidates.iter().filter(|c| c.background.is_some()) {
            outcome.runs.push(start_in_background(
                candidate,
                &setting,
                &background,
                request,
            ));
        }
        run_in_order(&candidates, &setting, &background, request, &mut outcome);
        setting.finish(var);
        let call = Call {
            state: &state,
            host: request.host,
            event,
            session: session.as_deref(),
            started,
            var,
        };
        record(&call, &outcome.runs, &mut outcome.problems);
        if let Some(breaker) = &breaker {
            breaker::count(&call, breaker, &mut outcome);
        }
    }
    if ending && (had_background || !candidates.is_empty()) {
        background.end(&mut outcome.problems);
    }
    outcome
}
