"""Waiting on the event loop for news from a reader thread, with no worker thread in between.

``Proc.wait_change`` used to block a worker thread on the command's condition variable: each wait
cost a hand-off to the worker and one back to the loop. ``wait_news`` instead registers a waker the
reader thread calls (holding the condition) whenever there is news; the waker schedules an
``asyncio.Event.set`` on the loop (``call_soon_threadsafe``: never blocks the reader). A wake-up that
is lost can only make a wait run to its end (at most ``within`` s, a short slice), never hang it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable

import anyio

__all__ = ["wait_news"]


async def wait_news(
    cond: threading.Condition,
    wakers: list[Callable[[], None]],
    changed: Callable[[], bool],
    ended: Callable[[], bool],
    within: float,
    gap: float,
) -> None:
    """Wait up to ``within`` s until ``changed()`` or ``ended()``; after news that is not the end,
    wait up to ``gap`` s more for the end. ``wakers`` is called under ``cond`` on every change."""
    loop = asyncio.get_running_loop()
    news = asyncio.Event()

    def wake() -> None:  # the reader thread
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(news.set)

    with cond:
        wakers.append(wake)
    try:
        if not changed() and not ended():  # read after the waker is in: no change is missed
            with anyio.move_on_after(within):
                await news.wait()
        if gap <= 0 or ended() or not changed():
            return
        with anyio.move_on_after(gap):
            while True:
                news.clear()
                if ended():  # set before its waker runs: read after the clear
                    return
                await news.wait()
    finally:
        with cond:
            wakers.remove(wake)
