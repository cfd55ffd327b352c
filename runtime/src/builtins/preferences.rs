//! The user's preferences, `USER_PREFERENCES.md`: the project's `.claude/context/` copy, else
//! `~/.amplihack/.claude/context/USER_PREFERENCES.md` (where amplihack's framework keeps it).
//!
//! Session start injects the file (capped); every prompt gets the compact form built here: each
//! `### Setting` heading with the first line under it, and each `| Setting | value |` table row,
//! as `- Setting: value` (values `(not set)` skipped), capped at [`COMPACT_MAX`] characters.
//! A file with neither form is sent as its first lines, capped the same way.

use std::path::{Path, PathBuf};

use amplihack_protocol::{EventName, Reply};

use super::{Result, cap, read_capped};
use crate::context::Context;
use crate::pipeline::Call;

pub const FILE: &str = ".claude/context/USER_PREFERENCES.md";

/// Characters of the compact form, at most: it is sent with every prompt.
pub const COMPACT_MAX: usize = 1_500;

/// The preferences file that applies to the project at `root`, if there is one.
pub fn locate(ctx: &Context, root: &Path) -> Option<PathBuf> {
    let project = root.join(FILE);
    if project.is_file() {
        return Some(project);
    }
    let user = PathBuf::from(ctx.var("HOME")?)
        .join(".amplihack")
        .join(FILE);
    user.is_file().then_some(user)
}

pub fn run(call: &Call<'_>) -> Result<Reply> {
    if call.event.name != EventName::UserPromptSubmit {
        return Ok(Reply::default());
    }
    let root = call.ctx.project_root(call.event);
    let Some(path) = locate(call.ctx, &root) else {
        return Ok(Reply::default());
    };
    // Read a little more than the compact form can hold: headings and tables compress.
    let Some(file) = read_capped(&path, COMPACT_MAX * 8)? else {
        return Ok(Reply::default());
    };
    let body = compact(&file.text);
    let body = cap(&body, COMPACT_MAX, &path).text;
    Ok(Reply::context(format!(
        "The user's preferences (from {}); apply them to this response:\n{body}",
        path.display()
    )))
}

/// `- Setting: value` lines from `### Setting` sections and `| Setting | value |` rows.
pub fn compact(text: &str) -> String {
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let line = line.trim();
        if let Some(key) = line.strip_prefix("### ") {
            let value = lines
                .by_ref()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or_default();
            if value.starts_with('#') {
                continue;
            }
            pairs.push((key.trim().to_string(), value.to_string()));
        } else if line.starts_with('|') && line.ends_with('|') {
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            if let [key, value, ..] = cells[..] {
                let header =
                    key.eq_ignore_ascii_case("setting") || key.eq_ignore_ascii_case("preference");
                let rule = key.chars().all(|c| c == '-' || c == ':');
                if !header && !rule && !key.is_empty() {
                    pairs.push((key.to_string(), value.to_string()));
                }
            }
        }
    }
    pairs.retain(|(_, v)| {
        let v = v
            .trim_matches(|c| c == '(' || c == ')' || c == '*')
            .to_ascii_lowercase();
        !v.is_empty() && v != "not set"
    });
    if pairs.is_empty() {
        return text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
    }
    pairs
        .iter()
        .map(|(k, v)| format!("- {k}: {v}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::compact;

    #[test]
    fn compact_forms() {
        let cases = [
            (
                "# Prefs\n\n### Verbosity\nterse\n\n### Communication Style\n(not set)\n\n### Preferred Languages\nRust, Python\n",
                "- Verbosity: terse\n- Preferred Languages: Rust, Python",
            ),
            (
                "| Setting | Value |\n|---|---|\n| Verbosity | balanced |\n| Tone | pirate |\n",
                "- Verbosity: balanced\n- Tone: pirate",
            ),
            (
                "Always answer in French.\n\nNever use emoji.",
                "Always answer in French.\nNever use emoji.",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(compact(text), want, "{text}");
        }
    }
}
