//! The one pipeline every event goes through, whoever calls: the `amplihack-hooks` binary and
//! `amplihack hooks test` both call [`run`], then [`render`].
//!
//! 1. the row's built-ins, in table order (each sees the reply so far; one that fails is reported
//!    and skipped, the others still answer);
//! 2. unless a built-in denied, the user's plugins ([`amplihack_engine::forward`]), with the
//!    stop-loop guard applied to what the plugins answered;
//! 3. the merge, and the context cap across everything.

use std::time::{Duration, Instant};

use amplihack_engine::{forward, stop_guard};
use amplihack_protocol::{
    Builtin, Decision, Hook, HookEvent, Host, Rendered, Reply, amplifier, claude,
};

use crate::builtins;
use crate::context::Context;

/// Time kept back from the deadline for merging and replying after the user's hooks.
const REPLY_MARGIN: Duration = Duration::from_millis(300);

pub struct Call<'a> {
    pub hook: &'static Hook,
    pub event: &'a HookEvent,
    /// The event exactly as the host sent it (handed to plugins byte for byte).
    pub raw: &'a [u8],
    pub ctx: &'a Context,
    pub deadline: Instant,
}

impl Call<'_> {
    /// Time left before the deadline, less the margin for replying.
    pub fn time_left(&self) -> Duration {
        self.deadline
            .saturating_duration_since(Instant::now())
            .saturating_sub(REPLY_MARGIN)
    }
}

#[derive(Debug, Default)]
pub struct Outcome {
    pub reply: Reply,
    /// What forwarding ran (none when the row does not forward or a built-in denied).
    pub forwarded: Option<forward::Outcome>,
    /// One line each for stderr and the failure log: failed built-ins, broken plugins.
    pub problems: Vec<String>,
}

/// Whether `AMPLIHACK_DISABLE` (comma-separated built-in names, or `all`) turns `builtin` off.
pub fn disabled(builtin: Builtin, setting: Option<&str>) -> bool {
    setting.is_some_and(|list| {
        list.split(',')
            .map(str::trim)
            .any(|name| name == "all" || name == builtin.name())
    })
}

pub fn run(call: &Call<'_>) -> Outcome {
    let mut outcome = Outcome::default();
    let switched_off = call.ctx.var(amplihack_env::AMPLIHACK_DISABLE);
    for builtin in call.hook.builtins_for(&call.event.name, call.ctx.host) {
        if disabled(builtin, switched_off.as_deref()) {
            continue;
        }
        match builtins::run(builtin, call, &outcome.reply) {
            Ok(reply) => outcome.reply.merge(crate::model_text::own(reply)),
            Err(e) => outcome
                .problems
                .push(format!("built-in {} failed, skipped: {e}", builtin.name())),
        }
    }
    let state = call.ctx.state();
    if call.hook.forwards && outcome.reply.decision != Some(Decision::Deny) {
        let var = |name: &str| call.ctx.var(name);
        let mut forwarded = forward::forward(&forward::Request {
            event: call.event,
            raw: call.raw,
            host: call.ctx.host,
            var: &var,
            budget: call.time_left(),
        });
        if let Some(state) = &state {
            let var = |name: &str| call.ctx.var(name);
            let cap = stop_guard::cap(call.ctx.host, &var);
            stop_guard::apply(&mut forwarded.reply, call.event, state, cap);
        }
        outcome.problems.extend(forwarded.problems.iter().cloned());
        outcome.reply.merge(forwarded.reply.clone());
        outcome.forwarded = Some(forwarded);
    }
    forward::cap_context(
        &mut outcome.reply,
        state.as_ref(),
        call.event.session_id.as_deref(),
    );
    outcome
}

/// The reply in the dialect of the host that called.
pub fn render(host: Host, event: &HookEvent, reply: &Reply) -> Rendered {
    match host {
        Host::ClaudeCode => claude::render_labelled(&event.name, &claude::Labels::of(event), reply),
        Host::Amplifier => amplifier::render(&event.name, reply),
    }
}
