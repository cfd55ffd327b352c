//! Session start: when the running `amplihack-hooks` is not the version `amplihack install`
//! deployed (recorded in the install manifest), say so once per session, with the command that
//! fixes it. Silent when nothing was recorded (a build run in place, tests).

use amplihack_protocol::{EventName, Reply};
use amplihack_state::{manifest, session};

use super::{BuiltinError, Result};
use crate::VERSION;
use crate::pipeline::Call;

pub fn run(call: &Call<'_>) -> Result<Reply> {
    if call.event.name != EventName::SessionStart {
        return Ok(Reply::default());
    }
    let Some(state) = call.ctx.state() else {
        return Ok(Reply::default());
    };
    let Some(deployed) = manifest::load(&state)?.version else {
        return Ok(Reply::default());
    };
    if deployed == VERSION {
        return Ok(Reply::default());
    }
    let first = session::update(&state, call.event.session_id.as_deref(), |s| {
        s.first_notice("version")
    })
    .map_err(BuiltinError::from)?;
    if !first {
        return Ok(Reply::default());
    }
    Ok(Reply {
        system_message: Some(format!(
            "amplihack: this hook binary is version {VERSION}, but `amplihack install` deployed {deployed}. Run `amplihack install` (or `amplihack update`) so every registration uses one version."
        )),
        ..Reply::default()
    })
}
