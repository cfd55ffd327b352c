//! Editing JSON text while keeping the user's formatting.
//!
//! [`splice`] turns the original text of a document and its new value into new text that keeps
//! every byte of the original outside what changed: unchanged members keep their spacing, their
//! key order and their place; an object whose members were only removed or appended keeps its
//! other members' text and separators; only a value that changed shape is re-serialised, indented
//! like the surrounding file (its detected unit, two spaces by default).
//!
//! The scanner here assumes text that `serde_json` has already accepted: it locates spans, it does
//! not validate.
//!
//! **JSONC** (Qwen Code's and Gemini CLI's `settings.json`, read by their hosts with `//` and
//! `/* */` comments and trailing commas allowed): [`blank_jsonc`] overwrites every comment and
//! trailing comma with spaces (newlines kept), so the text keeps its length and every byte its
//! offset. `serde_json` parses the blanked text, the scanner finds spans in it, and the splice
//! copies the user's bytes, comments included, from the original. The splice is surgical rather
//! than a re-join: kept members and items keep the text around them (the gaps, where comments
//! live), a removed one takes the gap before it (the one an insertion made) and a new one is put
//! at the end of an object or the start of an array with a separator in the file's style (without
//! copying a comment). So install then uninstall gives back every byte.
//!
//! Why this rather than a JSONC editor crate (`jsonc-parser` with its CST): the splicer already
//! owns the loss-free contract for every host (byte order mark, CRLF, indentation, key order,
//! duplicate keys refused) and its tests; comments are, for it, one more kind of whitespace once
//! blanked. A second editor would mean two writers with two notions of "the user's bytes", and a
//! dependency on the hot install path for a few dozen lines.

use serde_json::{Map, Value};

/// Where a value sits in the text, with the spans of its members or elements.
#[derive(Debug)]
struct Node {
    start: usize,
    end: usize,
    kind: NodeKind,
}

#[derive(Debug)]
enum NodeKind {
    /// (key, start of the key's opening quote, value node)
    Object(Vec<(String, usize, Node)>),
    Array(Vec<Node>),
    Scalar,
}

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Scanner<'_> {
    fn skip_ws(&mut self) {
        while self
            .bytes
            .get(self.pos)
            .is_some_and(|b| b.is_ascii_whitespace())
        {
            self.pos += 1;
        }
    }

    fn value(&mut self) -> Node {
        self.skip_ws();
        let start = self.pos;
        match self.bytes.get(self.pos) {
            Some(b'{') => {
                self.pos += 1;
                let mut members = Vec::new();
                loop {
                    self.skip_ws();
                    match self.bytes.get(self.pos) {
                        Some(b'}') | None => {
                            self.pos += 1;
                            break;
                        }
                        Some(b',') => self.pos += 1,
                        _ => {
                            let key_start = self.pos;
                            let key_end = self.string_end();
                            let key: String =
                                serde_json::from_slice(&self.bytes[key_start..key_end])
                                    .unwrap_or_default();
                            self.pos = key_end;
                            self.skip_ws();
                            self.pos += 1; // ':'
                            let value = self.value();
                            members.push((key, key_start, value));
                        }
                    }
                }
                Node {
                    start,
                    end: self.pos,
                    kind: NodeKind::Object(members),
                }
            }
            Some(b'[') => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_ws();
                    match self.bytes.get(self.pos) {
                        Some(b']') | None => {
                            self.pos += 1;
                            break;
                        }
                        Some(b',') => self.pos += 1,
                        _ => items.push(self.value()),
                    }
                }
                Node {
                    start,
                    end: self.pos,
                    kind: NodeKind::Array(items),
                }
            }
            Some(b'"') => {
                self.pos = self.string_end();
                Node {
                    start,
                    end: self.pos,
                    kind: NodeKind::Scalar,
                }
            }
            _ => {
                while self
                    .bytes
                    .get(self.pos)
                    .is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
                {
                    self.pos += 1;
                }
                Node {
                    start,
                    end: self.pos,
                    kind: NodeKind::Scalar,
                }
            }
        }
    }

    /// From an opening quote, the index just past the closing quote.
    fn string_end(&self) -> usize {
        let mut i = self.pos + 1;
        while let Some(&b) = self.bytes.get(i) {
            match b {
                b'\\' => i += 2,
                b'"' => return i + 1,
                _ => i += 1,
            }
        }
        i
    }
}

