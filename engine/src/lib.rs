//! The hook engine: runs the user's Claude-Code-compatible hooks from `.amplifier/hooks/` after
//! amplihack's built-ins, with the semantics a Claude Code plugin author expects, and merges
//! every answer into one [`amplihack_protocol::Reply`].
//!
//! * [`model`]: the plugin model every reader produces (types only, a leaf: the handler kinds are
//!   its parameter and build on it);
//! * [`discovery`]: which plugins, in which order; [`config`]: their schema (`hooks.json`);
//! * [`matcher`]: Claude Code's matcher rules;
//! * [`handlers`]: the handler kinds (shell form, exec form, prompt, agent, http, mcp_tool);
//! * [`execute`]: handlers as process groups with timeouts and output caps; [`spawn`]: starting
//!   one without waiting for it to start;
//! * [`answer`]: one handler's output read as Claude Code reads it;
//! * [`background`]: handlers that answer later (`async`, `asyncRewake`, `{"async": true}`);
//! * [`forward`]: priorities, parallelism, merging, trust, the session env file;
//! * [`confinement`]: what a project's handlers may read, write and reach (Landlock);
//! * [`stop_guard`]: no endless Stop blocks;
//! * [`host_model`]: model-backed handlers asked through the host's own model access;
//!
//! Trust, disabled plugins, the audit log and session files are [`amplihack_state`]'s.

pub mod answer;
pub mod background;
pub mod config;
pub mod confinement;
pub mod dialects;
pub mod discovery;
pub mod execute;
pub mod forward;
pub mod handlers;
pub mod host_model;
pub mod matcher;
pub mod model;
pub mod plugin_index;
pub mod stop_guard;
pub mod trust_scope;
