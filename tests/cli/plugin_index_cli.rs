//! The plugin index (`engine/src/plugin_index.rs`) lets a call skip a level none of whose plugins
//! handles the event, and must never skip one that does: every change to a level's plugins is
//! seen at the next call, and a damaged index is only a miss.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::{self, TestEnv};

fn call(env: &TestEnv, tool: &str) -> std::process::Output {
    let event = json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": env.project,
                       "tool_name": tool, "tool_input": {"command": "ls", "file_path": "/x"}});
    let (output, _) = env.run_hooks(&["pre-tool-use"], &event, &[]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        support::stderr(&output)
    );
    output
}

fn plugin_on(env: &TestEnv, matcher: &str, mark: &str) -> Value {
    support::one_group(
        "PreToolUse",
        Some(matcher),
        vec![support::command(&env.mark("ran", mark))],
    )
}

fn index_files(env: &TestEnv) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(env.home.join(".local/state/amplihack/plugin-index"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

type Change = fn(&TestEnv, &Path);

/// Every file, directory and link under `dir` an hour old: stamps the index trusts (a recent one
/// is a miss whatever it says, see `plugin_index::RACY`), so the checks below are the replayed
/// `stat`s' and not that rule's.
fn age(dir: &Path) {
    let status = std::process::Command::new("find")
        .arg(dir)
        .args(["-exec", "touch", "-h", "-d", "1 hour ago", "{}", "+"])
        .status()
        .expect("find");
    assert!(status.success());
}

/// The index file's inode: a call that answers from the index does not rewrite it.
fn index_inode(env: &TestEnv) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let files = index_files(env);
    assert_eq!(files.len(), 1, "{files:?}");
    std::fs::metadata(&files[0]).expect("index").ino()
}

#[test]
fn every_change_to_a_level_is_seen_at_the_next_call() {
    let changes: [(&str, Change); 8] = [
        (
            "a plugin's file edited in place, same size",
            |env, hooks| {
                let file = hooks.join("a/hooks.json");
                let text = env.read(&file).replace("\"Edit\"", "\"Bash\"");
                std::fs::write(&file, text).expect("edit");
            },
        ),
        ("a plugin added", |env, hooks| {
            env.plugin(hooks, "b", &plugin_on(env, "Bash", "b"));
        }),
        (
            "a hooks file created in a plugin directory that had none",
            |env, hooks| {
                env.write(
                    &hooks.join("empty/hooks.json"),
                    &plugin_on(env, "Bash", "empty").to_string(),
                );
            },
        ),
        (
            "a plugin's hooks/hooks.json created in its existing hooks/ directory",
            |env, hooks| {
                env.write(
                    &hooks.join("nested/hooks/hooks.json"),
                    &plugin_on(env, "Bash", "nested").to_string(),
                );
            },
        ),
        ("the level's own hooks.json created", |env, hooks| {
            env.write(
                &hooks.join("hooks.json"),
                &plugin_on(env, "Bash", "own").to_string(),
            );
        }),
        (
            "a hooks.yaml created beside a plugin's hooks.json",
            |env, hooks| {
                let mark = env.mark("ran", "yaml");
                env.write(
                    &hooks.join("a/hooks.yaml"),
                    &format!(
                        "hooks:\n  PreToolUse:\n    - type: command\n      command: {}\n",
                        json!(mark)
                    ),
                );
            },
        ),
        (
            "a plugin's file replaced by another (rename over it)",
            |env, hooks| {
                let text = env
                    .read(&hooks.join("a/hooks.json"))
                    .replace("\"Edit\"", "\"Bash\"");
                env.write(&hooks.join("a/new.tmp"), &text);
                std::fs::rename(hooks.join("a/new.tmp"), hooks.join("a/hooks.json"))
                    .expect("rename");
            },
        ),
        (
            "a link in the level whose directory appears",
            |env, _hooks| {
                env.plugin(
                    &env.root().join("elsewhere"),
                    "linked",
                    &plugin_on(env, "Bash", "linked"),
                );
            },
        ),
    ];
    for (what, change) in changes {
        let env = TestEnv::new();
        let hooks = env.user_hooks_dir();
        env.plugin(&hooks, "a", &plugin_on(&env, "Edit", "a"));
        std::fs::create_dir_all(hooks.join("empty")).expect("empty plugin dir");
        std::fs::create_dir_all(hooks.join("nested/hooks")).expect("hooks dir");
        std::os::unix::fs::symlink(env.root().join("elsewhere/linked"), hooks.join("linked"))
            .expect("dangling link");
        age(&hooks);
        // A Bash call no plugin handles: the index is built, and nothing runs.
        call(&env, "Bash");
        assert!(
            env.marks("ran").is_empty(),
            "{what}: {:?}",
            env.marks("ran")
        );
        assert_eq!(
            index_files(&env).len(),
            1,
            "{what}: the idle call left an index"
        );
        let built = index_inode(&env);
        call(&env, "Bash");
        assert_eq!(
            index_inode(&env),
            built,
            "{what}: the unchanged level was answered from its index"
        );
        assert!(
            env.marks("ran").is_empty(),
            "{what}: {:?}",
            env.marks("ran")
        );
        change(&env, &hooks);
        call(&env, "Bash");
        assert_eq!(env.marks("ran").len(), 1, "{what}: the change was not seen");
    }
}

/// A plugin removed, or one plugin's directory renamed, is seen too: the next idle call rebuilds
/// the index (a new file), it does not answer from the old one.
#[test]
fn a_removed_or_renamed_plugin_is_seen_at_the_next_call() {
    let changes: [(&str, Change); 2] = [
        ("a plugin removed", |_, hooks| {
            std::fs::remove_dir_all(hooks.join("b")).expect("remove");
        }),
        ("a plugin's directory renamed", |_, hooks| {
            std::fs::rename(hooks.join("b"), hooks.join("c")).expect("rename");
        }),
    ];
    for (what, change) in changes {
        let env = TestEnv::new();
        let hooks = env.user_hooks_dir();
        env.plugin(&hooks, "a", &plugin_on(&env, "Edit", "a"));
        env.plugin(&hooks, "b", &plugin_on(&env, "Write", "b"));
        age(&hooks);
        call(&env, "Bash");
        let built = index_inode(&env);
        call(&env, "Bash");
        assert_eq!(index_inode(&env), built, "{what}: answered from the index");
        change(&env, &hooks);
        call(&env, "Bash");
        assert_ne!(index_inode(&env), built, "{what}: the change was not seen");
        assert!(
            env.marks("ran").is_empty(),
            "{what}: {:?}",
            env.marks("ran")
        );
    }
}

#[test]
fn an_idle_level_is_indexed_and_a_matching_call_still_runs() {
    let env = TestEnv::new();
    let hooks = env.user_hooks_dir();
    env.plugin(&hooks, "a", &plugin_on(&env, "Edit|Write", "a"));
    call(&env, "Bash");
    assert_eq!(index_files(&env).len(), 1, "the idle call left an index");
    call(&env, "Write");
    assert_eq!(env.marks("ran"), ["a"]);
}

#[test]
fn a_plugin_that_does_not_parse_is_reported_at_every_call() {
    let env = TestEnv::new();
    let hooks = env.user_hooks_dir();
    env.write(&hooks.join("broken/hooks.json"), "{ not json");
    for _ in 0..2 {
        let output = call(&env, "Bash");
        assert!(
            support::stderr(&output).contains("broken"),
            "{}",
            support::stderr(&output)
        );
    }
    assert!(
        index_files(&env).is_empty(),
        "no index of a level that does not parse"
    );
}

#[test]
fn a_damaged_index_is_a_miss() {
    let env = TestEnv::new();
    let hooks = env.user_hooks_dir();
    env.plugin(&hooks, "a", &plugin_on(&env, "Edit", "a"));
    call(&env, "Bash");
    let index = index_files(&env);
    assert_eq!(index.len(), 1);
    for damage in ["", "amplihack plugin index 2\ngarbage\n", "\u{0}\u{1}"] {
        std::fs::write(&index[0], damage).expect("damage");
        call(&env, "Edit");
    }
    assert_eq!(env.marks("ran"), ["a", "a", "a"]);
}

#[test]
fn a_level_with_a_plugin_manifest_is_not_indexed() {
    // A manifest may name its hooks file anywhere: no stamp would cover it.
    let env = TestEnv::new();
    let hooks = env.user_hooks_dir();
    env.write(
        &hooks.join("m/.claude-plugin/plugin.json"),
        &json!({"name": "m", "hooks": plugin_on(&env, "Edit", "m")["hooks"]}).to_string(),
    );
    call(&env, "Bash");
    assert!(index_files(&env).is_empty());
    call(&env, "Edit");
    assert_eq!(env.marks("ran"), ["m"]);
}

/// A second edit in the same tick of the file system's clock can leave size and mtime as they
/// were (here forced: same size, the old mtime put back). A stamp that recent is never trusted,
/// so the change is still seen.
#[test]
fn an_edit_that_keeps_size_and_mtime_is_seen_while_the_stamp_is_recent() {
    let env = TestEnv::new();
    let hooks = env.user_hooks_dir();
    let file = env.plugin(&hooks, "a", &plugin_on(&env, "Edit", "a"));
    call(&env, "Bash");
    assert_eq!(index_files(&env).len(), 1, "the idle call left an index");
    let mtime = std::fs::metadata(&file)
        .and_then(|m| m.modified())
        .expect("mtime");
    let text = env.read(&file).replace("\"Edit\"", "\"Bash\"");
    std::fs::write(&file, text).expect("edit");
    std::fs::File::options()
        .write(true)
        .open(&file)
        .and_then(|f| f.set_modified(mtime))
        .expect("old mtime back");
    call(&env, "Bash");
    assert_eq!(env.marks("ran"), ["a"], "the edit was not seen");
}
