"""A cancellation token tools can read and await, plus the run deadline.

anyio cancel scopes stop the run's tasks; the token is how a tool that owns outside resources (a
process group, an HTTP stream) learns *why* and can clean up (kill the group) even from a thread.
"""

from __future__ import annotations

import time

import anyio


class CancelToken:
    """Set once; ``wait()`` returns when set. ``deadline`` is a ``time.monotonic()`` value or None."""

    def __init__(self, deadline: float | None = None) -> None:
        self._event = anyio.Event()
        self.reason: str | None = None
        self.deadline = deadline

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self, reason: str = "aborted") -> None:
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    async def wait(self) -> None:
        await self._event.wait()

    def time_left(self) -> float | None:
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.monotonic())
