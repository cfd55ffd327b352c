//! What a repository's handlers may do. A project's plugin runs code the repository brought: its
//! handlers run confined ([`amplihack_platform::confine`], Landlock on Linux). By default they
//! read the system and the project, write only the project, the plugin's data directory and a
//! private temporary directory (their `TMPDIR`), never read the user's secrets ([`SECRETS`]),
//! write nothing else in the home directory and use no TCP. A plugin that needs more declares it
//! in its hooks file or manifest (`"confinement"`: `network`, `read`, `write`); the declaration is
//! part of the file trust pins, shown by `hooks trust` and `hooks list`. The user's own plugins
//! (the user level) and amplihack's own programs (a model asked, an `http` POST) run unconfined.

use std::path::{Path, PathBuf};

use amplihack_platform::confine::{Network, Rules};
use serde_json::{Value, json};

pub use crate::model::{Needs, NetworkNeed};

/// The field of a hooks file (or plugin manifest) that declares a plugin's needs.
pub const FIELD: &str = "confinement";

/// The user's secrets, relative to the home directory: what a confined handler never reads
/// (unless its plugin declares the path and the user trusted that). Credentials of tools, of the
/// agent hosts themselves, key stores and browser profiles.
pub const SECRETS: &[&str] = &[
    // Keys and tool credentials.
    ".ssh",
    ".gnupg",
    ".netrc",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".git-credentials",
    ".config/git/credentials",
    ".docker/config.json",
    ".kube",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".config/op",
    ".password-store",
    ".local/share/keyrings",
    // The agent hosts' own credentials.
    ".claude/.credentials.json",
    ".claude.json",
    ".codex/auth.json",
    ".gemini/oauth_creds.json",
    ".qwen/oauth_creds.json",
    ".factory/auth.json",
    ".copilot/config.json",
    ".config/github-copilot",
    ".local/share/opencode/auth.json",
    ".amplifier/keys.env",
    // Browser profiles (cookies, saved passwords).
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".config/vivaldi",
    "snap/firefox",
    "snap/chromium",
];

/// Devices any program writes to.
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];

/// A field error: (field, problem, fix), as config errors carry them.
type FieldError = (String, String, String);

fn field_error(field: &str, problem: impl Into<String>, fix: &str) -> FieldError {
    (format!("{FIELD}{field}"), problem.into(), fix.to_string())
}

/// Reads a `"confinement"` declaration:
/// `{"network": true | {"connect": [443], "bind": [8080]}, "read": ["~/..."], "write": ["/..."]}`.
pub fn parse(value: &Value) -> Result<Needs, FieldError> {
    let Value::Object(map) = value else {
        return Err(field_error(
            "",
            format!(
                "is {}, not an object",
                amplihack_protocol::event::json_kind(value)
            ),
            "write {\"network\": true, \"read\": [\"~/.config/tool\"], \"write\": []} with only what the plugin needs",
        ));
    };
    let mut needs = Needs::default();
    for (key, value) in map {
        match key.as_str() {
            "network" => needs.network = parse_network(value)?,
            "read" => needs.read = parse_paths(value, ".read")?,
            "write" => needs.write = parse_paths(value, ".write")?,
            other => {
                return Err(field_error(
                    &format!(".{other}"),
                    "is not a confinement field",
                    "use `network`, `read` or `write`",
                ));
            }
        }
    }
    Ok(needs)
}

fn parse_network(value: &Value) -> Result<NetworkNeed, FieldError> {
    let fix =
        "use true (any network), false, or {\"connect\": [443], \"bind\": [8080]} (TCP ports)";
    match value {
        Value::Bool(true) => Ok(NetworkNeed::Any),
        Value::Bool(false) => Ok(NetworkNeed::None),
        Value::Object(map) => {
            let mut connect = Vec::new();
            let mut bind = Vec::new();
            for (key, ports) in map {
                let into = match key.as_str() {
                    "connect" => &mut connect,
                    "bind" => &mut bind,
                    _ => {
                        return Err(field_error(
                            &format!(".network.{key}"),
                            "is not a network field",
                            fix,
                        ));
                    }
                };
                let Value::Array(list) = ports else {
                    return Err(field_error(
                        &format!(".network.{key}"),
                        "is not an array of port numbers",
                        fix,
                    ));
                };
                for (i, port) in list.iter().enumerate() {
                    let port = port
                        .as_u64()
                        .and_then(|p| u16::try_from(p).ok())
                        .filter(|p| *p > 0)
                        .ok_or_else(|| {
                            field_error(
                                &format!(".network.{key}[{i}]"),
                                "is not a TCP port (1 to 65535)",
                                fix,
                            )
                        })?;
                    into.push(port);
                }
            }
            Ok(NetworkNeed::Ports { connect, bind })
        }
        other => Err(field_error(
            ".network",
            format!("is {}", amplihack_protocol::event::json_kind(other)),
            fix,
        )),
    }
}

