"""Compaction: replace the older part of a long conversation, for the model, by a summary.

The summary is written by the same loop as everything else: no tools, a summariser prompt, and an
in-memory history holding the transcript. The history keeps every item (the session file is never
rewritten); ``record_compaction`` only changes what the model is sent: the pinned items (the
current request, word for word), the summary, then the items kept.

Two callers. ``/compact`` (``compact``) cuts at a user prompt, keeping the last ``keep_turns``
turns. Automatic compaction (``compact_for_loop``, the loop's ``LoopConfig.compactor``, asked by
``owltui.agent.context`` before a model call) must work inside one long turn - one prompt followed
by dozens of tool rounds - so it cuts between rounds (``round_cut``: never between a call and its
result), keeps the most recent rounds that fit ``keep_tokens`` and the room the budget leaves
(``room_tokens``, less the longest summary the summariser may write and the user messages of the
current turn, which stay word for word), all sized at the provider's tokens a character. Either way
the summariser reads the previous summary plus what came after it (never the whole session again)
within the model's window, and writes what is done and what is pending, so nothing is run twice.
The session's todo list (``owltui.agent.todo``) follows the summary word for word.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from owltui.agent.agent import Agent
from owltui.agent.config import LoopConfig
from owltui.agent.context import CHARS_PER_TOKEN, ITEM_OVERHEAD, CompactRequest, item_chars
from owltui.agent.history import SUMMARY_HEADING, Compactable, CompactionMark, History
from owltui.agent.messages import USER_LANES, AssistantMessage, Item, ToolResult, UserMessage
from owltui.agent.model import Model
from owltui.agent.pause import GATE, PauseGate
from owltui.agent.todo import todo_block

SUMMARY_PROMPT = """\
You summarise a coding session so that it can continue without the full transcript; the agent will
see only your summary, the user's current request word for word, and the most recent steps.
Write a compact summary with these parts:
1. Goals and constraints: what the user asked for across the session, and any rules they set.
2. Done: every step already completed, with its outcome - files read, created and changed (what
   changed), commands run and their results (exit codes, test counts, errors). Be complete: anything
   not listed here will be done again.
