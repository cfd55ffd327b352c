"""A Claude Code `agent` hook under Amplifier: a subagent on the session's own provider, with
read-only tools of its own (Read, Grep, Glob, rooted at the project), up to 50 turns, whose last
answer is the verdict (`{"ok": false, "reason"}` refuses), as Claude Code runs such hooks."""

from __future__ import annotations

import glob
import itertools
import os
import re
import stat
from typing import IO, Any

TURNS = 50
OUTPUT_CAP = 30_000
# Grep skips larger files; Grep and Glob stop after this many files or candidates.
FILE_CAP = 2_000_000
SCAN_CAP = 20_000
SYSTEM = (
    "You are checking a condition for a hook of a coding agent. Use the read-only tools (Read, Grep, "
    "Glob) to inspect the project when you need to. Then answer with only a JSON object: "
    '{"ok": true} to let the action go on, or {"ok": false, "reason": "why"} to stop it.'
)

TOOLS: list[dict[str, Any]] = [
    {
        "name": "Read",
        "description": "Read a text file of the project (path relative to the project, or absolute inside it).",
        "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]},
    },
    {
        "name": "Grep",
        "description": "Search files under a directory of the project for a regular expression; answers file:line:text.",
        "parameters": {
            "type": "object",
            "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
            "required": ["pattern"],
        },
    },
    {
        "name": "Glob",
        "description": "List the project's files matching a glob pattern (** for any directories).",
        "parameters": {
            "type": "object",
            "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
            "required": ["pattern"],
        },
    },
]


class OutsideProject(Exception):
    """A tool's path that resolves outside the project: refused, the reason is the tool's answer."""


def within(cwd: str, path: str) -> str:
    """The real path of `path` (relative to the project, or absolute) when it stays in the project,
    both as written (`..` resolved) and once symlinks are followed; anything outside raises."""
    root = os.path.realpath(cwd)
    inside = root.rstrip(os.sep) + os.sep
    named = os.path.normpath(os.path.join(root, path))
    real = os.path.realpath(named)
    if any(p != root and not p.startswith(inside) for p in (named, real)):
        raise OutsideProject(
            f"{path} is outside the project ({root}); the tools read only the project's files: "
            "give a path inside it"
        )
    return real


def open_regular(path: str) -> IO[str]:
    """A regular file opened for text; a FIFO or a device is refused, never waited on."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return os.fdopen(fd, encoding="utf-8", errors="replace")
    except BaseException:
        os.close(fd)
        raise


def run_tool(name: str, arguments: dict[str, Any], cwd: str) -> str:
    """One read-only tool call, rooted at the project: a path outside it (absolute, through `..`
    or through a symlink) is refused; reads, searches and listings are bounded. Any problem is the
    call's answer, for the subagent to read."""
    try:
        root = os.path.realpath(cwd)
        if name == "Read":
            with open_regular(within(cwd, str(arguments["file_path"]))) as f:
                return f.read(OUTPUT_CAP)
        if name not in ("Grep", "Glob"):
            return f"unknown tool {name}: use Read, Grep or Glob"
        base = within(cwd, str(arguments.get("path") or "."))
        if name == "Grep":
            regex = re.compile(str(arguments["pattern"]))
            found: list[str] = []
            scanned = 0
            for top, dirs, files in os.walk(base):  # symlinked directories are not entered
                dirs[:] = sorted(d for d in dirs if d != ".git")
                for file in sorted(files):
                    scanned += 1
                    if scanned > SCAN_CAP:
                        return "\n".join(found + [f"(stopped after {SCAN_CAP} files)"])
                    path = os.path.join(top, file)
                    try:
                        real = within(cwd, path)
                        if os.stat(real).st_size > FILE_CAP:
                            continue
                        with open_regular(real) as f:
                            for number, line in enumerate(f, 1):
                                if regex.search(line):
                                    found.append(f"{os.path.relpath(path, root)}:{number}:{line.rstrip()[:500]}")
                    except (OSError, OutsideProject):
                        continue
                    if len(found) >= 200:
                        return "\n".join(found)
            return "\n".join(found) or "no matches"
        pattern = str(arguments["pattern"])
        if os.path.isabs(pattern) or ".." in pattern.split(os.sep):
            raise OutsideProject(f"{pattern} leads out of the project; give a pattern relative to it, without ..")
        matches: list[str] = []
        for match in itertools.islice(glob.iglob(pattern, root_dir=base, recursive=True), SCAN_CAP):
            try:
                within(cwd, os.path.join(base, match))
            except OutsideProject:
                continue
            matches.append(match)
            if len(matches) >= 500:
                break
        return "\n".join(sorted(matches)) or "no files"
    except OutsideProject as e:
        return f"error: {e}"
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
