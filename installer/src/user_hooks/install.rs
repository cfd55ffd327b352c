//! `amplihack hooks install`: copy a plugin (a directory or a git repository) into a level.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use amplihack_engine::discovery::{self};
use serde_json::json;

use crate::commands::{CommandError, Outcome};

use super::trust::{before, level_dir, retrust_after};
use super::{Context, outcome_of};

/// Copies the plugin at `root` into `to`. Symbolic links are kept as links when they point
/// inside the plugin and left out (listed in the returned names) when they point outside it or
/// nowhere: a plugin never pulls in files from elsewhere. `.git` is not copied.
fn copy_plugin(
    root: &Path,
    from: &Path,
    to: &Path,
    skipped: &mut Vec<PathBuf>,
) -> std::io::Result<()> {
    fs_err::create_dir_all(to)?;
    for entry in fs_err::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == ".git" {
            continue;
        }
        let (path, target) = (entry.path(), to.join(&name));
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            let inside = path.canonicalize().is_ok_and(|real| real.starts_with(root));
            if inside {
                std::os::unix::fs::symlink(fs_err::read_link(&path)?, &target)?;
            } else {
                skipped.push(path);
            }
        } else if kind.is_dir() {
            copy_plugin(root, &path, &target, skipped)?;
        } else if kind.is_file() {
            fs_err::copy(&path, &target)?;
            // Never group- or world-writable, whatever the source's mode.
            let mode = fs_err::metadata(&target)?.permissions().mode() & !0o022;
            fs_err::set_permissions(&target, std::fs::Permissions::from_mode(mode))?;
        }
    }
    Ok(())
}

fn private(dir: &Path) -> std::io::Result<()> {
    amplihack_state::files::private_dir(dir).map_err(std::io::Error::other)
}

/// A plugin name is one ordinary directory name.
fn valid_plugin_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name != discovery::AMPLIHACK_DIR
        && !name.starts_with('-')
        && !name.contains(['/', '\\', '\0'])
}

/// `amplihack hooks install`'s arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct InstallArgs {
    /// A plugin directory, or a git URL to clone
    pub source: String,
    /// The plugin's directory name under .amplifier/hooks/ (default: from the source)
    #[arg(long)]
    pub name: Option<String>,
    /// Which hooks directory: ~/.amplifier/hooks/ (user) or the project's
    #[arg(long, value_enum, default_value = "user")]
    pub level: super::HooksLevel,
    /// Replace an existing plugin of that name
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub yes: crate::commands::YesArg,
}