3. Pending: what remains to be done for the current request, in order; the next step first.
4. Facts to keep: exact file paths, names, numbers, error messages, decisions and their reasons.
Do not invent anything. Do not address the user; write notes for the agent.
"""
KEPT_NOTE = (
    "(The conversation before this point was summarised. Steps listed as done are done: do "
    "not run them again; go on with what is pending.)"
)
MAX_RESULT_CHARS = 2000
MAX_TRANSCRIPT_CHARS = 400_000


class CompactionError(RuntimeError):
    """Compaction could not be done; the message says why in one sentence."""


@dataclass
class Compaction:
    summary: str
    first_kept: int
    replaced: int
    pinned: tuple[int, ...] = ()


def _clip(text: str, chars: int) -> str:
    if len(text) <= chars:
        return text
    half = max(chars // 2, 1)
    return text[:half] + "\n[...]\n" + text[-half:]


def _call_text(arguments: dict[str, Any], chars: int) -> str:
    """A call's arguments with each long string value clipped (a written file's content, say)."""
    return str({k: _clip(v, chars) if isinstance(v, str) else v for k, v in arguments.items()})


def _lines(indexed: Sequence[tuple[int, Item]], pinned: Collection[int], result_chars: int) -> list[str]:
    out: list[str] = []
    for n, item in indexed:
        if isinstance(item, UserMessage):
            label = "user request, kept word for word" if n in pinned else item.lane
            out.append(f"[{label}] {item.text}")
        elif isinstance(item, AssistantMessage):
            if item.text:
                out.append(f"[assistant] {item.text}")
            for call in item.tool_calls:
                out.append(f"[tool call] {call.name} {_call_text(call.arguments, result_chars // 4)}")
        elif isinstance(item, ToolResult):
            out.append(f"[tool result {item.status}] {_clip(item.content, result_chars)}")
    return out


def _transcript(
    indexed: Sequence[tuple[int, Item]], pinned: Collection[int], summary: str | None, max_chars: int
) -> str:
    """The transcript within ``max_chars``: tool output and call arguments shortened more and more
    before the middle of the session is left out."""
    head = [f"[summary of the conversation before]\n{summary}"] if summary is not None else []
    lines: list[str] = []
    for chars in (MAX_RESULT_CHARS, 1000, 500, 200, 80):
        lines = head + _lines(indexed, pinned, chars)
        if sum(map(len, lines)) + 2 * len(lines) <= max_chars:
            break
    return _bounded(lines, max_chars)


def _bounded(lines: list[str], max_chars: int) -> str:
    text = "\n\n".join(lines)
    if len(text) > max_chars:
        half = max_chars // 2
        text = text[:half] + "\n\n[... middle of the session omitted ...]\n\n" + text[-half:]
    return text


def cut_point(items: Sequence[Item], keep_turns: int, start: int = 0) -> int:
    """Index of the user prompt that starts the last ``keep_turns`` turns after ``start`` (``start``:
    nothing to cut)."""
    starts = [
        i for i in range(start, len(items)) if isinstance(it := items[i], UserMessage) and it.lane == "user"
    ]
    if keep_turns <= 0:
        return len(items) if starts or len(items) > start else start
    if len(starts) <= keep_turns:
        return start
    return starts[-keep_turns]


def round_cuts(items: Sequence[Item], start: int = 0) -> list[int]:
    """Where the model's view may be cut after ``start``: before an assistant message (a round
    begins) or a user message outside a batch, or at the end - never between a call and its result."""
    cuts: list[int] = []
    open_calls: set[str] = set()
    for i in range(start, len(items)):
        item = items[i]
        if isinstance(item, AssistantMessage):
            if i > start:
                cuts.append(i)
            open_calls = {c.id for c in item.tool_calls}  # earlier calls without a result stay so
        elif isinstance(item, ToolResult):
            open_calls.discard(item.call_id)
        elif not open_calls and i > start:
            cuts.append(i)
    if not open_calls and len(items) > start:
        cuts.append(len(items))
    return cuts


def round_cut(items: Sequence[Item], start: int, keep_chars: int, free: Collection[int] = ()) -> int:
    """The earliest cut after ``start`` whose kept part (the items from it on, those in ``free`` not
    counted) fits ``keep_chars``: the most recent rounds stay word for word. ``start`` when there is
    nothing to cut."""
    cuts = round_cuts(items, start)
    if not cuts:
        return start
    kept = 0
    best = cuts[-1]
    pos = len(items)
    for cut in reversed(cuts):
        kept += sum(item_chars(items[i]) for i in range(cut, pos) if i not in free)
        pos = cut
        if kept > keep_chars:
            break
        best = cut
    return best


def request_words(
    items: Sequence[Item], turn_from: int, start: int, cut: int, pinned: Sequence[int] = ()
) -> tuple[int, ...]:
    """The user's own messages of the current turn (from ``turn_from``) before ``cut``: pinned
    earlier and still in this turn, or between ``start`` and ``cut``."""
    keep = [i for i in pinned if turn_from <= i < cut]
    keep += [
        i
        for i in range(max(start, turn_from), cut)
        if isinstance(it := items[i], UserMessage) and it.source == "user" and it.lane in USER_LANES
    ]
    return tuple(sorted(set(keep)))


def _own_words(items: Sequence[Item], turn_from: int, start: int, pinned: Sequence[int]) -> tuple[int, ...]:
    """The user's own messages of the current turn from ``start`` on, and those pinned earlier: they
    stay in the view whichever side of the cut they fall."""
    return request_words(items, turn_from, start, len(items), pinned)


def _last(history: History) -> tuple[Compactable, CompactionMark | None, int]:
    """The history as compactable, its last compaction, and the first item that compaction kept
    (0 when there was none)."""
    if not isinstance(history, Compactable):
        raise CompactionError("This history cannot be compacted.")
    mark = history.compaction()
    return history, mark, mark.first_kept if mark is not None else 0


def _output_tokens(window: int | None) -> int | None:
    return None if window is None else max(256, min(4096, window // 5))


def _transcript_chars(window: int | None) -> int:
    """What the summariser may read: its window less its answer and prompt (all of it unknown: the
    old fixed cap)."""
    if window is None:
        return MAX_TRANSCRIPT_CHARS
    room = int(window * 0.9) - (_output_tokens(window) or 0)
    return max(2000, min(MAX_TRANSCRIPT_CHARS, room * CHARS_PER_TOKEN - len(SUMMARY_PROMPT) - 200))


async def summarise(
    model: Model, transcript: str, *, gate: PauseGate = GATE, window: int | None = None
) -> str:
    """The summary of ``transcript``, written by ``model`` on the same loop (no tools)."""
    summariser = Agent(
        LoopConfig(
            model=model,
            system_prompt=SUMMARY_PROMPT,
            name="compaction",
            max_output_tokens=_output_tokens(window),
        ),
        gate=gate,
    )
    outcome = await summariser.run("Summarise this session:\n\n" + transcript)
    text = outcome.text.strip()
    if outcome.reason != "done" or not text:
        raise CompactionError(f"The summary could not be written ({outcome.error or outcome.reason}).")
    return text


async def _compact_at(
    history: History,
    model: Model,
    cut: int,
    pinned: tuple[int, ...],
    *,
    gate: PauseGate,
    window: int | None,
    note: str = "",
) -> Compaction:
    """Summarise what the model sees before ``cut`` - the previous summary, the items pinned before
    it, the items since - and record it (``note`` after it), ``pinned`` kept word for word."""
    target, mark, start = _last(history)
    items = history.items()
    if cut <= start:
        raise CompactionError("The conversation is too short to compact.")
    earlier = [(i, items[i]) for i in (mark.pinned if mark is not None else ())]
    transcript = _transcript(
        [*earlier, *((i, items[i]) for i in range(start, cut))],
        pinned,
        mark.summary if mark is not None else None,
        _transcript_chars(window),
    )
    summary = await summarise(model, transcript, gate=gate, window=window)
    if note:
        summary = f"{summary}\n\n{note}"
    if block := todo_block(items):  # the todo list word for word, whatever the summary says of it
        summary = f"{summary}\n\n{block}"
    target.record_compaction(summary, cut, pinned)
    return Compaction(summary, cut, cut - start - sum(1 for i in pinned if i >= start), pinned)


async def compact(
    history: History, model: Model, *, keep_turns: int = 2, gate: PauseGate = GATE, window: int | None = None
) -> Compaction:
    """``/compact``: summarise everything before the last ``keep_turns`` turns (0: everything)."""
    cut = cut_point(history.items(), keep_turns, _last(history)[2])
    return await _compact_at(history, model, cut, (), gate=gate, window=window)


async def compact_for_loop(request: CompactRequest) -> Compaction:
    """The loop's compactor (``LoopConfig.compactor``): cut between rounds, keeping the recent rounds
    that fit ``keep_tokens`` and the current turn's user messages word for word."""
    history = request.history
    _, mark, start = _last(history)
    items = history.items()
    rate = request.tokens_per_char
    words = _own_words(items, request.turn_from, start, mark.pinned if mark is not None else ())
    keep = request.keep_tokens
    if request.room_tokens is not None:  # the summary at its longest, its framing, the user's words
        summary = (_output_tokens(request.window) or 0) + rate * (
            len(SUMMARY_HEADING) + len(KEPT_NOTE) + 3 + ITEM_OVERHEAD
        )
        own = rate * sum(item_chars(items[i]) for i in words)
        keep = max(0, min(keep, int(request.room_tokens - summary - own)))
    cut = round_cut(items, start, int(keep / rate), free=set(words))
    if cut <= start:
        raise CompactionError("There is nothing new to summarise since the last compaction.")
    pinned = request_words(items, request.turn_from, start, cut, mark.pinned if mark is not None else ())
    return await _compact_at(
        history, request.model, cut, pinned, gate=request.gate, window=request.window, note=KEPT_NOTE
    )
