"""Work a command starts that outlives its reply: a ``!`` command, ``/init``.

Such work runs in the host's task group when the host's ``spawn`` takes it (the real runtime's does),
so nothing a front end does with the reply - drop it, cancel the worker that awaits it - can stop it;
its progress reaches the user as events and the reply comes back at once. Where ``spawn`` declines
(a bare test host, a runtime not started) the work is the reply's ``then``, awaited by the front end.

Each piece of work has a key and a cancel token; ``abort`` cancels them all.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from weakref import WeakKeyDictionary

from owltui.agent.cancel import CancelToken
from owltui.session.commands.host import Host
from owltui.session.commands.spec import Reply

log = logging.getLogger(__name__)

Work = Callable[[CancelToken], Awaitable[Reply]]


class Background:
    def __init__(self, host: Host) -> None:
        self._host = host
        self._tokens: dict[str, CancelToken] = {}

    def busy(self, key: str) -> bool:
        return key in self._tokens

    @property
    def keys(self) -> list[str]:
        return list(self._tokens)

    def start(self, key: str, work: Work) -> Awaitable[Reply] | None:
        """Start ``work`` under ``key``. None: it runs in the host's task group; else the awaitable
        that runs it (the reply's ``then``)."""
        token = CancelToken()
        self._tokens[key] = token

        async def guarded() -> Reply:
            try:
                return await work(token)
            except Exception as exc:  # a bug: one sentence for the user, the front end lives on
                log.exception("background work %s failed", key)
                return Reply(f"{key} failed: {exc}", "error", ok=False)
            finally:
                if self._tokens.get(key) is token:
                    del self._tokens[key]

        async def detached() -> None:
            await guarded()

        if self._host.spawn(detached, key):
            return None
        return guarded()

    def cancel_all(self, reason: str = "aborted") -> int:
        """Cancel every piece of work still going; how many there were."""
        tokens = list(self._tokens.values())
        for token in tokens:
            token.cancel(reason)
        return len(tokens)


_REGISTRY: WeakKeyDictionary[Host, Background] = WeakKeyDictionary()


def background(host: Host) -> Background:
    """The one ``Background`` of a host (shared by every front end on it)."""
    found = _REGISTRY.get(host)
    if found is None:
        found = _REGISTRY[host] = Background(host)
    return found
