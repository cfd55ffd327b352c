//! `amplihack install --scope managed --emit mdm --out DIR`: what IT pushes with Jamf, Intune or a
//! configuration tool instead of running the installer on each machine. Nothing on this machine
//! changes; DIR gets:
//! - `macos/com.anthropic.claudecode.mobileconfig`: a configuration profile for Claude Code's
//!   managed preferences domain, its keys those of `managed-settings.json` as plist values;
//! - `macos/com.openai.codex.mobileconfig`: Codex's domain with `requirements_toml_base64`, the
//!   managed requirements (amplihack's `[hooks]`) in base64;
//! - `windows/ClaudeCode.reg`: Claude Code's policy key `HKLM\SOFTWARE\Policies\ClaudeCode`, value
//!   `Settings` (the settings as JSON), UTF-16LE as regedit writes it. amplihack has no native
//!   Windows build: the settings set `wslInheritsWindowsSettings`, so Claude Code in WSL reads
//!   them, and the hooks run the Linux binaries inside WSL;
//! - `linux/etc/...`: the plain files of the managed scope (`claude-code/managed-settings.json`,
//!   `codex/requirements.toml`, `github-copilot/policy.d/amplihack.json`), to copy to `/`.
//!
//! Every form names the binaries where they will be on the machines (`--bin-dir`, default
//! `/usr/local/bin`), which the same push must put there.

use std::path::{Path, PathBuf};

use base64::Engine;
use serde_json::{Value, json};
use sha2::Digest;

use crate::error::CommandError;
use crate::hosts::{codex_requirements, copilot_policy};
use crate::registration::{self, Host};

/// Claude Code's managed preferences domain (macOS).
pub const CLAUDE_DOMAIN: &str = "com.anthropic.claudecode";
/// Codex's managed preferences domain (macOS) and its requirements key.
pub const CODEX_DOMAIN: &str = "com.openai.codex";
pub const CODEX_KEY: &str = "requirements_toml_base64";
/// Claude Code's Windows policy key and value.
pub const CLAUDE_REG_KEY: &str = r"HKEY_LOCAL_MACHINE\SOFTWARE\Policies\ClaudeCode";
pub const CLAUDE_REG_VALUE: &str = "Settings";
const REG_HEADER: &str = "Windows Registry Editor Version 5.00";

/// `--emit`'s forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Emit {
    /// macOS configuration profiles, a Windows .reg and the Linux files, under --out
    Mdm,
}

/// The contents of each form, for `binary` (where `amplihack-hooks` is on the machines).
pub struct Forms {
    /// Claude Code's managed settings: amplihack's `hooks`.
    pub claude: Value,
    /// Codex's managed requirements: amplihack's `[hooks]`.
    pub codex: String,
    /// Copilot CLI's policy document.
    pub copilot: Value,
}

fn hooks(host: Host, binary: &Path) -> Result<Value, CommandError> {
    let mut value = json!({});
    registration::install(&mut value, binary, host)
        .map_err(|e| CommandError::refused(e.message()))?;
    Ok(value)
}

impl Forms {
    pub fn new(binary: &Path) -> Result<Forms, CommandError> {
        let claude = hooks(Host::ClaudeCode, binary)?;
        let codex_hooks = hooks(Host::Codex, binary)?;
        let empty = serde_json::Map::new();
        let codex_map = codex_hooks["hooks"].as_object().unwrap_or(&empty);
        let managed_dir = binary.parent().unwrap_or(Path::new("/usr/local/bin"));
        let codex = codex_requirements::install(
            None,
            &codex_requirements::Wanted {
                hooks: codex_map,
                managed_dir,
                hooks_only: false,
            },
        )
        .map_err(|e| CommandError::refused(e.to_string()))?;
        let copilot_hooks = hooks(Host::Copilot, binary)?;
        let copilot =
            copilot_policy::document(copilot_hooks["hooks"].as_object().unwrap_or(&empty));
        Ok(Forms {
            claude,
            codex,
            copilot,
        })
    }
}

/// A JSON value as a plist value (numbers as integers where they are).
fn plist_of(value: &Value) -> plist::Value {
    match value {
        Value::Null => plist::Value::String(String::new()),
        Value::Bool(b) => plist::Value::Boolean(*b),
        Value::Number(n) => n.as_i64().map_or_else(
            || plist::Value::Real(n.as_f64().unwrap_or_default()),
            |i| plist::Value::Integer(i.into()),
        ),
        Value::String(s) => plist::Value::String(s.clone()),
        Value::Array(items) => plist::Value::Array(items.iter().map(plist_of).collect()),
        Value::Object(map) => {
            plist::Value::Dictionary(map.iter().map(|(k, v)| (k.clone(), plist_of(v))).collect())
        }
    }
}

