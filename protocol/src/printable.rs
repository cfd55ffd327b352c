//! Text that came from a repository, a plugin or a model, made safe to print to a terminal: a file
//! named `zz\r\e[1A\e[2K…` must not erase the lines above it, and a plugin's stderr must not move
//! the cursor or reverse the text around it.

use std::borrow::Cow;

/// Whether `c` would act on a terminal (or on the text's direction) instead of showing: C0
/// controls, DEL, C1 controls, and the Unicode bidirectional overrides and isolates.
fn acts(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every character that would act on a terminal written out instead: `\e`, `\r`,
/// `\n`, `\t`, `\x07`, `\u{202e}`. Text without one comes back as it is, unallocated.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\u{1b}' => out.push_str("\\e"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if acts(c) && (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if acts(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`printable`] for each line of `text`, its own line breaks kept: for a whole report whose
/// lines hold names and messages from elsewhere.
pub fn printable_lines(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c != '\n' && acts(c)) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.split('\n')
            .map(|line| printable(line).into_owned())
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whatever_acts_on_a_terminal_is_written_out() {
        for (text, shown) in [
            ("plain name.sh", "plain name.sh"),
            ("zz\r\u{1b}[1A\u{1b}[2Kok", "zz\\r\\e[1A\\e[2Kok"),
            ("bell\u{7}", "bell\\x07"),
            ("del\u{7f}", "del\\x7f"),
            ("c1\u{9b}31m", "c1\\x9b31m"),
            ("rtl\u{202e}gnp.exe", "rtl\\u{202e}gnp.exe"),
            ("iso\u{2066}x\u{2069}", "iso\\u{2066}x\\u{2069}"),
            ("tab\tand\nline", "tab\\tand\\nline"),
            ("accents é and 字 stay", "accents é and 字 stay"),
        ] {
            assert_eq!(printable(text), shown, "{text:?}");
        }
        assert!(matches!(printable("as is"), Cow::Borrowed(_)));
        assert_eq!(printable_lines("a\u{1b}[2K\nb\n"), "a\\e[2K\nb\n");
    }
}