/// `text` with every comment (`// ...` to the end of the line, `/* ... */`) and every trailing
/// comma (one followed by `}` or `]`) overwritten by spaces, newlines kept: the same length, every
/// other byte at its offset. Strict JSON comes back unchanged. An unterminated comment is blanked
/// to the end (the parser then names what is missing).
pub fn blank_jsonc(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    // The last comma outside strings, not yet followed by anything but blanks.
    let mut pending_comma: Option<usize> = None;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                pending_comma = None;
                i += 1;
                while i < bytes.len() {
                    match bytes[i] {
                        b'\\' => i += 2,
                        b'"' => {
                            i += 1;
                            break;
                        }
                        _ => i += 1,
                    }
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |e| i + 2 + e + 2);
                for b in &mut out[i..end] {
                    if *b != b'\n' {
                        *b = b' ';
                    }
                }
                i = end;
            }
            b',' => {
                pending_comma = Some(i);
                i += 1;
            }
            b'}' | b']' => {
                if let Some(comma) = pending_comma.take() {
                    out[comma] = b' ';
                }
                i += 1;
            }
            b if b.is_ascii_whitespace() => i += 1,
            _ => {
                pending_comma = None;
                i += 1;
            }
        }
    }
    // Only ASCII bytes were overwritten, each whole comment or comma with spaces: still UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// The indentation unit the file uses: the leading whitespace of its first indented line.
pub fn detect_indent(text: &str) -> String {
    text.lines()
        .skip(1)
        .map(|line| &line[..line.len() - line.trim_start().len()])
        .find(|ws| !ws.is_empty())
        .unwrap_or("  ")
        .to_string()
}

/// The leading whitespace of the line that holds byte `pos`.
fn line_indent(text: &str, pos: usize) -> &str {
    let line_start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// Serialises `value` pretty-printed with `unit`, every line after the first prefixed with `base`
/// (the indentation of the line it starts on).
pub fn pretty_at(value: &Value, unit: &str, base: &str) -> String {
    let text = pretty(value, unit);
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                l.to_string()
            } else {
                format!("{base}{l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Serialises `value` pretty-printed with `unit` as the indentation step.
pub fn pretty(value: &Value, unit: &str) -> String {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    // Serialising a Value into a Vec cannot fail.
    let _ = serde::Serialize::serialize(value, &mut serializer);
    String::from_utf8(out).unwrap_or_default()
}

/// A whole document as we write it when there was no text to keep: 2-space indent, final newline.
/// The first key that appears twice in one object, with its 1-based line and column, if any.
/// (serde_json keeps the last silently; a rewrite would then drop the other.)
pub fn duplicate_key(text: &str) -> Option<(usize, usize, String)> {
    enum Frame {
        Object {
            keys: std::collections::HashSet<String>,
            expecting_key: bool,
        },
        Array,
    }
    let mut stack: Vec<Frame> = Vec::new();
    let (mut line, mut column) = (1usize, 0usize);
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\n' {
            line += 1;
            column = 0;
            continue;
        }
        column += 1;
        match c {
            '{' => stack.push(Frame::Object {
                keys: std::collections::HashSet::new(),
                expecting_key: true,
            }),
            '[' => stack.push(Frame::Array),
            '}' | ']' => {
                stack.pop();
            }
            ',' => {
                if let Some(Frame::Object { expecting_key, .. }) = stack.last_mut() {
                    *expecting_key = true;
                }
            }
            '"' => {
                let (start_line, start_column) = (line, column);
                let mut key = String::new();
                while let Some(k) = chars.next() {
                    column += 1;
                    match k {
                        '"' => break,
                        '\\' => {
                            key.push('\\');
                            if let Some(escaped) = chars.next() {
                                column += 1;
                                key.push(escaped);
                            }
                        }
                        '\n' => {
                            line += 1;
                            column = 0;
                            key.push(k);
                        }
                        other => key.push(other),
                    }
                }
                if let Some(Frame::Object {
                    keys,
                    expecting_key,
                }) = stack.last_mut()
                    && *expecting_key
                {
                    if keys.contains(&key) {
                        return Some((start_line, start_column, key));
                    }
                    keys.insert(key);
                    *expecting_key = false;
                }
            }
            _ => {}
        }
    }
    None
}

pub fn fresh(value: &Value) -> String {
    format!("{}\n", pretty(value, "  "))
}

/// New text for `new`, keeping as much of `original` (whose parsed value is `old`) as possible.
/// `original` may be JSONC (comments, trailing commas): they are kept.
pub fn splice(original: &str, old: &Value, new: &Value) -> String {
    if old == new {
        return original.to_string();
    }
    let blanked = blank_jsonc(original);
    let mut scanner = Scanner {
        bytes: blanked.as_bytes(),
        pos: 0,
    };
    let root = scanner.value();
    let text = Text {
        original,
        blanked: &blanked,
    };
    let unit = detect_indent(original);
    let mut out = String::with_capacity(original.len() + 512);
    out.push_str(&original[..root.start]);
    out.push_str(&splice_node(&text, &root, old, new, &unit));
    out.push_str(&original[root.end..]);
    out
}

/// The user's text and its blanked twin ([`blank_jsonc`]): spans are found in the one, bytes
/// copied from the other.
struct Text<'a> {
    original: &'a str,
    blanked: &'a str,
}