/// A stable UUID for a payload: from its identifier and content (the same input, the same file).
fn uuid(seed: &str) -> String {
    let hash = sha2::Sha256::digest(seed.as_bytes());
    let hex: String = hash.iter().take(16).map(|b| format!("{b:02X}")).collect();
    format!(
        "{}-{}-5{}-A{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        &hex[17..20],
        &hex[20..32]
    )
}

/// A configuration profile installing `keys` in the managed preferences `domain`, for the
/// machine (`PayloadScope` System).
pub fn mobileconfig(domain: &str, name: &str, keys: plist::Dictionary) -> plist::Value {
    let seed = format!("{domain}{:?}", keys);
    let mut payload = keys;
    for (key, value) in [
        ("PayloadType", plist::Value::String(domain.into())),
        (
            "PayloadIdentifier",
            plist::Value::String(format!("com.amplihack.managed.{domain}")),
        ),
        (
            "PayloadUUID",
            plist::Value::String(uuid(&format!("payload{seed}"))),
        ),
        ("PayloadVersion", plist::Value::Integer(1.into())),
        ("PayloadDisplayName", plist::Value::String(name.into())),
    ] {
        payload.insert(key.into(), value);
    }
    let mut profile = plist::Dictionary::new();
    for (key, value) in [
        (
            "PayloadContent",
            plist::Value::Array(vec![plist::Value::Dictionary(payload)]),
        ),
        ("PayloadDisplayName", plist::Value::String(name.into())),
        (
            "PayloadDescription",
            plist::Value::String(format!(
                "amplihack's hooks for {domain}, written by `amplihack install --scope managed --emit mdm`"
            )),
        ),
        (
            "PayloadIdentifier",
            plist::Value::String(format!("com.amplihack.profile.{domain}")),
        ),
        ("PayloadType", plist::Value::String("Configuration".into())),
        (
            "PayloadUUID",
            plist::Value::String(uuid(&format!("profile{seed}"))),
        ),
        ("PayloadVersion", plist::Value::Integer(1.into())),
        ("PayloadScope", plist::Value::String("System".into())),
    ] {
        profile.insert(key.into(), value);
    }
    plist::Value::Dictionary(profile)
}

/// A `.reg` string value: `\` and `"` escaped, as regedit writes them.
fn reg_string(text: &str) -> String {
    text.replace('\\', r"\\").replace('"', "\\\"")
}

/// The `.reg` text (before encoding) setting `name` to `value` under `key`.
pub fn reg_text(key: &str, name: &str, value: &str) -> String {
    format!(
        "{REG_HEADER}\r\n\r\n[{key}]\r\n\"{}\"=\"{}\"\r\n",
        reg_string(name),
        reg_string(value)
    )
}

/// The bytes of a `.reg` file: UTF-16LE with its byte order mark, as regedit exports.
pub fn reg_bytes(text: &str) -> Vec<u8> {
    let mut bytes = vec![0xFF, 0xFE];
    for unit in text.encode_utf16() {
        bytes.extend(unit.to_le_bytes());
    }
    bytes
}

/// One value a `.reg` file sets: its key, name and string.
#[derive(Debug, PartialEq, Eq)]
pub struct RegValue {
    pub key: String,
    pub name: String,
    pub value: String,
}

/// Reads a `.reg` file back by its grammar: a UTF-16LE (with BOM) or UTF-8 text; the header line;
/// then key lines `[HKEY_…\…]` and string values `"name"="value"` (escapes `\\` and `\"`),
/// blank lines and `;` comments. Anything else is an error naming the line.
pub fn parse_reg(bytes: &[u8]) -> Result<Vec<RegValue>, String> {
    let text = match bytes {
        [0xFF, 0xFE, rest @ ..] => {
            if rest.len() % 2 != 0 {
                return Err("UTF-16LE text of odd length".into());
            }
            let units: Vec<u16> = rest
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            String::from_utf16(&units).map_err(|e| e.to_string())?
        }
        _ => String::from_utf8(bytes.to_vec()).map_err(|e| e.to_string())?,
    };
    let mut lines = text.split("\r\n").enumerate();
    match lines.next() {
        Some((_, REG_HEADER)) => {}
        other => return Err(format!("line 1: expected `{REG_HEADER}`, found {other:?}")),
    }
    let mut key: Option<String> = None;
    let mut values = Vec::new();
    for (n, line) in lines {
        let n = n + 1;
        if line.is_empty() || line.starts_with(';') {
            continue;
        }
        if let Some(inner) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if !inner.starts_with("HKEY_") || inner.contains(['[', ']']) {
                return Err(format!("line {n}: not a registry key: {line}"));
            }
            key = Some(inner.to_string());
            continue;
        }
        let Some(current) = &key else {
            return Err(format!("line {n}: a value before any key"));
        };
        let (name, rest) =
            quoted(line).ok_or_else(|| format!("line {n}: not \"name\"=\"value\""))?;
        let rest = rest
            .strip_prefix('=')
            .ok_or_else(|| format!("line {n}: no `=` after the name"))?;
        let (value, rest) =
            quoted(rest).ok_or_else(|| format!("line {n}: the value is not a quoted string"))?;
        if !rest.is_empty() {
            return Err(format!("line {n}: text after the value: {rest}"));
        }
        values.push(RegValue {
            key: current.clone(),
            name,
            value,
        });
    }
    Ok(values)
}

