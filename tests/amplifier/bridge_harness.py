"""Drives amplihack's Amplifier registration through the real amplifier-core kernel.

The kernel (AmplifierSession, its coordinator and hook registry, process_hook_result) is the real
one from PyPI. The bridge is not on PyPI, so `mount` below is a minimal hook-shell bridge written
from its recorded behaviour (shared reference, amplifier.md §1.1-1.2):

* hooks.json from <project>/.amplifier/hooks/ and each immediate subdirectory, merged per event;
* handlers registered at priority 20; hooks of one event run in order and the first deny,
  modify or inject_context ends the event;
* matchers: case-insensitive `re.fullmatch`, `*`/empty/missing match all, an invalid regex falls
  back to a case-insensitive comparison; the target is the tool name (`tool_name`, else `name`),
  or the trigger for SessionStart;
* stdin: one `json.dumps` line, no trailing newline, built as the bridge builds it (tool events
  from `name`/`input`, so real orchestrators' `tool_name`/`tool_input` arrive empty);
* `sh -c` in the project directory after `os.path.expandvars`, with AMPLIFIER_* and CLAUDE_*
  variables set, a timeout (default 30 s) after which the hook fails open;
* output: exit 2 → deny (stderr as reason); stdout parsed as JSON only as a whole:
  `decision: "block"` → deny, `contextInjection` → inject_context, `newContent` → modify,
  `systemMessage` as user_message; anything else → continue.

Usage: bridge_harness.py PROJECT_DIR. Prints one JSON object per emitted event.
"""

import asyncio
import datetime
import glob
import json
import os
import re
import sys
import tempfile

from amplifier_core import AmplifierSession, HookResult, MockContextManager

EVENTS = {
    "tool:pre": "PreToolUse",
    "tool:post": "PostToolUse",
    "prompt:submit": "UserPromptSubmit",
    "session:start": "SessionStart",
    "session:resume": "SessionStart",
    "session:end": "SessionEnd",
    "prompt:complete": "Stop",
    "context:pre_compact": "PreCompact",
}


def load_hooks(hooks_dir):
    merged = {}
    files = [os.path.join(hooks_dir, "hooks.json")] + glob.glob(os.path.join(hooks_dir, "*", "hooks.json"))
    for path in files:
        if not os.path.isfile(path):
            continue
        try:
            with open(path) as f:
                config = json.load(f)
        except (OSError, ValueError) as e:
            print(f"warning: {path}: {e}", file=sys.stderr)
            continue
        for event, groups in (config.get("hooks") or {}).items():
            merged.setdefault(event, []).extend(groups if isinstance(groups, list) else [groups])
    return merged


def matches(matcher, target):
    if matcher in (None, "", "*"):
        return True
    try:
        return re.fullmatch(matcher, target or "", re.IGNORECASE) is not None
    except re.error:
        return (matcher or "").lower() == (target or "").lower()


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat().replace("+00:00", "Z")


def stdin_for(event, data):
    if event in ("tool:pre", "tool:post"):
        payload = {"tool_name": data.get("name", ""), "tool_input": data.get("input", {})}
        if event == "tool:post":
            payload["tool_result"] = data.get("result")
    elif event == "prompt:submit":
        payload = {"prompt": data.get("prompt", "")}
    elif event in ("session:start", "session:resume"):
        trigger = "resume" if event == "session:resume" else data.get("trigger", "startup")
        payload = {"session_id": data.get("session_id"), "trigger": trigger}
    elif event == "session:end":
        payload = {"session_id": data.get("session_id")}
    else:
        payload = dict(sorted({k: v for k, v in data.items() if k != "timestamp"}.items()))
    payload["timestamp"] = now()
    if event not in ("tool:pre", "tool:post", "prompt:submit", "session:start", "session:resume", "session:end"):
        payload = dict(sorted(payload.items()))
    return json.dumps(payload)


def to_result(code, stdout, stderr):
    if code == 2:
        return HookResult(action="deny", reason=stderr.strip() or "Hook blocked operation")
    try:
        output = json.loads(stdout)
    except ValueError:
        return HookResult(action="continue")
    if not isinstance(output, dict):
        return HookResult(action="continue")
    message = output.get("systemMessage")
    if output.get("decision") == "block":
        return HookResult(action="deny", reason=output.get("reason"), user_message=message)
    if "contextInjection" in output:
        return HookResult(action="inject_context", context_injection=output["contextInjection"], user_message=message)
    if "newContent" in output:
        return HookResult(action="modify", data={"modified_content": output["newContent"]}, user_message=message)
    return HookResult(action="continue", user_message=message)


