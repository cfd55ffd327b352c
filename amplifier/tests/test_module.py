"""Unit tests of the module's pure parts: the kernel payload in Claude Code's shape, and the
binary's `hookResult` as a kernel HookResult. (What the real app does with them is proven by
tests/amplifier_app_e2e.rs; these only pin the translation.)"""

import unittest
from typing import Any

import asyncio

import json
import os
import stat
import tempfile
import time

from amplifier_module_hooks_amplihack.agent import TURNS, run_agent, run_tool
from amplifier_module_hooks_amplihack import (
    EVENTS,
    ask_models,
    context_transcript,
    model_verdict,
    mount_handlers,
    payload_for,
    run_binary,
    stop_failure_kind,
    to_hook_result,
)


class Payloads(unittest.TestCase):
    def test_each_kernel_event_becomes_its_claude_code_payload(self) -> None:
        cases: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
            (
                "tool:pre",
                {"tool_name": "bash", "tool_call_id": "t1", "tool_input": {"command": "ls"}},
                {"tool_name": "bash", "tool_use_id": "t1", "tool_input": {"command": "ls"}},
            ),
            ("tool:pre", {"name": "bash", "input": {"command": "ls"}}, {"tool_name": "bash", "tool_input": {"command": "ls"}}),
            ("tool:post", {"tool_name": "bash", "tool_input": {}, "result": {"ok": 1}}, {"tool_response": {"ok": 1}}),
            ("tool:error", {"tool_name": "bash", "tool_input": {}, "error": "boom"}, {"error": "boom"}),
            ("prompt:submit", {"prompt": "hi"}, {"prompt": "hi"}),
            ("session:start", {}, {"source": "startup"}),
            ("session:resume", {}, {"source": "resume"}),
            ("session:end", {"status": "completed"}, {"reason": "completed"}),
            ("prompt:complete", {"response_preview": "done"}, {"stop_hook_active": False, "last_assistant_message": "done"}),
            ("user:notification", {"message": "m", "type": "idle_prompt"}, {"message": "m", "notification_type": "idle_prompt"}),
            ("session:fork", {"child_session_id": "c1", "agent_name": "explorer"}, {"agent_id": "c1", "agent_type": "explorer"}),
            ("approval:required", {"tool_name": "bash", "action": "rm -rf x"}, {"tool_name": "bash", "tool_input": {"action": "rm -rf x"}}),
            (
                "provider:error",
                {"error": {"type": "RateLimitError", "msg": "slow down"}, "status_code": 429},
                {"error": "rate_limit", "error_details": "slow down"},
            ),
        ]
        for event, data, expected in cases:
            with self.subTest(event=event, data=data):
                claude_event = EVENTS[event][1]
                payload = payload_for(event, claude_event, data, "S", "/proj")
                self.assertEqual(payload["hook_event_name"], claude_event)
                self.assertEqual(payload["session_id"], "S")
                self.assertEqual(payload["cwd"], "/proj")
                for key, value in expected.items():
                    self.assertEqual(payload.get(key), value, key)

    def test_stop_failure_kinds_follow_the_http_status(self) -> None:
        for status, kind in [(429, "rate_limit"), (401, "authentication_failed"), (403, "authentication_failed"), (503, "server_error"), (None, "unknown"), (400, "unknown")]:
            with self.subTest(status=status):
                self.assertEqual(stop_failure_kind(status), kind)