/// Copies a plugin (a directory, or a git repository cloned shallowly) into a hooks level, after
/// validating it.
pub fn install(ctx: &Context, args: &InstallArgs) -> Result<Outcome, CommandError> {
    let clone_dir = tempfile::tempdir()
        .map_err(|e| CommandError::io("create a directory in", std::env::temp_dir(), e))?;
    let local = Path::new(&args.source);
    let source = if local.is_dir() {
        local.to_path_buf()
    } else {
        let target = clone_dir.path().join("plugin");
        // `--` so a source that begins with `-` can never be read as an option of git's.
        let status = Command::new("git")
            .args([
                "clone",
                "--quiet",
                "--depth",
                "1",
                "--no-recurse-submodules",
                "--",
            ])
            .arg(&args.source)
            .arg(&target)
            .status();
        if !status.is_ok_and(|s| s.success()) {
            return Err(CommandError::refused(format!(
                "`{}` is neither a directory nor a git repository that `git clone` could fetch",
                args.source
            )));
        }
        target
    };
    let root = source
        .canonicalize()
        .map_err(|e| CommandError::io("resolve", &source, e))?;
    // Every layout the engine runs (discovery): hooks.json, hooks/hooks.json, or the manifest's
    // `hooks` (inline, or the path of its hooks file).
    let hooks_file = [
        root.join("hooks.json"),
        root.join("hooks/hooks.json"),
        root.join(discovery::MANIFEST),
    ]
    .into_iter()
    .find(|f| f.is_file())
    .ok_or_else(|| {
        CommandError::refused(format!(
            "{} has no hooks.json, hooks/hooks.json or {} (the Claude Code plugin layouts)",
            args.source,
            discovery::MANIFEST
        ))
    })?;
    let text = discovery::read_small(&hooks_file).map_err(|e| {
        CommandError::refused(format!("{}: cannot be read: {e}", hooks_file.display()))
    })?;
    let mut read = vec![hooks_file.clone()];
    if hooks_file.ends_with(discovery::MANIFEST)
        && let Ok(serde_json::Value::Object(manifest)) = serde_json::from_str(&text)
        && let Some(serde_json::Value::String(relative)) = manifest.get("hooks")
    {
        read.push(root.join(relative));
    }
    for file in &read {
        if !file
            .canonicalize()
            .is_ok_and(|real| real.starts_with(&root))
        {
            return Err(CommandError::refused(format!(
                "{} is a link to, or names, a file outside the plugin; refusing to install it",
                file.display()
            )));
        }
    }
    let config = discovery::parse_file(&hooks_file, &text)
        .map_err(|e| CommandError::refused(e.to_string()))?;
    if hooks_file.ends_with(discovery::MANIFEST) && config.groups.is_empty() {
        return Err(CommandError::refused(format!(
            "{} declares no hooks; nothing to install",
            hooks_file.display()
        )));
    }
    let name = match &args.name {
        Some(name) => name.clone(),
        None => {
            let base = args
                .source
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or_default();
            base.trim_end_matches(".git").to_string()
        }
    };
    if !valid_plugin_name(&name) {
        return Err(CommandError::refused(format!(
            "`{name}` cannot be a plugin name (one directory name: not `.`, `..`, `amplihack`, nor with `/`); pass --name NAME"
        )));
    }
    let before = before(ctx);
    let level = level_dir(ctx, args.level == super::HooksLevel::Project);
    let target = level.join(&name);
    // Neither may contain the other: a copy into itself never ends, and --force would delete the
    // source before copying it.
    let level_real = level.canonicalize().unwrap_or_else(|_| level.clone());
    let target_real = level_real.join(&name);
    if target_real.starts_with(&root) || root.starts_with(&target_real) {
        return Err(CommandError::refused(format!(
            "{} and the destination {} contain one another; copy the plugin somewhere else first",
            root.display(),
            target.display()
        )));
    }
    if target.symlink_metadata().is_ok() && !args.force {
        return Err(CommandError::refused(format!(
            "{} already exists; pass --force to replace it",
            target.display()
        )));
    }
    // Copied next to its destination, then renamed into place: never half a plugin.
    private(&level).map_err(|e| CommandError::io("create", &level, e))?;
    let staging = tempfile::Builder::new()
        .prefix(".amplihack-install-")
        .tempdir_in(&level)
        .map_err(|e| CommandError::io("create a directory in", &level, e))?;
    let mut skipped = Vec::new();
    copy_plugin(&root, &root, &staging.path().join("plugin"), &mut skipped)
        .map_err(|e| CommandError::io("copy the plugin into", staging.path(), e))?;
    if target.symlink_metadata().is_ok() {
        let old = staging.path().join("old");
        std::fs::rename(&target, &old).map_err(|e| CommandError::io("move aside", &target, e))?;
    }
    std::fs::rename(staging.path().join("plugin"), &target)
        .map_err(|e| CommandError::io("move the plugin into", &target, e))?;
    let mut text = format!("installed {name} into {}\n", target.display());
    for link in &skipped {
        text.push_str(&format!(
            "left out {}: a link to outside the plugin\n",
            link.display()
        ));
    }
    retrust_after(
        ctx,
        &before,
        (args.level == super::HooksLevel::Project, &target),
        &mut text,
    )?;
    Ok(outcome_of(
        "install",
        text,
        json!({"name": name, "path": target, "links_left_out": skipped}),
        0,
    ))
}
