"""A Claude Code `agent` hook under Amplifier: a subagent on the session's own provider, with
read-only tools of its own (Read, Grep, Glob, rooted at the project), up to 50 turns, whose last
answer is the verdict (`{"ok": false, "reason"}` refuses), as Claude Code runs such hooks."""

from __future__ import annotations

import glob
import os
import re
from typing import Any

TURNS = 50
OUTPUT_CAP = 30_000
SYSTEM = (
    "You are checking a condition for a hook of a coding agent. Use the read-only tools (Read, Grep, "
    "Glob) to inspect the project when you need to. Then answer with only a JSON object: "
    '{"ok": true} to let the action go on, or {"ok": false, "reason": "why"} to stop it.'
)

TOOLS: list[dict[str, Any]] = [
    {
        "name": "Read",
        "description": "Read a text file of the project (path relative to the project, or absolute).",
        "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]},
    },
    {
        "name": "Grep",
        "description": "Search files under a directory for a regular expression; answers file:line:text.",
        "parameters": {
            "type": "object",
            "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
            "required": ["pattern"],
        },
    },
    {
        "name": "Glob",
        "description": "List the files matching a glob pattern (** for any directories).",
        "parameters": {
            "type": "object",
            "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
            "required": ["pattern"],
        },
    },
]


def run_tool(name: str, arguments: dict[str, Any], cwd: str) -> str:
    """One read-only tool call; any problem is its answer, for the subagent to read."""
    try:
        base = os.path.join(cwd, str(arguments.get("path") or "."))
        if name == "Read":
            with open(os.path.join(cwd, str(arguments["file_path"])), encoding="utf-8", errors="replace") as f:
                return f.read(OUTPUT_CAP)
        if name == "Grep":
            regex = re.compile(str(arguments["pattern"]))
            found: list[str] = []
            for root, dirs, files in os.walk(base):
                dirs[:] = sorted(d for d in dirs if d != ".git")
                for file in sorted(files):
                    path = os.path.join(root, file)
                    try:
                        with open(path, encoding="utf-8", errors="replace") as f:
                            for number, line in enumerate(f, 1):
                                if regex.search(line):
                                    found.append(f"{os.path.relpath(path, cwd)}:{number}:{line.rstrip()}")
                    except OSError:
                        continue
                    if len(found) >= 200:
                        return "\n".join(found)
            return "\n".join(found) or "no matches"
        if name == "Glob":
            matches = sorted(glob.glob(str(arguments["pattern"]), root_dir=base, recursive=True))
            return "\n".join(matches[:500]) or "no files"
        return f"unknown tool {name}: use Read, Grep or Glob"
    except (KeyError, OSError, re.error) as e:
        return f"error: {e}"


async def run_agent(provider: Any, question: dict[str, Any], cwd: str) -> str:
    """The subagent's last answer; raises when it gives none within its turns."""
    from amplifier_core.message_models import ChatRequest, Message, TextBlock, ToolCallBlock, ToolSpec

    messages = [Message(role="system", content=SYSTEM), Message(role="user", content=str(question["prompt"]))]
    tools = [ToolSpec(**tool) for tool in TOOLS]
    model = {"model": question["model"]} if isinstance(question.get("model"), str) else {}
    for _ in range(TURNS):
        request = ChatRequest(messages=messages, tools=tools, metadata={"stream": False}, max_output_tokens=4096)
        response = await provider.complete(request, **model)
        text = "".join(getattr(block, "text", "") or "" for block in (getattr(response, "content", None) or []))
        calls = list(getattr(response, "tool_calls", None) or [])
        if not calls:
            return text
        blocks: list[Any] = [TextBlock(text=text)] if text else []
        blocks += [ToolCallBlock(id=call.id, name=call.name, input=call.arguments) for call in calls]
        messages.append(Message(role="assistant", content=blocks))
        for call in calls:
            messages.append(Message(role="tool", tool_call_id=call.id, content=run_tool(call.name, call.arguments, cwd)))
    raise RuntimeError(f"the agent hook gave no answer in {TURNS} turns")
