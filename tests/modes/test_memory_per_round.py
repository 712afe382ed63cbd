"""Memory a long turn holds per tool round, against the bytes the session file gains per round.

A print-mode run through the real runtime: the scripted model asks for ``ls`` 350 times, then
answers. ``tracemalloc`` snapshots at the tool end of round 100 and of round 350 give the memory
held per round; the session file's size over the rounds gives its bytes per round. The bound is on
their ratio (memory and bytes counted, not timed). The model's own request log is cleared: the
test double's memory is not the product's.
"""

from __future__ import annotations

import gc
import io
import os
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from owltui.agent.events import Event, ToolEnd
from owltui.agent.ledger import result_for
from owltui.agent.messages import ToolCall, ToolResult, Usage
from owltui.agent.model import (
    MessageAssembler,
    ModelRequest,
    StreamDone,
    StreamEvent,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from owltui.modes.print_mode import print_run
from owltui.session.runtime.options import Options
from owltui.session.runtime.runtime import Runtime
from owltui.testing.scripted import Call, ScriptedModel, Step

FIRST, ROUNDS = 100, 350
BOUND = 4.0  # held per round / file bytes per round: the target is 5 (bench/memory_per_round.py), 3.2 here


class _Forgetful(ScriptedModel):
    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests.clear()
        async for ev in super().stream(request):
            yield ev


def _step(request: ModelRequest) -> Step:
    done = sum(1 for m in request.messages if isinstance(m, ToolResult))
    return Step(calls=[Call("ls", {"path": "."})]) if done < ROUNDS else Step(text="All done.")


@pytest.mark.anyio
async def test_print_mode_holds_a_small_multiple_of_the_session_file_per_round(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(3):
        (ws / f"f{i}.txt").write_text("x\n")
    env = {**os.environ, "HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "data")}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "cfg")
    snapshots: dict[int, tracemalloc.Snapshot] = {}
    ends = 0

    def on(ev: Event) -> None:
        nonlocal ends
        if isinstance(ev, ToolEnd):
            ends += 1
            if ends in (FIRST, ROUNDS):
                gc.collect()
                snapshots[ends] = tracemalloc.take_snapshot()

    def prepare(runtime: Runtime) -> None:
        runtime.emitter.subscribe(on)

    tracemalloc.start()
    try:
        code = await print_run(
            Options(workspace=ws, yes=True, max_rounds=ROUNDS + 10),
            "go",
            model=_Forgetful(_step, record=False),
            env=env,
            out=io.BytesIO(),
            err=io.StringIO(),
            handle_signals=False,
            prepare=prepare,
        )
    finally:
        tracemalloc.stop()
    assert code == 0
    held = sum(d.size_diff for d in snapshots[ROUNDS].compare_to(snapshots[FIRST], "filename"))
    held_per_round = held / (ROUNDS - FIRST)
    file_per_round = sum(f.stat().st_size for f in (tmp_path / "data").rglob("*.jsonl")) / ROUNDS
    assert file_per_round > 300  # the rounds were written
    ratio = held_per_round / file_per_round
    assert ratio <= BOUND, (
        f"{held_per_round:.0f} B held per round, {file_per_round:.0f} B on disk ({ratio:.2f}x)"
    )


def _given(model: Any) -> int:
    return len(model.model_fields_set)


def test_the_items_a_round_keeps_leave_their_defaults_unset() -> None:
    """Pydantic keeps a set of the fields given per instance: 216 bytes up to four names, 728 from
    five. What a tool round adds to the history gives only what differs from the defaults."""
    asm = MessageAssembler("m")
    asm.feed(ToolCallStart(index=0, id="c1", name="ls"))
    asm.feed(ToolCallDelta(index=0, arguments='{"path": "."}'))
    asm.feed(ToolCallEnd(index=0))
    asm.feed(StreamDone(stop_reason="tool_use", usage=Usage(input_tokens=3, output_tokens=2)))
    msg = asm.finish()
    call = msg.tool_calls[0]
    result = result_for(call, "f.txt", "ok")
    assert _given(msg) <= 4 and _given(call) <= 4 and _given(result) <= 4
    assert (msg.text, msg.thinking, msg.error, msg.stop_reason, msg.model) == ("", [], None, "tool_use", "m")
    assert (call.parse_error, call.raw_arguments, call.arguments) == (None, None, {"path": "."})
    assert (result.status, result.is_error, result.content) == ("ok", False, "f.txt")
    refused = result_for(call, "no", "refused")
    assert (refused.status, refused.is_error) == ("refused", True)
    broken = MessageAssembler("m")
    broken.feed(ToolCallStart(index=0, id="c2", name="ls"))
    broken.feed(ToolCallDelta(index=0, arguments="{not json"))
    bad = broken.finish().tool_calls[0]
    assert bad.parse_error and bad.raw_arguments == "{not json" and bad.arguments == {}
    assert isinstance(bad, ToolCall)