def mount(coordinator, project):
    hooks_dir = os.path.join(project, ".amplifier", "hooks")
    config = load_hooks(hooks_dir)
    env_file = tempfile.mkstemp(prefix="amplifier-env-", suffix=".env")[1]
    state = {"session_id": None}
    runs = []

    def make_handler(event):
        claude_event = EVENTS[event]

        async def handler(_event, data):
            state["session_id"] = state["session_id"] or data.get("session_id") or "unknown"
            target = data.get("trigger", "startup") if claude_event == "SessionStart" else (data.get("tool_name") or data.get("name") or "")
            stdin = stdin_for(event, data)
            env = dict(os.environ)
            env.update({
                "AMPLIFIER_PROJECT_DIR": project,
                "CLAUDE_PROJECT_DIR": project,
                "AMPLIFIER_HOOKS_DIR": hooks_dir,
                "AMPLIFIER_SESSION_ID": state["session_id"],
                "AMPLIFIER_ENV_FILE": env_file,
                "CLAUDE_ENV_FILE": env_file,
            })
            for group in config.get(claude_event, []):
                if not matches(group.get("matcher"), target):
                    continue
                for hook in group.get("hooks", []):
                    if hook.get("type", "command") != "command":
                        continue
                    process = await asyncio.create_subprocess_shell(
                        os.path.expandvars(hook["command"]), cwd=project, env=env,
                        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
                    try:
                        out, err = await asyncio.wait_for(process.communicate(stdin.encode()), timeout=hook.get("timeout", 30))
                    except asyncio.TimeoutError:
                        process.kill()
                        continue
                    runs.append({"event": event, "command": hook["command"], "stdin": stdin, "exit": process.returncode,
                                 "stdout": out.decode(), "stderr": err.decode()})
                    result = to_result(process.returncode, out.decode(), err.decode())
                    if result.action in ("deny", "modify", "inject_context"):
                        return result
            return HookResult(action="continue")

        return handler

    for event in EVENTS:
        coordinator.hooks.register(event, make_handler(event), 20, "shell-" + event.replace(":", "-"))
    return runs


class Display:
    def __init__(self):
        self.messages = []

    def show_message(self, message, level="info", source=None, *args, **kwargs):
        self.messages.append(message)


async def main(project):
    display = Display()
    session = AmplifierSession({"session": {"orchestrator": "loop-basic", "context": "context-simple"}},
                               session_id="S-amplihack", display_system=display)
    coordinator = session.coordinator
    context = MockContextManager()
    await coordinator.mount("context", context)
    runs = mount(coordinator, project)

    # The payloads real emitters send (reference §1.1), plus the legacy tool keys the bridge reads.
    emitted = [
        ("session:start", {"session_id": "S-amplihack", "parent_id": None}),
        ("prompt:submit", {"prompt": "please commit"}),
        ("tool:pre", {"name": "bash", "input": {"command": "git commit --no-verify -m wip"}}),
        ("tool:pre", {"name": "bash", "input": {"command": "ls -la"}}),
        ("tool:pre", {"tool_name": "bash", "tool_call_id": "toolu_1", "tool_input": {"command": "git commit --no-verify"}, "parallel_group_id": "g1"}),
        ("tool:post", {"tool_name": "bash", "tool_call_id": "toolu_1", "tool_input": {"command": "ls"}, "result": {"success": True, "output": {"stdout": "a\n", "returncode": 0}}}),
        ("prompt:complete", {"response_preview": "done", "length": 4}),
        ("context:pre_compact", {"trigger": "auto"}),
        ("session:end", {"session_id": "S-amplihack", "status": "completed"}),
    ]
    for event, data in emitted:
        before = len(runs)
        result = await coordinator.hooks.emit(event, data)
        processed = await coordinator.process_hook_result(result, event, "shell-" + event.replace(":", "-"))
        messages = await context.get_messages()
        print(json.dumps({
            "event": event,
            "data": data,
            "emitted_action": result.action,
            "action": processed.action,
            "reason": processed.reason,
            "context": [m["content"] for m in messages],
            "runs": runs[before:],
        }))
    print(json.dumps({"display": display.messages}))


if __name__ == "__main__":
    asyncio.run(main(os.path.abspath(sys.argv[1])))
    # amplifier-core 2.0.2's Rust engine can abort the interpreter while it finalizes
    # ("PyGILState_Release: thread state ... must be current"), after all our work is done. Leave
    # without finalizing so that race cannot turn a completed run into a failure.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