/// A `"…"` string at the start of `text` (escapes `\\`, `\"`), and what follows it.
fn quoted(text: &str) -> Option<(String, &str)> {
    let mut chars = text.strip_prefix('"')?.char_indices();
    let mut out = String::new();
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' => match chars.next()? {
                (_, e @ ('\\' | '"')) => out.push(e),
                _ => return None,
            },
            '"' => return Some((out, &text[at + 2..])),
            c => out.push(c),
        }
    }
    None
}

/// Writes every form under `out`: the files written.
pub fn emit(out: &Path, binary: &Path) -> Result<Vec<PathBuf>, CommandError> {
    let forms = Forms::new(binary)?;
    let mut claude_settings = forms.claude.clone();
    let claude_json = serde_json::to_string_pretty(&forms.claude)
        .map_err(|e| CommandError::refused(e.to_string()))?;
    claude_settings["wslInheritsWindowsSettings"] = json!(true);
    let reg_json = serde_json::to_string(&claude_settings)
        .map_err(|e| CommandError::refused(e.to_string()))?;
    let claude_keys = match plist_of(&forms.claude) {
        plist::Value::Dictionary(d) => d,
        _ => plist::Dictionary::new(),
    };
    let mut codex_keys = plist::Dictionary::new();
    codex_keys.insert(
        CODEX_KEY.into(),
        plist::Value::String(base64::engine::general_purpose::STANDARD.encode(&forms.codex)),
    );
    let xml = |value: plist::Value| -> Result<Vec<u8>, CommandError> {
        let mut bytes = Vec::new();
        value
            .to_writer_xml(&mut bytes)
            .map_err(|e| CommandError::refused(e.to_string()))?;
        bytes.push(b'\n');
        Ok(bytes)
    };
    let files: Vec<(PathBuf, Vec<u8>)> = vec![
        (
            out.join("macos")
                .join(format!("{CLAUDE_DOMAIN}.mobileconfig")),
            xml(mobileconfig(
                CLAUDE_DOMAIN,
                "amplihack for Claude Code",
                claude_keys,
            ))?,
        ),
        (
            out.join("macos")
                .join(format!("{CODEX_DOMAIN}.mobileconfig")),
            xml(mobileconfig(
                CODEX_DOMAIN,
                "amplihack for Codex",
                codex_keys,
            ))?,
        ),
        (
            out.join("windows/ClaudeCode.reg"),
            reg_bytes(&reg_text(CLAUDE_REG_KEY, CLAUDE_REG_VALUE, &reg_json)),
        ),
        (
            out.join("linux/etc/claude-code/managed-settings.json"),
            format!("{claude_json}\n").into_bytes(),
        ),
        (
            out.join("linux/etc/codex/requirements.toml"),
            forms.codex.clone().into_bytes(),
        ),
        (
            out.join("linux/etc/github-copilot/policy.d")
                .join(copilot_policy::FILE_NAME),
            format!(
                "{}\n",
                serde_json::to_string_pretty(&forms.copilot)
                    .map_err(|e| CommandError::refused(e.to_string()))?
            )
            .into_bytes(),
        ),
    ];
    let mut written = Vec::new();
    for (path, bytes) in files {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| CommandError::io("create", dir, e))?;
        }
        std::fs::write(&path, bytes).map_err(|e| CommandError::io("write", &path, e))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every form parses back into what amplihack registers: the profiles with the `plist`
    /// crate (XML, as `plutil` reads it), Codex's base64 requirements as TOML, the `.reg` by its
    /// grammar, the Linux files as JSON and TOML.
    #[test]
    fn every_form_parses_back() {
        let out = tempfile::tempdir().expect("tempdir");
        let binary = Path::new("/usr/local/bin/amplihack-hooks");
        let written = emit(out.path(), binary).expect("emitted");
        assert_eq!(written.len(), 6);
        let forms = Forms::new(binary).expect("forms");
        let ours = registration::find_ours(&forms.claude).len();
        assert!(ours > 0);

        let profile = |name: &str| {
            let value =
                plist::Value::from_file(out.path().join("macos").join(name)).expect("a plist");
            let dict = value.into_dictionary().expect("a dict");
            assert_eq!(dict["PayloadType"].as_string(), Some("Configuration"));
            assert_eq!(dict["PayloadScope"].as_string(), Some("System"));
            let content = dict["PayloadContent"].as_array().expect("content");
            assert_eq!(content.len(), 1);
            content[0].as_dictionary().expect("payload").clone()
        };
        let claude = profile("com.anthropic.claudecode.mobileconfig");
        assert_eq!(claude["PayloadType"].as_string(), Some(CLAUDE_DOMAIN));
        let hooks = json_of(&claude["hooks"]);
        assert_eq!(
            registration::find_ours(&json!({"hooks": hooks})).len(),
            ours,
            "the profile holds every entry"
        );
        let codex = profile("com.openai.codex.mobileconfig");
        assert_eq!(codex["PayloadType"].as_string(), Some(CODEX_DOMAIN));
        let toml = base64::engine::general_purpose::STANDARD
            .decode(codex[CODEX_KEY].as_string().expect("a string"))
            .expect("base64");
        let toml = String::from_utf8(toml).expect("utf-8");
        assert_eq!(toml, forms.codex);
        assert!(!codex_requirements::ours(&toml).is_empty());
        assert_eq!(
            codex_requirements::said(&toml).managed_dir.as_deref(),
            Some("/usr/local/bin")
        );

        let reg = std::fs::read(out.path().join("windows/ClaudeCode.reg")).expect("reg");
        let values = parse_reg(&reg).expect("the .reg grammar");
        assert_eq!(values.len(), 1);
        assert_eq!(values[0].key, CLAUDE_REG_KEY);
        assert_eq!(values[0].name, CLAUDE_REG_VALUE);
        let settings: Value = serde_json::from_str(&values[0].value).expect("JSON in the value");
        assert_eq!(settings["wslInheritsWindowsSettings"], true);
        assert_eq!(registration::find_ours(&settings).len(), ours);

        let linux =
            |rel: &str| std::fs::read_to_string(out.path().join("linux/etc").join(rel)).expect(rel);
        let settings: Value =
            serde_json::from_str(&linux("claude-code/managed-settings.json")).expect("json");
        assert_eq!(settings, forms.claude);
        assert_eq!(linux("codex/requirements.toml"), forms.codex);
        let policy: Value =
            serde_json::from_str(&linux("github-copilot/policy.d/amplihack.json")).expect("json");
        assert_eq!(policy["version"], 1);
        assert!(!copilot_policy::ours(&policy).is_empty());
    }

    fn json_of(value: &plist::Value) -> Value {
        match value {
            plist::Value::Dictionary(d) => {
                Value::Object(d.iter().map(|(k, v)| (k.clone(), json_of(v))).collect())
            }
            plist::Value::Array(a) => Value::Array(a.iter().map(json_of).collect()),
            plist::Value::Boolean(b) => Value::Bool(*b),
            plist::Value::Integer(i) => json!(i.as_signed()),
            plist::Value::String(s) => Value::String(s.clone()),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn the_reg_grammar_refuses_what_regedit_would() {
        let good = reg_text(CLAUDE_REG_KEY, "Settings", r#"{"a":"b\\c"}"#);
        let parsed = parse_reg(good.as_bytes()).expect("good");
        assert_eq!(parsed[0].value, r#"{"a":"b\\c"}"#);
        let cases = [
            "REGEDIT4\r\n",
            "Windows Registry Editor Version 5.00\r\n\r\n\"a\"=\"b\"\r\n",
            "Windows Registry Editor Version 5.00\r\n\r\n[SOFTWARE\\X]\r\n",
            "Windows Registry Editor Version 5.00\r\n\r\n[HKEY_LOCAL_MACHINE\\X]\r\n\"a\"=\"b\r\n",
            "Windows Registry Editor Version 5.00\r\n\r\n[HKEY_LOCAL_MACHINE\\X]\r\n\"a\"=\"b\\q\"\r\n",
        ];
        for case in cases {
            assert!(parse_reg(case.as_bytes()).is_err(), "{case:?}");
        }
    }
}
