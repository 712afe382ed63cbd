"""Fixtures for the built-in tool tests: a workspace, a tool context, a job manager."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import pytest

from owltui.agent.cancel import CancelToken
from owltui.agent.tool import ToolContext
from owltui.tools.jobs import JobEvent, JobManager
from owltui.tools.proc import group_alive


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
        ctx = ToolContext(workspace=ws, cancel=CancelToken(), services={"jobs": jobs} if jobs else {})
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
