"""OwlTUI's ACP extension methods (``_owltui/NAME``): each is its RPC twin on the command layer,
answered with the twin's response fields plus ``ok``.

``steer``, ``follow_up``, ``queue_edit``, ``queue_remove``, ``queue_move``, ``pause``, ``resume``,
``require_tool``, ``checkpoints`` and ``rewind`` carry the RPC command's fields; ``state`` is
``get_state``. An unknown name is ``method_not_found``; a refusal (a bad field, an id no longer
queued, a rewind while running) is ``invalid_params`` whose data carries the reason, the one
sentence RPC answers with.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acp import RequestError

from owltui.session.commands.layer import Commands

PREFIX = "_owltui/"
TWINS: Mapping[str, str] = {
    "steer": "steer",
    "follow_up": "follow_up",
    "queue_edit": "queue_edit",
    "queue_remove": "queue_remove",
    "queue_move": "queue_move",
    "pause": "pause",
    "resume": "resume",
    "require_tool": "require_tool",
    "checkpoints": "checkpoints",
    "rewind": "rewind",
    "state": "get_state",
}
EXTENSIONS: frozenset[str] = frozenset(TWINS)


async def call_extension(commands: Commands, name: str, params: dict[str, Any]) -> dict[str, Any]:
    """Run extension ``name`` (without the ``_owltui/`` prefix) with ``params``; its answer as a
    dict, or ``RequestError.method_not_found`` / ``invalid_params``."""
    twin = TWINS.get(name.removeprefix(PREFIX))
    if twin is None:
        raise RequestError.method_not_found(f"{PREFIX}{name.removeprefix(PREFIX)}")
    if not isinstance(params, Mapping):
        raise RequestError.invalid_params({"reason": "params must be an object"})
    reply = commands.rpc(twin, params)
    if reply.then is not None:
        reply = await reply.then
    if not reply.ok:
        raise RequestError.invalid_params({"reason": reply.text or f"{twin} failed"})
    return {"ok": True, **reply.data}