class Results(unittest.TestCase):
    def test_each_action_of_the_binary_becomes_the_kernels(self) -> None:
        cases: list[tuple[dict[str, Any], dict[str, Any]]] = [
            ({}, {"action": "continue"}),
            ({"hookResult": {"action": "deny", "reason": "no"}}, {"action": "deny", "reason": "no"}),
            (
                {"hookResult": {"action": "ask_user", "reason": "sure?"}},
                {"action": "ask_user", "approval_prompt": "sure?", "approval_default": "deny"},
            ),
            (
                {"hookResult": {"action": "inject_context", "context_injection": "ctx"}},
                {"action": "inject_context", "context_injection": "ctx", "context_injection_role": "system"},
            ),
            (
                {"hookResult": {"action": "modify", "data": {"tool_input": {"command": "ls -l"}}}},
                {"action": "modify", "data": {"tool_name": "bash", "tool_input": {"command": "ls -l"}}},
            ),
            ({"hookResult": {"action": "explode"}}, {"action": "continue"}),
            ({"hookResult": {"action": "continue", "user_message": "hi", "user_message_level": "warning"}}, {"user_message": "hi", "user_message_level": "warning"}),
        ]
        data = {"tool_name": "bash", "tool_input": {"command": "ls"}}
        for answer, expected in cases:
            with self.subTest(answer=answer):
                result = to_hook_result(answer, "tool:pre", data)
                for key, value in expected.items():
                    self.assertEqual(getattr(result, key), value, key)


class ModelHandlers(unittest.TestCase):
    def test_a_model_backed_handlers_answer_is_read_as_claude_code_reads_it(self) -> None:
        cases: list[tuple[str, str | None | type[Exception]]] = [
            ('{"ok": true}', None),
            ('{"ok": false, "reason": "no deleting"}', "no deleting"),
            ('```json\n{"ok": false, "reason": "fenced"}\n```', "fenced"),
            ('Sure. {"ok": false, "reason": "with prose"}', "with prose"),
            ('{"decision": "block", "reason": "older form"}', "older form"),
            ('{"decision": "approve"}', None),
            ('{"ok": false}', "the model judged it unsafe"),
            ('{"safe": false, "reason": "the proposal\'s form"}', "the proposal's form"),
            ('{"safe": true, "reason": "fine"}', None),
            ("not json at all", ValueError),
            ("[1, 2]", ValueError),
            ("{not json}", ValueError),
        ]
        for text, expected in cases:
            with self.subTest(text=text):
                if isinstance(expected, type):
                    with self.assertRaises(expected):
                        model_verdict(text)
                else:
                    self.assertEqual(model_verdict(text), expected)

    def test_the_sessions_provider_is_asked_and_failures_let_the_event_go_on(self) -> None:
        class Block:
            def __init__(self, text: str) -> None:
                self.text = text

        class Response:
            def __init__(self, text: str) -> None:
                self.content = [Block(text)]

        class Provider:
            def __init__(self, answers: list[str | Exception]) -> None:
                self.answers = answers
                self.asked: list[Any] = []
                self.models: list[str | None] = []

            async def complete(self, request: Any, **kwargs: Any) -> Response:
                self.asked.append(request)
                self.models.append(kwargs.get("model"))
                answer = self.answers.pop(0)
                if isinstance(answer, Exception):
                    raise answer
                return Response(answer)

        class Coordinator:
            def __init__(self, providers: dict[str, Any]) -> None:
                self.providers = providers

            def get(self, name: str) -> Any:
                return self.providers if name == "providers" else None

        question = {"prompt": "is `rm -rf build` safe? {...}", "model": None, "timeout": 5}
        refusing = Provider(['{"ok": true}', '{"ok": false, "reason": "deletes the build"}'])
        verdict = asyncio.run(ask_models(Coordinator({"anthropic": refusing}), [question, question]))
        self.assertEqual(verdict, "deletes the build")
        self.assertEqual(len(refusing.asked), 2)
        self.assertEqual(refusing.asked[0].messages[0].content, question["prompt"])
        failing = Provider([RuntimeError("provider down")])
        self.assertIsNone(asyncio.run(ask_models(Coordinator({"anthropic": failing}), [question])))
        self.assertIsNone(asyncio.run(ask_models(Coordinator({}), [question])))
        self.assertIsNone(asyncio.run(ask_models(Coordinator({"anthropic": refusing}), None)))

        # The proposal's llm hooks: its max_tokens, its cache (one call for two identical
        # questions), and its on_failure when the model call fails or answers no JSON.
        llm = {"prompt": "Tool: Bash", "model": "claude-3-haiku", "timeout": 5, "maxTokens": 100, "cache": True}
        judge = Provider(['{"safe": false, "reason": "too risky"}'])
        cache: dict[str, str | None] = {}
        for _ in range(2):
            verdict = asyncio.run(ask_models(Coordinator({"anthropic": judge}), [llm], cache))
            self.assertEqual(verdict, "too risky")
        self.assertEqual(len(judge.asked), 1)
        self.assertEqual((judge.models[0], judge.asked[0].max_output_tokens), ("claude-3-haiku", 100))
        failures: list[tuple[str, str | Exception, bool]] = [
            ("block", RuntimeError("down"), True),
            ("block", "no verdict here", True),
            ("warn", RuntimeError("down"), False),
            ("ignore", "no verdict here", False),
        ]
        for policy, answer, refused in failures:
            with self.subTest(policy=policy, answer=answer):
                strict = dict(llm, onFailure=policy, cache=False)
                verdict = asyncio.run(ask_models(Coordinator({"anthropic": Provider([answer])}), [strict], {}))
                self.assertEqual(verdict is not None and "on_failure is block" in verdict, refused, verdict)
        no_provider = dict(llm, onFailure="block", cache=False)
        self.assertIsNotNone(asyncio.run(ask_models(Coordinator({}), [no_provider], {})))


