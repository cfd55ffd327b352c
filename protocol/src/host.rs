//! Which host called us: it decides how the event is read ([`crate::hosts`]) and the dialect of
//! the reply.

/// The program that ran the hook and will read its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Host {
    /// Claude Code (the default).
    ClaudeCode,
    /// Amplifier: amplihack's native module, or the `hook-shell` bridge.
    Amplifier,
    /// OpenAI's Codex CLI.
    Codex,
    /// GitHub Copilot CLI.
    Copilot,
    /// Qwen Code.
    Qwen,
    /// Factory's Droid.
    Droid,
    /// Google's Gemini CLI.
    Gemini,
    /// opencode, through amplihack's bridge plugin.
    Opencode,
    /// Mistral Vibe (`hooks.toml`, its own snake_case protocol).
    Vibe,
    /// Kimi CLI (Python, archived; Claude Code's event names in `config.toml`).
    Kimi,
    /// Pi (`@mariozechner/pi-coding-agent`), through amplihack's bridge extension.
    Pi,
    /// Cline CLI, through a script per event.
    Cline,
}

impl Host {
    /// Every host, in the order commands list them.
    pub const ALL: [Host; 12] = [
        Host::ClaudeCode,
        Host::Amplifier,
        Host::Codex,
        Host::Copilot,
        Host::Qwen,
        Host::Droid,
        Host::Gemini,
        Host::Opencode,
        Host::Vibe,
        Host::Kimi,
        Host::Pi,
        Host::Cline,
    ];

    /// Parses the value of `--host`.
    pub fn from_flag(value: &str) -> Option<Host> {
        match value {
            "claude" | "claude-code" | "claudecode" => Some(Host::ClaudeCode),
            "factory" => Some(Host::Droid),
            "mistral-vibe" => Some(Host::Vibe),
            "kimi-cli" => Some(Host::Kimi),
            _ => Host::ALL.into_iter().find(|h| h.name() == value),
        }
    }

    /// Every host's `--host` value, for a message that lists them: `claude, amplifier, ...`.
    pub fn flag_values() -> String {
        Host::ALL.map(Host::name).join(", ")
    }

    /// The fallback when no `--host` flag was given: the bridge sets `AMPLIFIER_SESSION_ID` and
    /// `AMPLIFIER_HOOKS_DIR` for every hook and Claude Code sets neither. (`CLAUDE_PROJECT_DIR` is
    /// set by both, so it cannot tell them apart.) The other hosts are never guessed: their
    /// registrations always say `--host`, and several of them set Claude Code's variables too.
    pub fn detect(var: impl Fn(&str) -> Option<String>) -> Host {
        if var(amplihack_env::AMPLIFIER_SESSION_ID).is_some()
            || var(amplihack_env::AMPLIFIER_HOOKS_DIR).is_some()
        {
            Host::Amplifier
        } else {
            Host::ClaudeCode
        }
    }

    /// The `--host` value.
    pub fn name(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude",
            Host::Amplifier => "amplifier",
            Host::Codex => "codex",
            Host::Copilot => "copilot",
            Host::Qwen => "qwen",
            Host::Droid => "droid",
            Host::Gemini => "gemini",
            Host::Opencode => "opencode",
            Host::Vibe => "vibe",
            Host::Kimi => "kimi",
            Host::Pi => "pi",
            Host::Cline => "cline",
        }
    }

    /// The host's name as people write it.
    pub fn title(self) -> &'static str {
        match self {
            Host::ClaudeCode => "Claude Code",
            Host::Amplifier => "Amplifier",
            Host::Codex => "Codex",
            Host::Copilot => "Copilot CLI",
            Host::Qwen => "Qwen Code",
            Host::Droid => "Droid",
            Host::Gemini => "Gemini CLI",
            Host::Opencode => "opencode",
            Host::Vibe => "Mistral Vibe",
            Host::Kimi => "Kimi CLI",
            Host::Pi => "Pi",
            Host::Cline => "Cline CLI",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_table() {
        let cases: &[(&[(&str, &str)], Host)] = &[
            (&[], Host::ClaudeCode),
            (
                &[(amplihack_env::CLAUDE_PROJECT_DIR, "/p")],
                Host::ClaudeCode,
            ),
            (
                &[(amplihack_env::AMPLIFIER_SESSION_ID, "s")],
                Host::Amplifier,
            ),
            (
                &[(amplihack_env::AMPLIFIER_HOOKS_DIR, "/p/.amplifier/hooks")],
                Host::Amplifier,
            ),
        ];
        for (env, want) in cases {
            let got = Host::detect(|k| {
                env.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            });
            assert_eq!(got, *want, "env {env:?}");
        }
    }

    #[test]
    fn flag_values() {
        assert_eq!(Host::from_flag("amplifier"), Some(Host::Amplifier));
        assert_eq!(Host::from_flag("claude"), Some(Host::ClaudeCode));
        assert_eq!(Host::from_flag("factory"), Some(Host::Droid));
        assert_eq!(Host::from_flag("vscode"), None);
        for host in Host::ALL {
            assert_eq!(Host::from_flag(host.name()), Some(host), "{host:?}");
        }
    }
}
