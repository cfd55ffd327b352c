"""amplihack's hooks as a native Amplifier module (module id ``hooks-amplihack``).

``mount(coordinator, config)`` registers a handler on each kernel event that has a Claude Code
counterpart. Each handler runs ``amplihack-hooks --host amplifier <subcommand>`` with the kernel
payload translated to the Claude Code shape (``tool_input``, ``tool_response``, ``prompt``,
``session_id``, ``cwd``, ``hook_event_name``; the binary maps Amplifier's tool names to Claude
Code's, so user plugins match ``Bash``/``Write``), asynchronously, with a timeout, and turns the
binary's ``hookResult`` into a ``HookResult``: deny, ask_user, modify (a new ``tool_input``),
inject_context, user_message, suppress_output.

The kernel emits ``session:start`` without processing what hooks return, so the session context
(PROJECT.md, preferences, discoveries) that ``session-start`` answers is kept and injected at the
session's first ``provider:request``, which the orchestrators (loop-streaming, loop-basic) process
before they build the request. No hook result at the end of a turn (``prompt:complete``,
``orchestrator:complete``) is processed either: nothing a hook answers there keeps the agent
working, so lock mode cannot hold an Amplifier session.

At each ``provider:request`` (the session then waits for the model) one ``amplihack-hooks
--standby`` process is started for each tool subcommand, so that the tool call the model answers
with does not wait for a process to start. At a compaction, ``pre-compact`` gets the session's
whole conversation from its context module.

Fail-open, like the binary itself: a missing binary, a crash, a timeout or an unreadable answer
lets the operation continue and logs one line.

config: ``binary`` (default: ``amplihack-hooks`` on PATH, else ``~/.local/bin``), ``priority``
(default 10: before the hook-shell bridge's 20), ``timeout`` (seconds; default: the subcommand's
own deadline plus a margin, as ``amplihack-hooks --table`` reports it).
"""

from __future__ import annotations

import asyncio
import glob
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from typing import Any

from amplifier_core import HookResult

from .agent import run_agent

Handler = Callable[[str, Any], Awaitable[HookResult]]

logger = logging.getLogger(__name__)

# Kernel event -> (amplihack-hooks subcommand, Claude Code event).
EVENTS = {
    "session:start": ("session-start", "SessionStart"),
    "session:resume": ("session-start", "SessionStart"),
    "prompt:submit": ("user-prompt-submit", "UserPromptSubmit"),
    "tool:pre": ("pre-tool-use", "PreToolUse"),
    "tool:post": ("post-tool-use", "PostToolUse"),
    "tool:error": ("dispatch", "PostToolUseFailure"),
    "prompt:complete": ("stop", "Stop"),
    "orchestrator:complete": ("stop", "Stop"),
    "context:pre_compact": ("pre-compact", "PreCompact"),
    # context-simple compacts inside get_messages_for_request and emits only this, afterwards.
    "context:compaction": ("pre-compact", "PreCompact"),
    "context:post_compact": ("dispatch", "PostCompact"),
    "session:end": ("session-end", "SessionEnd"),
    "user:notification": ("notification", "Notification"),
    # The app's delegation to an agent (a child session): Claude Code's subagent starting.
    "session:fork": ("dispatch", "SubagentStart"),
    # A tool waiting for the user's approval.
    "approval:required": ("dispatch", "PermissionRequest"),
    # The turn ended by a failed model call.
    "provider:error": ("dispatch", "StopFailure"),
}

# Set in the process environment while the module is mounted: amplihack's hook-shell bridge
# registration (if also installed) then steps aside, so amplihack never runs twice.
ACTIVE_MARKER = "AMPLIHACK_AMPLIFIER_MODULE_ACTIVE"
# Set for the binary the module runs: it forwards to user *and* project plugins.
VIA_MODULE = "AMPLIHACK_VIA_MODULE"
PYTHON = "AMPLIHACK_PYTHON"
# Set when the hook-shell bridge is mounted too: it runs the project's plugins itself.
BRIDGE_PRESENT = "AMPLIHACK_BRIDGE_PRESENT"

DEFAULT_TIMEOUT = 60.0


def find_binary(config: dict[str, Any] | None) -> str:
    configured = (config or {}).get("binary")
    if configured:
        return os.path.expanduser(str(configured))
    found = shutil.which("amplihack-hooks")
    if found:
        return found
    return os.path.expanduser("~/.local/bin/amplihack-hooks")