impl Text<'_> {
    fn get(&self, range: std::ops::Range<usize>) -> &str {
        &self.original[range]
    }

    /// Whether a span holds a comment or a trailing comma (text a separator must not copy).
    fn has_comment(&self, range: std::ops::Range<usize>) -> bool {
        self.original[range.clone()] != self.blanked[range]
    }

    /// A separator in the file's style from the gap `range` (between two members or items, or
    /// `,` plus the space after the opening bracket): the gap itself when it is plain, else a
    /// comma and a new line indented like the member at `next` (or one space).
    fn separator(&self, range: std::ops::Range<usize>, comma: bool, next: usize) -> String {
        let gap = self.get(range.clone());
        if !self.has_comment(range) {
            return if comma {
                gap.to_string()
            } else {
                format!(",{gap}")
            };
        }
        if gap.contains('\n') {
            format!(",\n{}", line_indent(self.original, next))
        } else {
            ", ".to_string()
        }
    }
}

fn splice_node(text: &Text, node: &Node, old: &Value, new: &Value, unit: &str) -> String {
    let whole = || pretty_at(new, unit, line_indent(text.original, node.start));
    if old == new {
        return text.get(node.start..node.end).to_string();
    }
    if let Some(out) = splice_emptiness(text, node, new, unit) {
        return out;
    }
    match (&node.kind, old, new) {
        (NodeKind::Object(members), Value::Object(old_map), Value::Object(new_map)) => {
            splice_object(text, node, members, old_map, new_map, unit).unwrap_or_else(whole)
        }
        (NodeKind::Array(items), Value::Array(old_items), Value::Array(new_items))
            if old_items.len() != new_items.len() =>
        {
            splice_array(text, node, items, old_items, new_items, unit).unwrap_or_else(whole)
        }
        (NodeKind::Array(items), Value::Array(old_items), Value::Array(new_items)) => {
            let mut out = String::new();
            let mut cursor = node.start;
            for ((item, before), after) in items.iter().zip(old_items).zip(new_items) {
                out.push_str(text.get(cursor..item.start));
                out.push_str(&splice_node(text, item, before, after, unit));
                cursor = item.end;
            }
            out.push_str(text.get(cursor..node.end));
            out
        }
        _ => whole(),
    }
}

/// An object or array with a comment inside that is filled from empty, or emptied: the comment
/// stays. Filled: what it holds goes after the comment, one member or item a line, before the
/// whitespace that closed it (`{ // none yet\n}` becomes `{ // none yet\n  "a": 1\n}`).
/// Emptied: the text before its first child (the comment) and after its last are kept, which
/// undoes the filling byte for byte. `None` for anything else (no comment, a partial change).
fn splice_emptiness(text: &Text, node: &Node, new: &Value, unit: &str) -> Option<String> {
    let children: Vec<(usize, usize)> = match &node.kind {
        NodeKind::Object(members) => members.iter().map(|(_, k, v)| (*k, v.end)).collect(),
        NodeKind::Array(items) => items.iter().map(|i| (i.start, i.end)).collect(),
        NodeKind::Scalar => return None,
    };
    let open = node.start + 1;
    let close = node.end.checked_sub(1)?;
    let indent = format!("{}{unit}", line_indent(text.original, node.start));
    let entries: Vec<String> = match (&node.kind, new) {
        (NodeKind::Object(_), Value::Object(map)) => map
            .iter()
            .map(|(k, v)| {
                let key = Value::String(k.clone()).to_string();
                format!("{key}: {}", pretty_at(v, unit, &indent))
            })
            .collect(),
        (NodeKind::Array(_), Value::Array(items)) => {
            items.iter().map(|v| pretty_at(v, unit, &indent)).collect()
        }
        _ => return None,
    };
    match (children.first(), children.last(), entries.is_empty()) {
        // Filled from empty.
        (None, _, false) if open <= close && text.has_comment(open..close) => {
            let inside = text.get(open..close);
            let kept = inside.trim_end();
            let tail = &inside[kept.len()..];
            Some(format!(
                "{}{kept}\n{indent}{}{tail}{}",
                text.get(node.start..open),
                entries.join(&format!(",\n{indent}")),
                text.get(close..node.end)
            ))
        }
        // Emptied.
        (Some(&(first, _)), Some(&(_, last_end)), true) if text.has_comment(open..first) => {
            let before = text.get(open..first).trim_end();
            // What followed the last child (whitespace, comments), but a trailing comma.
            let after = text.get(last_end..node.end);
            let after = match after.trim_start().strip_prefix(',') {
                Some(rest) => format!("{}{rest}", &after[..after.len() - after.trim_start().len()]),
                None => after.to_string(),
            };
            Some(format!("{}{before}{after}", text.get(node.start..open)))
        }
        _ => None,
    }
}