class Transcript(unittest.TestCase):
    def test_the_sessions_messages_are_written_as_the_app_saves_a_transcript(self) -> None:
        class Context:
            def __init__(self, messages: Any) -> None:
                self.messages = messages

            async def get_messages(self) -> Any:
                if isinstance(self.messages, Exception):
                    raise self.messages
                return self.messages

        class Coordinator:
            def __init__(self, context: Any) -> None:
                self.context = context

            def get(self, name: str) -> Any:
                return self.context if name == "context" else None

        messages = [
            {"role": "system", "content": "instructions"},
            {"role": "user", "content": "h\u00e9llo"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "t1", "arguments": {"command": "ls"}}]},
            {"role": "developer", "content": "context files"},
            {"role": "tool", "content": "a.txt", "tool_call_id": "t1"},
        ]
        path = asyncio.run(context_transcript(Coordinator(Context(messages))))
        assert path is not None
        try:
            self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
            with open(path, encoding="utf-8") as f:
                lines = [json.loads(line) for line in f]
            self.assertEqual(lines, [messages[1], messages[2], messages[4]])
        finally:
            os.unlink(path)
        self.assertIsNone(asyncio.run(context_transcript(Coordinator(None))))
        self.assertIsNone(asyncio.run(context_transcript(Coordinator(Context(RuntimeError("gone"))))))
        self.assertIsNone(asyncio.run(context_transcript(Coordinator(Context("not a list")))))
        self.assertIsNone(asyncio.run(context_transcript(Coordinator(Context(messages[:1])))), "nothing to keep")