def table_timeouts(binary: str) -> dict[str, float]:
    """Per-subcommand timeouts from the binary's own table (its deadline plus a margin)."""
    try:
        out = subprocess.run([binary, "--table"], capture_output=True, timeout=5, check=True).stdout
        return {row["subcommand"]: row["deadline_ms"] / 1000.0 + 2.0 for row in json.loads(out)}
    except (OSError, subprocess.SubprocessError, ValueError, KeyError, TypeError):
        return {}


def app_transcript(session_id: str) -> str | None:
    """The Amplifier app's saved transcript of a session (it saves one after each tool call in a
    chat), for a session whose context module gives no messages: ``$AMPLIFIER_HOME`` (else
    ``~/.amplifier``) ``/projects/*/sessions/<id>/transcript.jsonl``."""
    home = os.environ.get("AMPLIFIER_HOME") or os.path.expanduser("~/.amplifier")
    pattern = os.path.join(glob.escape(home), "projects", "*", "sessions", glob.escape(session_id), "transcript.jsonl")
    found = sorted(glob.glob(pattern))
    return found[0] if found else None


async def context_transcript(coordinator: Any) -> str | None:
    """The session's whole conversation, as the app saves a transcript (one message a line, system
    and developer messages left out), in a private temporary file the caller removes; None when the
    session has no context module that gives its messages, or no message yet. The context module
    keeps every message (context-simple compacts only the view a request sends), and it is
    current: the app saves its own transcript only after a tool call in a chat, and only at the
    end of `amplifier run`."""
    context = coordinator.get("context") if hasattr(coordinator, "get") else None
    if context is None or not hasattr(context, "get_messages"):
        return None
    try:
        messages = await context.get_messages()
    except Exception as e:  # noqa: BLE001 - no transcript is no export, never a failed event
        logger.warning("hooks-amplihack: cannot read the session's messages (%s)", e)
        return None
    if not isinstance(messages, list):
        return None
    try:
        lines = []
        for message in messages:
            if hasattr(message, "model_dump"):
                message = message.model_dump()
            if isinstance(message, dict) and message.get("role") not in ("system", "developer"):
                lines.append(json.dumps(message, default=str, ensure_ascii=False) + "\n")
    except (TypeError, ValueError) as e:
        logger.warning("hooks-amplihack: cannot write the session's transcript (%s)", e)
        return None
    if not lines:
        return None
    fd, path = tempfile.mkstemp(prefix="amplihack-transcript-", suffix=".jsonl")  # 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.writelines(lines)
    except OSError as e:
        logger.warning("hooks-amplihack: cannot write the session's transcript (%s)", e)
        os.unlink(path)
        return None
    return path