/// Keeps the text of the items an array keeps when items were inserted or removed: each new item
/// that equals the next unclaimed old item (in order) keeps that item's text and the gaps around
/// it; a removed item goes with the gap before it (the first with the gap after it); a new item
/// is serialised in the file's style, put before the first kept item or after the one before it.
/// `None` when no old item is kept (nothing to take the style from).
fn splice_array(
    text: &Text,
    node: &Node,
    items: &[Node],
    old: &[Value],
    new: &[Value],
    unit: &str,
) -> Option<String> {
    if new.is_empty() {
        return Some("[]".into());
    }
    let first = items.first()?;
    // Which old item each new one keeps, if any.
    let mut claimed: Vec<Option<usize>> = Vec::with_capacity(new.len());
    let mut next_old = 0;
    for value in new {
        match old[next_old..].iter().position(|o| o == value) {
            Some(offset) => {
                claimed.push(Some(next_old + offset));
                next_old += offset + 1;
            }
            None => claimed.push(None),
        }
    }
    let first_kept = claimed.iter().flatten().next().copied()?;
    let separator = if items.len() > 1 {
        text.separator(items[0].end..items[1].start, true, items[1].start)
    } else {
        text.separator(node.start + 1..first.start, false, first.start)
    };
    let base = line_indent(text.original, first.start);
    let mut out = text.get(node.start..first.start).to_string();
    // Items before the first kept one are dropped with the gap after each.
    let mut cursor = items[first_kept].start;
    let mut done = first_kept; // old items accounted for
    let mut emitted = false; // whether an old item has been written
    for (value, claim) in new.iter().zip(&claimed) {
        match claim {
            Some(index) => {
                // Items between the last accounted one and this: removed with the gap before.
                if *index > done {
                    cursor = items[*index - 1].end;
                }
                out.push_str(text.get(cursor..items[*index].start));
                out.push_str(text.get(items[*index].start..items[*index].end));
                cursor = items[*index].end;
                done = index + 1;
                emitted = true;
            }
            None if !emitted => {
                out.push_str(&pretty_at(value, unit, base));
                out.push_str(&separator);
            }
            None => {
                out.push_str(&separator);
                out.push_str(&pretty_at(value, unit, base));
            }
        }
    }
    if done < items.len() {
        cursor = items[items.len() - 1].end;
    }
    out.push_str(text.get(cursor..node.end));
    Some(out)
}

