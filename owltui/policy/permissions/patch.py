"""An ``apply_patch`` call reviewed as the writes it makes: one review per path its patch names.

``patch_paths`` reads every path a V4A patch could touch - each line that, stripped, starts with
``*** Add File:``, ``*** Delete File:`` or ``*** Update File:``, and each ``*** Move to:`` line - from
the lines the tool's parser reads, so it names at least every path the tool can write (a line the
parser takes for content is reviewed too: more is asked, never less). ``review_patch`` judges each
path as an ``apply_patch`` write of it and keeps the strictest verdict: a refusal refuses the call,
else any question asks (forced when one is forced), naming every path that needs approval.
"""

from __future__ import annotations

from collections.abc import Callable

from owltui.agent.messages import ToolCall
from owltui.policy.permissions.model import Review

HEADERS = ("*** Add File: ", "*** Delete File: ", "*** Update File: ")
MOVE = "*** Move to: "


def patch_ops(text: str) -> list[tuple[str, str]]:
    """``(operation, path)`` for each path line of a patch, in order: ``add``, ``delete``,
    ``update`` or ``move`` (a move's destination)."""
    found: list[tuple[str, str]] = []
    for raw in text.strip().split("\n"):
        line = raw.removesuffix("\r")
        stripped = line.strip()
        op = next((h for h in HEADERS if stripped.startswith(h)), None)
        if op is not None:
            found.append((op[4:].split()[0].lower(), stripped[len(op) :]))
        elif line.startswith(MOVE):
            found.append(("move", line[len(MOVE) :]))
    return [(op, path) for op, path in found if path.strip()]


def patch_paths(text: str) -> list[str]:
    """The paths a patch names, in order, each once."""
    return list(dict.fromkeys(path for _op, path in patch_ops(text)))


def review_patch(call: ToolCall, review_one: Callable[[ToolCall], Review]) -> Review:
    """The verdict on an ``apply_patch`` call: each named path reviewed by ``review_one`` as a write."""
    text = call.arguments.get("input")
    paths = patch_paths(text) if isinstance(text, str) else []
    if not paths:
        return review_one(ToolCall(id=call.id, name=call.name, arguments={}))
    reviews = [review_one(ToolCall(id=call.id, name=call.name, arguments={"path": p})) for p in paths]
    for verdict in reviews:
        if verdict.decision == "refuse":
            return verdict
    asking = [v for v in reviews if v.decision == "ask"]
    if not asking:
        return Review("allow")
    savable = all(v.rules for v in asking)
    return Review(
        "ask",
        "; ".join(v.reason for v in asking),
        forced=any(v.forced for v in asking),
        notes=[n for v in asking for n in v.notes],
        rules=[r for v in asking for r in v.rules] if savable else [],
        protected=next((v.protected for v in asking if v.protected is not None), None),
        outside_roots=next((v.outside_roots for v in asking if v.outside_roots is not None), None),
    )


def first_protected(call: ToolCall, review_one: Callable[[ToolCall], Review]) -> str | None:
    """The first path of an ``apply_patch`` call that is protected configuration (for the words of
    a refusal: which path an allow rule would have to name)."""
    text = call.arguments.get("input")
    for path in patch_paths(text) if isinstance(text, str) else []:
        if review_one(ToolCall(id=call.id, name=call.name, arguments={"path": path})).protected is not None:
            return path
    return None
