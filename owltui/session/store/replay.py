"""Reading a session file's records back: the entry tree indexed, the current branch walked into
history items, the queue and the pause state as the file left them (``owltui.session.store.store``).

- ``index(records)``: chain entries (``message``, ``model_change``, ``compaction``, ``branch``) by
  id; an entry whose parent was on an unreadable line is hung on the entry written before it (the
  gap is remembered for a notice). The leaf is the last chain entry written, so ``-c`` resumes the
  latest branch. ``queued``/``dequeued`` records rebuild the queue (edits and moves included),
  ``pause`` records the paused state.
- ``walk(idx, leaf)``: the chain from ``leaf`` to the root, oldest first, as items: tool results
  put back in call order, a notice where something was lost, never a conversation that starts with
  the model; the last compaction on the chain as a ``CompactionMark``. A ``branch`` entry carries
  no item: its parent is where a rewind forked the conversation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from owltui.agent.history import CompactionMark
from owltui.agent.inbox import QueueLane
from owltui.agent.messages import ITEM_ADAPTER, AssistantMessage, Item, ToolResult, UserMessage

Warn = Callable[[str], None]
CHAIN_KINDS = ("message", "model_change", "compaction", "branch")
KINDS = (*CHAIN_KINDS, "queued", "dequeued", "pause")
GAP_NOTICE = (
    "Part of this conversation could not be read back from the session file and is missing "
    "here; earlier and later messages are kept."
)
LOST_START = "lost-start"


@dataclass
class QueuedMessage:
    qid: str
    lane: QueueLane
    text: str
    source: str


class Index:
    """A session file's records, indexed (a plain class: no dataclass to build at start-up)."""

    __slots__ = ("by_id", "gaps", "leaf", "paused", "queued")

    def __init__(self) -> None:
        self.by_id: dict[str, dict[str, Any]] = {}  # chain entries
        self.gaps: dict[str, str] = {}  # entry id -> id of its unreadable parent
        self.leaf: str | None = None  # the last chain entry written
        self.queued: dict[str, QueuedMessage] = {}  # undelivered, by qid, in order
        self.paused = False

    def add(self, rec: dict[str, Any]) -> None:
        """One more record, in file order."""
        kind = rec.get("type")
        rid = rec.get("id")
        if kind in CHAIN_KINDS and isinstance(rid, str):
            parent = rec.get("parent_id")
            if parent is not None and (not isinstance(parent, str) or parent not in self.by_id):
                # its parent was on an unreadable line: hang it on the entry written before it
                self.gaps[rid] = parent if isinstance(parent, str) else f"gap-{rid}"
                rec = {**rec, "parent_id": self.leaf}
            self.by_id[rid] = rec
            self.leaf = rid
        elif kind == "queued" and isinstance(rid, str):
            qid = rec["qid"] if isinstance(rec.get("qid"), str) else rid  # files before ids: the entry id
            msg = QueuedMessage(
                qid, rec.get("lane", "follow_up"), str(rec.get("text", "")), str(rec.get("source", "user"))
            )
            if "before" in rec:  # moved: out of its place, in before that message (or at the end)
                self.queued.pop(qid, None)
                self.queued = placed(self.queued, msg, rec["before"])
            else:  # queued, or edited in place
                self.queued[qid] = msg
        elif kind == "dequeued":
            self.queued.pop(str(rec.get("ref", "")), None)
        elif kind == "pause":
            self.paused = rec.get("paused") is True


def index(records: list[dict[str, Any]]) -> Index:
    idx = Index()
    for rec in records:
        idx.add(rec)
    return idx


class Walked:
    """The current branch as the store keeps it: ``items``, ``item_ids`` (the entry id of each
    item; a notice: its gap's or LOST_START), ``compaction`` and ``model`` (the last
    model_change on the branch)."""

    __slots__ = ("compaction", "item_ids", "items", "model")

    def __init__(
        self, items: list[Item], item_ids: list[str], compaction: CompactionMark | None, model: str | None
    ) -> None:
        self.items = items
        self.item_ids = item_ids
        self.compaction = compaction
        self.model = model


