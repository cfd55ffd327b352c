//! Every integration test, in one test binary (`cargo test --test integration`; a module's name
//! filters it: `cargo test --test integration codex_e2e`). One binary links once.
//!
//! * `cli`: what `amplihack` and `amplihack-hooks` do when run as programs, no real host needed,
//!   a module per area, with whole-output snapshots of what people read.
//! * `*_e2e`: the programs users run (Claude Code and six other agent CLIs from npm, the
//!   Amplifier app and kernel, the release archives), offline against fake model servers.
//!
//! Tests run side by side; a speed test has the machine to itself ([`support::alone`]), and one
//! real Amplifier app runs at a time ([`support::amplifier_app::one_app`]).

mod support;

#[path = "bench/gate.rs"]
mod gate;

mod cli;

mod amplifier_app_e2e;
mod amplifier_kernel_e2e;
mod amplifier_module_e2e;
mod async_end_native_e2e;
mod claude_code_builtins_e2e;
mod claude_code_e2e;
mod claude_code_newer_e2e;
mod cline_e2e;
mod codex_e2e;
mod codex_model_events_e2e;
mod compare_plugins;
mod confinement_e2e;
mod copilot_e2e;
mod dialects_amplifier_e2e;
mod dialects_claude_e2e;
mod fail_closed_e2e;
mod failures_native_e2e;
mod hook_texts_e2e;
mod host_clis_smoke;
mod hosts_e2e;
mod if_conditions_native_e2e;
mod long_outputs_native_e2e;
mod managed_hosts_e2e;
mod managed_scope_e2e;
mod matchers_native_e2e;
mod opencode_e2e;
mod packages_e2e;
mod pi_e2e;
mod plugin_bin_native_e2e;
mod plugin_events_e2e;
mod plugin_events_hosts_e2e;
mod plugins_native_e2e;
mod published_plugins_e2e;
mod python_hosts_e2e;
mod qwen_droid_gemini_e2e;
mod release_e2e;
mod timeouts_native_e2e;
