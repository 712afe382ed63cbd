"""Run one hook command: ``sh -c COMMAND`` in the workspace, the event's JSON on stdin, its output read
under a timeout. Its own process group is killed on timeout and on cancellation (an abort), so a hook
that hangs or spawns children leaves nothing running; a pause freezes it with the tool commands
(``CommandFreezer.group``) and its time limit stands still meanwhile.

Stdin is an unlinked temporary file holding the JSON, not a pipe: a hook that never reads its input
(most do not) cannot break a write, and nothing is left for the event loop to report (Python 3.11.2,
Debian 12's, logs a pipe's broken write as "Future exception was never retrieved").
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.abc
import anyio.lowlevel

from owltui.agent.services import CommandFreezer

OUTPUT_LIMIT = 256 * 1024  # characters kept of each stream


@dataclass
class Finished:
    """How a hook process ended. ``code`` None: it did not finish (``error`` says why)."""

    code: int | None
    stdout: str
    stderr: str
    duration_s: float
    error: str | None = None


def _kill_group(proc: anyio.abc.Process) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def _drain(stream: anyio.abc.ByteReceiveStream | None, into: list[bytes]) -> None:
    if stream is None:
        return
    size = 0
    async for chunk in stream:
        if size < OUTPUT_LIMIT * 4:
            into.append(chunk)
            size += len(chunk)


def hook_env(base: Mapping[str, str], workspace: Path) -> dict[str, str]:
    env = dict(base)
    env["CLAUDE_PROJECT_DIR"] = str(workspace)
    env["OWLTUI_PROJECT_DIR"] = str(workspace)
    return env


def _input_file(data: bytes) -> IO[bytes]:
    """``data`` in an unlinked temporary file, at its start: the hook's stdin."""
    held = tempfile.TemporaryFile()
    try:
        held.write(data)
        held.seek(0)
    except BaseException:
        held.close()
        raise
    return held


async def _ended_in_time(proc: anyio.abc.Process, clock: Callable[[], float], deadline: float) -> bool:
    """Wait for ``proc`` until ``clock()`` reaches ``deadline`` (a pause that froze the hook stops
    that clock, so its time limit is extended by the pause); False when it did not end."""
    while (left := deadline - clock()) > 0:
        with anyio.move_on_after(left):
            await proc.wait()
            return True
    return False


async def run_command(
    command: str,
    payload: dict[str, Any],
    *,
    workspace: Path,
    env: Mapping[str, str],
    limit_s: float,
    freezer: CommandFreezer | None = None,
) -> Finished:
    """Start, feed, wait (at most ``limit_s`` seconds, on ``freezer``'s clock: a pause freezes the
    hook with the tool commands and stops its clock), collect. Cancellation kills the group and
    propagates."""
    started = time.monotonic()
    data = json.dumps(payload, ensure_ascii=False).encode("utf-8", "surrogateescape")
    out: list[bytes] = []
    err: list[bytes] = []
    await anyio.lowlevel.checkpoint_if_cancelled()  # aborted already: start nothing
    try:
        # shielded: an abort meanwhile must still find the process to kill
        with _input_file(data) as stdin, anyio.CancelScope(shield=True):
            proc = await anyio.open_process(
                ["sh", "-c", command],
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=workspace,
                env=hook_env(env, workspace),
                start_new_session=True,
            )
    except OSError as exc:
        return Finished(None, "", "", time.monotonic() - started, f"could not start: {exc}")
    clock = freezer.clock if freezer is not None else time.monotonic
    deadline = clock() + limit_s
    timed_out = False
    try:
        with freezer.group(proc.pid) if freezer is not None else contextlib.nullcontext():
            async with anyio.create_task_group() as tg:
                tg.start_soon(_drain, proc.stdout, out)
                tg.start_soon(_drain, proc.stderr, err)
                timed_out = not await _ended_in_time(proc, clock, deadline)
                if timed_out:
                    tg.cancel_scope.cancel()
    finally:
        if proc.returncode is None or timed_out:
            _kill_group(proc)
            with anyio.CancelScope(shield=True):
                await proc.wait()
        else:
            _kill_group(proc)  # children it left behind in its group
        with anyio.CancelScope(shield=True):
            await proc.aclose()
    duration = time.monotonic() - started

    def text(parts: list[bytes]) -> str:
        return b"".join(parts).decode("utf-8", "replace")[:OUTPUT_LIMIT]

    if timed_out:
        return Finished(None, text(out), text(err), duration, f"timed out after {limit_s:g} s (killed)")
    return Finished(proc.returncode, text(out), text(err), duration)
