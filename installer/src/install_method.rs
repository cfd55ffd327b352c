//! How this amplihack was installed, read from where its binaries live, so that `install`
//! registers a package manager's binaries where they are and `update` leaves them to it.
//!
//! | where `amplihack` lives | method |
//! |-------------------------|--------|
//! | `…/node_modules/@amplihack/<platform>/bin/` (the package's `package.json` names it) | npm: global (`<prefix>/lib/node_modules`), a project's, or npx's cache (`…/_npx/…`) |
//! | `<prefix>/bin/`, listed in the `RECORD` of `<prefix>/lib*/python*/{site,dist}-packages/amplihack-*.dist-info` | a Python environment: `uv tool` (`uv-receipt.toml`), pipx (`pipx_metadata.json`), uvx (inside a cache: a `CACHEDIR.TAG` above), else pip or `uv pip` (the dist-info's `INSTALLER`) |
//! | `<root>/bin/`, listed under `amplihack` in `<root>/.crates2.json` | `cargo install` (or `cargo binstall`) |
//! | anywhere else | amplihack's own: a release archive, `curl \| sh`, a build from a clone |
//!
//! Nothing is written, and a marker that cannot be read means "not that method".

use std::path::{Component, Path, PathBuf};

/// The npm package that holds the binaries for each platform is `@amplihack/<platform>`.
pub const NPM_SCOPE: &str = "@amplihack";
/// The name of the npm package, the PyPI project and the crate.
pub const PACKAGE: &str = "amplihack";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstallMethod {
    /// amplihack's own files: a release archive (`curl | sh`), a build from a clone; `update`
    /// replaces them.
    Own,
    Npm(Npm),
    Python(Python),
    /// `cargo install` (or `cargo binstall`) into `root` (`<root>/bin` holds the binaries).
    Cargo {
        root: PathBuf,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Npm {
    /// `npm install -g`: `<prefix>/lib/node_modules/…`.
    Global { prefix: PathBuf },
    /// `npm install` in a project: `<project>/node_modules/…`.
    Project { dir: PathBuf },
    /// `npx amplihack …`: npx's cache, which npm may empty or replace at any time.
    Npx,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Python {
    /// `uv tool install amplihack`.
    UvTool,
    /// `pipx install amplihack`.
    Pipx,
    /// `uvx amplihack …`: an environment in uv's cache.
    Uvx,
    /// `pip install` (or `uv pip install`, `installer` says which) into the environment at
    /// `prefix` (a virtual environment, `--user`'s `~/.local`, or the system's).
    Env { prefix: PathBuf, installer: String },
}

impl InstallMethod {
    /// The method of the running `amplihack`.
    pub fn current() -> InstallMethod {
        std::env::current_exe()
            .ok()
            .map(|exe| exe.canonicalize().unwrap_or(exe))
            .map_or(InstallMethod::Own, |exe| InstallMethod::detect(&exe))
    }

    /// The method that put the binary at `exe` (a resolved path) there.
    pub fn detect(exe: &Path) -> InstallMethod {
        let Some(dir) = exe.parent() else {
            return InstallMethod::Own;
        };
        if let Some(npm) = npm(dir) {
            return InstallMethod::Npm(npm);
        }
        if let Some(python) = python(exe, dir) {
            return InstallMethod::Python(python);
        }
        if let Some(root) = cargo(exe, dir) {
            return InstallMethod::Cargo { root };
        }
        InstallMethod::Own
    }

    /// The package manager that owns the binaries, as people call it; `None` for amplihack's own.
    pub fn manager(&self) -> Option<&'static str> {
        Some(match self {
            InstallMethod::Own => return None,
            InstallMethod::Npm(Npm::Npx) => "npx",
            InstallMethod::Npm(_) => "npm",
            InstallMethod::Python(Python::UvTool) => "uv tool",
            InstallMethod::Python(Python::Uvx) => "uvx",
            InstallMethod::Python(Python::Pipx) => "pipx",
            InstallMethod::Python(Python::Env { installer, .. }) if installer == "uv" => "uv pip",
            InstallMethod::Python(Python::Env { .. }) => "pip",
            InstallMethod::Cargo { .. } => "cargo",
        })
    }

    /// The command that moves this installation to the newest release.
    pub fn update_command(&self) -> Option<String> {
        Some(match self {
            InstallMethod::Own => return None,
            InstallMethod::Npm(Npm::Global { .. }) => format!("npm install -g {PACKAGE}@latest"),
            InstallMethod::Npm(Npm::Project { dir }) => {
                format!("npm install {PACKAGE}@latest (in {})", dir.display())
            }
            InstallMethod::Npm(Npm::Npx) => format!("npx {PACKAGE}@latest install"),
            InstallMethod::Python(Python::UvTool) => format!("uv tool upgrade {PACKAGE}"),
            InstallMethod::Python(Python::Pipx) => format!("pipx upgrade {PACKAGE}"),
            InstallMethod::Python(Python::Uvx) => format!("uvx {PACKAGE}@latest install"),
            InstallMethod::Python(Python::Env { prefix, installer }) => {
                let python = prefix.join("bin/python");
                if installer == "uv" {
                    format!(
                        "uv pip install --python {} --upgrade {PACKAGE}",
                        python.display()
                    )
                } else if python.exists() {
                    format!("{} -m pip install --upgrade {PACKAGE}", python.display())
                } else {
                    format!("python3 -m pip install --upgrade {PACKAGE}")
                }
            }
            InstallMethod::Cargo { .. } => format!("cargo install --locked {PACKAGE}"),
        })
    }

    /// Whether the package manager keeps the binaries where they are, so the hosts are given
    /// that path: npm's global or project packages, a Python environment, a cargo root. npx's
    /// and uvx's caches come and go: from there `install` copies the binaries out.
    pub fn registers_in_place(&self) -> bool {
        !matches!(
            self,
            InstallMethod::Own | InstallMethod::Npm(Npm::Npx) | InstallMethod::Python(Python::Uvx)
        )
    }
}

fn name_is(path: &Path, name: &str) -> bool {
    path.file_name().is_some_and(|n| n == name)
}

/// `…/node_modules/@amplihack/<platform>/bin` whose `package.json` names `@amplihack/<platform>`.
fn npm(bin: &Path) -> Option<Npm> {
    if !name_is(bin, "bin") {
        return None;
    }
    let package = bin.parent()?;
    let scope = package.parent()?;
    let node_modules = scope.parent()?;
    if !name_is(scope, NPM_SCOPE) || !name_is(node_modules, "node_modules") {
        return None;
    }
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(package.join("package.json")).ok()?).ok()?;
    let name = manifest.get("name")?.as_str()?;
    if name.strip_prefix(NPM_SCOPE)?.strip_prefix('/').is_none()
        || package.file_name()? != name.rsplit('/').next()?
    {
        return None;
    }
    if package
        .components()
        .any(|c| matches!(c, Component::Normal(n) if n == "_npx"))
    {
        return Some(Npm::Npx);
    }
    // The outermost node_modules: a global package's optional dependency may be nested in it.
    let outermost = package
        .ancestors()
        .filter(|a| name_is(a, "node_modules"))
        .last()?;
    let above = outermost.parent()?;
    Some(match above.parent() {
        Some(prefix) if name_is(above, "lib") => Npm::Global {
            prefix: prefix.to_path_buf(),
        },
        _ => Npm::Project {
            dir: above.to_path_buf(),
        },
    })
}

/// `exe` in `<prefix>/bin`, listed in the RECORD of an installed `amplihack` distribution.
fn python(exe: &Path, bin: &Path) -> Option<Python> {
    let prefix = bin.parent()?;
    let dist_info = python_dist_infos(prefix)
        .into_iter()
        .find(|d| record_lists(d, exe))?;
    Some(if prefix.join("uv-receipt.toml").is_file() {
        Python::UvTool
    } else if prefix.join("pipx_metadata.json").is_file() {
        Python::Pipx
    } else if prefix.ancestors().any(|a| a.join("CACHEDIR.TAG").is_file()) {
        Python::Uvx
    } else {
        let installer = std::fs::read_to_string(dist_info.join("INSTALLER"))
            .map(|s| s.trim().to_string())
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "pip".to_string());
        Python::Env {
            prefix: prefix.to_path_buf(),
            installer,
        }
    })
}

