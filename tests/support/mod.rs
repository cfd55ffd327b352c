//! One test context for every end-to-end test: a temporary home and project, the real binaries,
//! and the real hosts behind the same helpers (after uv's `TestContext`).
#![allow(dead_code)]

pub mod amplifier_app;
pub mod capabilities;
pub mod captured;
pub mod fake_anthropic;
pub mod fake_models;
pub mod host_clis;
pub mod http_stub;
pub mod native;
pub mod releases;
pub mod snapshot;

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

pub fn hooks_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_amplihack-hooks"))
}

pub fn amplihack_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_amplihack"))
}

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixture(name: &str) -> Vec<u8> {
    let path = repo_root().join("tests/fixtures").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The machine, as the tests running side by side in the one test binary share it: every
/// [`TestEnv`] holds a share (a read lock) while it lives, and a speed test takes the whole of it
/// ([`alone`]): it waits for the tests running to end, and the others wait for it.
static MACHINE: RwLock<()> = RwLock::new(());

thread_local! {
    /// This thread's read lock on [`MACHINE`] and how many [`Share`]s use it: taken once per
    /// thread (a second read lock behind a waiting writer would never be granted).
    static SHARED: RefCell<(usize, Option<RwLockReadGuard<'static, ()>>)> =
        const { RefCell::new((0, None)) };
    /// This thread holds [`MACHINE`] whole ([`alone`]): its own test environments take no share.
    static ALONE: Cell<bool> = const { Cell::new(false) };
}

/// A test environment's share of the machine (none where its thread holds it whole).
struct Share {
    taken: bool,
}

impl Share {
    fn take() -> Share {
        let taken = !ALONE.get();
        if taken {
            SHARED.with_borrow_mut(|(users, guard)| {
                if *users == 0 {
                    *guard = Some(MACHINE.read().unwrap_or_else(PoisonError::into_inner));
                }
                *users += 1;
            });
        }
        Share { taken }
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        if self.taken {
            SHARED.with_borrow_mut(|(users, guard)| {
                *users = users.saturating_sub(1);
                if *users == 0 {
                    guard.take();
                }
            });
        }
    }
}

/// The machine to this test alone until dropped: for a speed test, taken before its first
/// [`TestEnv`] (and after [`amplifier_app::one_app`] where it runs the app).
pub struct Alone(RwLockWriteGuard<'static, ()>);

pub fn alone() -> Alone {
    let guard = MACHINE.write().unwrap_or_else(PoisonError::into_inner);
    ALONE.set(true);
    Alone(guard)
}

impl Drop for Alone {
    fn drop(&mut self) {
        ALONE.set(false);
    }
}

pub struct TestEnv {
    _root: TempDir,
    /// This test's share of the machine, which a speed test waits for ([`alone`]).
    _share: Share,
    pub home: PathBuf,
    pub project: PathBuf,
}

impl TestEnv {
    /// Every line of every session transcript Claude Code kept under this home
    /// (`~/.claude/projects/<project>/<session>.jsonl`): its own record, what its UI shows.
    pub fn claude_transcript_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        let projects = self.home.join(".claude/projects");
        for dir in std::fs::read_dir(&projects).into_iter().flatten().flatten() {
            for file in std::fs::read_dir(dir.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let text = std::fs::read_to_string(file.path()).unwrap_or_default();
                lines.extend(text.lines().map(str::to_string));
            }
        }
        lines
    }

    pub fn new() -> TestEnv {
        let share = Share::take();
        let root = tempfile::Builder::new()
            .prefix("amplihack-test")
            .tempdir()
            .expect("tempdir");
        // A space in the home directory: every path amplihack writes or runs must survive it.
        let home = root.path().join("home dir");
        let project = root.path().join("project");
        std::fs::create_dir_all(&home).expect("home");
        std::fs::create_dir_all(&project).expect("project");
        std::fs::create_dir_all(root.path().join("tmp")).expect("tmp");
        std::fs::create_dir_all(root.path().join("marks")).expect("marks");
        // What the tests' plugins run that a machine may lack: `python` (Debian has `python3`
        // only), first on every program's PATH.
        let tools = root.path().join("test-tools");
        std::fs::create_dir_all(&tools).expect("test-tools");
        let python = tools.join("python");
        std::fs::write(&python, "#!/bin/sh\nexec python3 \"$@\"\n").expect("python");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        TestEnv {
            _root: root,
            _share: share,
            home,
            project,
        }
    }

    /// A payload captured from a real host (`tests/fixtures/NAME`), with its paths moved to this
    /// environment's home and project ([`captured::rehome`]).
    pub fn captured(&self, name: &str) -> Vec<u8> {
        captured::rehome(&fixture(name), &self.home, &self.project)
    }

    pub fn root(&self) -> &Path {
        self._root.path()
    }

    pub fn write(&self, path: &Path, contents: &str) {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, contents).expect("write");
    }

    /// A command with a clean environment: only PATH, HOME pointing at the test home, and TMPDIR
    /// at the test's own (what a program under test, or a peer such as the hook-shell bridge,
    /// leaves there goes with the test).
    pub fn command(&self, program: &Path) -> Command {
        let mut command = Command::new(program);
        command
            .env_clear()
            .env("PATH", self.path())
            .env("HOME", &self.home)
            .env("TMPDIR", self.root().join("tmp"))
            .current_dir(&self.project);
        command
    }

    /// The PATH every program under test gets: the test's own tools, then the machine's.
    pub fn path(&self) -> std::ffi::OsString {
        let mut dirs = vec![self.root().join("test-tools")];
        dirs.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        std::env::join_paths(dirs).expect("PATH")
    }

    pub fn hooks(&self, args: &[&str]) -> Command {
        let mut command = self.command(&hooks_bin());
        command.args(args);
        command
    }

    pub fn log_file(&self) -> PathBuf {
        self.home.join(".local/state/amplihack/hooks.log")
    }

    /// `amplihack memory list --kind session --json`: the command itself writes the records a
    /// Stop or SessionEnd left pending first (runtime/src/builtins/turn_records.rs), waiting for a
    /// writer already at work, so no test waits for the detached writer.
    pub fn session_memory(&self) -> Output {
        self.run_amplihack(&["memory", "list", "--kind", "session", "--json"])
    }
}

/// Runs with a time limit; a hang is a test failure, not a stuck CI.
pub fn run_with_timeout(mut command: Command, stdin: &[u8], limit: Duration) -> (Output, Duration) {
    use std::io::Write;
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = command.spawn().expect("spawn");
    let mut pipe = child.stdin.take().expect("stdin");
    let input = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    loop {
        if child.try_wait().expect("try_wait").is_some() {
            break;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("{command:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let elapsed = started.elapsed();
    let _ = writer.join();
    (child.wait_with_output().expect("output"), elapsed)
}

/// A real host program the tests drive: `$override_var`, else the copy `./test.sh` installs into
/// the repository at `relative`.
pub fn test_host(override_var: &str, relative: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(override_var) {
        return PathBuf::from(path);
    }
    let path = repo_root().join(relative);
    assert!(
        path.exists(),
        "{} is not installed: run ./test.sh, which installs the test hosts (or set {override_var})",
        path.display()
    );
    path
}

/// The real Claude Code (npm `@anthropic-ai/claude-code`, pinned in tests/claude-code/package.json).
pub fn claude_bin() -> PathBuf {
    test_host(
        "AMPLIHACK_CLAUDE_BIN",
        "tests/claude-code/node_modules/.bin/claude",
    )
}

/// The oldest Claude Code amplihack supports (pinned in tests/claude-code-2.0.30/package.json).
pub fn oldest_claude_bin() -> PathBuf {
    test_host(
        "AMPLIHACK_OLDEST_CLAUDE_BIN",
        "tests/claude-code-2.0.30/node_modules/.bin/claude",
    )
}

/// Python with the real `amplifier-core` kernel (pinned in tests/amplifier/requirements.txt).
pub fn kernel_python() -> PathBuf {
    test_host(
        "AMPLIHACK_AMPLIFIER_PYTHON",
        "tests/amplifier/.venv/bin/python",
    )
}

static DEBUG_FILES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

pub struct ClaudeRun {
    pub output: Output,
    /// The `--output-format json` result object.
    pub result: Value,
    /// Claude Code's own debug log of the run (`--debug-file`): every hook it ran, with its exit
    /// status and what it made of the output.
    pub debug_log: String,
}

impl ClaudeRun {
    /// The debug lines about hooks that ran `needle` (for example the amplihack-hooks path).
    pub fn hook_lines(&self, needle: &str) -> Vec<&str> {
        self.debug_log
            .lines()
            .filter(|l| l.contains("Hooks:") && l.contains(needle))
            .collect()
    }

    /// Lines where Claude Code reported a hook failing or answering something it could not use.
    pub fn hook_complaints(&self) -> Vec<&str> {
        self.debug_log
            .lines()
            .filter(|l| {
                (l.contains("[ERROR]") && l.contains("Hook"))
                    || l.contains("is not a JSON object")
                    || l.contains("validation failed")
                    || l.contains("Failed with non-blocking status")
            })
            .collect()
    }
}

impl TestEnv {
    /// Runs one headless Claude Code turn in the project against the fake API.
    pub fn claude(&self, api_url: &str, prompt: &str) -> ClaudeRun {
        self.claude_with(api_url, &["-p", prompt], &[])
    }

    /// Runs headless Claude Code with `args` (which include `-p PROMPT`) and extra environment.
    pub fn claude_with(&self, api_url: &str, args: &[&str], env: &[(&str, &str)]) -> ClaudeRun {
        self.claude_bin_with(&claude_bin(), api_url, args, env, true)
    }

    /// [`TestEnv::claude_with`] with a Claude Code of one's choice (another version). Versions
    /// before `--debug-file` (2.0.x) get `with_debug_file: false` and an empty debug log.
    pub fn claude_bin_with(
        &self,
        claude: &Path,
        api_url: &str,
        args: &[&str],
        env: &[(&str, &str)],
        with_debug_file: bool,
    ) -> ClaudeRun {
        self.claude_wrapped(&|c| c, claude, api_url, args, env, with_debug_file, b"")
    }

    /// [`TestEnv::claude_bin_with`], the command run through `wrap` (in a private mount
    /// namespace, say), with `stdin` (several prompts, with `--input-format stream-json`).
    #[allow(clippy::too_many_arguments)]
    pub fn claude_wrapped(
        &self,
        wrap: &dyn Fn(Command) -> Command,
        claude: &Path,
        api_url: &str,
        args: &[&str],
        env: &[(&str, &str)],
        with_debug_file: bool,
        stdin: &[u8],
    ) -> ClaudeRun {
        let mut command = self.command(claude);
        command.args(args);
        // JSON out, unless the caller chose (stream-json in and out, say).
        if !args.contains(&"--output-format") {
            command.args(["--output-format", "json"]);
        }
        command
            .args(["--allowedTools", "Bash Write Edit"])
            .envs(env.iter().copied())
            .env("ANTHROPIC_API_KEY", "sk-ant-test-fake")
            .env("ANTHROPIC_BASE_URL", api_url)
            .env("DISABLE_TELEMETRY", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("AMPLIHACK_LOG_DIR", self.root().join("logs"));
        let debug_file = self.root().join(format!(
            "claude-debug-{}-{}.txt",
            std::process::id(),
            DEBUG_FILES.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        ));
        if with_debug_file {
            command.arg("--debug-file").arg(&debug_file);
        }
        let (output, _) = run_with_timeout(wrap(command), stdin, Duration::from_secs(180));
        let debug_log = std::fs::read_to_string(&debug_file).unwrap_or_default();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let result = stdout
            .lines()
            .rev()
            .find_map(|line| serde_json::from_str::<Value>(line).ok())
            .unwrap_or_else(|| {
                panic!(
                    "claude printed no JSON result.\nstdout: {stdout}\nstderr: {}",
                    String::from_utf8_lossy(&output.stderr)
                )
            });
        ClaudeRun {
            output,
            result,
            debug_log,
        }
    }

    pub fn claude_settings_path(&self) -> PathBuf {
        self.home.join(".claude/settings.json")
    }
}

impl TestEnv {
    /// The bin directory the installer tests deploy to: with a space, so quoting is always tested.
    pub fn bin_dir(&self) -> PathBuf {
        self.root().join("my bin")
    }

    /// `amplihack` with the test home, the test project and the test bin directory.
    pub fn amplihack(&self, args: &[&str]) -> Command {
        let mut command = self.command(&amplihack_bin());
        command.args(args).env("AMPLIHACK_BIN_DIR", self.bin_dir());
        command
    }

    pub fn run_amplihack(&self, args: &[&str]) -> Output {
        let (output, _) = run_with_timeout(self.amplihack(args), b"", Duration::from_secs(60));
        output
    }

    pub fn deployed_hooks(&self) -> PathBuf {
        self.bin_dir().join("amplihack-hooks")
    }

    pub fn read(&self, path: &Path) -> String {
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    pub fn read_json(&self, path: &Path) -> Value {
        serde_json::from_str(&self.read(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    pub fn backups_of(&self, path: &Path) -> Vec<PathBuf> {
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let mut found: Vec<PathBuf> = std::fs::read_dir(path.parent().expect("parent"))
            .expect("dir")
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name().is_some_and(|n| {
                    n.to_string_lossy()
                        .starts_with(&format!("{name}.amplihack-backup-"))
                })
            })
            .collect();
        found.sort();
        found
    }
}

/// The (event, command) pairs of a settings value's hooks, in file order.
pub fn hook_commands(settings: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (event, groups) in settings["hooks"].as_object().into_iter().flatten() {
        for group in groups.as_array().into_iter().flatten() {
            for handler in group["hooks"].as_array().into_iter().flatten() {
                found.push((
                    event.clone(),
                    handler["command"].as_str().unwrap_or_default().to_string(),
                ));
            }
        }
    }
    found
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

impl TestEnv {
    pub fn user_hooks_dir(&self) -> PathBuf {
        self.home.join(".amplifier/hooks")
    }

    pub fn project_hooks_dir(&self) -> PathBuf {
        self.project.join(".amplifier/hooks")
    }

    /// Writes `<hooks_dir>/<name>/hooks.json`. A project's plugin declares that it writes the
    /// test's marks directory ([`TestEnv::mark`], outside the project), as a real plugin declares
    /// what it writes: a project's handlers run confined (tests/cli/confinement_cli.rs), and
    /// without it they could not leave the marks the tests read.
    pub fn plugin(&self, hooks_dir: &Path, name: &str, config: &Value) -> PathBuf {
        let file = hooks_dir.join(name).join("hooks.json");
        let mut config = config.clone();
        if hooks_dir.starts_with(&self.project)
            && let Some(fields) = config.as_object_mut()
            && !fields.contains_key("confinement")
        {
            fields.insert("confinement".into(), self.marks_declared());
        }
        self.write(&file, &serde_json::to_string_pretty(&config).expect("json"));
        file
    }

    /// The declaration that lets a project plugin's handlers write the test's marks directory.
    pub fn marks_declared(&self) -> Value {
        serde_json::json!({"write": [self.root().join("marks")]})
    }

    /// Writes an executable script.
    pub fn script(&self, path: &Path, body: &str) -> PathBuf {
        self.write(path, &format!("#!/bin/sh\n{body}\n"));
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path.to_path_buf()
    }

    /// Runs `amplihack-hooks <args>` on `payload` with the test's environment plus `extra`.
    pub fn run_hooks(
        &self,
        args: &[&str],
        payload: &Value,
        extra: &[(&str, &str)],
    ) -> (Output, Duration) {
        let mut command = self.hooks(args);
        command.env("CLAUDE_PROJECT_DIR", &self.project);
        for (k, v) in extra {
            command.env(k, v);
        }
        run_with_timeout(
            command,
            payload.to_string().as_bytes(),
            Duration::from_secs(60),
        )
    }

    /// Lines of a marker file the test's hooks append to (empty when it does not exist).
    pub fn marks(&self, name: &str) -> Vec<String> {
        std::fs::read_to_string(self.root().join("marks").join(name))
            .map(|t| t.lines().map(str::to_string).collect())
            .unwrap_or_default()
    }

    /// A command that appends `text` to marker `name`.
    pub fn mark(&self, name: &str, text: &str) -> String {
        let dir = self.root().join("marks");
        std::fs::create_dir_all(&dir).expect("marks");
        format!("echo {text} >> '{}'", dir.join(name).display())
    }

    pub fn audit_log(&self) -> Vec<Value> {
        std::fs::read_to_string(self.home.join(".local/state/amplihack/audit.jsonl"))
            .map(|t| {
                t.lines()
                    .map(|l| serde_json::from_str(l).expect("audit line"))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// A plugin config with one group.
pub fn one_group(event: &str, matcher: Option<&str>, handlers: Vec<Value>) -> Value {
    let mut group = serde_json::json!({"hooks": handlers});
    if let Some(m) = matcher {
        group["matcher"] = serde_json::json!(m);
    }
    serde_json::json!({"hooks": {event: [group]}})
}

pub fn command(cmd: &str) -> Value {
    serde_json::json!({"type": "command", "command": cmd})
}

/// Runs a kernel harness (`tests/amplifier/<script>`) with `args` and `extra` environment, in the
/// test's home, failing on a non-zero exit; returns its JSON lines.
pub fn run_kernel_harness(
    env: &TestEnv,
    script: &str,
    args: &[&std::ffi::OsStr],
    extra: &[(&str, &str)],
) -> Vec<Value> {
    let mut command = env.command(&kernel_python());
    command
        .arg(repo_root().join("tests/amplifier").join(script))
        .args(args)
        .env("AMPLIHACK_LOG_DIR", env.root().join("logs"))
        .envs(extra.iter().copied());
    let (output, _) = run_with_timeout(command, b"", Duration::from_secs(120));
    assert!(
        output.status.success(),
        "{script} failed:\n{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    assert!(
        !stderr(&output).contains("Hook handler error"),
        "{}",
        stderr(&output)
    );
    stdout(&output)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

/// Whether a harness line's injected context holds `needle`.
pub fn context_has(line: &Value, needle: &str) -> bool {
    line["context"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c.as_str().is_some_and(|s| s.contains(needle)))
}

/// Copies a directory tree (a plugin, unchanged).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// The median of some timings (sorted in place).
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// A speed figure measured inside an end-to-end test: printed, and appended to
/// `$AMPLIHACK_FIGURES` when set, so that `./test.sh` shows it beside the benchmarks' (cargo shows
/// a passing test's output to no one).
pub fn figure(line: &str) {
    println!("{line}");
    if let Some(path) = std::env::var_os("AMPLIHACK_FIGURES") {
        use std::io::Write;
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(file, "{line}");
        }
    }
}

/// A speed test's [`alone`] waits for the test environments alive on other threads, and a new
/// one waits for it; its own thread's environments take no share.
#[test]
fn alone_waits_for_every_share_and_holds_off_new_ones() {
    use std::sync::mpsc;
    let (made, is_made) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    let other = std::thread::spawn(move || {
        let env = TestEnv::new();
        made.send(()).expect("send");
        released.recv().expect("recv");
        let releasing = Instant::now();
        drop(env);
        releasing
    });
    is_made.recv().expect("made");
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        release.send(()).expect("release");
    });
    let waiting = Instant::now();
    let alone = alone();
    let got = Instant::now();
    let dropped = other.join().expect("other");
    releaser.join().expect("releaser");
    assert!(
        got >= dropped,
        "alone() returned while another test's environment lived"
    );
    assert!(got - waiting >= Duration::from_millis(150));
    // Its own environments take no share (a read lock here would never be granted).
    drop(TestEnv::new());
    let (tried, was_tried) = mpsc::channel();
    let newcomer = std::thread::spawn(move || {
        let env = TestEnv::new();
        tried.send(Instant::now()).expect("send");
        drop(env);
    });
    std::thread::sleep(Duration::from_millis(150));
    let freed = Instant::now();
    drop(alone);
    let entered = was_tried.recv().expect("entered");
    newcomer.join().expect("newcomer");
    assert!(
        entered >= freed,
        "a new environment was made while a test held the machine"
    );
}
