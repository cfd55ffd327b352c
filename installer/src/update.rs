//! `amplihack update [--check] [--version X.Y.Z] [--rollback]`: moves both binaries to a release.
//!
//! Releases live at a GitHub-style base URL (`AMPLIHACK_RELEASES_URL`, default the project's
//! GitHub releases): `$BASE/download/v<version>/<asset>`, the newest at
//! `$BASE/latest/download/<asset>` (a redirect, as GitHub does). No API calls.
//!
//! 1. read `dist-manifest.json` of the newest (or pinned) release and compare versions;
//! 2. download this platform's archive and check its SHA-256 against the manifest (mandatory);
//! 3. unpack it next to the bin directory and check both binaries report the new version;
//! 4. keep the current pair in `<state>/previous/` (for `--rollback`), then rename both new
//!    binaries into the bin directory one right after the other (if the second fails, the first
//!    is put back);
//! 5. run the new `amplihack` to re-register every settings file in the install manifest.
//!
//! Any failure before step 4 leaves the working binaries untouched and says what happened.
//!
//! Binaries a package manager installed (npm, pip, `uv tool`, pipx, cargo: see
//! [`crate::install_method`]) are not touched: `update` names that tool's command and exits 1.

use std::cmp::Ordering;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use amplihack_protocol::VERSION;
use amplihack_state::{files, manifest};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::commands::{CommandError, Outcome};
use crate::deploy::{self, BINARIES};
use crate::install_method::InstallMethod;
use crate::scopes::Locations;

pub const DEFAULT_RELEASES_URL: &str = concat!(env!("CARGO_PKG_REPOSITORY"), "/releases");
/// The most an archive may weigh; a release is a few MiB.
const MAX_DOWNLOAD: u64 = 256 * 1024 * 1024;

#[derive(Debug)]
pub enum UpdateError {
    Download {
        url: String,
        problem: String,
    },
    Manifest {
        url: String,
        problem: String,
    },
    NoArtifact {
        version: String,
        target: String,
    },
    NoPlatform,
    Checksum {
        asset: String,
        expected: String,
        actual: String,
    },
    Archive {
        asset: String,
        problem: String,
    },
    Io {
        path: PathBuf,
        action: &'static str,
        source: std::io::Error,
    },
    NothingToRollBack {
        dir: PathBuf,
    },
    /// `AMPLIHACK_RELEASES_URL` is not `https://` (plain `http://` is for a loopback host only).
    InsecureUrl {
        url: String,
    },
    /// The binaries belong to a package manager (npm, pip, uv, pipx, cargo): it updates them.
    PackageManaged {
        dir: PathBuf,
        manager: &'static str,
        command: String,
    },
}

impl fmt::Display for UpdateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const KEPT: &str = "the installed binaries were not changed";
        match self {
            UpdateError::Download { url, problem } => {
                write!(f, "cannot download {url}: {problem}; {KEPT}")
            }
            UpdateError::Manifest { url, problem } => {
                write!(f, "{url} is not a release manifest ({problem}); {KEPT}")
            }
            UpdateError::NoArtifact { version, target } => {
                write!(f, "release {version} has no archive for {target}; {KEPT}")
            }
            UpdateError::NoPlatform => write!(
                f,
                "no releases are built for this platform; build from source with ./install.sh"
            ),
            UpdateError::Checksum {
                asset,
                expected,
                actual,
            } => write!(
                f,
                "checksum mismatch for {asset}: the release says {expected}, the download is {actual}; {KEPT}"
            ),
            UpdateError::Archive { asset, problem } => {
                write!(f, "{asset} cannot be used: {problem}; {KEPT}")
            }
            UpdateError::Io {
                path,
                action,
                source,
            } => write!(f, "cannot {action} {}: {source}", path.display()),
            UpdateError::NothingToRollBack { dir } => write!(
                f,
                "no previous version is kept in {} (there has been no `amplihack update` yet)",
                dir.display()
            ),
            UpdateError::InsecureUrl { url } => write!(
                f,
                "{RELEASES_VAR} is {url}: releases are fetched over HTTPS only (plain http:// only \
                 from this machine: localhost, 127.0.0.1, [::1]); set it to an https:// URL, or \
                 unset it for {DEFAULT_RELEASES_URL}; {KEPT}"
            ),
            UpdateError::PackageManaged {
                dir,
                manager,
                command,
            } => write!(
                f,
                "amplihack in {} was installed with {manager}, which owns those files: update it \
                 with `{command}` (then `amplihack install` registers the new version); nothing \
                 was changed",
                dir.display()
            ),
        }
    }
}

