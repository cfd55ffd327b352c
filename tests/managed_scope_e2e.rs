//! `--scope managed`: amplihack in Claude Code's managed settings (`/etc/claude-code/`), tested
//! as root in a private mount namespace (`unshare -m`) where `/etc` is an overlay whose writes go
//! to the test's own directory: nothing outside the test changes. The organisation's file has
//! `allowManagedHooksOnly: true`: amplihack installed for the user does not run in the real Claude
//! Code and `doctor` says why; installed in the managed scope it runs; uninstall gives the
//! organisation's file back byte for byte.
//!
//! Skipped (prints `SKIPPED <why>` and passes) unless run as root where `unshare -m` and an
//! overlay mount work.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::support;
use crate::support::fake_anthropic::{FakeAnthropic, Turn};
use crate::support::{TestEnv, stderr, stdout};

/// Mounts the overlay on `/etc` in a new private mount namespace, then runs the command:
/// `sh -c SCRIPT <upper> <work> <program> <args>...`.
const SCRIPT: &str = "mount -t overlay overlay -o lowerdir=/etc,upperdir=\"$0\",workdir=\"$1\" /etc && shift && exec \"$@\"";

pub(crate) struct Namespace {
    pub(crate) upper: PathBuf,
    work: PathBuf,
}

impl Namespace {
    pub(crate) fn new(root: &Path) -> Namespace {
        let ns = Namespace {
            upper: root.join("etc-upper"),
            work: root.join("etc-work"),
        };
        std::fs::create_dir_all(&ns.upper).expect("upper");
        std::fs::create_dir_all(&ns.work).expect("work");
        ns
    }

    /// Where `/etc/claude-code/<name>` is, seen from outside the namespace.
    fn managed(&self, name: &str) -> PathBuf {
        self.upper.join("claude-code").join(name)
    }

    pub(crate) fn wrap(&self, command: Command) -> Command {
        let mut wrapped = Command::new("unshare");
        wrapped
            .args(["-m", "--propagation", "private", "sh", "-c", SCRIPT])
            .arg(&self.upper)
            .arg(&self.work)
            .arg(command.get_program())
            .args(command.get_args())
            .env_clear();
        for (key, value) in command.get_envs() {
            if let Some(value) = value {
                wrapped.env(key, value);
            }
        }
        if let Some(dir) = command.get_current_dir() {
            wrapped.current_dir(dir);
        }
        wrapped
    }

    pub(crate) fn amplihack(&self, env: &TestEnv, args: &[&str]) -> std::process::Output {
        let mut command = env.amplihack(args);
        command.env("AMPLIHACK_CLAUDE_BIN", support::claude_bin());
        let (output, _) =
            support::run_with_timeout(self.wrap(command), b"", Duration::from_secs(120));
        output
    }
}

/// Why the namespace cannot be made here, if it cannot.
pub(crate) fn unavailable(ns: &Namespace) -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root".into());
    }
    let probe = ns.wrap({
        let mut c = Command::new("true");
        c.env("PATH", std::env::var_os("PATH").unwrap_or_default());
        c
    });
    let (output, _) = support::run_with_timeout(probe, b"", Duration::from_secs(30));
    (!output.status.success()).then(|| {
        format!(
            "unshare -m with an overlay on /etc failed: {}",
            stderr(&output)
        )
    })
}

