"""amplihack's Amplifier module against the hook-shell bridge, side by side in the real kernel.

Both run the same 4 project plugins on `tool:pre` (PreToolUse, matcher `*`), each mounted on its
own real `amplifier-core` session in this process; events are emitted through the kernel's hook
registry as the orchestrators emit them. Rounds are interleaved (the order alternates), so both
sides see the same machine load; the check is a ratio of medians (the best of up to three
attempts), absolute times are printed only. The plugins' commands differ (amplihack, like Claude
Code, runs identical commands once per event; the bridge runs every one).

* amplihack: `hooks-amplihack` (this repository's module) running `amplihack-hooks`, which runs
  the trusted project plugins in parallel (and its own built-ins);
* the bridge: the real `amplifier-module-hook-shell`, the copy vendored in
  `tests/amplifier/hook-shell/` (see its VENDORED.md), or the HEAD of a mirror of
  github.com/microsoft/amplifier-module-hook-shell (`--bridge-mirror GIT_DIR`, or
  $AMPLIHACK_HOOK_SHELL_MIRROR; extracted to a temporary directory) to measure another commit.

Usage: amplifier_tool_pre.py --hooks BIN --amplihack BIN [--bridge-mirror GIT_DIR] [--rounds N]
                             [--trivial-rounds N] [--max-ratio R]
Its goal: amplihack costs at most what the bridge costs (ratio --max-ratio, default 1.0); exit status 1 only over twice the goal,
with trivial handlers (`true`, 60 rounds) or with handlers that sleep 50 ms (15 rounds).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
from pathlib import Path
import tempfile
import time
from typing import Any

from amplifier_core import AmplifierSession

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGINS = 4
ATTEMPTS = 3
PAUSE = 0.01  # seconds before each timed emit


def write_plugins(project: str, command: str) -> None:
    for i in range(PLUGINS):
        directory = os.path.join(project, ".amplifier", "hooks", f"bench-{i}")
        os.makedirs(directory, exist_ok=True)
        # Distinct commands (amplihack, like Claude Code, runs identical commands once per
        # event), made only of words, as a plugin's `python3 hook.py` or `./check.sh` is.
        unique = command.format(i=i)
        config = {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": unique}]}]}}
        with open(os.path.join(directory, "hooks.json"), "w") as f:
            json.dump(config, f)


def load_bridge(mirror: str | None, scratch: str) -> tuple[Any, str]:
    """The real bridge's `mount(coordinator, project)` and where it came from: the copy vendored
    in `tests/amplifier/hook-shell/`, or the HEAD of a mirror of its repository when one is given."""
    if mirror:
        archive = subprocess.run(["git", "--git-dir", mirror, "archive", "HEAD", "amplifier_module_hook_shell"],
                                 capture_output=True, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(scratch, filter="data")
        source, where = scratch, f"the real hook-shell bridge (HEAD of {mirror})"
    else:
        source = os.path.join(HERE, "..", "amplifier", "hook-shell")
        where = "the real hook-shell bridge (tests/amplifier/hook-shell, vendored at f9ebb16)"
    sys.path.insert(0, source)
    import amplifier_module_hook_shell as real  # noqa: PLC0415 - loaded from `source`

    async def mount_real(coordinator: Any, _project: str) -> Any:
        return await real.mount(coordinator, {})

    return mount_real, where


def session(name: str) -> AmplifierSession:
    return AmplifierSession({"session": {"orchestrator": "loop-basic", "context": "context-simple"}},
                            session_id=f"bench-{name}")


async def timed(coordinator: Any, index: int) -> float:
    data = {"tool_name": "bash", "tool_call_id": f"t{index}", "tool_input": {"command": "ls"}}
    # As in a session: the model is asked (provider:request), and its reply, a tool call, comes
    # later, never back to back with the last tool call. Untimed; each side does there what it
    # does while a session waits for the model (amplihack starts its processes for the coming
    # tool calls; the bridge has no handler). The pause also keeps what an emit leaves settling
    # (the bridge's waiter threads, processes exiting) out of the next emit's time, whichever
    # side that is: back to back, with the other core busy, the bridge's median tripled (4 to
    # 12-15 ms) on leftovers, not on its own work.
    await coordinator.hooks.emit("provider:request", {"provider": "anthropic", "iteration": index})
    await asyncio.sleep(PAUSE)
    started = time.perf_counter()
    result = await coordinator.hooks.emit("tool:pre", data)
    elapsed = time.perf_counter() - started
    if result.action != "continue":
        raise SystemExit(f"tool:pre answered {result.action}: {result.reason}")
    return elapsed


async def compare(label: str, command: str, args: argparse.Namespace, project: str, bridge_mount: Any,
                  limit: float, rounds: int) -> float:
    write_plugins(project, command)
    trust = subprocess.run([args.amplihack, "hooks", "trust"], cwd=project, capture_output=True, text=True)
    if trust.returncode != 0:
        raise SystemExit(f"amplihack hooks trust: {trust.stderr}")
    import amplifier_module_hooks_amplihack as module  # noqa: PLC0415

    ours, theirs = session(f"amplihack-{label}"), session(f"bridge-{label}")
    cleanup = await module.mount(ours.coordinator, {"binary": args.hooks, "project": project})
    await bridge_mount(theirs.coordinator, project)
    sides = {"amplihack": ours.coordinator, "bridge": theirs.coordinator}
    for name, coordinator in sides.items():  # warm-up: page cache, first spawn
        await timed(coordinator, -1)
    times: dict[str, list[float]] = {name: [] for name in sides}
    for i in range(rounds):
        order = list(sides) if i % 2 == 0 else list(reversed(sides))
        for name in order:
            times[name].append(await timed(sides[name], i))
    await cleanup()
    ours_ms = statistics.median(times["amplihack"]) * 1000
    theirs_ms = statistics.median(times["bridge"]) * 1000
    ratio = ours_ms / theirs_ms
    print(f"{label}: amplihack {ours_ms:.1f} ms, bridge {theirs_ms:.1f} ms (medians of {rounds}); "
          f"ratio {ratio:.2f} (goal {limit:.2f})", flush=True)
    return ratio


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hooks", required=True, help="amplihack-hooks to run")
    parser.add_argument("--amplihack", required=True, help="amplihack, to trust the plugins")
    parser.add_argument("--bridge-mirror", default=os.environ.get("AMPLIHACK_HOOK_SHELL_MIRROR"))
    parser.add_argument("--rounds", type=int, default=15, help="rounds with handlers that sleep 50 ms")
    parser.add_argument("--trivial-rounds", type=int, default=60,
                        help="rounds with trivial handlers (a few ms each: more rounds steady the median)")
    parser.add_argument("--max-ratio", type=float, default=1.0)
    args = parser.parse_args()
    args.hooks, args.amplihack = os.path.abspath(args.hooks), os.path.abspath(args.amplihack)
    if args.bridge_mirror:
        args.bridge_mirror = os.path.abspath(args.bridge_mirror)
    # Not under /tmp: the 4 project plugins run confined, and every directory above the home's
    # hidden secrets has each entry granted by a Landlock rule of its own, so a home in /tmp made
    # the figure the size of the machine's /tmp (1.50-1.88 with 180-245 entries there).
    scratch_parent = Path(__file__).resolve().parents[2] / "target" / "tmp"
    scratch_parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="amplihack-bench-", dir=scratch_parent) as scratch:
        home, project = os.path.join(scratch, "home"), os.path.join(scratch, "project")
        os.makedirs(home)
        os.makedirs(os.path.join(project, ".git"))
        os.environ["HOME"] = home
        os.environ.pop("XDG_STATE_HOME", None)
        # What the bridge leaves in the temporary directory (an env file per session) goes with
        # the scratch directory.
        os.environ["TMPDIR"] = tempfile.tempdir = scratch
        os.chdir(project)  # the bridge takes the project from the working directory
        bridge_mount, source = load_bridge(args.bridge_mirror, os.path.join(scratch, "bridge"))
        print(f"peer: {source}; {PLUGINS} project plugins on tool:pre, in the real kernel")
        # Both are gated. With trivial handlers each handler is one process for both (amplihack
        # runs them in parallel, the bridge one after another) and amplihack adds one, itself;
        # handlers that take time are where running them in parallel shows most.
        failed = False
        for label, command, rounds in (("trivial handlers", "true plugin-{i}", args.trivial_rounds),
                                       ("handlers that sleep 50 ms", "sleep 0.05 0.0000{i}", args.rounds)):
            # The best of up to three attempts, so that a noisy minute on a shared machine does
            # not fail the run (every attempt is printed).
            best = await compare(label, command, args, project, bridge_mount, args.max_ratio, rounds)
            for _ in range(ATTEMPTS - 1):
                if best <= args.max_ratio:
                    break
                best = min(best, await compare(label, command, args, project, bridge_mount, args.max_ratio, rounds))
            # The goal, and a failure only at twice it: machines of one kind differ in how a
            # process start compares with the kernel's own work (tests/bench/gate.rs).
            if best <= args.max_ratio:
                print(f"  ok: {label}: {best:.2f}, goal {args.max_ratio}", flush=True)
            elif best <= 2 * args.max_ratio:
                print(f"  over the goal: {label}: {best:.2f}, goal {args.max_ratio} "
                      f"(fails over {2 * args.max_ratio:.2f}: not failed)", flush=True)
            else:
                print(f"  FAIL: {label}: {best:.2f}, over {2 * args.max_ratio:.2f} "
                      f"(twice the goal {args.max_ratio})", flush=True)
                failed = True
        return 1 if failed else 0


if __name__ == "__main__":
    code = asyncio.run(main())
    sys.stdout.flush()
    sys.stderr.flush()
    # amplifier-core 2.0.2's Rust engine can abort the interpreter while it finalizes.
    os._exit(code)
