//! Every CLI test: what `amplihack` and `amplihack-hooks` do when run as programs (no real host
//! needed), one module per area, in the one integration-test binary (`tests/main.rs`).

mod breaker_cli;
mod builtins_cli;
mod confinement_cli;
mod dialects_cli;
mod exact_bytes_cli;
mod forwarding;
mod hooks_cli;
mod hooks_list_hosts_cli;
mod hooks_manage_cli;
mod hostile_repos;
mod hosts_cli;
mod installer_cli;
mod installer_faults;
mod inventory_cli;
mod jsonc_settings_cli;
mod log_cli;
mod otel_export_cli;
mod outputs_cli;
mod plugin_bin_cli;
mod plugin_events_cli;
mod plugin_events_hosts_cli;
mod plugin_index_cli;
mod qwen_droid_gemini_dialects_cli;
mod timeouts_cli;
mod validate_unknown_cli;
