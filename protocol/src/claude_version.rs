//! Claude Code's version: the one type, its parse, where a hook finds it, and how it compares.
//!
//! A version is `(major, minor, patch)` and compares as a tuple: `(2, 1, 143) >= (2, 1, 101)`.
//! It is read from two places, both parsed by [`parse`]:
//! * the environment Claude Code gives its hooks: `AI_AGENT=claude-code_2-1-328_harness`
//!   ([`amplihack_env::AI_AGENT`])
//!   ([`from_env`]; no process is started, so a hook can afford it);
//! * `claude --version` (`2.1.328 (Claude Code)`), which the installer and the engine's model
//!   questions run (`amplihack_engine::host_model::claude_version_of`); this crate does no I/O.

/// A Claude Code version, `(major, minor, patch)`.
pub type Version = (u32, u32, u32);

/// `2.1.328 (Claude Code)` or `claude-code_2-1-328_harness` → (2, 1, 328): the first three runs of
/// digits. `None` when there are fewer than three.
pub fn parse(text: &str) -> Option<Version> {
    let text = text.trim();
    let text = text.strip_prefix("claude-code_").unwrap_or(text);
    let mut parts = text
        .split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty())
        .map(|p| p.parse::<u32>().ok());
    Some((parts.next()??, parts.next()??, parts.next()??))
}

/// The calling Claude Code's version, from the environment it gives hooks: `AI_AGENT`
/// (`claude-code_2-1-328_harness`). `None` when it is unset, names another agent, or has no
/// version.
pub fn from_env(var: &dyn Fn(&str) -> Option<String>) -> Option<Version> {
    var(amplihack_env::AI_AGENT)
        .filter(|agent| agent.starts_with("claude-code_"))
        .as_deref()
        .and_then(parse)
}

/// `2.1.328`.
pub fn display(version: Version) -> String {
    format!("{}.{}.{}", version.0, version.1, version.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_spellings() {
        assert_eq!(parse("2.1.328 (Claude Code)"), Some((2, 1, 328)));
        assert_eq!(parse("2.0.30\n"), Some((2, 0, 30)));
        assert_eq!(parse("claude-code_2-0-30_x"), Some((2, 0, 30)));
        assert_eq!(parse("claude-code_2-1-328_harness"), Some((2, 1, 328)));
        assert_eq!(parse("nonsense"), None);
        assert_eq!(parse("2.1"), None);
    }

    #[test]
    fn reads_only_claude_codes_agent_variable() {
        let env = |value: &'static str| {
            move |name: &str| (name == amplihack_env::AI_AGENT).then(|| value.to_string())
        };
        assert_eq!(from_env(&env("claude-code_2-1-143_x")), Some((2, 1, 143)));
        assert_eq!(from_env(&env("claude-code_2-0-30")), Some((2, 0, 30)));
        assert_eq!(from_env(&env("cursor_1-2-3")), None);
        assert_eq!(from_env(&|_: &str| None), None);
    }

    #[test]
    fn compares_as_a_tuple() {
        assert!(parse("2.1.143").unwrap() >= (2, 1, 143));
        assert!(parse("2.1.142").unwrap() < (2, 1, 143));
        assert!(parse("10.0.0").unwrap() > (2, 99, 99));
        assert_eq!(display((2, 1, 328)), "2.1.328");
    }
}