impl std::error::Error for UpdateError {}

fn io<'a>(path: &'a Path, action: &'static str) -> impl FnOnce(std::io::Error) -> UpdateError + 'a {
    move |source| UpdateError::Io {
        path: path.to_path_buf(),
        action,
        source,
    }
}

/// `amplihack update`'s flags.
#[derive(clap::Args, Debug, Clone)]
pub struct UpdateArgs {
    /// Only say whether a newer release exists
    #[arg(long, conflicts_with = "rollback")]
    pub check: bool,
    /// A given release instead of the newest (also to go back to an older one)
    #[arg(long, value_name = "X.Y.Z", conflicts_with = "rollback")]
    pub version: Option<String>,
    /// Put back the pair the last update replaced
    #[arg(long)]
    pub rollback: bool,
    #[command(flatten)]
    pub yes: crate::commands::YesArg,
    /// The bin directory to update (default: where `install` deployed)
    #[arg(long, value_name = "DIR")]
    pub bin_dir: Option<PathBuf>,
}

/// This machine's release target, as archives are named.
pub fn current_target() -> Option<&'static str> {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Some("x86_64-unknown-linux-gnu"),
        ("linux", "aarch64") => Some("aarch64-unknown-linux-gnu"),
        ("macos", "x86_64") => Some("x86_64-apple-darwin"),
        ("macos", "aarch64") => Some("aarch64-apple-darwin"),
        _ => None,
    }
}

/// Compares dotted versions numerically (`0.10.0` > `0.9.1`); a `v` prefix is ignored.
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    let parts = |v: &str| -> Vec<u64> {
        v.trim_start_matches('v')
            .split(['.', '-', '+'])
            .map_while(|p| p.parse().ok())
            .collect()
    };
    parts(a).cmp(&parts(b))
}

/// The variable naming another release site.
const RELEASES_VAR: &str = amplihack_env::AMPLIHACK_RELEASES_URL;

/// The release site: `https://`, or plain `http://` to a loopback host (a local mirror, the tests).
fn releases_url() -> Result<String, UpdateError> {
    let url = std::env::var(RELEASES_VAR)
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| DEFAULT_RELEASES_URL.to_string())
        .trim_end_matches('/')
        .to_string();
    secure(url)
}

fn secure(url: String) -> Result<String, UpdateError> {
    match scheme_and_host(&url) {
        Some(("https", _)) => Ok(url),
        Some(("http", host)) if is_loopback(host) => Ok(url),
        _ => Err(UpdateError::InsecureUrl { url }),
    }
}

/// `("https", "example.com")` of `https://user@example.com:8443/x`, the scheme lowercased.
fn scheme_and_host(url: &str) -> Option<(&'static str, &str)> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = ["https", "http"]
        .into_iter()
        .find(|s| s.eq_ignore_ascii_case(scheme))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host_port.split(':').next().unwrap_or_default(),
    };
    Some((scheme, host))
}

fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// A manifest's asset `name` is a file in the release's directory: a plain file name.
fn plain_file_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0'])
}

fn release_url(base: &str, version: Option<&str>) -> String {
    match version {
        Some(v) => format!("{base}/download/v{}", v.trim_start_matches('v')),
        None => format!("{base}/latest/download"),
    }
}

fn agent(base: &str) -> ureq::Agent {
    ureq::Agent::config_builder()
        // Redirects (GitHub's `latest`) stay on HTTPS when the site is.
        .https_only(scheme_and_host(base).is_some_and(|(scheme, _)| scheme == "https"))
        .timeout_global(Some(Duration::from_secs(300)))
        .timeout_connect(Some(Duration::from_secs(20)))
        .proxy(ureq::Proxy::try_from_env())
        .user_agent(format!("amplihack/{VERSION}"))
        .build()
        .into()
}

fn download(agent: &ureq::Agent, url: &str) -> Result<Vec<u8>, UpdateError> {
    download_showing(agent, url, None)
}

