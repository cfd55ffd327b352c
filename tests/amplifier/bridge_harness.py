"""Drives amplihack's Amplifier registration through the real amplifier-core kernel and the real
hook-shell bridge.

The kernel (AmplifierSession, its coordinator and hook registry, process_hook_result) is the real
one from PyPI; the bridge is the real `amplifier-module-hook-shell`, vendored unchanged in
`tests/amplifier/hook-shell/` (see its VENDORED.md), mounted with its own `mount(coordinator, {})`
as a bundle mounts it. The bridge reads `.amplifier/hooks/` of the working directory, so the
harness moves into the project first. The one addition is a record of the hook commands the
bridge runs: `HookExecutor.execute`, the one place the bridge runs a command, is wrapped (its
behaviour unchanged) to note the command, the stdin it sent (`json.dumps` of its input, as
`execute` writes it) and the exit code, stdout and stderr it returned.

Usage: bridge_harness.py PROJECT_DIR. Prints one JSON object per emitted event, then the display.
"""

import asyncio
import json
import os
import sys
from typing import Any

from amplifier_core import AmplifierSession, MockContextManager

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "hook-shell"))
import amplifier_module_hook_shell as hook_shell  # noqa: E402 - found through the path above
from amplifier_module_hook_shell.executor import HookExecutor  # noqa: E402

Run = dict[str, Any]


def record_runs() -> list[Run]:
    """Every hook command the bridge runs from now on, in order, as its executor ran it."""
    runs: list[Run] = []
    execute = HookExecutor.execute

    async def recorded(self: HookExecutor, command: str, input_data: dict[str, Any],
                       *rest: Any) -> tuple[int, str, str]:
        code, out, err = await execute(self, command, input_data, *rest)
        runs.append({"command": command, "stdin": json.dumps(input_data), "exit": code,
                     "stdout": out, "stderr": err})
        return code, out, err

    HookExecutor.execute = recorded  # type: ignore[method-assign, assignment]
    return runs


class Display:
    def __init__(self) -> None:
        self.messages: list[str] = []

    def show_message(self, message: str, level: str = "info", source: str | None = None,
                     *args: Any, **kwargs: Any) -> None:
        self.messages.append(message)


async def main(project: str) -> None:
    os.chdir(project)
    display = Display()
    session = AmplifierSession({"session": {"orchestrator": "loop-basic", "context": "context-simple"}},
                               session_id="S-amplihack", display_system=display)
    coordinator = session.coordinator
    context = MockContextManager()
    await coordinator.mount("context", context)
    runs = record_runs()
    await hook_shell.mount(coordinator, {})

    # The payloads real emitters send (reference §1.1), plus the legacy tool keys the bridge reads.
    emitted: list[tuple[str, dict[str, Any]]] = [
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
        processed = await coordinator.process_hook_result(result, event, "hook-shell")
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
    asyncio.run(main(sys.argv[1]))
    # amplifier-core 2.0.2's Rust engine can abort the interpreter while it finalizes
    # ("PyGILState_Release: thread state ... must be current"), after all our work is done. Leave
    # without finalizing so that race cannot turn a completed run into a failure.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