/// Keeps an object's text when its new keys are its old keys, in order, minus some, plus some
/// appended at the end: a kept member keeps its text and the gaps around it (its value spliced),
/// a removed one goes with the gap before it (the first with the gap after it), a new one goes
/// after the last member, before whatever closes the object (a trailing comma, a comment).
/// `None` when the change is anything else (re-serialise it).
fn splice_object(
    text: &Text,
    node: &Node,
    members: &[(String, usize, Node)],
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    unit: &str,
) -> Option<String> {
    let kept: Vec<&(String, usize, Node)> = members
        .iter()
        .filter(|(k, _, _)| new.contains_key(k))
        .collect();
    let new_keys: Vec<&String> = new.keys().collect();
    if kept.len() > new_keys.len() || kept.iter().zip(&new_keys).any(|((k, _, _), nk)| k != *nk) {
        return None;
    }
    let appended = &new_keys[kept.len()..];
    if members.is_empty() || kept.is_empty() {
        // Nothing to take the style from.
        return None;
    }
    let first = &members[0];
    let last = &members[members.len() - 1];
    let open_ws = text.get(node.start + 1..first.1);
    // The user's separator, from the last gap between two members (the most local style).
    let separator = if members.len() > 1 {
        let before_last = &members[members.len() - 2];
        text.separator(before_last.2.end..last.1, true, last.1)
    } else {
        text.separator(node.start + 1..first.1, false, first.1)
    };
    let key_end = Scanner {
        bytes: text.blanked.as_bytes(),
        pos: first.1,
    }
    .string_end();
    let colon = text.get(key_end..first.2.start);
    // A new member's nested lines line up under its key: the key's own line indentation, or one
    // unit deeper than the object's line when the object is written on one line.
    let member_indent = if open_ws.contains('\n') {
        line_indent(text.original, first.1).to_string()
    } else {
        format!("{}{unit}", line_indent(text.original, node.start))
    };

    let mut out = text.get(node.start..first.1).to_string();
    let mut cursor = first.1;
    let mut emitted = false;
    for (i, (key, key_start, value_node)) in members.iter().enumerate() {
        if !new.contains_key(key) {
            cursor = if emitted {
                value_node.end
            } else {
                members.get(i + 1).map_or(value_node.end, |m| m.1)
            };
            continue;
        }
        out.push_str(text.get(cursor..*key_start));
        out.push_str(text.get(*key_start..value_node.start));
        out.push_str(&splice_node(text, value_node, &old[key], &new[key], unit));
        cursor = value_node.end;
        emitted = true;
    }
    cursor = cursor.max(last.2.end);
    for key in appended {
        let key_json = Value::String((*key).clone()).to_string();
        out.push_str(&separator);
        out.push_str(&format!(
            "{key_json}{colon}{}",
            pretty_at(&new[*key], unit, &member_indent)
        ));
    }
    out.push_str(text.get(cursor..node.end));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(original: &str, new: Value, expected: &str) {
        let old: Value = serde_json::from_str(original).expect("original parses");
        let out = splice(original, &old, &new);
        assert_eq!(out, expected);
        assert_eq!(
            serde_json::from_str::<Value>(&out).expect("output parses"),
            new
        );
    }

    #[test]
    fn duplicate_keys_are_found_with_their_place() {
        let cases = [
            ("{\"a\": 1, \"b\": 2}", None),
            ("{\"a\": 1,\n \"a\": 2}", Some((2, 2, "a".to_string()))),
            (
                "{\"hooks\": {\"Stop\": [], \"Stop\": []}}",
                Some((1, 24, "Stop".to_string())),
            ),
            ("{\"a\": {\"x\": 1}, \"b\": {\"x\": 1}}", None),
            ("{\"a\": [\"a\", \"a\"], \"s\": \"a,\\\"a\\\":\"}", None),
        ];
        for (text, want) in cases {
            assert_eq!(duplicate_key(text), want, "{text}");
        }
    }

    #[test]
    fn unchanged_text_is_returned_byte_for_byte() {
        let original = "{ \"a\" :1,\"b\":[1,2 ,3]}  \n";
        check(
            original,
            serde_json::from_str(original).expect("json"),
            original,
        );
    }

    #[test]
    fn changed_member_is_replaced_and_the_rest_kept() {
        check(
            "{\n    \"model\":   \"opus\",\n    \"hooks\": {\"Stop\": []}\n}\n",
            json!({"model": "opus", "hooks": {"Stop": [1]}}),
            "{\n    \"model\":   \"opus\",\n    \"hooks\": {\"Stop\": [\n        1\n    ]}\n}\n",
        );
    }

    #[test]
    fn appended_member_takes_the_files_separator_and_indent() {
        check(
            "{\n\t\"model\": \"opus\"\n}",
            json!({"model": "opus", "hooks": {"Stop": []}}),
            "{\n\t\"model\": \"opus\",\n\t\"hooks\": {\n\t\t\"Stop\": []\n\t}\n}",
        );
    }

    #[test]
    fn removed_member_takes_its_separator_with_it() {
        check(
            "{\n  \"a\": 1,\n  \"hooks\": {},\n  \"b\": 2\n}\n",
            json!({"a": 1, "b": 2}),
            "{\n  \"a\": 1,\n  \"b\": 2\n}\n",
        );
    }

    #[test]
    fn a_changed_shape_is_reserialised_alone() {
        check(
            "{\"keep\":   true, \"o\": {\"x\": 1, \"y\": 2}}",
            json!({"keep": true, "o": [1, 2]}),
            "{\"keep\":   true, \"o\": [\n  1,\n  2\n]}",
        );
    }

    #[test]
    fn items_inserted_or_removed_leave_the_other_items_text_alone() {
        check(
            "{\"a\": [\n  {\"user\": 1},\n  {\"user\":   2}\n]}",
            json!({"a": [{"ours": true}, {"user": 1}, {"user": 2}]}),
            "{\"a\": [\n  {\n    \"ours\": true\n  },\n  {\"user\": 1},\n  {\"user\":   2}\n]}",
        );
        check(
            "{\"a\": [ {\"ours\": 1}, {\"user\":  2} ]}",
            json!({"a": [{"user": 2}]}),
            "{\"a\": [ {\"user\":  2} ]}",
        );
    }

    #[test]
    fn comments_and_trailing_commas_are_blanked_in_place() {
        let cases = [
            ("{\"a\": 1}", "{\"a\": 1}"),
            ("{\"a\": 1, // x\n}", "{\"a\": 1      \n}"),
            ("{\"a\": 1 /* é */}", "{\"a\": 1         }"),
            ("[1, /* a\nb */ 2,]", "[1,     \n     2 ]"),
            ("{\"u\": \"http://x/*y*/\"}", "{\"u\": \"http://x/*y*/\"}"),
            ("{\"a\": [1,],}", "{\"a\": [1 ] }"),
        ];
        for (text, want) in cases {
            let blanked = blank_jsonc(text);
            assert_eq!(blanked, want, "{text}");
            assert_eq!(blanked.len(), text.len());
        }
    }

    /// Adding amplihack's member and item, then taking them out again, keeps every comment in
    /// place and gives the text back byte for byte.
    #[test]
    fn jsonc_round_trip_keeps_comments() {
        let original = "{\n  // provider\n  \"model\": {\"name\": \"m\"}, // pinned\n  \"hooks\": {\n    \"Stop\": [\n      {\"u\": 1}, // mine\n      {\"u\": 2}\n    ],\n  },\n}\n";
        let old: Value = serde_json::from_str(&blank_jsonc(original)).expect("jsonc");
        let mut new = old.clone();
        new["hooks"]["Stop"]
            .as_array_mut()
            .expect("array")
            .insert(0, json!({"ours": true}));
        new["extra"] = json!(1);
        let installed = splice(original, &old, &new);
        assert_eq!(
            serde_json::from_str::<Value>(&blank_jsonc(&installed)).expect("still jsonc"),
            new
        );
        for comment in ["// provider", "// pinned", "// mine"] {
            assert_eq!(installed.matches(comment).count(), 1, "{installed}");
        }
        assert_eq!(splice(&installed, &new, &old), original, "{installed}");
    }

    /// A comment inside an empty object or array stays when amplihack fills it, and taking
    /// amplihack's entries out again gives the text back byte for byte.
    #[test]
    fn a_comment_in_an_empty_object_or_array_is_kept() {
        let ours = json!([{"hooks": [{"type": "command", "command": "x"}]}]);
        let cases = [
            (
                "{\n  \"hooks\": { // none yet\n  }\n}\n",
                json!({"hooks": {"Stop": ours}}),
                "{\n  \"hooks\": { // none yet\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"x\"\n          }\n        ]\n      }\n    ]\n  }\n}\n",
            ),
            (
                "{\"hooks\": {\"Stop\": [ /* later */ ]}}",
                json!({"hooks": {"Stop": [1]}}),
                "{\"hooks\": {\"Stop\": [ /* later */\n  1 ]}}",
            ),
        ];
        for (original, new, installed) in cases {
            let old: Value = serde_json::from_str(&blank_jsonc(original)).expect("jsonc");
            let out = splice(original, &old, &new);
            assert_eq!(out, installed);
            assert_eq!(
                serde_json::from_str::<Value>(&blank_jsonc(&out)).expect("jsonc"),
                new
            );
            assert_eq!(splice(&out, &new, &old), original);
        }
    }

    #[test]
    fn empty_document_object_is_filled_freshly() {
        check("{}\n", json!({"hooks": {}}), "{\n  \"hooks\": {}\n}\n");
    }
}