def start_binary(argv: list[str], cwd: str | None, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Starts `argv` in a session of its own, its stdin, stdout and stderr pipes to us. Raises
    OSError when it cannot start."""
    return subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)


def discard(process: subprocess.Popen[bytes]) -> None:
    """Stops a started process that will not be used, and closes our ends of its pipes."""
    try:
        os.killpg(process.pid, 9)
    except OSError:
        pass
    process.wait()
    for pipe in (process.stdin, process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()


async def run_binary(argv: list[str], data: bytes, cwd: str | None, env: dict[str, str],
                     timeout: float, started: subprocess.Popen[bytes] | None = None) -> tuple[int, bytes, bytes] | None:
    """Runs `argv` (or `started`, a process already started with them) with `data` on its stdin:
    its exit code, stdout and stderr, or None when it has not finished within `timeout` (its
    process group is then killed). Raises OSError when it cannot start.

    The pipes and the exit (a pidfd, else a short poll) are watched on the event loop's own
    selector: asyncio's subprocess transports add protocols, a socket pair and, on Python 3.11, a
    thread per process that waits for it, which on a busy 2-core machine cost as much again as
    the binary's own start."""
    loop = asyncio.get_running_loop()
    process = started if started is not None else start_binary(argv, cwd, env)
    stdin, stdout, stderr = process.stdin, process.stdout, process.stderr
    if stdin is None or stdout is None or stderr is None:  # never: all three are pipes
        raise OSError("no pipes to the process")
    try:
        pidfd: int | None = os.pidfd_open(process.pid)
    except (AttributeError, OSError):  # not Linux, or an old kernel: the exit is polled for
        pidfd = None
    output = {stdout.fileno(): bytearray(), stderr.fileno(): bytearray()}
    waiting = set(output) | ({pidfd} if pidfd is not None else set())
    finished: asyncio.Future[None] = loop.create_future()

    def ended(fd: int) -> None:
        loop.remove_reader(fd)
        waiting.discard(fd)
        if not waiting and not finished.done():
            finished.set_result(None)

    def readable(fd: int) -> None:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if chunk:
            output[fd] += chunk
        else:
            ended(fd)

    rest = memoryview(data)
    feeding = [stdin.fileno()]

    def feed() -> None:
        nonlocal rest
        try:
            while rest:
                rest = rest[os.write(feeding[0], rest):]
        except BlockingIOError:
            return
        except OSError:  # EPIPE: it stopped reading, as it may
            pass
        loop.remove_writer(feeding[0])
        feeding.clear()
        stdin.close()

    try:
        for fd in output:
            os.set_blocking(fd, False)
            loop.add_reader(fd, readable, fd)
        if pidfd is not None:
            loop.add_reader(pidfd, ended, pidfd)
        os.set_blocking(feeding[0], False)
        feed()
        if feeding:
            loop.add_writer(feeding[0], feed)
        try:
            await asyncio.wait_for(finished, timeout=timeout)
        except asyncio.TimeoutError:
            return None
        while process.poll() is None:  # without a pidfd: ended pipes come just before the exit
            await asyncio.sleep(0.0005)
        return process.returncode, bytes(output[stdout.fileno()]), bytes(output[stderr.fileno()])
    finally:
        for fd in waiting:
            loop.remove_reader(fd)
        if feeding:
            loop.remove_writer(feeding[0])
            stdin.close()
        stdout.close()
        stderr.close()
        if pidfd is not None:
            os.close(pidfd)
        if process.poll() is None:  # timed out or cancelled: nothing of it is left running
            try:
                os.killpg(process.pid, 9)
            except OSError:
                pass
            process.wait()


def payload_for(event: str, claude_event: str, data: Any, session_id: str, cwd: str) -> dict[str, Any]:
    """The kernel payload in Claude Code's shape (the binary and user plugins read this)."""
    data = data or {}
    payload: dict[str, Any] = {
        "session_id": data.get("session_id") or session_id,
        "cwd": cwd,
        "hook_event_name": claude_event,
    }
    if event.startswith("tool:"):
        payload["tool_name"] = data.get("tool_name") or data.get("name") or ""
        tool_input = data.get("tool_input", data.get("input"))
        payload["tool_input"] = tool_input if isinstance(tool_input, dict) else {}
        if data.get("tool_call_id"):
            payload["tool_use_id"] = data["tool_call_id"]
        if event == "tool:post":
            result = data.get("result", data.get("tool_response"))
            payload["tool_response"] = result if result is not None else {}
        if event == "tool:error":
            payload["error"] = str(data.get("error") or data.get("result") or "tool failed")
    elif event == "prompt:submit":
        payload["prompt"] = data.get("prompt") or ""
    elif event in ("session:start", "session:resume"):
        payload["source"] = "resume" if event == "session:resume" else (data.get("source") or "startup")
    elif event == "session:end":
        payload["reason"] = data.get("reason") or data.get("status") or "other"
    elif event in ("context:pre_compact", "context:post_compact"):
        payload["trigger"] = data.get("trigger") or "auto"
        payload["custom_instructions"] = data.get("custom_instructions") or ""
    elif event in ("prompt:complete", "orchestrator:complete"):
        payload["stop_hook_active"] = bool(data.get("stop_hook_active", False))
        preview = data.get("response_preview") or data.get("response")
        if isinstance(preview, str):
            payload["last_assistant_message"] = preview
    elif event == "session:fork":
        payload["agent_id"] = str(data.get("child_session_id") or "")
        payload["agent_type"] = str(data.get("agent_name") or "")
    elif event == "approval:required":
        payload["tool_name"] = str(data.get("tool_name") or "")
        tool_input = data.get("tool_input")
        payload["tool_input"] = tool_input if isinstance(tool_input, dict) else {"action": data.get("action")}
    elif event == "provider:error":
        error = data.get("error") if isinstance(data.get("error"), dict) else {}
        payload["error"] = stop_failure_kind(data.get("status_code"))
        payload["error_details"] = str(error.get("msg") or error.get("type") or "")
    elif event == "user:notification":
        payload["message"] = str(data.get("message") or "")
        if data.get("type"):
            payload["notification_type"] = data["type"]
    if data.get("transcript_path"):
        payload["transcript_path"] = data["transcript_path"]
    elif event.startswith("context:"):
        # Where the session has no context module to read: the app's saved transcript.
        transcript = app_transcript(str(payload["session_id"]))
        if transcript:
            payload["transcript_path"] = transcript
    return payload


# The subcommands of every tool call: a process is kept started ahead for each (`--standby`).
STANDBY = ("pre-tool-use", "post-tool-use")

# The kernel events whose `deny` the orchestrators honour: where a model-backed handler can refuse.
BLOCKING = ("tool:pre", "prompt:submit")


def model_verdict(text: str) -> str | None:
    """A model-backed handler's answer as Claude Code reads it: `{"ok": false, "reason"}` (or the
    older `{"decision": "block"|"deny", "reason"}`, or the proposal's `{"safe": false, "reason"}`)
    refuses, with the reason; anything else lets the event go on. Raises ValueError when the
    answer holds no JSON object (a prompt handler then fails open; an llm hook's `onFailure`
    decides)."""
    text = text.strip()
    start, end = text.find("{"), text.rfind("}")
    verdict = json.loads(text[start:end + 1]) if 0 <= start < end else None
    if not isinstance(verdict, dict):
        raise ValueError("the model did not answer with JSON: " + text[:200])
    refused = verdict.get("ok") is False or verdict.get("safe") is False or verdict.get("decision") in ("block", "deny")
    return str(verdict.get("reason") or "the model judged it unsafe") if refused else None


async def ask_once(provider: Any, question: dict[str, Any]) -> str:
    """One model call for a `prompt` (or `llm`) handler: the text of the answer."""
    from amplifier_core.message_models import ChatRequest, Message

    request = ChatRequest(
        messages=[Message(role="user", content=question["prompt"])],
        model=question.get("model"),
        metadata={"stream": False},
        max_output_tokens=int(question.get("maxTokens") or 1024),
    )
    # Providers take the model as a keyword (the request's field is not read).
    model = {"model": question["model"]} if isinstance(question.get("model"), str) else {}
    response = await provider.complete(request, **model)
    return "".join(getattr(block, "text", "") or "" for block in (getattr(response, "content", None) or []))


async def ask_models(
    coordinator: Any, questions: Any, cache: dict[str, str | None] | None = None, cwd: str = "."
) -> str | None:
    """Puts each model-backed handler's question to the session's own provider (as the hook-shell
    bridge does for its prompt hooks: no key of amplihack's); returns the first refusal's reason.
    A question with `cache` is answered from `cache` (kept for the session) when it was asked
    before; one with `agent` is answered by a subagent with read-only tools in `cwd` (agent.py).
    A missing provider, an error, a timeout or an unreadable answer lets the event go on with one
    log line, unless the question's `onFailure` is `block` (refused) or `ignore` (no line)."""
    if not isinstance(questions, list) or not questions:
        return None
    providers = coordinator.get("providers") or {}
    provider = next(iter(providers.values()), None) if isinstance(providers, dict) else None
    for question in questions:
        if not isinstance(question, dict) or not isinstance(question.get("prompt"), str):
            continue
        key = json.dumps([question.get("model"), question.get("maxTokens"), question["prompt"]])
        if question.get("cache") and cache is not None and key in cache:
            refusal = cache[key]
        else:
            try:
                if provider is None:
                    raise RuntimeError("the session has no provider")
                answering = run_agent(provider, question, cwd) if question.get("agent") else ask_once(provider, question)
                text = await asyncio.wait_for(answering, timeout=float(question.get("timeout") or 30))
                refusal = model_verdict(text)
            except Exception as e:  # noqa: BLE001 - any failure of the model call: the handler's policy
                policy = question.get("onFailure") or "warn"
                if policy == "block":
                    return f"a model-backed hook failed ({e}) and its on_failure is block"
                if policy != "ignore":
                    logger.warning("hooks-amplihack: a model-backed hook failed (%s); the event goes on", e)
                continue
            if question.get("cache") and cache is not None:
                cache[key] = refusal
        if refusal is not None:
            return refusal
    return None


def stop_failure_kind(status: Any) -> str:
    """Claude Code's StopFailure `error` (its matcher target) for a provider's HTTP status."""
    if status == 429:
        return "rate_limit"
    if status in (401, 403):
        return "authentication_failed"
    if isinstance(status, int) and status >= 500:
        return "server_error"
    return "unknown"


def to_hook_result(answer: Any, event: str, data: Any) -> HookResult:
    """The binary's `hookResult` (its Amplifier dialect) as an Amplifier HookResult."""
    result = answer.get("hookResult") if isinstance(answer, dict) else None
    if not isinstance(result, dict):
        return HookResult(action="continue")
    action = result.get("action", "continue")
    fields: dict[str, Any] = {
        "action": action if action in ("continue", "deny", "modify", "inject_context", "ask_user") else "continue",
        "reason": result.get("reason"),
        "user_message": result.get("user_message"),
        "user_message_level": result.get("user_message_level") or "info",
        "suppress_output": bool(result.get("suppress_output", False)),
    }
    if result.get("context_injection"):
        fields["context_injection"] = result["context_injection"]
        fields["context_injection_role"] = "system"
    if action == "ask_user":
        fields["approval_prompt"] = result.get("approval_prompt") or result.get("reason") or "amplihack asks for approval"
        fields["approval_options"] = ["Allow", "Deny"]
        fields["approval_default"] = result.get("approval_default") or "deny"
    if action == "modify":
        modified = dict(data or {})
        modified.update((result.get("data") or {}))
        fields["data"] = modified
    return HookResult(**fields)


def mount_handlers(coordinator: Any, config: dict[str, Any] | None = None) -> list[Any]:
    """Registers the handlers; returns the list of unregister callables."""
    config = config or {}
    binary = find_binary(config)
    priority = int(config.get("priority", 10))
    timeouts = table_timeouts(binary) if os.path.exists(binary) else {}
    cwd = os.path.abspath(config.get("project") or os.getcwd())
    # stopped: one Stop per turn; compacted: one export per turn of context-simple's compactions;
    # session_context: what session-start answered, not yet delivered; model_cache: the session's
    # answers to model-backed handlers with `cache`.
    state: dict[str, Any] = {"stopped": False, "compacted": False, "session_context": None, "model_cache": {}}
    os.environ[ACTIVE_MARKER] = "1"

    def bridge_mounted() -> bool:
        try:
            handlers = coordinator.hooks.list_handlers()
        except Exception:  # noqa: BLE001 - an older kernel without list_handlers
            return False
        return any(str(name).startswith("shell-") for names in handlers.values() for name in names)

    # One process started ahead per tool subcommand (`--standby`), at each provider:request (the
    # session then waits for the model): the next tool call writes its event to it instead of
    # waiting for a process to start. Keyed by subcommand, with the working directory and
    # environment it was started with (a different one is not used).
    spares: dict[str, tuple[subprocess.Popen[bytes], str | None, dict[str, str]]] = {}
    standby = {"on": True}

    def take_spare(subcommand: str, workdir: str | None, env: dict[str, str]) -> subprocess.Popen[bytes] | None:
        spare = spares.pop(subcommand, None)
        if spare is None:
            return None
        process, spare_workdir, spare_env = spare
        if process.poll() is None and (spare_workdir, spare_env) == (workdir, env):
            return process
        if process.returncode not in (None, 0):
            standby["on"] = False  # a binary without --standby: start each process when needed
        discard(process)
        return None

    def start_spares() -> None:
        """While the session waits for the model: a spare for each tool subcommand it lacks."""
        if not standby["on"]:
            return
        workdir, env = binary_workdir(), binary_env(str(getattr(coordinator, "session_id", None) or "unknown"))
        for subcommand in STANDBY:
            if subcommand not in spares:
                try:
                    argv = [binary, "--host", "amplifier", "--standby", subcommand]
                    spares[subcommand] = (start_binary(argv, workdir, env), workdir, env)
                except OSError:
                    return

    def stop_spares() -> None:
        standby["on"] = False
        for process, _, _ in spares.values():
            discard(process)
        spares.clear()

    def make_handler(event: str, subcommand: str, claude_event: str) -> Handler:
        async def handler(_event: str, data: Any) -> HookResult:
            if event == "prompt:submit":
                state["stopped"] = False
                state["compacted"] = False
            if event == "context:compaction":
                # context-simple compacts the view of every request past its threshold, and the
                # whole conversation stays in the session: one copy per turn keeps it, not one per
                # request (each a copy of the whole conversation).
                if state["compacted"]:
                    return HookResult(action="continue")
                state["compacted"] = True
            if claude_event == "Stop":
                # loop-basic emits prompt:complete and orchestrator:complete: one Stop per turn.
                if state["stopped"]:
                    return HookResult(action="continue")
                state["stopped"] = True
            session_id = getattr(coordinator, "session_id", None) or "unknown"
            payload = payload_for(event, claude_event, data, session_id, cwd)
            transcript = None
            if event.startswith("context:") and not (data or {}).get("transcript_path"):
                # What PreCompact's transcript export copies: the conversation as it is now.
                transcript = await context_transcript(coordinator)
                if transcript:
                    payload["transcript_path"] = transcript
            try:
                return await run_event(event, subcommand, claude_event, payload, data)
            finally:
                if transcript:
                    try:
                        os.unlink(transcript)
                    except OSError:
                        pass

        return handler

    def binary_env(session_id: str) -> dict[str, str]:
        env = dict(os.environ)
        env[VIA_MODULE] = "1"
        # The app's own Python, for the binary's helpers that need one (an `http` handler's POST).
        env.setdefault(PYTHON, sys.executable)
        env["AMPLIFIER_SESSION_ID"] = session_id
        env.setdefault("CLAUDE_PROJECT_DIR", cwd)
        env.setdefault("AMPLIFIER_PROJECT_DIR", cwd)
        if bridge_mounted():
            env[BRIDGE_PRESENT] = "1"
        else:
            env.pop(BRIDGE_PRESENT, None)
        return env

    def binary_workdir() -> str | None:
        return cwd if os.path.isdir(cwd) else None

    async def run_event(event: str, subcommand: str, claude_event: str, payload: dict[str, Any], data: Any) -> HookResult:
        env = binary_env(str(payload["session_id"]))
        timeout = float(config.get("timeout") or timeouts.get(subcommand) or DEFAULT_TIMEOUT)
        argv = [binary, "--host", "amplifier", subcommand]
        workdir = binary_workdir()
        spare = take_spare(subcommand, workdir, env)
        try:
            ran = await run_binary(argv, json.dumps(payload).encode(), workdir, env, timeout, spare)
        except OSError as e:
            logger.warning("hooks-amplihack: cannot run %s (%s); %s continues", binary, e, event)
            return HookResult(action="continue")
        if ran is None:
            logger.warning("hooks-amplihack: %s %s gave no answer in %.0f s; %s continues", binary, subcommand, timeout, event)
            return HookResult(action="continue")
        returncode, out, err = ran
        if err.strip():
            for line in err.decode(errors="replace").strip().splitlines():
                logger.warning("%s", line)
        if returncode != 0 or not out.strip():
            return HookResult(action="continue")
        try:
            answer = json.loads(out)
        except ValueError:
            logger.warning("hooks-amplihack: %s %s answered something that is not JSON; %s continues", binary, subcommand, event)
            return HookResult(action="continue")
        result = to_hook_result(answer, event, data)
        if result.action != "deny" and event in BLOCKING and isinstance(answer, dict):
            refusal = await ask_models(coordinator, answer.get("modelHandlers"), state["model_cache"], cwd)
            if refusal is not None:
                return HookResult(action="deny", reason=refusal)
        if claude_event == "SessionStart":
            # The kernel drops session:start results: deliver at the first provider:request.
            if result.action == "inject_context" and result.context_injection:
                state["session_context"] = result.context_injection
            return HookResult(action="continue")
        return result

    async def deliver_session_context(_event: str, _data: Any) -> HookResult:
        # The model is about to be asked: the processes for the tool calls it may answer with
        # start now, while the session waits for it, not when a tool call is waiting for them.
        start_spares()
        context = state["session_context"]
        if not context:
            return HookResult(action="continue")
        state["session_context"] = None
        return HookResult(action="inject_context", context_injection=context, context_injection_role="system")

    unregister: list[Any] = []
    for event, (subcommand, claude_event) in EVENTS.items():
        handle = coordinator.hooks.register(event, make_handler(event, subcommand, claude_event), priority, "amplihack-" + event.replace(":", "-"))
        unregister.append(handle)
    unregister.append(coordinator.hooks.register(
        "provider:request", deliver_session_context, priority, "amplihack-session-context"))
    unregister.append(stop_spares)
    return unregister


async def mount(coordinator: Any, config: dict[str, Any] | None = None) -> Callable[[], Awaitable[None]]:
    """The module contract: register the handlers, return the cleanup."""
    unregister = mount_handlers(coordinator, config)

    async def cleanup() -> None:
        for handle in unregister:
            try:
                if callable(handle):
                    handle()
            except Exception:  # noqa: BLE001 - cleanup never raises
                pass
        os.environ.pop(ACTIVE_MARKER, None)

    return cleanup