/// Every `amplihack-<version>.dist-info` of `<prefix>/{lib,lib64}/python*/{site,dist}-packages`.
fn python_dist_infos(prefix: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for lib in ["lib", "lib64"] {
        let Ok(pythons) = std::fs::read_dir(prefix.join(lib)) else {
            continue;
        };
        for python in pythons.flatten() {
            if !python.file_name().to_string_lossy().starts_with("python") {
                continue;
            }
            for packages in ["site-packages", "dist-packages"] {
                let Ok(entries) = std::fs::read_dir(python.path().join(packages)) else {
                    continue;
                };
                found.extend(entries.flatten().map(|e| e.path()).filter(|p| {
                    let name = p.file_name().map(|n| n.to_string_lossy().to_lowercase());
                    name.is_some_and(|n| {
                        n.strip_prefix(PACKAGE)
                            .and_then(|rest| rest.strip_prefix('-'))
                            .is_some_and(|rest| {
                                rest.ends_with(".dist-info")
                                    && rest.starts_with(|c: char| c.is_ascii_digit())
                            })
                    })
                }));
            }
        }
    }
    found
}

/// Whether the `RECORD` of `dist_info` lists `exe` (its paths are relative to the directory the
/// dist-info is in).
fn record_lists(dist_info: &Path, exe: &Path) -> bool {
    let Ok(record) = std::fs::read_to_string(dist_info.join("RECORD")) else {
        return false;
    };
    let Some(packages) = dist_info.parent() else {
        return false;
    };
    let exe = exe.canonicalize().unwrap_or_else(|_| exe.to_path_buf());
    record.lines().any(|line| {
        let path = line.split(',').next().unwrap_or_default().trim_matches('"');
        !path.is_empty()
            && Path::new(path).file_name() == exe.file_name()
            && packages
                .join(path)
                .canonicalize()
                .is_ok_and(|listed| listed == exe)
    })
}