/// With `label`, a progress bar on stderr when it is a terminal (crate::progress).
fn download_showing(
    agent: &ureq::Agent,
    url: &str,
    label: Option<&str>,
) -> Result<Vec<u8>, UpdateError> {
    let failed = |problem: String| UpdateError::Download {
        url: url.to_string(),
        problem,
    };
    let mut response = agent.get(url).call().map_err(|e| failed(e.to_string()))?;
    let total = response
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let show = label.is_some() && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut reader = crate::progress::Progress::new(
        response.body_mut().as_reader(),
        label.unwrap_or_default(),
        total,
        show,
    );
    let mut bytes = Vec::new();
    let read = (&mut reader).take(MAX_DOWNLOAD + 1).read_to_end(&mut bytes);
    reader.finish();
    read.map_err(|e| failed(e.to_string()))?;
    if bytes.len() as u64 > MAX_DOWNLOAD {
        return Err(failed(format!("larger than {MAX_DOWNLOAD} bytes")));
    }
    Ok(bytes)
}

struct Release {
    version: String,
    asset: String,
    sha256: String,
    url: String,
}

fn find_release(
    agent: &ureq::Agent,
    base: &str,
    pinned: Option<&str>,
) -> Result<Release, UpdateError> {
    let target = current_target().ok_or(UpdateError::NoPlatform)?;
    let url = release_url(base, pinned);
    let manifest_url = format!("{url}/dist-manifest.json");
    let bad = |problem: &str| UpdateError::Manifest {
        url: manifest_url.clone(),
        problem: problem.to_string(),
    };
    let manifest: Value = serde_json::from_slice(&download(agent, &manifest_url)?)
        .map_err(|e| bad(&e.to_string()))?;
    let version = manifest["version"]
        .as_str()
        .ok_or_else(|| bad("no `version`"))?
        .to_string();
    let artifact = manifest["artifacts"]
        .as_array()
        .ok_or_else(|| bad("no `artifacts` list"))?
        .iter()
        .find(|a| a["target"] == target)
        .ok_or_else(|| UpdateError::NoArtifact {
            version: version.clone(),
            target: target.to_string(),
        })?;
    let asset = artifact["name"]
        .as_str()
        .ok_or_else(|| bad("an artifact without `name`"))?
        .to_string();
    if !plain_file_name(&asset) {
        return Err(bad(&format!(
            "artifact `name` {asset:?} is not a plain file name (no `/`, no `..`, not absolute)"
        )));
    }
    let sha256 = artifact["sha256"]
        .as_str()
        .filter(|s| s.len() == 64 && s.chars().all(|c| c.is_ascii_hexdigit()))
        .ok_or_else(|| bad("an artifact without a valid `sha256`"))?
        .to_ascii_lowercase();
    // A pinned release is fetched from its own directory; "latest" redirects there.
    let url = release_url(base, pinned.or(Some(&version)));
    Ok(Release {
        version,
        asset,
        sha256,
        url,
    })
}

/// Unpacks `archive` into `into` and returns the directory holding both binaries.
fn unpack(asset: &str, archive: &[u8], into: &Path) -> Result<PathBuf, UpdateError> {
    let bad = |problem: String| UpdateError::Archive {
        asset: asset.to_string(),
        problem,
    };
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(archive));
    // `unpack` refuses entries that would land outside `into` (`..`, absolute paths).
    tar.unpack(into).map_err(|e| bad(e.to_string()))?;
    let dir = into.join(asset.trim_end_matches(".tar.gz"));
    for name in BINARIES {
        if !deploy::is_executable(&dir.join(name)) {
            return Err(bad(format!("it holds no executable {name}")));
        }
    }
    Ok(dir)
}

fn previous_dir(locations: &Locations) -> PathBuf {
    locations.state().dir("previous")
}

/// Copies the pair in `from` to `to` (atomically each), with the version they report.
fn keep_pair(from: &Path, to: &Path) -> Result<(), UpdateError> {
    files::private_dir(to).map_err(|e| UpdateError::Archive {
        asset: "previous pair".into(),
        problem: e.to_string(),
    })?;
    for name in BINARIES {
        let bytes = std::fs::read(from.join(name)).map_err(io(&from.join(name), "read"))?;
        let staged = to.join(format!(".{name}.new"));
        std::fs::write(&staged, bytes).map_err(io(&staged, "write"))?;
        set_executable(&staged)?;
        std::fs::rename(&staged, to.join(name)).map_err(io(&to.join(name), "replace"))?;
    }
    Ok(())
}

fn set_executable(path: &Path) -> Result<(), UpdateError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(io(path, "set permissions of"))
}

