//! amplihack's own text for the model reads the same in every Claude Code version: since 2.1.292
//! Claude Code escapes `<system-reminder>` tags in hook output (the model got
//! `&lt;system-reminder source=...>` as literal markup), and every version already hands hook
//! output to the model as a system reminder of its own. So the built-ins' texts carry no such
//! tag: one a project's own override file (`WORKFLOW_REMINDER.md`, written for amplihack's Python
//! predecessor) brings is taken out, its text kept. Plugins' output is theirs: passed on as
//! Claude Code would pass it.

use amplihack_protocol::Reply;

const TAG: &str = "system-reminder";

/// `text` without `<system-reminder ...>` and `</system-reminder>` tags (any case), trimmed
/// where a tag stood alone on its line.
pub fn untagged(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(found) = lower[at..].find('<').map(|i| at + i) {
        let rest = &lower[found + 1..];
        let name = rest.strip_prefix('/').unwrap_or(rest);
        let is_tag = name.starts_with(TAG)
            && name[TAG.len()..]
                .chars()
                .next()
                .is_some_and(|c| c == '>' || c.is_whitespace());
        let end = is_tag.then(|| lower[found..].find('>')).flatten();
        out.push_str(&text[at..found]);
        match end {
            Some(end) => at = found + end + 1,
            None => {
                out.push('<');
                at = found + 1;
            }
        }
    }
    out.push_str(&text[at..]);
    if out.len() == text.len() {
        return out;
    }
    let lines: Vec<&str> = out.lines().collect();
    lines.join("\n").trim().to_string()
}

/// A built-in's reply with its model-facing texts untagged.
pub fn own(mut reply: Reply) -> Reply {
    for texts in [
        &mut reply.context,
        &mut reply.plain_context,
        &mut reply.unlabelled_context,
    ] {
        for text in texts.iter_mut() {
            *text = untagged(text);
        }
    }
    if let Some(reason) = &mut reply.reason {
        *reason = untagged(reason);
    }
    reply
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_go_and_their_text_stays() {
        let cases = [
            ("plain words", "plain words"),
            (
                "<system-reminder source=\"x\">\nClassify it.\n</system-reminder>",
                "Classify it.",
            ),
            ("<SYSTEM-REMINDER>a</System-Reminder> b", "a b"),
            (
                "a < b and <system-reminders> stay",
                "a < b and <system-reminders> stay",
            ),
            ("<system-reminder unclosed", "<system-reminder unclosed"),
            ("x <b>bold</b>", "x <b>bold</b>"),
        ];
        for (text, want) in cases {
            assert_eq!(untagged(text), want, "{text}");
        }
    }

    #[test]
    fn only_model_texts_of_a_reply_change() {
        let reply = own(Reply {
            context: vec!["<system-reminder>c</system-reminder>".into()],
            reason: Some("<system-reminder>r</system-reminder>".into()),
            system_message: Some("<system-reminder>for the user</system-reminder>".into()),
            ..Reply::default()
        });
        assert_eq!(reply.context, ["c"]);
        assert_eq!(reply.reason.as_deref(), Some("r"));
        assert_eq!(
            reply.system_message.as_deref(),
            Some("<system-reminder>for the user</system-reminder>")
        );
    }
}
