//! amplihack's entry in Amplifier's YAML settings (`~/.amplifier/settings.yaml`,
//! `.amplifier/settings.yaml`, `.amplifier/settings.local.yaml`): an app bundle under
//! `bundle.app`, what `amplifier bundle add <uri> --app` writes and the app composes onto every
//! session. The bundle file (deployed by `amplihack install`) names the `hooks-amplihack` module.
//!
//! ```yaml
//! bundle:
//!   app:
//!     - "file:///home/me/.local/share/amplihack/amplifier-bundle.yaml"
//! ```
//!
//! Earlier versions wrote a `modules.hooks` entry, which the app never mounts (it is only a
//! source map for modules a bundle already names): [`install_app`] and [`uninstall_app`] remove
//! it ([`find`], [`install`] and [`uninstall`] handle that legacy entry).
//!
//! The file is parsed (a file that does not parse is refused with its line and column), but the
//! edit is made on the text: only our entry's lines are added, replaced or removed, so the user's
//! comments, order, indentation and line endings stay exactly as they were. A `modules` or
//! `hooks` written in flow style (`{…}`, `[…]`) is refused with the lines to add by hand.

use yaml_rust2::{Yaml, YamlLoader};

pub const MODULE_ID: &str = "hooks-amplihack";
/// How the bundle file amplihack deploys is named: any `bundle.app` URI ending so is ours.
pub const BUNDLE_SUFFIX: &str = "/amplihack/amplifier-bundle.yaml";
/// Marks a `modules:` or `hooks:` line amplihack created, so uninstall removes exactly those.
const CREATED: &str = "# added by amplihack";

/// What our entry says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleEntry {
    pub source: String,
    pub binary: String,
}

/// One line of the file, with its ending.
struct Line<'a> {
    text: &'a str,
}

impl Line<'_> {
    fn body(&self) -> &str {
        self.text.trim_end_matches(['\n', '\r'])
    }
    fn indent(&self) -> usize {
        self.body().len() - self.body().trim_start().len()
    }
    /// Blank or a comment: neither opens nor closes a block.
    fn is_filler(&self) -> bool {
        let t = self.body().trim();
        t.is_empty() || t.starts_with('#')
    }
}

fn lines(text: &str) -> Vec<Line<'_>> {
    text.split_inclusive('\n')
        .map(|text| Line { text })
        .collect()
}

fn parse(text: &str) -> Result<Yaml, String> {
    let docs = YamlLoader::load_from_str(text).map_err(|e| {
        format!(
            "not valid YAML at line {}, column {}: {}. Fix it and run the command again",
            e.marker().line(),
            e.marker().col() + 1,
            e.info()
        )
    })?;
    Ok(docs.into_iter().next().unwrap_or(Yaml::Null))
}

fn key<'a>(map: &'a Yaml, name: &str) -> Option<&'a Yaml> {
    match map {
        Yaml::Hash(h) => h.get(&Yaml::String(name.to_string())),
        _ => None,
    }
}

/// Our entry as the file has it, if any (after checking the shape we can edit).
pub fn find(text: &str) -> Result<Option<ModuleEntry>, String> {
    let root = parse(text)?;
    match &root {
        Yaml::Hash(_) | Yaml::Null => {}
        _ => {
            return Err(
                "the top level is not a mapping: Amplifier settings are `key: value` pairs".into(),
            );
        }
    }
    let Some(modules) = key(&root, "modules").filter(|m| !m.is_null()) else {
        return Ok(None);
    };
    if !matches!(modules, Yaml::Hash(_)) {
        return Err(
            "`modules` is not a mapping: write it as `modules:` with `hooks:` under it".into(),
        );
    }
    let Some(hooks) = key(modules, "hooks").filter(|h| !h.is_null()) else {
        return Ok(None);
    };
    let Yaml::Array(items) = hooks else {
        return Err(
            "`modules.hooks` is not a list: write it as a list of `- module: NAME` entries".into(),
        );
    };
    Ok(items
        .iter()
        .find(|item| key(item, "module").and_then(Yaml::as_str) == Some(MODULE_ID))
        .map(|item| ModuleEntry {
            source: key(item, "source")
                .and_then(Yaml::as_str)
                .unwrap_or_default()
                .to_string(),
            binary: key(item, "config")
                .and_then(|c| key(c, "binary"))
                .and_then(Yaml::as_str)
                .unwrap_or_default()
                .to_string(),
        }))
}

