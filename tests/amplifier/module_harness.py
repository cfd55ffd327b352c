"""Drives amplihack's native Amplifier module through the real amplifier-core kernel.

The module (`amplifier_module_hooks_amplihack`, installed into the test virtualenv by ./test.sh)
is mounted with its public `mount(coordinator, config)` on a real AmplifierSession's coordinator;
events are emitted through the kernel's hook registry and their results go through
`coordinator.process_hook_result`, as orchestrators do. An approval system records what it was
asked and answers from the spec.

Usage: module_harness.py SPEC.json, where SPEC is
  {"config": {...module config...}, "approval_answer": "Allow", "events": [[event, data], ...]}
Prints one JSON object per emitted event, then one with the approvals and displayed messages.
"""

import asyncio
import json
import os
import sys

from amplifier_core import AmplifierSession, MockContextManager

import amplifier_module_hooks_amplihack as module


class Approvals:
    def __init__(self, answer):
        self.answer = answer
        self.asked = []

    async def request_approval(self, prompt, options, timeout, default):
        self.asked.append({"prompt": prompt, "options": options, "default": default})
        return self.answer


class Display:
    def __init__(self):
        self.messages = []

    def show_message(self, message, level="info", source=None, *args, **kwargs):
        self.messages.append({"message": message, "level": level})


async def main(spec):
    approvals = Approvals(spec.get("approval_answer", "Allow"))
    display = Display()
    session = AmplifierSession({"session": {"orchestrator": "loop-basic", "context": "context-simple"}},
                               session_id="S-module", approval_system=approvals, display_system=display)
    coordinator = session.coordinator
    context = MockContextManager()
    await coordinator.mount("context", context)
    cleanup = await module.mount(coordinator, spec.get("config") or {})
    for event, data in spec["events"]:
        before = len(await context.get_messages())
        result = await coordinator.hooks.emit(event, data)
        processed = await coordinator.process_hook_result(result, event, "amplihack-" + event.replace(":", "-"))
        messages = await context.get_messages()
        print(json.dumps({
            "event": event,
            "emitted_action": result.action,
            "action": processed.action,
            "reason": processed.reason,
            "data": result.data,
            "approval_prompt": result.approval_prompt,
            "user_message": result.user_message,
            "context": [m["content"] for m in messages[before:]],
        }, default=str))
    await cleanup()
    print(json.dumps({"approvals": approvals.asked, "display": display.messages,
                      "marker_after_cleanup": os.environ.get(module.ACTIVE_MARKER)}))


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        asyncio.run(main(json.load(f)))
    # amplifier-core 2.0.2's Rust engine can abort the interpreter while it finalizes; leave
    # without finalizing once the work is done (as bridge_harness.py does).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