/// `exe` in `<root>/bin`, one of the `amplihack` package's binaries in `<root>/.crates2.json`.
fn cargo(exe: &Path, bin: &Path) -> Option<PathBuf> {
    if !name_is(bin, "bin") {
        return None;
    }
    let root = bin.parent()?;
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join(".crates2.json")).ok()?).ok()?;
    let name = exe.file_name()?.to_str()?;
    record
        .get("installs")?
        .as_object()?
        .iter()
        .any(|(package, install)| {
            package.split_whitespace().next() == Some(PACKAGE)
                && install
                    .get("bins")
                    .and_then(|b| b.as_array())
                    .is_some_and(|bins| bins.iter().any(|b| b.as_str() == Some(name)))
        })
        .then(|| root.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Lays out `files` (path relative to the scratch root, text; `{root}` is replaced) and
    /// detects the method of `exe`.
    fn detect_in(files: &[(&str, &str)], exe: &str) -> (InstallMethod, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for (path, text) in files {
            write(
                &root.join(path),
                &text.replace("{root}", &root.display().to_string()),
            );
        }
        let method = InstallMethod::detect(&root.join(exe));
        // The method's paths are made relative to the scratch root, to compare.
        let strip = |p: &Path| p.strip_prefix(&root).unwrap().to_path_buf();
        let method = match method {
            InstallMethod::Npm(Npm::Global { prefix }) => InstallMethod::Npm(Npm::Global {
                prefix: strip(&prefix),
            }),
            InstallMethod::Npm(Npm::Project { dir }) => {
                InstallMethod::Npm(Npm::Project { dir: strip(&dir) })
            }
            InstallMethod::Python(Python::Env { prefix, installer }) => {
                InstallMethod::Python(Python::Env {
                    prefix: strip(&prefix),
                    installer,
                })
            }
            InstallMethod::Cargo { root: r } => InstallMethod::Cargo { root: strip(&r) },
            other => other,
        };
        (method, root)
    }

    const PLATFORM_PACKAGE: &str = r#"{"name": "@amplihack/linux-x64", "version": "0.1.0"}"#;
    const RECORD: &str = "amplihack-0.1.0.dist-info/METADATA,sha256=x,1\n../../../bin/amplihack,sha256=y,2\n../../../bin/amplihack-hooks,sha256=z,3\namplihack-0.1.0.dist-info/RECORD,,\n";
    const CRATES2: &str = r#"{"installs": {"amplihack 0.1.0 (registry+https://github.com/rust-lang/crates.io-index)": {"bins": ["amplihack", "amplihack-hooks"]}}}"#;

    /// (what, the files laid out, the binary, the method detected).
    type Case = (
        &'static str,
        Vec<(String, &'static str)>,
        &'static str,
        InstallMethod,
    );

    #[test]
    fn install_methods_are_read_from_where_the_binary_lives() {
        let npm_pkg = "node_modules/@amplihack/linux-x64";
        let site = "venv/lib/python3.11/site-packages/amplihack-0.1.0.dist-info";
        let table: Vec<Case> = vec![
            (
                "npm global, the platform package beside the main one",
                vec![
                    (
                        format!("prefix/lib/{npm_pkg}/package.json"),
                        PLATFORM_PACKAGE,
                    ),
                    (format!("prefix/lib/{npm_pkg}/bin/amplihack"), "bin"),
                ],
                "prefix/lib/node_modules/@amplihack/linux-x64/bin/amplihack",
                InstallMethod::Npm(Npm::Global {
                    prefix: "prefix".into(),
                }),
            ),
            (
                "npm global, nested in the main package",
                vec![(
                    format!("usr/lib/node_modules/amplihack/{npm_pkg}/package.json"),
                    PLATFORM_PACKAGE,
                )],
                "usr/lib/node_modules/amplihack/node_modules/@amplihack/linux-x64/bin/amplihack-hooks",
                InstallMethod::Npm(Npm::Global {
                    prefix: "usr".into(),
                }),
            ),
            (
                "npm, a project's",
                vec![(format!("proj/{npm_pkg}/package.json"), PLATFORM_PACKAGE)],
                "proj/node_modules/@amplihack/linux-x64/bin/amplihack",
                InstallMethod::Npm(Npm::Project { dir: "proj".into() }),
            ),
            (
                "npx's cache",
                vec![(
                    format!(".npm/_npx/3f2a/{npm_pkg}/package.json"),
                    PLATFORM_PACKAGE,
                )],
                ".npm/_npx/3f2a/node_modules/@amplihack/linux-x64/bin/amplihack",
                InstallMethod::Npm(Npm::Npx),
            ),
            (
                "a node_modules package of another name is not ours",
                vec![(
                    format!("proj/{npm_pkg}/package.json"),
                    r#"{"name": "@other/linux-x64"}"#,
                )],
                "proj/node_modules/@amplihack/linux-x64/bin/amplihack",
                InstallMethod::Own,
            ),
            (
                "no package.json: not npm's",
                vec![],
                "proj/node_modules/@amplihack/linux-x64/bin/amplihack",
                InstallMethod::Own,
            ),
            (
                "pip into a virtual environment",
                vec![
                    (format!("{site}/RECORD"), RECORD),
                    (format!("{site}/INSTALLER"), "pip\n"),
                    ("venv/bin/amplihack".into(), "bin"),
                ],
                "venv/bin/amplihack",
                InstallMethod::Python(Python::Env {
                    prefix: "venv".into(),
                    installer: "pip".into(),
                }),
            ),
            (
                "uv pip, a Debian dist-packages, lib64",
                vec![
                    (
                        "venv/lib64/python3.12/dist-packages/amplihack-0.2.0.dist-info/RECORD"
                            .into(),
                        RECORD,
                    ),
                    (
                        "venv/lib64/python3.12/dist-packages/amplihack-0.2.0.dist-info/INSTALLER"
                            .into(),
                        "uv",
                    ),
                    ("venv/bin/amplihack-hooks".into(), "bin"),
                ],
                "venv/bin/amplihack-hooks",
                InstallMethod::Python(Python::Env {
                    prefix: "venv".into(),
                    installer: "uv".into(),
                }),
            ),
            (
                "uv tool install",
                vec![
                    (format!("{site}/RECORD"), RECORD),
                    ("venv/uv-receipt.toml".into(), "[tool]"),
                    ("venv/bin/amplihack".into(), "bin"),
                ],
                "venv/bin/amplihack",
                InstallMethod::Python(Python::UvTool),
            ),
            (
                "pipx install",
                vec![
                    (format!("{site}/RECORD"), RECORD),
                    ("venv/pipx_metadata.json".into(), "{}"),
                    ("venv/bin/amplihack".into(), "bin"),
                ],
                "venv/bin/amplihack",
                InstallMethod::Python(Python::Pipx),
            ),
            (
                "uvx: an environment in uv's cache",
                vec![
                    (
                        "CACHEDIR.TAG".into(),
                        "Signature: 8a477f597d28d172789f06886806bc55",
                    ),
                    (format!("{site}/RECORD"), RECORD),
                    ("venv/bin/amplihack".into(), "bin"),
                ],
                "venv/bin/amplihack",
                InstallMethod::Python(Python::Uvx),
            ),
            (
                "a Python environment whose RECORD does not list the binary",
                vec![
                    (
                        format!("{site}/RECORD"),
                        "amplihack-0.1.0.dist-info/METADATA,,\n",
                    ),
                    ("venv/bin/amplihack".into(), "bin"),
                ],
                "venv/bin/amplihack",
                InstallMethod::Own,
            ),
            (
                "another distribution whose name starts the same",
                vec![
                    (
                        "venv/lib/python3.11/site-packages/amplihack_extra-1.0.dist-info/RECORD"
                            .into(),
                        RECORD,
                    ),
                    ("venv/bin/amplihack".into(), "bin"),
                ],
                "venv/bin/amplihack",
                InstallMethod::Own,
            ),
            (
                "cargo install",
                vec![
                    (".cargo/.crates2.json".into(), CRATES2),
                    (".cargo/bin/amplihack".into(), "bin"),
                ],
                ".cargo/bin/amplihack",
                InstallMethod::Cargo {
                    root: ".cargo".into(),
                },
            ),
            (
                "a cargo root where another crate installed a binary of that name",
                vec![(
                    ".cargo/.crates2.json".into(),
                    r#"{"installs": {"other 1.0.0 (registry+x)": {"bins": ["amplihack"]}}}"#,
                )],
                ".cargo/bin/amplihack",
                InstallMethod::Own,
            ),
            (
                "curl | sh: ~/.local/bin",
                vec![(".local/bin/amplihack".into(), "bin")],
                ".local/bin/amplihack",
                InstallMethod::Own,
            ),
        ];
        for (case, files, exe, want) in table {
            let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
            let (got, _root) = detect_in(&files, exe);
            assert_eq!(got, want, "{case}");
        }
    }

    #[test]
    fn each_package_manager_is_told_its_own_update_command() {
        for (method, manager, command, in_place) in [
            (
                InstallMethod::Npm(Npm::Global {
                    prefix: "/usr".into(),
                }),
                "npm",
                "npm install -g amplihack@latest",
                true,
            ),
            (
                InstallMethod::Npm(Npm::Project { dir: "/p".into() }),
                "npm",
                "npm install amplihack@latest (in /p)",
                true,
            ),
            (
                InstallMethod::Npm(Npm::Npx),
                "npx",
                "npx amplihack@latest install",
                false,
            ),
            (
                InstallMethod::Python(Python::UvTool),
                "uv tool",
                "uv tool upgrade amplihack",
                true,
            ),
            (
                InstallMethod::Python(Python::Pipx),
                "pipx",
                "pipx upgrade amplihack",
                true,
            ),
            (
                InstallMethod::Python(Python::Uvx),
                "uvx",
                "uvx amplihack@latest install",
                false,
            ),
            (
                InstallMethod::Python(Python::Env {
                    prefix: "/nonexistent/venv".into(),
                    installer: "pip".into(),
                }),
                "pip",
                "python3 -m pip install --upgrade amplihack",
                true,
            ),
            (
                InstallMethod::Python(Python::Env {
                    prefix: "/v".into(),
                    installer: "uv".into(),
                }),
                "uv pip",
                "uv pip install --python /v/bin/python --upgrade amplihack",
                true,
            ),
            (
                InstallMethod::Cargo { root: "/c".into() },
                "cargo",
                "cargo install --locked amplihack",
                true,
            ),
        ] {
            assert_eq!(method.manager(), Some(manager), "{method:?}");
            assert_eq!(method.update_command().as_deref(), Some(command));
            assert_eq!(method.registers_in_place(), in_place, "{method:?}");
        }
        assert_eq!(InstallMethod::Own.manager(), None);
        assert_eq!(InstallMethod::Own.update_command(), None);
        assert!(!InstallMethod::Own.registers_in_place());
    }
}
