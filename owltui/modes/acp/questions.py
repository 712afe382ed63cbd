"""Questions put to the client as ``session/request_permission``, one per tool call: asked in a task
of the session's own (after the updates before it are out), answered with the option the client
picked, or abandoned when the run withdraws the question (a cancel, an abort, an answer given
another way). Approvals (``permissions``) and plan mode's question (``plans``) are both this.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Coroutine
from typing import Any

import anyio
from acp.interfaces import Client
from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

Spawn = Callable[[Callable[[], Coroutine[Any, Any, Any]]], None]


class ClientQuestions:
    """The questions of one session that wait for the client, by call id."""

    def __init__(
        self, conn: Client, session_id: str, spawn: Spawn, sent: Callable[[], Awaitable[None]] | None = None
    ) -> None:
        self.conn = conn
        self.session_id = session_id
        self.spawn = spawn
        self.sent = sent  # waits until the updates before the question are out (the call's tool_call)
        self.asking: dict[str, anyio.CancelScope] = {}

    def ask(
        self,
        call_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        answer: Callable[[str | None], None],
    ) -> None:
        """Ask in the background; ``answer`` gets the option id picked among ``options`` (None when
        the client failed, said ``cancelled`` or picked nothing offered) unless the question was
        withdrawn first."""
        offered: Collection[str] = {o.option_id for o in options}

        async def run() -> None:
            choice: str | None = None
            with anyio.CancelScope() as scope:
                self.asking[call_id] = scope
                try:
                    if self.sent is not None:
                        await self.sent()
                    reply = await self.conn.request_permission(
                        session_id=self.session_id, tool_call=tool_call, options=options
                    )
                except Exception:  # the client failed to answer: as if it had said no
                    reply = None
                outcome = reply.outcome if reply is not None else None
                if isinstance(outcome, AllowedOutcome) and outcome.option_id in offered:
                    choice = outcome.option_id
            self.asking.pop(call_id, None)
            if not scope.cancelled_caught:  # withdrawn: the run has its answer already
                answer(choice)

        self.spawn(run)

    def withdraw(self, call_id: str) -> None:
        scope = self.asking.pop(call_id, None)
        if scope is not None:
            scope.cancel()

    def close(self) -> None:
        for scope in self.asking.values():
            scope.cancel()
        self.asking.clear()
