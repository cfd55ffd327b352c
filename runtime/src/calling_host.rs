//! Which host is calling, when a host runs another host's registrations.
//!
//! Copilot CLI runs a repository's `.claude/settings.json` (and `.claude/settings.local.json`)
//! hooks as its own (1.0.102: in a trusted folder, and in prompt mode with
//! `GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true`), so amplihack registered for Claude Code in a
//! project also runs under Copilot. There it answers as Copilot's (Copilot's form and rules, such
//! as a failing hook denying the tool), and it steps aside when Copilot's own amplihack entry is
//! registered, which Copilot runs for the same event: amplihack runs once per event, never twice.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use amplihack_protocol::Host;

/// Copilot's user-scope amplihack entry, under the home directory (`amplihack install --host
/// copilot`).
pub const COPILOT_USER_ENTRY: &str = ".copilot/hooks/amplihack.json";
/// Copilot's project-scope amplihack entry, under the project.
pub const COPILOT_PROJECT_ENTRY: &str = ".github/hooks/amplihack.json";

/// The host to answer as, given the one the registration names (or detection chose); `None`:
/// step aside, another registration of amplihack answers this event. `var` reads the
/// environment, `exists` the files.
pub fn calling_host(
    named: Host,
    var: impl Fn(&str) -> Option<OsString>,
    exists: impl Fn(&Path) -> bool,
) -> Option<Host> {
    let set = |name: &str| var(name).is_some_and(|v| !v.is_empty());
    // Claude Code sets CLAUDECODE for everything it runs: a Claude Code started from a Copilot
    // tool call (which inherits COPILOT_CLI) is still Claude Code.
    if named != Host::ClaudeCode
        || !set(amplihack_env::COPILOT_CLI)
        || set(amplihack_env::CLAUDECODE)
    {
        return Some(named);
    }
    let user = var("HOME").map(|home| PathBuf::from(home).join(COPILOT_USER_ENTRY));
    let project = var(amplihack_env::COPILOT_PROJECT_DIR)
        .or_else(|| var(amplihack_env::CLAUDE_PROJECT_DIR))
        .map(|project| PathBuf::from(project).join(COPILOT_PROJECT_ENTRY));
    let copilots_own = [user, project].iter().flatten().any(|entry| exists(entry));
    (!copilots_own).then_some(Host::Copilot)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(named: Host, env: &[(&str, &str)], files: &[&str]) -> Option<Host> {
        calling_host(
            named,
            |name| {
                env.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| OsString::from(v))
            },
            |path| files.iter().any(|f| Path::new(f) == path),
        )
    }

    #[test]
    fn a_claude_code_registration_run_by_copilot_answers_as_copilot_or_steps_aside() {
        let copilot = [
            ("COPILOT_CLI", "1"),
            ("HOME", "/h"),
            ("COPILOT_PROJECT_DIR", "/p"),
        ];
        // Claude Code itself, and other hosts: unchanged.
        assert_eq!(answer(Host::ClaudeCode, &[], &[]), Some(Host::ClaudeCode));
        assert_eq!(
            answer(Host::Gemini, &copilot, &[]),
            Some(Host::Gemini),
            "only Claude Code's registrations are read by Copilot"
        );
        let nested = [("COPILOT_CLI", "1"), ("CLAUDECODE", "1"), ("HOME", "/h")];
        assert_eq!(
            answer(
                Host::ClaudeCode,
                &nested,
                &["/h/.copilot/hooks/amplihack.json"]
            ),
            Some(Host::ClaudeCode),
            "a Claude Code started from Copilot"
        );
        // Under Copilot, with no entry of Copilot's own: answers in Copilot's form.
        assert_eq!(answer(Host::ClaudeCode, &copilot, &[]), Some(Host::Copilot));
        // Copilot's own entry, user or project scope, runs for the same event: step aside.
        for own in [
            "/h/.copilot/hooks/amplihack.json",
            "/p/.github/hooks/amplihack.json",
        ] {
            assert_eq!(answer(Host::ClaudeCode, &copilot, &[own]), None, "{own}");
        }
        assert_eq!(
            answer(
                Host::Copilot,
                &copilot,
                &["/h/.copilot/hooks/amplihack.json"]
            ),
            Some(Host::Copilot),
            "Copilot's own entry always runs"
        );
    }
}
