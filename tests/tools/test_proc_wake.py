"""``Proc.wait_change`` on asyncio: the reader thread wakes the event loop itself (``wake``), at once
on news and at the end, and a wait with no news still ends after its slice.

``wait_change`` caps each wait at a short slice, so a wake-up that never came would only show as
slower waits; ``wait_news`` itself is given a long wait here, under a shorter deadline, so the test
fails when the reader does not wake it."""

from __future__ import annotations

import time
from pathlib import Path

import anyio

from owltui.tools.exec.proc import Proc
from owltui.tools.exec.wake import wait_news

LONG = 60.0  # a wait the reader must cut short
DEADLINE = 10.0  # well under LONG: reached only when no wake-up came


async def _woken(proc: Proc, version: int, gap: float = 0.0) -> int:
    """Wait ``LONG`` s for news after ``version`` (the end included), failing at ``DEADLINE``."""
    with anyio.fail_after(DEADLINE):
        await wait_news(
            proc._cond, proc._wakers, lambda: proc.version != version, lambda: proc.done, LONG, gap
        )
    return proc.version


def test_a_wait_ends_with_the_command(tmp_path: Path) -> None:
    async def main() -> tuple[float, Proc]:
        proc = Proc("sleep 0.1; echo done", tmp_path, tmp_path / "spill")
        version, start = 0, time.monotonic()
        while not proc.done:
            version = await _woken(proc, version, 0.05)
        return time.monotonic() - start, proc

    took, proc = anyio.run(main)
    assert proc.exit_code == 0
    assert "done" in proc.sink.preview()
    assert took < 2.0
    assert proc._wakers == []


def test_news_wakes_a_wait_and_silence_ends_it_after_its_slice(tmp_path: Path) -> None:
    async def main() -> None:
        proc = Proc("echo first; sleep 5", tmp_path, tmp_path / "spill")
        try:
            with anyio.fail_after(2):
                version = await _woken(proc, 0)
                while "first" not in proc.sink.preview():
                    version = await _woken(proc, version)
            start = time.monotonic()
            assert await proc.wait_change(proc.version, 0.1) == proc.version  # nothing new
            assert 0.05 <= time.monotonic() - start < 1.0
            assert not proc.done
        finally:
            await proc.terminate(0.5)
        assert proc.done
        assert proc._wakers == []

    anyio.run(main)
