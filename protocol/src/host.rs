//! Which host called us: it decides the dialect of the reply.

/// The program that ran the hook and will read its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// Claude Code (the default).
    ClaudeCode,
    /// Amplifier's `hook-shell` bridge.
    Amplifier,
}

impl Host {
    /// Parses the value of `--host`.
    pub fn from_flag(value: &str) -> Option<Host> {
        match value {
            "claude" | "claude-code" | "claudecode" => Some(Host::ClaudeCode),
            "amplifier" => Some(Host::Amplifier),
            _ => None,
        }
    }

    /// The fallback when no `--host` flag was given: the bridge sets `AMPLIFIER_SESSION_ID` and
    /// `AMPLIFIER_HOOKS_DIR` for every hook and Claude Code sets neither. (`CLAUDE_PROJECT_DIR` is
    /// set by both, so it cannot tell them apart.)
    pub fn detect(var: impl Fn(&str) -> Option<String>) -> Host {
        if var(amplihack_env::AMPLIFIER_SESSION_ID).is_some()
            || var(amplihack_env::AMPLIFIER_HOOKS_DIR).is_some()
        {
            Host::Amplifier
        } else {
            Host::ClaudeCode
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Host::ClaudeCode => "claude",
            Host::Amplifier => "amplifier",
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
        assert_eq!(Host::from_flag("vscode"), None);
    }
}
