"""``MentionSource``: the paths the ``@`` completion list offers, made off the event loop.

Listing the workspace (ripgrep) and ranking its paths for what is typed both run in worker threads,
never in a keystroke's handler: ranking 100,000 paths takes longer than a frame. A keystroke asks
for the ranking of what it leaves typed and gets at once whatever is ready: that ranking if it is
done, else the last one shown (or None: nothing ranked yet), and ``on_ready`` is called when the
ranking arrives. One ranking runs at a time; when it ends and the user has typed on, its result is
dropped and the newest text is ranked. The list is listed once, then again in the background when it
is older than the completer's ``ttl`` (the old one is ranked meanwhile)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from owltui.session.input.mention_completion import MentionCompleter

MENTION_LIMIT = 10  # files offered at once (the list shows at most 12 lines)


class MentionSource:
    """``source(prefix)``: the paths to show for ``@prefix`` now (see the module docstring).

    ``start`` runs a coroutine in the background (the app's worker); ``on_ready`` is called on the
    loop when a listing or a ranking has arrived (it asks again, and gets it)."""

    def __init__(
        self,
        completer: MentionCompleter,
        start: Callable[[Callable[[], Awaitable[None]]], None],
        on_ready: Callable[[], None],
    ) -> None:
        self.completer = completer
        self._start = start
        self._on_ready = on_ready
        self._loading = False
        self._ranking = False
        self._wanted: str | None = None  # the prefix typed last
        self._ranked: tuple[str, list[str]] | None = None  # a ranking of the list in use
        self._shown: list[str] | None = None  # the last ranking handed out
        self._listing = 0  # how many lists were loaded (a ranking of an older one is not kept)

    def fresh(self) -> bool:
        loaded = self.completer.loaded_at
        return loaded is not None and time.monotonic() - loaded < self.completer.ttl - 1.0

    def __call__(self, prefix: str) -> list[str] | None:
        if not self.fresh():
            self.load()
        if self.completer.loaded_at is None:
            return None
        self._wanted = prefix
        if self._ranked is not None and self._ranked[0] == prefix:
            self._shown = self._ranked[1]
            return list(self._shown)
        if not self._ranking:
            self._ranking = True
            self._start(self._rank)
        return list(self._shown) if self._shown is not None else None

    def load(self) -> None:
        if not self._loading:
            self._loading = True
            self._start(self._load)

    async def _load(self) -> None:
        try:
            await self.completer.load()
            self._listing += 1
            self._ranked = None  # of the old list
        finally:
            self._loading = False
        self._on_ready()

    async def _rank(self) -> None:
        """Rank the prefix typed last until a ranking is of the prefix still typed when it ends."""
        import anyio.to_thread

        try:
            while self._wanted is not None and (self._ranked is None or self._ranked[0] != self._wanted):
                prefix, listing = self._wanted, self._listing
                paths = await anyio.to_thread.run_sync(self.completer.rank, prefix, MENTION_LIMIT)
                if prefix == self._wanted and listing == self._listing:  # else dropped: rank the newest
                    self._ranked = (prefix, paths)
        finally:
            self._ranking = False
        self._on_ready()