class Running(unittest.TestCase):
    def run_sh(self, script: str, data: bytes, timeout: float = 10) -> tuple[int, bytes, bytes] | None:
        return asyncio.run(run_binary(["sh", "-c", script], data, None, dict(os.environ), timeout))

    def test_the_answer_its_errors_and_exit_code_come_back(self) -> None:
        self.assertEqual(self.run_sh("cat; echo oops >&2; exit 3", b'{"a": 1}'), (3, b'{"a": 1}', b"oops\n"))

    def test_an_input_larger_than_a_pipe_is_fed_whole(self) -> None:
        data = b"x" * (4 << 20)
        ran = self.run_sh("wc -c", data)
        assert ran is not None
        self.assertEqual((ran[0], int(ran[1])), (0, len(data)))

    def test_a_process_that_does_not_read_its_input_still_answers(self) -> None:
        self.assertEqual(self.run_sh("echo early", b"y" * (4 << 20)), (0, b"early\n", b""))

    def test_past_its_timeout_its_whole_process_group_is_killed(self) -> None:
        with tempfile.TemporaryDirectory() as scratch:
            pid_file = os.path.join(scratch, "pid")
            started = time.monotonic()
            ran = self.run_sh(f"sleep 30 & echo $! > {pid_file}; wait", b"", timeout=0.5)
            self.assertIsNone(ran)
            self.assertLess(time.monotonic() - started, 5)
            with open(pid_file) as f:
                child = int(f.read())
            time.sleep(0.1)
            try:
                with open(f"/proc/{child}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except FileNotFoundError:
                state = "gone"
            self.assertIn(state, ("gone", "Z"), "the handler's own child is killed too")

    def test_a_binary_that_cannot_start_raises(self) -> None:
        with self.assertRaises(OSError):
            asyncio.run(run_binary(["/nonexistent/amplihack-hooks"], b"", None, dict(os.environ), 5))


class FakeHooks:
    def __init__(self) -> None:
        self.handlers: dict[str, Any] = {}

    def register(self, event: str, handler: Any, priority: int, name: str) -> Any:
        self.handlers[event] = handler
        return lambda: None

    def list_handlers(self) -> dict[str, list[str]]:
        return {}


class FakeCoordinator:
    session_id = "S"

    def __init__(self) -> None:
        self.hooks = FakeHooks()

    def get(self, name: str) -> Any:
        return None


def fake_binary(scratch: str) -> tuple[str, str]:
    """A stand-in for amplihack-hooks that logs each start (pid, argv) and each answer; its log."""
    log = os.path.join(scratch, "log")
    binary = os.path.join(scratch, "amplihack-hooks")
    with open(binary, "w") as f:
        f.write(f'#!/bin/sh\n[ "$1" = --table ] && {{ echo "[]"; exit 0; }}\n'
                f'echo "$$ started $*" >> {log}\ncat > /dev/null\necho "$$ answered" >> {log}\n')
    os.chmod(binary, 0o755)
    return binary, log


def logged(log: str) -> list[list[str]]:
    try:
        with open(log) as f:
            return [line.split() for line in f]
    except FileNotFoundError:
        return []


class Compactions(unittest.TestCase):
    def test_context_simples_compactions_export_once_per_turn(self) -> None:
        with tempfile.TemporaryDirectory() as scratch:
            binary, log = fake_binary(scratch)

            async def scenario() -> None:
                coordinator = FakeCoordinator()
                mount_handlers(coordinator, {"binary": binary, "project": scratch})
                handlers = coordinator.hooks.handlers
                for _ in range(3):
                    await handlers["context:compaction"]("context:compaction", {"before_tokens": 9})
                self.assertEqual([line[-1] for line in logged(log) if line[1] == "started"], ["pre-compact"])
                await handlers["prompt:submit"]("prompt:submit", {"prompt": "next"})
                await handlers["context:compaction"]("context:compaction", {"before_tokens": 9})
                started = [line[-1] for line in logged(log) if line[1] == "started"]
                self.assertEqual(started, ["pre-compact", "user-prompt-submit", "pre-compact"])

            try:
                asyncio.run(scenario())
            finally:
                os.environ.pop("AMPLIHACK_AMPLIFIER_MODULE_ACTIVE", None)


class Standby(unittest.TestCase):
    def test_tool_events_are_written_to_processes_started_while_the_model_is_asked(self) -> None:
        with tempfile.TemporaryDirectory() as scratch:
            binary, log = fake_binary(scratch)

            def lines() -> list[list[str]]:
                return logged(log)

            async def scenario() -> None:
                coordinator = FakeCoordinator()
                unregister = mount_handlers(coordinator, {"binary": binary, "project": scratch})
                handlers = coordinator.hooks.handlers
                data = {"tool_name": "bash", "tool_input": {"command": "ls"}}
                standby = ["--host", "amplifier", "--standby"]
                # Before any model request: no spare, the process starts with the event.
                await handlers["tool:pre"]("tool:pre", data)
                first, answered = lines()
                self.assertEqual(first[2:], ["--host", "amplifier", "pre-tool-use"])
                self.assertEqual(answered, [first[0], "answered"])
                # The session asks the model: one process per tool subcommand starts, waiting.
                await handlers["provider:request"]("provider:request", {})
                await asyncio.sleep(0.3)
                spares = {line[-1]: line for line in lines()[2:]}
                pre, post = spares["pre-tool-use"], spares["post-tool-use"]
                self.assertEqual((pre[2:], post[2:]), (standby + ["pre-tool-use"], standby + ["post-tool-use"]))
                await handlers["tool:pre"]("tool:pre", data)
                await handlers["tool:post"]("tool:post", dict(data, result={"success": True}))
                self.assertEqual(lines()[4:], [[pre[0], "answered"], [post[0], "answered"]], "each went to its spare")
                # An environment changed since the spares started: not used, and stopped.
                await handlers["provider:request"]("provider:request", {})
                await asyncio.sleep(0.3)
                spares = {line[-1]: line for line in lines()[6:]}
                stale, waiting = spares["pre-tool-use"], spares["post-tool-use"]
                os.environ["AMPLIHACK_TEST_CHANGED"] = "1"
                try:
                    await handlers["tool:pre"]("tool:pre", data)
                finally:
                    del os.environ["AMPLIHACK_TEST_CHANGED"]
                fresh, fresh_answered = lines()[8:]
                self.assertEqual(fresh[2:], ["--host", "amplifier", "pre-tool-use"])
                self.assertEqual(fresh_answered, [fresh[0], "answered"])
                self.assertFalse(os.path.exists(f"/proc/{stale[0]}"), "the stale spare was stopped")
                for handle in unregister:
                    handle()
                self.assertFalse(os.path.exists(f"/proc/{waiting[0]}"), "cleanup stops the spare")
                self.assertNotIn([waiting[0], "answered"], lines())

            try:
                asyncio.run(scenario())
            finally:
                os.environ.pop("AMPLIHACK_AMPLIFIER_MODULE_ACTIVE", None)


class AgentHandlers(unittest.TestCase):
    def test_read_only_tools_answer_from_the_project(self) -> None:
        with tempfile.TemporaryDirectory() as project:
            os.makedirs(os.path.join(project, "src"))
            with open(os.path.join(project, "src", "a.py"), "w") as f:
                f.write("import os\nSECRET = 1\n")
            cases: list[tuple[str, dict[str, Any], str]] = [
                ("Read", {"file_path": "src/a.py"}, "import os\nSECRET = 1\n"),
                ("Read", {"file_path": "missing.txt"}, "error: "),
                ("Grep", {"pattern": "SECRET"}, "src/a.py:2:SECRET = 1"),
                ("Grep", {"pattern": "nothing-here"}, "no matches"),
                ("Grep", {"pattern": "("}, "error: "),
                ("Glob", {"pattern": "**/*.py"}, "src/a.py"),
                ("Glob", {"pattern": "*.md"}, "no files"),
                ("Bash", {"command": "rm -rf /"}, "unknown tool Bash"),
            ]
            for name, arguments, expected in cases:
                with self.subTest(name=name, arguments=arguments):
                    self.assertTrue(run_tool(name, arguments, project).startswith(expected), run_tool(name, arguments, project))

    def test_tools_are_rooted_at_the_project(self) -> None:
        """Finding 13: absolute paths, `..` and symlinks that lead out of the project are refused
        with a clear answer; a FIFO is not waited on; reads are bounded."""
        with tempfile.TemporaryDirectory() as scratch:
            project = os.path.join(scratch, "project")
            os.makedirs(os.path.join(project, "src"))
            secret = os.path.join(scratch, "secret.txt")
            with open(secret, "w") as f:
                f.write("SECRET outside\n")
            with open(os.path.join(project, "src", "a.py"), "w") as f:
                f.write("inside = 1\n")
            with open(os.path.join(project, "big.txt"), "w") as f:
                f.write("x" * 100_000)
            os.symlink(secret, os.path.join(project, "link.txt"))
            os.symlink(scratch, os.path.join(project, "up"))
            os.mkfifo(os.path.join(project, "pipe"))
            refused = "error: "
            cases: list[tuple[str, dict[str, Any], str]] = [
                ("Read", {"file_path": secret}, refused),
                ("Read", {"file_path": "../secret.txt"}, refused),
                ("Read", {"file_path": "src/../../secret.txt"}, refused),
                ("Read", {"file_path": "link.txt"}, refused),
                ("Read", {"file_path": "up/secret.txt"}, refused),
                ("Read", {"file_path": "/etc/passwd"}, refused),
                ("Read", {"file_path": "pipe"}, refused),
                ("Read", {"file_path": os.path.join(project, "src", "a.py")}, "inside = 1"),
                ("Read", {"file_path": "src/../src/a.py"}, "inside = 1"),
                ("Grep", {"pattern": "SECRET", "path": ".."}, refused),
                ("Grep", {"pattern": "SECRET", "path": "/"}, refused),
                ("Grep", {"pattern": "SECRET", "path": "up"}, refused),
                ("Grep", {"pattern": "SECRET"}, "no matches"),
                ("Glob", {"pattern": "*", "path": "/etc"}, refused),
                ("Glob", {"pattern": "/etc/*"}, refused),
                ("Glob", {"pattern": "../*"}, refused),
                ("Glob", {"pattern": "src/../../*"}, refused),
                ("Glob", {"pattern": "up/*"}, ""),
                ("Glob", {"pattern": "**/*.py"}, "src/a.py"),
            ]
            for name, arguments, expected in cases:
                with self.subTest(name=name, arguments=arguments):
                    answer = run_tool(name, arguments, project)
                    self.assertTrue(answer.startswith(expected), answer)
                    self.assertNotIn("SECRET outside", answer)
            self.assertIn("outside the project", run_tool("Read", {"file_path": "../secret.txt"}, project))
            self.assertIn("not a regular file", run_tool("Read", {"file_path": "pipe"}, project))
            self.assertEqual(len(run_tool("Read", {"file_path": "big.txt"}, project)), 30_000)

    def test_the_subagent_calls_tools_until_it_answers(self) -> None:
        class Call:
            def __init__(self, name: str, arguments: dict[str, Any]) -> None:
                self.id, self.name, self.arguments = "call-1", name, arguments

        class Response:
            def __init__(self, text: str, calls: list[Call]) -> None:
                self.content = [type("Block", (), {"text": text})()]
                self.tool_calls = calls

        class Provider:
            def __init__(self, answers: list[Response]) -> None:
                self.answers: list[Response] = answers
                self.asked: list[Any] = []

            async def complete(self, request: Any, **_: Any) -> Response:
                self.asked.append(request)
                return self.answers.pop(0) if self.answers else Response("", [Call("Glob", {"pattern": "*"})])

        with tempfile.TemporaryDirectory() as project:
            with open(os.path.join(project, "POLICY.md"), "w") as f:
                f.write("no echo")
            provider = Provider([Response("", [Call("Read", {"file_path": "POLICY.md"})]), Response('{"ok": false}', [])])
            answer = asyncio.run(run_agent(provider, {"prompt": "may it?"}, project))
            self.assertEqual(answer, '{"ok": false}')
            self.assertEqual([t.name for t in provider.asked[0].tools], ["Read", "Grep", "Glob"])
            last = provider.asked[1].messages
            self.assertEqual((last[-1].role, last[-1].content), ("tool", "no echo"))
            endless = Provider([])
            with self.assertRaises(RuntimeError):
                asyncio.run(run_agent(endless, {"prompt": "may it?"}, project))
            self.assertEqual(len(endless.asked), TURNS)


if __name__ == "__main__":
    unittest.main()
