//! `amplihack reregister`: what `amplihack update` runs with the new binary.

use std::path::Path;

use serde_json::json;

use super::shared::{
    manifest_targets, project_of, read_manifest, record_registrations, register, register_amplifier,
};
use super::{CommandError, Outcome, Target, VERSION};
use crate::deploy;
use crate::registration::{self, Host};
use crate::safe_file::EditOptions;
use crate::scopes::Locations;

/// Rewrites every registration the install manifest records (whose file or project still exists)
/// for the binaries in `bin_dir`, and records this version as deployed. `amplihack update` runs
/// it with the new binary, so the new version's table is what gets written.
pub fn reregister(project: &Path, bin_dir: &Path) -> Result<Outcome, CommandError> {
    let locations = Locations::from_env(project)?;
    let manifest = read_manifest(&locations);
    let hooks_binary = bin_dir.join(registration::HOOKS_BINARY);
    let targets: Vec<Target> = manifest_targets(&manifest)
        .into_iter()
        .filter(|t| t.path.exists() || project_of(t).is_some_and(|p| p.is_dir()))
        .collect();
    let mut text = String::new();
    let mut bundle = None;
    let options = EditOptions::default();
    for target in &targets {
        let written = if target.host == Host::Amplifier {
            let bundle = match &bundle {
                Some(bundle) => bundle,
                None => {
                    let module = deploy::deploy_module(&locations.home, false)?;
                    bundle.insert(deploy::deploy_bundle(
                        &locations.home,
                        &module,
                        &hooks_binary,
                        false,
                    )?)
                }
            };
            register_amplifier(target, bundle, &hooks_binary, &options, &manifest.created)?
        } else {
            vec![(target.clone(), register(target, &hooks_binary, &options)?)]
        };
        for (file, report) in written {
            text.push_str(&format!(
                "{}: {}\n",
                report.action.as_str(),
                file.path.display()
            ));
        }
    }
    for note in crate::hosts::codex::take_notes() {
        text.push_str(&format!("warning: {note}\n"));
    }
    record_registrations(&locations, bin_dir, &targets, true)?;
    Ok(Outcome {
        text,
        json: json!({"command": "reregister", "version": VERSION, "registrations": targets.iter().map(|t| &t.path).collect::<Vec<_>>()}),
        code: 0,
    })
}
