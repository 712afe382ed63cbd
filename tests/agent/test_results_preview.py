"""The preview of a saved result costs what its head and tail cost, whatever the number of lines:
it is the same text as a line-by-line pass over the whole file (kept here as the reference), and the
work it does does not grow with the lines between head and tail."""

from __future__ import annotations

import random
import sys
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

import pytest

from owltui.agent.paging import MAX_LINES, utf8_len
from owltui.agent.results import (
    HEAD_BYTES,
    PIECE,
    TAIL_BYTES,
    TAIL_LINE,
    TAIL_LINES,
    ResultStore,
    reread_call,
)


def _fit_chars(text: str, room: int) -> int:
    if len(text.encode("utf-8", errors="replace")) <= room:
        return len(text)
    return len(text.encode("utf-8", errors="replace")[:room].decode("utf-8", errors="ignore"))


def reference_preview(result_id: str, path: Path, name: str) -> str:
    """Head and tail of a saved result, with the exact call that reads the rest. The file is
    read in pieces: a line of any length is never held whole (a first line over the head's
    budget shows its first part, and the call goes on from the next character)."""
    head: list[str] = []
    head_bytes = 0
    head_open = True
    cut = 0  # characters shown of line 1 when it alone is over the head's budget
    tail: deque[tuple[int, str, str, int]] = deque()  # (number, start, end, length)
    tail_bytes = 0
    total = 0
    with path.open("r", encoding="utf-8", errors="replace", newline="") as fh:
        for start, end, length in _reference_scan(fh):
            total += 1
            if head_open:
                size = utf8_len(start) + 1
                fits = head_bytes + size <= HEAD_BYTES and len(head) < MAX_LINES // 2
                if fits and len(start) == length:
                    head.append(start)
                    head_bytes += size
                    continue
                head_open = False
                if not head:
                    cut = _fit_chars(start, HEAD_BYTES)
                    head.append(start[:cut])
                    tail.append((total, "", end, length))  # its end, shown if no line follows
                    tail_bytes += utf8_len(end) + 1
                    continue
            if cut and total == 2:
                tail_bytes -= utf8_len(tail.popleft()[2]) + 1
            entry = (
                (total, start, "", length)
                if length <= TAIL_LINE
                else (total, start[: TAIL_LINE // 2], end, length)
            )
            tail.append(entry)
            tail_bytes += utf8_len(entry[1]) + utf8_len(entry[2]) + 1
            while len(tail) > 1 and (tail_bytes > TAIL_BYTES or len(tail) > TAIL_LINES):
                gone = tail.popleft()
                tail_bytes -= utf8_len(gone[1]) + utf8_len(gone[2]) + 1
    size = path.stat().st_size
    parts = ["\n".join(head)]
    shown = len(head)
    if tail and tail[0][0] > shown + 1:
        parts.append(f"[... lines {shown + 1}-{tail[0][0] - 1} omitted ...]")
    for number, start, end, length in tail:
        if cut and number == 1:  # never repeat what the head showed
            gap = length - len(end)
            parts.append(
                f"[... characters {cut + 1}-{gap} of line 1 omitted ...] {end}"
                if gap > cut
                else f"[... line 1 goes on:] {end[len(end) - (length - cut) :]}"
            )
        elif end:
            parts.append(
                f"{start} [... characters {len(start) + 1}-{length - len(end)} of line {number} "
                f"omitted ...] {end}"
            )
        else:
            parts.append(start)
    call = reread_call(result_id, 1, column=cut + 1) if cut else reread_call(result_id, shown + 1)
    parts.append(
        f"[The full output of {name} ({total} lines, {size} bytes) was saved as result "
        f"{result_id}. Read the omitted part with exactly this call: {call}]"
    )
    return "\n".join(p for p in parts if p)


def _reference_scan(fh: TextIO) -> Iterator[tuple[str, str, int]]:
    """Each line of ``fh`` (opened with ``newline=""``) as (its first characters - at most a piece
    -, its last TAIL_LINE // 2 characters, its length), without its line ending."""
    keep = TAIL_LINE // 2 + 2
    while piece := fh.readline(PIECE):
        start = piece
        end = piece[-keep:]
        length = len(piece)
        while not piece.endswith("\n"):
            piece = fh.readline(PIECE)
            if not piece:
                break
            length += len(piece)
            end = (end + piece)[-keep:]
        ending = 2 if end.endswith("\r\n") else 1 if end.endswith("\n") else 0
        length -= ending
        yield start[:length], end[: len(end) - ending][-(TAIL_LINE // 2) :], length


PIECES = ["a", "é", "\r", "\n", "\r\n", "x" * 50, "€", "\n\n", "b" * 3000, "🦉", "\udc80", "\t"]


def random_bytes(rng: random.Random) -> bytes:
    kind = rng.random()
    if kind < 0.3:
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 60)))
    elif kind < 0.6:
        sizes = [1, 5, 100, 1500, 2500, 40_000]
        ends = ["\n", "\r\n", ""]
        text = "".join("z" * rng.choice(sizes) + rng.choice(ends) for _ in range(rng.randint(1, 300)))
    elif kind < 0.9:
        text = "".join(f"{k}\n" for k in range(rng.randint(0, 4000)))
        text += "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 5)))
    else:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 3000)))
    return text.encode("utf-8", errors="surrogateescape" if rng.random() < 0.5 else "replace")


@pytest.mark.parametrize("seed", range(4))
def test_the_preview_is_the_text_of_a_pass_over_every_line(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    path = tmp_path / "r1.txt"
    for _ in range(150):
        data = random_bytes(rng)
        path.write_bytes(data)
        assert ResultStore(tmp_path).preview("r1", path, "bash") == reference_preview("r1", path, "bash"), (
            data[:300]
        )


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n",
        "one line",
        "x" * 300_000,
        "x" * 300_000 + "\n" + "y" * 5000,
        "a\n" * 999 + "x" * 300_000 + "\nz\n",
        "a\n" * 5000 + "x" * 300_000,
        "é" * 100_000 + "\n" * 3,
    ],
)
def test_edges_match_the_reference(tmp_path: Path, text: str) -> None:
    path = tmp_path / "r1.txt"
    path.write_text(text, encoding="utf-8")
    assert ResultStore(tmp_path).preview("r1", path, "bash") == reference_preview("r1", path, "bash")


def calls_during(work: Any) -> int:
    """Python and C function calls made while ``work()`` runs: a measure of work that does not
    depend on the machine's speed."""
    count = 0

    def profile(frame: FrameType, event: str, arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
    return count


def test_the_work_does_not_grow_with_the_lines_between_head_and_tail(tmp_path: Path) -> None:
    small, big = tmp_path / "r1.txt", tmp_path / "r2.txt"
    small.write_text("".join(f"line {i}\n" for i in range(20_000)))
    big.write_text("".join(f"line {i}\n" for i in range(400_000)))
    store = ResultStore(tmp_path)
    few = calls_during(lambda: store.preview("r1", small, "bash"))
    many = calls_during(lambda: store.preview("r2", big, "bash"))
    assert "(400000 lines," in store.preview("r2", big, "bash")
    assert many < few + 1_000, (few, many)  # a pass over the lines makes 380,000 more calls
