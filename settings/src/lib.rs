//! Editing hosts' settings files without losing a byte of the user's.
//!
//! * [`registration`]: amplihack's entries, made from the hook table, and how they are told apart
//!   from the user's;
//! * [`plugin_events`]: the entries for events only the user's plugins need;
//! * [`json_text`]: edits spliced into the original text, keeping the user's formatting;
//! * [`safe_file`]: locked, backed-up, atomic edits that refuse a file they cannot parse;
//! * [`claude_paths`]: where Claude Code's settings files are;
//! * [`amplifier_yaml`]: amplihack's module entry in Amplifier's `settings.yaml`, edited as text.
//!
//! The installer uses all three; the hook binary uses them to repair stale registrations at
//! session start, with exactly the same edit.

pub mod amplifier_yaml;
pub mod claude_paths;
pub mod json_text;
pub mod plugin_events;
pub mod registration;
pub mod safe_file;