fn quoted(text: &str) -> String {
    // A JSON string is a valid YAML double-quoted scalar.
    serde_json::Value::String(text.to_string()).to_string()
}

fn render(entry: &ModuleEntry, dash_indent: usize, eol: &str) -> String {
    let pad = " ".repeat(dash_indent);
    format!(
        "{pad}- module: {MODULE_ID}{eol}{pad}  source: {}{eol}{pad}  config:{eol}{pad}    binary: {}{eol}",
        quoted(&entry.source),
        quoted(&entry.binary)
    )
}

fn line_ending(text: &str) -> &'static str {
    if text.contains("\r\n") { "\r\n" } else { "\n" }
}

/// Is `line` the key `name:` (with nothing but a comment after it)? `Err` for a flow-style value.
fn is_block_key(line: &Line<'_>, name: &str) -> Result<bool, String> {
    let body = line.body().trim_start();
    let Some(rest) = body.strip_prefix(name).and_then(|r| r.strip_prefix(':')) else {
        return Ok(false);
    };
    let rest = rest.trim();
    if rest.is_empty() || rest.starts_with('#') || rest == "~" || rest == "null" {
        return Ok(true);
    }
    Err(format!(
        "`{name}` is written on one line ({rest}); amplihack edits only block style: rewrite it as `{name}:` with its entries on the lines under it"
    ))
}

