"""Fixtures for the built-in tool tests: a workspace, a tool context, a job manager, a directory
outside the sandbox, and waiting for what another process does."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from owltui.agent.cancel import CancelToken
from owltui.agent.services import Services
from owltui.agent.tool import ToolContext
from owltui.tools.exec.signals import group_alive
from owltui.tools.jobs.entries import JobEvent
from owltui.tools.jobs.manager import JobManager


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


class Events:
    def __init__(self) -> None:
        self.items: list[JobEvent] = []
        self.finished = anyio.Event()

    def __call__(self, event: JobEvent) -> None:
        assert threading.current_thread() is threading.main_thread(), "events come in the loop thread"
        self.items.append(event)
        if event.kind == "finished":
            self.finished.set()


@pytest.fixture
def events() -> Events:
    return Events()


@pytest.fixture
async def jobs(events: Events, tmp_path: Path) -> AsyncIterator[JobManager]:
    manager = JobManager(events, spill_dir=tmp_path / "spill")
    try:
        yield manager
    finally:
        await manager.shutdown()


MakeCtx = Callable[..., ToolContext]


@pytest.fixture
def make_ctx(ws: Path) -> MakeCtx:
    def make(jobs: JobManager | None = None, progress: Callable[[str], None] | None = None) -> ToolContext:
        ctx = ToolContext(workspace=ws, cancel=CancelToken(), services=Services(jobs=jobs))
        if progress is not None:
            ctx.progress = progress
        return ctx

    return make


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) pids in a process group."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            pids.append(int(entry))
    return pids


def wait_gone(pgid: int, within: float) -> float:
    """Seconds until the group has no live process; fails after ``within``."""
    start = time.monotonic()
    while group_alive(pgid):
        assert time.monotonic() - start < within, f"process group {pgid} still alive: {group_members(pgid)}"
        time.sleep(0.005)
    return time.monotonic() - start


async def until(cond: Callable[[], object], within: float = 5.0, what: str = "the condition") -> None:
    """Wait until ``cond()`` holds (polling: it is another process's state); fails after ``within``."""
    with anyio.move_on_after(within):
        while not cond():  # noqa: ASYNC110 - the condition is another process's state
            await anyio.sleep(0.005)
        return
    raise AssertionError(f"{what} not reached within {within} s")


@contextmanager
def outside_dir(tag: str) -> Iterator[Path]:
    """A fresh directory in the home directory: neither a workspace nor the temp dir, so a sandboxed
    command must not be able to write there. Skips the test when no such place exists here."""
    home = Path.home().resolve()
    tmp = Path(tempfile.gettempdir()).resolve()
    if home == tmp or tmp in home.parents or not os.access(home, os.W_OK):
        pytest.skip("the home directory is inside the temp dir or not writable")
    d = home / f".owltui-{tag}-test-{uuid.uuid4().hex[:8]}"
    d.mkdir()
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory commands must not write to: in the home directory, outside temp and workspace."""
    with outside_dir("sandbox") as d:
        yield d
