//! `amplihack hooks list` says, per plugin, which of its events an installed host never delivers
//! (from each host's dialect), so a user of Gemini CLI or opencode knows which handlers stay idle.

use crate::support;

use support::TestEnv;

#[test]
fn hooks_list_names_the_hosts_that_do_not_deliver_an_event() {
    let env = TestEnv::new();
    for host in ["opencode", "gemini"] {
        let mut command = env.amplihack(&["install", "--host", host]);
        command.env("XDG_CONFIG_HOME", env.home.join(".config"));
        let (install, _) =
            support::run_with_timeout(command, b"", std::time::Duration::from_secs(60));
        assert!(install.status.success(), "{}", support::stderr(&install));
    }
    let handler = || vec![support::command("true")];
    let mut config = support::one_group("Notification", None, handler());
    for event in ["SubagentStop", "PreToolUse"] {
        config["hooks"][event] = support::one_group(event, None, handler())["hooks"][event].clone();
    }
    env.plugin(&env.user_hooks_dir(), "pager", &config);

    let list = env.run_amplihack(&["hooks", "list"]);
    assert!(list.status.success(), "{}", support::stderr(&list));
    let text = support::stdout(&list)
        .replace(&*env.home.to_string_lossy(), "~")
        .replace(&*env.project.to_string_lossy(), "<project>");
    insta::assert_snapshot!(text);

    let json: serde_json::Value =
        serde_json::from_slice(&env.run_amplihack(&["hooks", "list", "--json"]).stdout)
            .expect("json");
    assert_eq!(
        json["plugins"][0]["not_delivered_by"],
        serde_json::json!([
            {"event": "Notification", "hosts": ["opencode"]},
            {"event": "SubagentStop", "hosts": ["Gemini CLI", "opencode"]}
        ])
    );
}