/// The range of lines of our entry: its `- module: hooks-amplihack` line and the lines under it.
fn our_block(lines: &[Line<'_>]) -> Option<(usize, usize, usize)> {
    item_block(lines, |item| {
        item.strip_prefix("module:").map(|v| {
            v.split('#')
                .next()
                .unwrap_or("")
                .trim()
                .trim_matches(['"', '\''])
        }) == Some(MODULE_ID)
    })
}

/// The range of lines of the first list item whose text after `- ` satisfies `ours`: its line
/// and the lines under it (more indented), with its dash's indent.
fn item_block(lines: &[Line<'_>], ours: impl Fn(&str) -> bool) -> Option<(usize, usize, usize)> {
    let start = lines.iter().position(|l| {
        l.body()
            .trim_start()
            .strip_prefix("- ")
            .map(str::trim_start)
            .is_some_and(&ours)
    })?;
    let dash = lines[start].indent();
    let mut end = start + 1;
    let mut last = start + 1;
    while end < lines.len() {
        if lines[end].is_filler() {
            end += 1;
            continue;
        }
        if lines[end].indent() > dash {
            end += 1;
            last = end;
        } else {
            break;
        }
    }
    Some((start, last, dash))
}

/// The text with our entry as `entry` (added, or replaced); unchanged when it already is.
pub fn install(text: Option<&str>, entry: &ModuleEntry) -> Result<String, String> {
    let text = text.unwrap_or("");
    if find(text)?.as_ref() == Some(entry) {
        return Ok(text.to_string());
    }
    let eol = line_ending(text);
    let lines = lines(text);
    let mut out = String::new();
    if let Some((start, end, dash)) = our_block(&lines) {
        lines[..start].iter().for_each(|l| out.push_str(l.text));
        out.push_str(&render(entry, dash, eol));
        lines[end..].iter().for_each(|l| out.push_str(l.text));
    } else {
        out = add(text, &lines, entry, eol)?;
    }
    // Never write what we could not read back.
    match find(&out) {
        Ok(Some(found)) if found == *entry => Ok(out),
        _ => Err("amplihack could not place its entry in this layout; add it by hand under `modules.hooks`".into()),
    }
}

fn add(text: &str, lines: &[Line<'_>], entry: &ModuleEntry, eol: &str) -> Result<String, String> {
    add_item(text, lines, ("modules", "hooks"), eol, &|dash| {
        render(entry, dash, eol)
    })
}

/// Adds the item `render(dash_indent)` at the end of the list `outer.inner`, creating (and
/// marking) the keys that are missing.
fn add_item(
    text: &str,
    lines: &[Line<'_>],
    (outer, inner): (&str, &str),
    eol: &str,
    render: &dyn Fn(usize) -> String,
) -> Result<String, String> {
    let mut modules_at = None;
    for (i, line) in lines.iter().enumerate() {
        if line.indent() == 0 && !line.is_filler() && is_block_key(line, outer)? {
            modules_at = Some(i);
            break;
        }
    }
    let Some(m) = modules_at else {
        let mut out = text.to_string();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push_str(eol);
        }
        out.push_str(&format!(
            "{outer}:  {CREATED}{eol}  {inner}:  {CREATED}{eol}"
        ));
        out.push_str(&render(4));
        return Ok(out);
    };
    // The modules block: the lines after `modules:` until the next top-level key.
    let mut block_end = m + 1;
    let mut last_content = m;
    while block_end < lines.len() {
        let line = &lines[block_end];
        if !line.is_filler() {
            if line.indent() == 0 {
                break;
            }
            last_content = block_end;
        }
        block_end += 1;
    }
    let child = lines[m + 1..block_end]
        .iter()
        .find(|l| !l.is_filler())
        .map_or(2, Line::indent);
    let mut hooks_at = None;
    for (i, line) in lines.iter().enumerate().take(block_end).skip(m + 1) {
        if !line.is_filler() && line.indent() == child && is_block_key(line, inner)? {
            hooks_at = Some(i);
            break;
        }
    }
    let (insert_after, rendered) = match hooks_at {
        Some(h) => {
            // The list: lines under `hooks:`, or `- ` items at its own indent.
            let mut last = h;
            let mut dash = None;
            for (i, line) in lines.iter().enumerate().take(block_end).skip(h + 1) {
                if line.is_filler() {
                    continue;
                }
                let item = line.body().trim_start().starts_with("- ");
                if line.indent() > child || (line.indent() == child && item) {
                    if item && dash.is_none() {
                        dash = Some(line.indent());
                    }
                    last = i;
                } else {
                    break;
                }
            }
            (last, render(dash.unwrap_or(child + 2)))
        }
        None => (
            last_content,
            format!(
                "{}{inner}:  {CREATED}{eol}{}",
                " ".repeat(child),
                render(child + 2)
            ),
        ),
    };
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        out.push_str(line.text);
        if i == insert_after {
            if !line.text.ends_with('\n') {
                out.push_str(eol);
            }
            out.push_str(&rendered);
        }
    }
    Ok(out)
}

/// The text without our entry (`None` when nothing is left of the file but what we added).
/// A `hooks:` or `modules:` that amplihack created, left empty by the removal, goes too.
pub fn uninstall(text: &str) -> Result<Option<String>, String> {
    find(text)?;
    let lines = lines(text);
    let Some((start, end, _)) = our_block(&lines) else {
        return Ok(Some(text.to_string()));
    };
    let kept: Vec<&Line<'_>> = lines[..start].iter().chain(lines[end..].iter()).collect();
    let out = drop_empty_keys(kept, ["hooks", "modules"], false);
    if out.trim().is_empty() {
        return Ok(None);
    }
    Ok(Some(out))
}

/// Drops the keys `names` (inner first) left with nothing under them: those amplihack created
/// (marked), and with `unmarked`, any.
fn drop_empty_keys(mut kept: Vec<&Line<'_>>, names: [&str; 2], unmarked: bool) -> String {
    for name in names {
        let Some(i) = kept.iter().position(|l| {
            !l.is_filler()
                && (unmarked || l.body().ends_with(CREATED))
                && is_block_key(l, name).unwrap_or(false)
        }) else {
            continue;
        };
        let indent = kept[i].indent();
        let empty = kept[i + 1..]
            .iter()
            .find(|l| !l.is_filler())
            .is_none_or(|l| {
                l.indent() <= indent
                    && !(l.indent() == indent && l.body().trim_start().starts_with("- "))
            });
        if empty {
            kept.remove(i);
        }
    }
    kept.iter().map(|l| l.text).collect()
}

/// Whether a `bundle.app` URI names the bundle file amplihack deploys (wherever it was).
pub fn is_our_uri(uri: &str) -> bool {
    uri.starts_with("file://") && uri.ends_with(BUNDLE_SUFFIX)
}

/// The `bundle.app` URI of a bundle file.
pub fn uri_of(bundle: &std::path::Path) -> String {
    format!("file://{}", bundle.display())
}

fn scalar(item: &str) -> String {
    let value = item.trim();
    match YamlLoader::load_from_str(value) {
        Ok(docs) => docs
            .first()
            .and_then(Yaml::as_str)
            .map_or_else(|| value.to_string(), str::to_string),
        Err(_) => value.to_string(),
    }
}

/// The file's `bundle.app` list, if it has one. The app merges settings files with lists
/// replaced, not joined: the most specific file with a list decides which app bundles load.
pub fn app_list(text: &str) -> Option<Vec<String>> {
    let root = parse(text).ok()?;
    let Some(Yaml::Array(items)) = key(key(&root, "bundle")?, "app") else {
        return None;
    };
    Some(
        items
            .iter()
            .filter_map(Yaml::as_str)
            .map(str::to_string)
            .collect(),
    )
}

/// amplihack's `bundle.app` URI as the file has it, if any (after checking the shape we can
/// edit).
pub fn find_app(text: &str) -> Result<Option<String>, String> {
    let root = parse(text)?;
    if !matches!(root, Yaml::Hash(_) | Yaml::Null) {
        return Err(
            "the top level is not a mapping: Amplifier settings are `key: value` pairs".into(),
        );
    }
    let Some(bundle) = key(&root, "bundle").filter(|b| !b.is_null()) else {
        return Ok(None);
    };
    if !matches!(bundle, Yaml::Hash(_)) {
        return Err("`bundle` is not a mapping: write it as `bundle:` with `app:` under it".into());
    }
    let Some(app) = key(bundle, "app").filter(|a| !a.is_null()) else {
        return Ok(None);
    };
    let Yaml::Array(items) = app else {
        return Err("`bundle.app` is not a list: write it as a list of `- URI` entries".into());
    };
    Ok(items
        .iter()
        .filter_map(Yaml::as_str)
        .find(|uri| is_our_uri(uri))
        .map(str::to_string))
}

/// The text with amplihack's app bundle `uri` under `bundle.app` (added, or replacing ours),
/// and without the legacy `modules.hooks` entry; unchanged when it already is so.
pub fn install_app(text: Option<&str>, uri: &str) -> Result<String, String> {
    let text = text.unwrap_or("");
    find_app(text)?;
    let text = uninstall(text)?.unwrap_or_default();
    if find_app(&text)?.as_deref() == Some(uri) {
        return Ok(text);
    }
    let eol = line_ending(&text);
    let lines = lines(&text);
    let render = |dash: usize| format!("{}- {}{eol}", " ".repeat(dash), quoted(uri));
    let out = match item_block(&lines, |item| is_our_uri(&scalar(item))) {
        Some((start, end, dash)) => {
            let mut out: String = lines[..start].iter().map(|l| l.text).collect();
            out.push_str(&render(dash));
            lines[end..].iter().for_each(|l| out.push_str(l.text));
            out
        }
        None => add_item(&text, &lines, ("bundle", "app"), eol, &render)?,
    };
    match find_app(&out) {
        Ok(Some(found)) if found == uri => Ok(out),
        _ => Err(
            "amplihack could not place its entry in this layout; add it by hand under `bundle.app`"
                .into(),
        ),
    }
}

/// The text without amplihack's `bundle.app` entries and without the legacy `modules.hooks`
/// entry (`None` when nothing is left of the file but what amplihack added). A `bundle:` or
/// `app:` amplihack created goes when left empty; when the app has rewritten the file with its
/// YAML dumper, our marks are gone with every other comment, and an `app:` list left empty goes
/// (as the app's own `bundle remove --app` does), then an empty `bundle:`.
pub fn uninstall_app(text: &str) -> Result<Option<String>, String> {
    find_app(text)?;
    let mut text = match uninstall(text)? {
        Some(text) => text,
        None => return Ok(None),
    };
    let mut removed = false;
    loop {
        let lines = lines(&text);
        let Some((start, end, _)) = item_block(&lines, |item| is_our_uri(&scalar(item))) else {
            break;
        };
        removed = true;
        let kept: Vec<&Line<'_>> = lines[..start].iter().chain(lines[end..].iter()).collect();
        let rewritten = !lines.iter().any(|l| l.body().trim_start().starts_with('#'));
        text = drop_empty_keys(kept, ["app", "bundle"], rewritten);
    }
    if removed && text.trim().is_empty() {
        return Ok(None);
    }
    Ok(Some(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> ModuleEntry {
        ModuleEntry {
            source: "/home/a b/.local/share/amplihack/amplifier-module".into(),
            binary: "/home/a b/.local/bin/amplihack-hooks".into(),
        }
    }

    /// Files with comments and unusual layouts: install adds exactly our lines, a second install
    /// changes nothing, uninstall gives back the original bytes.
    #[test]
    fn round_trips_keep_every_byte_of_the_users() {
        let cases = [
            "",
            "# my settings\nbundle:\n  active: foundation   # the default\n",
            "modules:\n  tools:\n    - module: tool-bash\n  hooks:\n    - module: hooks-logging\n      config:\n        level: debug\n# trailing comment\n",
            "modules:\n    hooks:\n    - module: hooks-notify   # same indent as the key\nrouting:\n    default: fast\n",
            "bundle:\r\n  active: dev\r\nmodules:\r\n  providers:\r\n    - module: provider-anthropic\r\n",
            "modules:\n  hooks:\n",
            "config:\n  notifications: {}\nmodules:\n  hooks:\n    - module: a\n\n    # between\n    - module: b\n",
        ];
        for original in cases {
            let installed = install(Some(original), &entry()).expect("installs");
            assert_eq!(
                find(&installed).expect("parses"),
                Some(entry()),
                "{original:?}\n{installed}"
            );
            assert!(
                installed.contains(original.lines().next().unwrap_or("")),
                "{installed}"
            );
            let again = install(Some(&installed), &entry()).expect("again");
            assert_eq!(again, installed, "byte-identical re-install");
            let removed = uninstall(&installed).expect("uninstalls");
            assert_eq!(
                removed.as_deref().unwrap_or(""),
                original,
                "exact uninstall of {original:?}"
            );
            if original.contains("\r\n") {
                assert!(
                    !installed.replace("\r\n", "").contains('\n'),
                    "CRLF kept: {installed:?}"
                );
            }
        }
    }

    #[test]
    fn a_changed_entry_is_replaced_in_place() {
        let first =
            install(Some("modules:\n  hooks:\n    - module: x\n"), &entry()).expect("install");
        let moved = ModuleEntry {
            binary: "/opt/bin/amplihack-hooks".into(),
            ..entry()
        };
        let second = install(Some(&first), &moved).expect("repoint");
        assert_eq!(find(&second).expect("parses"), Some(moved));
        assert_eq!(second.matches(MODULE_ID).count(), 1);
        assert!(second.starts_with("modules:\n  hooks:\n    - module: x\n"));
    }

    #[test]
    fn what_cannot_be_edited_safely_is_refused_with_where_and_why() {
        let cases = [
            ("modules:\n  hooks: [\n", "line"),
            ("modules: {hooks: []}\n", "one line"),
            ("modules:\n  hooks: []\n", "one line"),
            ("- just\n- a list\n", "not a mapping"),
            ("modules: 3\n", "not a mapping"),
            ("modules:\n  hooks:\n    module: x\n", "not a list"),
        ];
        for (text, why) in cases {
            let err = install(Some(text), &entry()).expect_err(text);
            assert!(err.contains(why), "{text:?}: {err}");
        }
    }

    const URI: &str = "file:///home/a b/.local/share/amplihack/amplifier-bundle.yaml";

    /// The app bundle entry: install adds exactly our lines (a second install changes nothing),
    /// uninstall gives back the original bytes, whatever the layout around it.
    #[test]
    fn app_bundle_round_trips_keep_every_byte_of_the_users() {
        let cases = [
            "",
            "# my settings\nbundle:\n  active: foundation   # the default\n",
            "bundle:\n  app:\n    - git+https://github.com/org/team-bundle@main\nupdates:\n  auto_prompt: false\n",
            "bundle:\n  app:\n  - file:///x/other.yaml   # the app's dumper puts items at the key's indent\n",
            "bundle:\r\n  active: dev\r\nconfig:\r\n  providers: []\r\n",
            "updates:\n  auto_prompt: false\nbundle:\n  added:\n    mine: file:///m.md\n\n# trailing\n",
        ];
        for original in cases {
            let installed = install_app(Some(original), URI).expect("installs");
            assert_eq!(
                find_app(&installed).expect("parses").as_deref(),
                Some(URI),
                "{installed}"
            );
            assert_eq!(
                install_app(Some(&installed), URI).expect("again"),
                installed
            );
            let removed = uninstall_app(&installed).expect("uninstalls");
            assert_eq!(removed.as_deref().unwrap_or(""), original, "{installed}");
        }
    }

    /// A re-install removes the legacy `modules.hooks` entry the app never mounted, and points
    /// an entry of a moved bundle file at the new one, in place.
    #[test]
    fn install_app_replaces_the_legacy_entry_and_repoints_a_moved_bundle() {
        let user = "modules:\n  tools:\n    - module: tool-x\n";
        let legacy = install(Some(user), &entry()).expect("legacy");
        let installed = install_app(Some(&legacy), URI).expect("installs");
        assert_eq!(find(&installed).expect("parses"), None, "{installed}");
        assert!(installed.starts_with(user), "{installed}");
        let moved = "file:///opt/data/amplihack/amplifier-bundle.yaml";
        let again = install_app(Some(&installed), moved).expect("repoints");
        assert_eq!(find_app(&again).expect("parses").as_deref(), Some(moved));
        assert_eq!(again.matches(BUNDLE_SUFFIX).count(), 1, "{again}");
        assert_eq!(
            uninstall_app(&again).expect("uninstalls").as_deref(),
            Some(user)
        );
        // Uninstall takes a legacy entry back too.
        assert_eq!(
            uninstall_app(&legacy).expect("legacy").as_deref(),
            Some(user)
        );
    }

    /// The app's own commands rewrite settings.yaml with PyYAML's dumper (keys sorted, comments
    /// and our marks dropped, list items at their key's indent): uninstall still removes exactly
    /// our entry, and the `app:`/`bundle:` keys that only held it.
    #[test]
    fn uninstall_after_the_apps_yaml_dumper_removes_exactly_ours() {
        let dumped = format!(
            "bundle:\n  app:\n  - {URI_PLAIN}\nupdates:\n  auto_prompt: false\n",
            URI_PLAIN = "file:///h/.local/share/amplihack/amplifier-bundle.yaml"
        );
        assert_eq!(
            uninstall_app(&dumped).expect("uninstalls").as_deref(),
            Some("updates:\n  auto_prompt: false\n")
        );
        let shared = "bundle:\n  active: dev\n  app:\n  - file:///h/.local/share/amplihack/amplifier-bundle.yaml\n  - git+https://x/team@main\n";
        assert_eq!(
            uninstall_app(shared).expect("uninstalls").as_deref(),
            Some("bundle:\n  active: dev\n  app:\n  - git+https://x/team@main\n")
        );
    }

    #[test]
    fn app_list_is_the_files_own_list() {
        assert_eq!(app_list("bundle:\n  active: x\n"), None);
        assert_eq!(
            app_list("bundle:\n  app:\n  - a\n  - b\n"),
            Some(vec!["a".to_string(), "b".to_string()])
        );
    }

    #[test]
    fn app_shapes_that_cannot_be_edited_are_refused() {
        for (text, why) in [
            ("bundle: foundation\n", "not a mapping"),
            ("bundle:\n  app: file:///x.yaml\n", "not a list"),
            ("bundle:\n  app: [a, b]\n", "one line"),
        ] {
            let err = install_app(Some(text), URI).expect_err(text);
            assert!(err.contains(why), "{text:?}: {err}");
        }
    }
}