def walk(idx: Index, leaf: str | None, warn: Warn | None = None, where: str = "") -> Walked:
    """The chain from ``leaf`` back to the root, oldest first, as items (see the module)."""
    by_id, gaps = idx.by_id, idx.gaps
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    cur = leaf
    while cur is not None and cur in by_id and cur not in seen:
        seen.add(cur)
        chain.append(by_id[cur])
        cur = by_id[cur].get("parent_id")
    pairs: list[tuple[Item, str]] = []
    kept_from: tuple[str, str, list[str]] | None = None  # (summary, first kept id, pinned ids)
    kept_at = 0
    model: str | None = None
    for rec in reversed(chain):
        kind = rec["type"]
        if rec["id"] in gaps and not (pairs and is_gap_notice(pairs[-1][0])):
            pairs.append((gap_notice(), gaps[rec["id"]]))
        if kind == "message":
            try:
                item = ITEM_ADAPTER.validate_python(rec["item"])
            except Exception:
                if warn:
                    warn(f"skipped an unreadable message in {where}")
                if not (pairs and is_gap_notice(pairs[-1][0])):
                    pairs.append((gap_notice(), rec["id"]))
                continue
            pairs.append((item, rec["id"]))
        elif kind == "model_change":
            model = str(rec.get("model", model or ""))
        elif kind == "compaction":
            pinned = rec.get("pinned")
            kept_from = (
                str(rec.get("summary", "")),
                str(rec.get("first_kept", "")),
                [str(p) for p in pinned] if isinstance(pinned, list) else [],
            )
            kept_at = len(pairs)
    pairs = in_call_order(pairs)
    shift = 0
    if pairs and not isinstance(pairs[0][0], UserMessage):
        pairs.insert(0, (gap_notice(), LOST_START))  # never start the conversation with the model
        shift = 1
    items = [p[0] for p in pairs]
    item_ids = [p[1] for p in pairs]
    mark: CompactionMark | None = None
    if kept_from is not None:
        summary, first, pinned_ids = kept_from
        if first in item_ids:
            start = item_ids.index(first)
        else:  # "": everything before the compaction entry
            start = min(kept_at + shift, len(items))
        at = {eid: n for n, eid in enumerate(item_ids[:start])}
        mark = CompactionMark(summary, start, tuple(sorted(at[p] for p in pinned_ids if p in at)))
    return Walked(items, item_ids, mark, model)


def placed(queued: dict[str, QueuedMessage], msg: QueuedMessage, before: Any) -> dict[str, QueuedMessage]:
    """``queued`` with ``msg`` inserted before message ``before`` (at the end if it is not there)."""
    if before not in queued:
        return {**queued, msg.qid: msg}
    out: dict[str, QueuedMessage] = {}
    for qid, q in queued.items():
        if qid == before:
            out[msg.qid] = msg
        out[qid] = q
    return out


def gap_notice() -> UserMessage:
    return UserMessage(text=GAP_NOTICE, lane="notice", source="system")


def is_gap_notice(item: Item) -> bool:
    return isinstance(item, UserMessage) and item.lane == "notice" and item.text == GAP_NOTICE


def in_call_order(pairs: list[tuple[Item, str]]) -> list[tuple[Item, str]]:
    """The results right after an assistant message in the order of its calls, one per call (the
    last written wins): results written as their tools ended come in completion order."""
    out: list[tuple[Item, str]] = []
    i = 0
    while i < len(pairs):
        item = pairs[i][0]
        out.append(pairs[i])
        i += 1
        if not isinstance(item, AssistantMessage) or not item.tool_calls:
            continue
        j = i
        while j < len(pairs) and isinstance(pairs[j][0], ToolResult):
            j += 1
        if j - i < 2:
            out.extend(pairs[i:j])
            i = j
            continue
        order = {c.id: n for n, c in enumerate(item.tool_calls)}
        last: dict[str, tuple[Item, str]] = {}
        for pair in pairs[i:j]:
            res = pair[0]
            assert isinstance(res, ToolResult)
            last.pop(res.call_id, None)
            last[res.call_id] = pair
        run = sorted(last.values(), key=lambda p: order.get(getattr(p[0], "call_id", ""), len(order)))
        out.extend(run)
        i = j
    return out