fn parse_paths(value: &Value, field: &str) -> Result<Vec<String>, FieldError> {
    let fix = "list absolute paths or paths under the home directory (\"~/.cache/tool\")";
    let Value::Array(list) = value else {
        return Err(field_error(field, "is not an array of paths", fix));
    };
    list.iter()
        .enumerate()
        .map(|(i, path)| match path.as_str() {
            Some(p) if p == "~" || p.starts_with("~/") || p.starts_with('/') => Ok(p.to_string()),
            _ => Err(field_error(
                &format!("{field}[{i}]"),
                "is not an absolute path or one starting with `~/`",
                fix,
            )),
        })
        .collect()
}

/// What a plugin's handlers may do, in one line: the default, plus what it declares (its paths,
/// which come from a repository, with what would act on a terminal written out).
pub fn describe(needs: &Needs) -> String {
    let shown = |paths: &[String]| {
        paths
            .iter()
            .map(|p| amplihack_protocol::printable::printable(p).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut extra = Vec::new();
    match &needs.network {
        NetworkNeed::None => {}
        NetworkNeed::Any => extra.push("any network".to_string()),
        NetworkNeed::Ports { connect, bind } => {
            let list = |ports: &[u16]| {
                ports
                    .iter()
                    .map(u16::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            };
            if !connect.is_empty() {
                extra.push(format!("TCP connect to port {}", list(connect)));
            }
            if !bind.is_empty() {
                extra.push(format!("TCP bind on port {}", list(bind)));
            }
        }
    }
    if !needs.read.is_empty() {
        extra.push(format!("read {}", shown(&needs.read)));
    }
    if !needs.write.is_empty() {
        extra.push(format!("write {}", shown(&needs.write)));
    }
    if extra.is_empty() {
        "confined: reads the system and the project, writes the project, no network".into()
    } else {
        format!("confined, and declares: {}", extra.join("; "))
    }
}

/// A declared path as a path: `~` is the home directory (none: the path is dropped).
fn expand(path: &str, home: Option<&Path>) -> Option<PathBuf> {
    match path.strip_prefix('~') {
        Some(rest) => home.map(|h| h.join(rest.trim_start_matches('/'))),
        None => Some(PathBuf::from(path)),
    }
}

/// Where the handler is: its project root, its `CLAUDE_PLUGIN_DATA`, the user's home directory,
/// and amplihack's own state and log directories (the audit log, every session's env file and
/// background answers, trust: hidden like the secrets, the plugin's data directory excepted).
pub struct Place<'a> {
    pub project: &'a Path,
    pub plugin_data: &'a Path,
    pub home: Option<&'a Path>,
    pub amplihack_state: &'a [PathBuf],
}

/// The rules a project plugin's handler runs under. The private temporary directory is added
/// where the handler starts (crate::execute).
pub fn rules(needs: &Needs, place: &Place<'_>) -> Rules {
    let Place {
        project,
        plugin_data,
        home,
        amplihack_state,
    } = *place;
    let mut write = Vec::new();
    // A project that holds the home directory (a repository at `/home`) is read, not written:
    // nothing else in the home directory is written.
    if home.is_none_or(|home| !home.starts_with(project)) {
        write.push(project.to_path_buf());
    }
    write.extend(DEVICES.iter().map(PathBuf::from));
    Rules {
        read: vec![PathBuf::from("/")],
        write,
        hidden: home
            .map(|home| SECRETS.iter().map(|s| home.join(s)).collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .chain(amplihack_state.iter().cloned())
            .collect(),
        also_read: needs.read.iter().filter_map(|p| expand(p, home)).collect(),
        // Its own data directory, inside amplihack's hidden state.
        also_write: std::iter::once(plugin_data.to_path_buf())
            .chain(needs.write.iter().filter_map(|p| expand(p, home)))
            .collect(),
        network: match &needs.network {
            NetworkNeed::None => Network::None,
            NetworkNeed::Any => Network::Any,
            NetworkNeed::Ports { connect, bind } => Network::Ports {
                connect: connect.clone(),
                bind: bind.clone(),
            },
        },
        // Added where the handler is planned (forward::plan, ExactPins).
        pinned: Vec::new(),
    }
}

/// Rules as JSON, for a background handler's collector (crate::background).
pub fn to_json(rules: &Rules) -> Value {
    let paths = |list: &[PathBuf]| -> Vec<String> {
        list.iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect()
    };
    let network = match &rules.network {
        Network::None => json!(false),
        Network::Any => json!(true),
        Network::Ports { connect, bind } => json!({"connect": connect, "bind": bind}),
    };
    json!({
        "read": paths(&rules.read),
        "write": paths(&rules.write),
        "hidden": paths(&rules.hidden),
        "also_read": paths(&rules.also_read),
        "also_write": paths(&rules.also_write),
        "network": network,
        "pinned": rules
            .pinned
            .iter()
            .map(|pin| json!([pin.path.to_string_lossy(), pin.copy.to_string_lossy()]))
            .collect::<Vec<_>>(),
    })
}

/// [`to_json`]'s rules back; `None` when the JSON is not such rules.
pub fn from_json(value: &Value) -> Option<Rules> {
    let paths = |key: &str| -> Option<Vec<PathBuf>> {
        value
            .get(key)?
            .as_array()?
            .iter()
            .map(|p| p.as_str().map(PathBuf::from))
            .collect()
    };
    Some(Rules {
        read: paths("read")?,
        write: paths("write")?,
        hidden: paths("hidden")?,
        also_read: paths("also_read")?,
        also_write: paths("also_write")?,
        network: match parse_network(value.get("network")?).ok()? {
            NetworkNeed::None => Network::None,
            NetworkNeed::Any => Network::Any,
            NetworkNeed::Ports { connect, bind } => Network::Ports { connect, bind },
        },
        pinned: match value.get("pinned") {
            None => Vec::new(),
            Some(list) => list
                .as_array()?
                .iter()
                .map(|pair| {
                    Some(amplihack_platform::exact::Pin {
                        path: PathBuf::from(pair.get(0)?.as_str()?),
                        copy: PathBuf::from(pair.get(1)?.as_str()?),
                    })
                })
                .collect::<Option<Vec<_>>>()?,
        },
    })
}

/// The pinned files of each project a call runs handlers of: its trusted files and their verified
/// copies (`amplihack_state::trust::exact_copies`), found once per project and call. Empty where
/// the system cannot show a process its own mounts (`amplihack_platform::exact::support`) or
/// confines nothing: the handler then reads the files by path, as before (`doctor` says so).
#[derive(Default)]
pub struct ExactPins {
    found: Vec<(PathBuf, Result<Vec<amplihack_platform::exact::Pin>, String>)>,
}

impl ExactPins {
    /// The pins of `project`; `Err` names a trusted file whose bytes are no longer the trusted
    /// ones.
    pub fn pins(
        &mut self,
        state: &amplihack_state::StateDir,
        project: &Path,
    ) -> Result<Vec<amplihack_platform::exact::Pin>, String> {
        if let Some((_, found)) = self.found.iter().find(|(p, _)| p == project) {
            return found.clone();
        }
        let found = if exact_applies(state) {
            use amplihack_state::trust::{self, Untrusted};
            trust::exact_copies(state, project)
                .map(|copies| {
                    copies
                        .into_iter()
                        .map(|c| amplihack_platform::exact::Pin {
                            path: c.path,
                            copy: c.copy,
                        })
                        .collect()
                })
                .map_err(|why| match why {
                    Untrusted::Changed(file) => file,
                    Untrusted::Never => project.display().to_string(),
                })
        } else {
            Ok(Vec::new())
        };
        self.found.push((project.to_path_buf(), found.clone()));
        found
    }
}

/// Whether a confined handler's pinned files are shown as their verified copies here: the
/// kernel confines (Landlock) and lets a process make its own mount namespace. Trying the latter
/// costs a fork and a namespace (about 3 ms), so its answer is kept in the state directory for
/// the boot (`exact-support`: the boot's id, then `yes` or why not); `doctor` always tries anew.
pub fn exact_applies(state: &amplihack_state::StateDir) -> bool {
    use amplihack_platform::{confine, exact};
    if matches!(confine::support(), confine::Support::Absent { .. }) {
        return false;
    }
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|id| id.trim().to_string())
        .unwrap_or_default();
    let file = state.file("exact-support");
    if !boot.is_empty()
        && let Ok(Some(known)) = amplihack_state::bounded::read_bounded(&file, 4096)
        && let Some(answer) = known.text().strip_prefix(&format!("{boot}\n"))
    {
        return answer == "yes";
    }
    let answer = match exact::support() {
        exact::Support::Available => "yes".to_string(),
        exact::Support::Absent { why } => why,
    };
    if !boot.is_empty() {
        // Best effort: not kept, it is tried again next call.
        let _ = amplihack_state::files::replace_with(
            &file,
            format!("{boot}\n{answer}").as_bytes(),
            0o600,
            amplihack_state::files::Durability::Disposable,
        );
    }
    answer == "yes"
}

/// Whether a handler of `plugin` runs confined: a project's plugin, whose program is its own code.
pub fn applies(plugin: &crate::discovery::Plugin) -> bool {
    plugin.level == crate::discovery::Level::Project
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_are_read_or_refused_with_the_field_and_the_fix() {
        let ok: &[(Value, Needs)] = &[
            (json!({}), Needs::default()),
            (
                json!({"network": true, "read": ["~/.aws/config"], "write": ["/var/tmp/x"]}),
                Needs {
                    network: NetworkNeed::Any,
                    read: vec!["~/.aws/config".into()],
                    write: vec!["/var/tmp/x".into()],
                },
            ),
            (
                json!({"network": {"connect": [443, 8080]}}),
                Needs {
                    network: NetworkNeed::Ports {
                        connect: vec![443, 8080],
                        bind: vec![],
                    },
                    ..Needs::default()
                },
            ),
        ];
        for (value, want) in ok {
            assert_eq!(parse(value).as_ref(), Ok(want), "{value}");
        }
        let refused: &[(Value, &str)] = &[
            (json!([]), "confinement"),
            (json!({"net": true}), "confinement.net"),
            (json!({"network": "yes"}), "confinement.network"),
            (
                json!({"network": {"connect": [70000]}}),
                "confinement.network.connect[0]",
            ),
            (json!({"read": ["relative/path"]}), "confinement.read[0]"),
            (json!({"write": "/tmp"}), "confinement.write"),
        ];
        for (value, field) in refused {
            let (at, _, fix) = parse(value).expect_err("refused");
            assert_eq!(at, *field, "{value}");
            assert!(!fix.is_empty());
        }
    }

    #[test]
    fn a_declaration_is_described_in_one_printable_line() {
        assert_eq!(
            describe(&Needs::default()),
            "confined: reads the system and the project, writes the project, no network"
        );
        let needs = Needs {
            network: NetworkNeed::Ports {
                connect: vec![443],
                bind: vec![8080],
            },
            read: vec!["~/.aws/config".into()],
            write: vec!["/x\u{1b}[2K".into()],
        };
        assert_eq!(
            describe(&needs),
            "confined, and declares: TCP connect to port 443; TCP bind on port 8080; read ~/.aws/config; write /x\\e[2K"
        );
    }

    #[test]
    fn rules_round_trip_through_json() {
        let needs = Needs {
            network: NetworkNeed::Ports {
                connect: vec![1234],
                bind: vec![],
            },
            read: vec!["~/.aws/config".into()],
            write: vec![],
        };
        let home = Path::new("/home/u");
        let state = home.join(".local/state/amplihack");
        let mut rules = rules(
            &needs,
            &Place {
                project: Path::new("/home/u/p"),
                plugin_data: &state.join("plugin-data/p"),
                home: Some(home),
                amplihack_state: std::slice::from_ref(&state),
            },
        );
        assert!(rules.hidden.contains(&home.join(".ssh")));
        assert!(rules.hidden.contains(&state));
        assert_eq!(rules.also_read, [home.join(".aws/config")]);
        assert_eq!(rules.also_write, [state.join("plugin-data/p")]);
        rules.pinned = vec![amplihack_platform::exact::Pin {
            path: PathBuf::from("/home/u/p/tools/check.sh"),
            copy: state.join("trusted-copies/0123"),
        }];
        assert_eq!(from_json(&to_json(&rules)), Some(rules.clone()));
        // A collector's spec from before pins were carried reads as none.
        let mut older = to_json(&rules);
        older.as_object_mut().expect("object").remove("pinned");
        rules.pinned.clear();
        assert_eq!(from_json(&older), Some(rules));
    }

    /// Tried once a boot: the answer is kept, and a kept answer is what is used.
    #[test]
    fn whether_copies_are_shown_is_tried_once_a_boot() {
        use amplihack_platform::confine;
        let Ok(boot) = std::fs::read_to_string("/proc/sys/kernel/random/boot_id") else {
            println!("SKIPPED no boot id here");
            return;
        };
        if matches!(confine::support(), confine::Support::Absent { .. }) {
            println!("SKIPPED no Landlock here");
            return;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let state = amplihack_state::StateDir::at(dir.path().to_path_buf());
        let tried = exact_applies(&state);
        let kept = std::fs::read_to_string(state.file("exact-support")).expect("kept");
        assert!(kept.starts_with(&format!("{}\n", boot.trim())), "{kept}");
        assert_eq!(kept.ends_with("\nyes"), tried);
        let said = format!("{}\nuser namespaces are switched off", boot.trim());
        std::fs::write(state.file("exact-support"), said).expect("write");
        assert!(!exact_applies(&state));
        std::fs::write(state.file("exact-support"), "another-boot\nno").expect("write");
        assert_eq!(
            exact_applies(&state),
            tried,
            "another boot's answer is tried again"
        );
    }
}