#[test]
fn managed_scope_runs_under_allow_managed_hooks_only_and_leaves_no_trace() {
    let env = TestEnv::new();
    let ns = Namespace::new(env.root());
    if let Some(why) = unavailable(&ns) {
        println!("SKIPPED {why}");
        return;
    }
    let real_etc_before = Path::new("/etc/claude-code").exists();
    let organisation =
        "{\n  \"allowManagedHooksOnly\": true,\n  \"permissions\": {\"deny\": [\"WebFetch\"]}\n}\n";
    env.write(&ns.managed("managed-settings.json"), organisation);
    env.write(
        &env.project.join(".claude/context/PROJECT.md"),
        "Project marker: MANAGED-ZEBRA-CONTEXT\n",
    );
    let bin = env.root().join("system bin");
    let marker_reached = |ns: &Namespace| {
        let fake = FakeAnthropic::start(vec![Turn::text("hello")]);
        env.claude_wrapped(
            &|c| ns.wrap(c),
            &support::claude_bin(),
            &fake.url,
            &["-p", "hi"],
            &[],
            true,
            b"",
        );
        fake.everything_the_model_saw()
            .contains("MANAGED-ZEBRA-CONTEXT")
    };

    // Installed for the user only: Claude Code runs none of it, and doctor says why.
    let user = ns.amplihack(&env, &["install", "--host", "claude"]);
    assert!(user.status.success(), "{}", stderr(&user));
    assert!(
        !marker_reached(&ns),
        "a user-scope hook ran despite allowManagedHooksOnly"
    );
    let doctor = ns.amplihack(&env, &["doctor"]);
    let said = stdout(&doctor);
    assert!(
        said.contains("/etc/claude-code/managed-settings.json sets allowManagedHooksOnly: true")
            && said.contains("sudo amplihack install --scope managed"),
        "{said}"
    );

    // A plugin's event beyond amplihack's own, registered in the user's file: it cannot run
    // there either, and `hooks list` says what would deliver it.
    env.plugin(
        &env.user_hooks_dir(),
        "failures",
        &support::one_group("PostToolUseFailure", None, vec![support::command("true")]),
    );
    let list = ns.amplihack(&env, &["hooks", "list"]);
    assert!(
        stdout(&list).contains("PostToolUseFailure never reaches it: Claude Code runs only the managed settings' hooks here (allowManagedHooksOnly), and they do not dispatch it: an administrator registers it with `sudo amplihack install --scope managed --plugin-events PostToolUseFailure`"),
        "{}",
        stdout(&list)
    );
    // A plugin on MessageDisplay, which a text-only session fires and amplihack's own table
    // does not register: it logs each time it runs.
    let display_log = env.root().join("message-display.log");
    env.plugin(
        &env.user_hooks_dir(),
        "display",
        &support::one_group(
            "MessageDisplay",
            None,
            vec![support::command(&format!(
                "echo ran >> '{}'",
                display_log.display()
            ))],
        ),
    );

    // The managed scope: every user's Claude Code runs it.
    let bin_arg = bin.to_string_lossy().into_owned();
    let managed = ns.amplihack(
        &env,
        &["install", "--scope", "managed", "--bin-dir", &bin_arg],
    );
    assert!(managed.status.success(), "{}", stderr(&managed));
    let said = format!("{}{}", stdout(&managed), stderr(&managed));
    assert!(
        said.contains("every user's Claude Code on this machine now runs"),
        "{said}"
    );
    let written = env.read(&ns.managed("managed-settings.json"));
    assert!(
        written.starts_with("{\n  \"allowManagedHooksOnly\": true,\n  \"permissions\": {\"deny\": [\"WebFetch\"]},\n  \"hooks\""),
        "the organisation's keys first, as they were: {written}"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(ns.managed("managed-settings.json"))
        .expect("managed file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o644, "readable by every user");
    assert!(marker_reached(&ns), "the managed hooks did not run");
    assert!(
        !display_log.exists(),
        "MessageDisplay reached the plugin before the administrator registered it"
    );
    let list = ns.amplihack(&env, &["hooks", "list"]);
    assert!(
        stdout(&list)
            .contains("`sudo amplihack install --scope managed --plugin-events MessageDisplay`"),
        "{}",
        stdout(&list)
    );

    // An event the installed Claude Code does not know is refused, naming the fix; nothing changes.
    let before = env.read(&ns.managed("managed-settings.json"));
    let refused = ns.amplihack(
        &env,
        &[
            "install",
            "--scope",
            "managed",
            "--bin-dir",
            &bin_arg,
            "--plugin-events",
            "MessageDisplay,NoSuchEvent",
        ],
    );
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("--plugin-events: `NoSuchEvent` is not a Claude Code event"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(env.read(&ns.managed("managed-settings.json")), before);

    // The administrator registers it: the plugin's handler runs in every user's Claude Code.
    let events = ns.amplihack(
        &env,
        &[
            "install",
            "--scope",
            "managed",
            "--bin-dir",
            &bin_arg,
            "--plugin-events",
            "MessageDisplay",
        ],
    );
    assert!(events.status.success(), "{}", stderr(&events));
    assert!(
        format!("{}{}", stdout(&events), stderr(&events))
            .contains("users' plugins also get MessageDisplay"),
        "{}{}",
        stdout(&events),
        stderr(&events)
    );
    let dispatch = bin.join("amplihack-hooks").to_string_lossy().into_owned();
    let settings = env.read_json(&ns.managed("managed-settings.json"));
    assert!(
        support::hook_commands(&settings)
            .iter()
            .any(|(e, c)| e == "MessageDisplay"
                && c.contains(&dispatch)
                && c.ends_with(" dispatch")),
        "{settings}"
    );
    assert!(marker_reached(&ns), "the managed hooks did not run");
    assert!(
        display_log.exists(),
        "MessageDisplay did not reach the user's plugin once registered in the managed settings"
    );
    let list = ns.amplihack(&env, &["hooks", "list"]);
    assert!(
        !stdout(&list).contains("MessageDisplay never reaches it"),
        "{}",
        stdout(&list)
    );
    let status = ns.amplihack(&env, &["status"]);
    assert!(
        stdout(&status).contains("managed plugin events: MessageDisplay"),
        "{}",
        stdout(&status)
    );

    // Moved: a plain install re-points the event's entry at the new binaries and keeps it.
    let moved = env.root().join("moved bin");
    let moved_arg = moved.to_string_lossy().into_owned();
    let again = ns.amplihack(
        &env,
        &["install", "--scope", "managed", "--bin-dir", &moved_arg],
    );
    assert!(again.status.success(), "{}", stderr(&again));
    let settings = env.read_json(&ns.managed("managed-settings.json"));
    let moved_dispatch = moved.join("amplihack-hooks").to_string_lossy().into_owned();
    let commands = support::hook_commands(&settings);
    assert!(
        commands.iter().any(|(e, c)| e == "MessageDisplay"
            && c.contains(&moved_dispatch)
            && c.ends_with(" dispatch"))
            && !commands.iter().any(|(_, c)| c.contains("system bin")),
        "{settings}"
    );
    let doctor = ns.amplihack(&env, &["doctor"]);
    assert!(
        stdout(&doctor).contains("amplihack is registered in the managed settings")
            && !stdout(&doctor).contains("never run"),
        "{}",
        stdout(&doctor)
    );
    let status = ns.amplihack(&env, &["status"]);
    assert!(
        stdout(&status).contains("managed  /etc/claude-code/managed-settings.json  ok"),
        "{}",
        stdout(&status)
    );

    // Uninstall: the organisation's bytes, and nothing of amplihack's beside them but backups.
    let gone = ns.amplihack(&env, &["uninstall", "--scope", "managed"]);
    assert!(gone.status.success(), "{}", stderr(&gone));
    assert_eq!(env.read(&ns.managed("managed-settings.json")), organisation);
    let left: Vec<String> = std::fs::read_dir(ns.managed(""))
        .expect("dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "managed-settings.json" && !n.contains(".amplihack-backup-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(
        Path::new("/etc/claude-code").exists(),
        real_etc_before,
        "the machine's /etc changed"
    );
}
