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
pub fn splice(original: &str, old: &Value, new: &Value) -> String {
    if old == new {
        return original.to_string();
    }
    let mut scanner = Scanner {
        bytes: original.as_bytes(),
        pos: 0,
    };
    let root = scanner.value();
    let unit = detect_indent(original);
    let mut out = String::with_capacity(original.len() + 512);
    out.push_str(&original[..root.start]);
    out.push_str(&splice_node(original, &root, old, new, &unit));
    out.push_str(&original[root.end..]);
    out
}

fn splice_node(text: &str, node: &Node, old: &Value, new: &Value, unit: &str) -> String {
    if old == new {
        return text[node.start..node.end].to_string();
    }
    match (&node.kind, old, new) {
        (NodeKind::Object(members), Value::Object(old_map), Value::Object(new_map)) => {
            splice_object(text, node, members, old_map, new_map, unit)
                .unwrap_or_else(|| pretty_at(new, unit, line_indent(text, node.start)))
        }
        (NodeKind::Array(items), Value::Array(old_items), Value::Array(new_items))
            if old_items.len() != new_items.len() =>
        {
            splice_array(text, node, items, old_items, new_items, unit)
                .unwrap_or_else(|| pretty_at(new, unit, line_indent(text, node.start)))
        }
        (NodeKind::Array(items), Value::Array(old_items), Value::Array(new_items)) => {
            let mut out = String::new();
            let mut cursor = node.start;
            for ((item, before), after) in items.iter().zip(old_items).zip(new_items) {
                out.push_str(&text[cursor..item.start]);
                out.push_str(&splice_node(text, item, before, after, unit));
                cursor = item.end;
            }
            out.push_str(&text[cursor..node.end]);
            out
        }
        _ => pretty_at(new, unit, line_indent(text, node.start)),
    }
}

/// Keeps the text of the items an array keeps when items were inserted or removed: each new item
/// that equals the next unclaimed old item (in order) reuses that item's text; the others are
/// serialised in the file's style. `None` when there is no old item to take the style from.
fn splice_array(
    text: &str,
    node: &Node,
    items: &[Node],
    old: &[Value],
    new: &[Value],
    unit: &str,
) -> Option<String> {
    let (first, last) = (items.first()?, items.last()?);
    let open_ws = &text[node.start + 1..first.start];
    let close_ws = &text[last.end..node.end - 1];
    let separator = if items.len() > 1 {
        text[items[0].end..items[1].start].to_string()
    } else {
        format!(",{open_ws}")
    };
    let mut cursor = 0;
    let mut parts = Vec::with_capacity(new.len());
    for value in new {
        match old[cursor..].iter().position(|o| o == value) {
            Some(offset) => {
                let index = cursor + offset;
                parts.push(text[items[index].start..items[index].end].to_string());
                cursor = index + 1;
            }
            None => parts.push(pretty_at(value, unit, line_indent(text, first.start))),
        }
    }
    if parts.is_empty() {
        return Some("[]".into());
    }
    Some(format!("[{open_ws}{}{close_ws}]", parts.join(&separator)))
}

/// Keeps an object's text when its new keys are its old keys, in order, minus some, plus some
/// appended at the end. `None` when the change is anything else (re-serialise it).
fn splice_object(
    text: &str,
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
    // The user's separators: between members, after `{`, before `}`, and around the colon.
    let first = &members[0];
    let open_ws = &text[node.start + 1..first.1];
    let last = &members[members.len() - 1];
    let close_ws = &text[last.2.end..node.end - 1];
    let separator = if members.len() > 1 {
        text[members[0].2.end..members[1].1].to_string()
    } else {
        format!(",{open_ws}")
    };
    let key_end = Scanner {
        bytes: text.as_bytes(),
        pos: first.1,
    }
    .string_end();
    let colon = &text[key_end..first.2.start];
    // A new member's nested lines line up under its key: the key's own line indentation, or one
    // unit deeper than the object's line when the object is written on one line.
    let member_indent = if open_ws.contains('\n') {
        line_indent(text, first.1).to_string()
    } else {
        format!("{}{unit}", line_indent(text, node.start))
    };

    let mut parts: Vec<String> = Vec::new();
    for (key, key_start, value_node) in kept {
        let value = splice_node(text, value_node, &old[key], &new[key], unit);
        parts.push(format!("{}{value}", &text[*key_start..value_node.start]));
    }
    for key in appended {
        let key_json = Value::String((*key).clone()).to_string();
        parts.push(format!(
            "{key_json}{colon}{}",
            pretty_at(&new[*key], unit, &member_indent)
        ));
    }
    if parts.is_empty() {
        return Some("{}".into());
    }
    Some(format!("{{{open_ws}{}{close_ws}}}", parts.join(&separator)))
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
    fn empty_document_object_is_filled_freshly() {
        check("{}\n", json!({"hooks": {}}), "{\n  \"hooks\": {}\n}\n");
    }
}