/// Moves the pair in `staged` over the pair in `bin_dir`, one right after the other; if the
/// second rename fails, the first binary is put back from `backup`.
fn swap_in(staged: &Path, bin_dir: &Path, backup: &Path) -> Result<(), UpdateError> {
    let [first, second] = BINARIES;
    std::fs::rename(staged.join(first), bin_dir.join(first))
        .map_err(io(&bin_dir.join(first), "replace"))?;
    if let Err(e) = std::fs::rename(staged.join(second), bin_dir.join(second)) {
        let restore = bin_dir.join(format!(".{first}.restore"));
        let _ = std::fs::copy(backup.join(first), &restore)
            .map_err(|_| ())
            .and_then(|_| set_executable(&restore).map_err(|_| ()))
            .and_then(|()| std::fs::rename(&restore, bin_dir.join(first)).map_err(|_| ()));
        return Err(io(&bin_dir.join(second), "replace")(e));
    }
    if let Ok(d) = std::fs::File::open(bin_dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Runs the (new) `amplihack` in `bin_dir` to re-register every recorded settings file.
fn reregister(bin_dir: &Path) -> Result<String, String> {
    let output = std::process::Command::new(bin_dir.join("amplihack"))
        .args(["reregister", "--bin-dir"])
        .arg(bin_dir)
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    if output.status.success() {
        Ok(text)
    } else {
        Err(format!(
            "{}{}",
            text,
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

fn bin_dir(args: &UpdateArgs, locations: &Locations) -> PathBuf {
    args.bin_dir
        .clone()
        .or_else(|| {
            manifest::load(&locations.state())
                .ok()
                .and_then(|m| m.bin_dir)
        })
        .or_else(|| deploy::source_dir().ok())
        .unwrap_or_else(|| deploy::bin_dir(None, &locations.home))
}

/// Refuses to touch binaries a package manager installed (the files are its own: a later
/// `npm`/`pip`/`cargo` run would overwrite or fail on them), naming the command that updates them.
fn package_managed(bin_dir: &Path) -> Result<(), UpdateError> {
    let installed = bin_dir.join("amplihack");
    let installed = installed.canonicalize().unwrap_or(installed);
    let method = InstallMethod::detect(&installed);
    match (method.manager(), method.update_command()) {
        (Some(manager), Some(command)) => Err(UpdateError::PackageManaged {
            dir: installed.parent().unwrap_or(bin_dir).to_path_buf(),
            manager,
            command,
        }),
        _ => Ok(()),
    }
}

pub fn update(args: &UpdateArgs, project: &std::path::Path) -> Result<Outcome, CommandError> {
    let locations = Locations::from_env(project)?;
    let bin_dir = bin_dir(args, &locations);
    package_managed(&bin_dir)?;
    if args.rollback {
        return rollback(&locations, &bin_dir);
    }
    let base = releases_url()?;
    let agent = agent(&base);
    let release = find_release(&agent, &base, args.version.as_deref())?;
    let installed = deploy::reported_version(&bin_dir.join("amplihack-hooks"))
        .unwrap_or_else(|| VERSION.to_string());
    let order = compare_versions(&release.version, &installed);
    let wanted = order == Ordering::Greater || (args.version.is_some() && order != Ordering::Equal);
    let summary = json!({"installed": installed, "release": release.version, "bin_dir": bin_dir});
    if !wanted {
        return Ok(Outcome {
            text: format!(
                "amplihack {installed} is up to date (newest release: {}); nothing changed\n",
                release.version
            ),
            json: json!({"updated": false, "status": summary}),
            code: 0,
        });
    }
    if args.check {
        return Ok(Outcome {
            text: format!(
                "amplihack {installed} can move to {}: run `amplihack update`\n",
                release.version
            ),
            json: json!({"updated": false, "available": true, "status": summary}),
            code: 0,
        });
    }

    let archive = download_showing(
        &agent,
        &format!("{}/{}", release.url, release.asset),
        Some(&format!("downloading {}", release.asset)),
    )?;
    let actual = amplihack_state::memory::hex(&Sha256::digest(&archive));
    if actual != release.sha256 {
        return Err(UpdateError::Checksum {
            asset: release.asset,
            expected: release.sha256,
            actual,
        }
        .into());
    }
    let stage = tempfile::Builder::new()
        .prefix(".amplihack-update-")
        .tempdir_in(&bin_dir)
        .map_err(io(&bin_dir, "stage the update in"))?;
    let unpacked = unpack(&release.asset, &archive, stage.path())?;
    for name in BINARIES {
        let reported = deploy::reported_version(&unpacked.join(name));
        if reported.as_deref() != Some(release.version.as_str()) {
            return Err(UpdateError::Archive {
                asset: release.asset.clone(),
                problem: format!(
                    "its {name} reports {}, not {}",
                    reported.unwrap_or_else(|| "nothing".into()),
                    release.version
                ),
            }
            .into());
        }
    }
    let previous = previous_dir(&locations);
    keep_pair(&bin_dir, &previous)?;
    swap_in(&unpacked, &bin_dir, &previous)?;
    let registered = reregister(&bin_dir);
    let mut text = format!(
        "updated amplihack {installed} → {} in {} (sha256 {} verified)\nthe previous pair is kept: `amplihack update --rollback` restores it\n",
        release.version,
        bin_dir.display(),
        release.sha256
    );
    match &registered {
        Ok(out) => text.push_str(out),
        Err(e) => text.push_str(&format!(
            "warning: re-registering failed ({e}); run `amplihack install` to repair\n"
        )),
    }
    Ok(Outcome {
        text,
        json: json!({"updated": true, "from": installed, "to": release.version, "bin_dir": bin_dir,
                     "reregistered": registered.is_ok()}),
        code: 0,
    })
}

fn rollback(locations: &Locations, bin_dir: &Path) -> Result<Outcome, CommandError> {
    let previous = previous_dir(locations);
    if !BINARIES
        .iter()
        .all(|n| deploy::is_executable(&previous.join(n)))
    {
        return Err(UpdateError::NothingToRollBack { dir: previous }.into());
    }
    let current = deploy::reported_version(&bin_dir.join("amplihack-hooks"));
    let restored = deploy::reported_version(&previous.join("amplihack-hooks"));
    // Swap: the pair now installed becomes the kept one, so a second rollback undoes the first.
    let stage = tempfile::Builder::new()
        .prefix(".amplihack-rollback-")
        .tempdir_in(bin_dir)
        .map_err(io(bin_dir, "stage the rollback in"))?;
    keep_pair(&previous, stage.path())?;
    keep_pair(bin_dir, &previous)?;
    swap_in(stage.path(), bin_dir, &previous)?;
    let registered = reregister(bin_dir);
    let mut text = format!(
        "rolled back amplihack {} → {} in {}\n",
        current.as_deref().unwrap_or("?"),
        restored.as_deref().unwrap_or("?"),
        bin_dir.display()
    );
    if let Err(e) = &registered {
        text.push_str(&format!(
            "warning: re-registering failed ({e}); run `amplihack install` to repair\n"
        ));
    }
    Ok(Outcome {
        text,
        json: json!({"rolled_back": true, "from": current, "to": restored, "bin_dir": bin_dir}),
        code: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_numerically() {
        for (a, b, want) in [
            ("0.10.0", "0.9.1", Ordering::Greater),
            ("v1.2.3", "1.2.3", Ordering::Equal),
            ("1.2.3", "1.2.4", Ordering::Less),
            ("2.0.0", "1.99.99", Ordering::Greater),
        ] {
            assert_eq!(compare_versions(a, b), want, "{a} vs {b}");
        }
    }

    #[test]
    fn release_sites_are_https_or_loopback_http() {
        for (url, secure) in [
            ("https://github.com/a/b/releases", true),
            ("HTTPS://mirror.example/releases", true),
            ("http://127.0.0.1:8080/releases", true),
            ("http://localhost/releases", true),
            ("http://[::1]:9/releases", true),
            ("http://127.1.2.3/releases", true),
            ("http://mirror.example/releases", false),
            ("http://127.0.0.1.evil.example/releases", false),
            ("http://localhost@evil.example/releases", false),
            ("http://evil.example#@127.0.0.1/", false),
            ("ftp://127.0.0.1/releases", false),
            ("file:///tmp/releases", false),
            ("127.0.0.1/releases", false),
        ] {
            assert_eq!(super::secure(url.into()).is_ok(), secure, "{url}");
        }
    }

    #[test]
    fn asset_names_are_plain_file_names() {
        for (name, plain) in [
            ("amplihack-x86_64-unknown-linux-gnu.tar.gz", true),
            ("/tmp/x.tar.gz", false),
            ("../x.tar.gz", false),
            ("a/b.tar.gz", false),
            ("..", false),
            (".", false),
            ("", false),
            ("a\\b", false),
        ] {
            assert_eq!(plain_file_name(name), plain, "{name:?}");
        }
    }

    #[test]
    fn release_urls_are_github_shaped() {
        assert_eq!(
            release_url("https://x/releases", None),
            "https://x/releases/latest/download"
        );
        assert_eq!(
            release_url("https://x/releases", Some("v0.2.0")),
            "https://x/releases/download/v0.2.0"
        );
    }
}
