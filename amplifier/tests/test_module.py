"""Unit tests of the module's pure parts: the kernel payload in Claude Code's shape, and the
binary's `hookResult` as a kernel HookResult. (What the real app does with them is proven by
tests/amplifier_app_e2e.rs; these only pin the translation.)"""

import unittest
from typing import Any

import asyncio

from amplifier_module_hooks_amplihack import EVENTS, ask_models, model_verdict, payload_for, stop_failure_kind, to_hook_result


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


if __name__ == "__main__":
    unittest.main()
