"""Saved results and their pages (issue 12 item 2): a page is never saved again, fits the budget with
its prefixes and notice, a huge single line is read in character ranges by the exact calls offered,
the preview never holds a whole line, and a spilled output keeps the tool's status."""

from __future__ import annotations

import json
import re
import tracemalloc
from pathlib import Path
from typing import ClassVar

import pytest
from pydantic import BaseModel

from owltui.agent.cancel import CancelToken
from owltui.agent.messages import ToolResult
from owltui.agent.paging import MAX_BYTES, MAX_LINES
from owltui.agent.results import ReadResult, ReadResultParams, ResultStore
from owltui.agent.tool import ToolContext, ToolError, ToolOutput
from owltui.testing.scripted import Call, Step
from tests.agent.helpers import Echo, TextArgs, check_history, make_agent

pytestmark = pytest.mark.anyio

CALL = re.compile(r"read_result (\{[^}]*\})")


def results(agent) -> list[ToolResult]:
    return [i for i in agent.history.items() if isinstance(i, ToolResult)]


def within_limits(text: str) -> bool:
    return len(text.encode()) <= MAX_BYTES and text.count("\n") < MAX_LINES


class Spiller:
    """A tool that spilled its own output to a file (like bash), failed, and says its status."""

    name: ClassVar[str] = "spill"
    description: ClassVar[str] = "Prints a lot and fails."
    params: ClassVar[type[BaseModel]] = TextArgs
    read_only: ClassVar[bool] = False

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    async def run(self, args: TextArgs, ctx: ToolContext) -> ToolOutput:
        path = self.directory / "out.log"
        path.write_text("".join(f"{i}\n" for i in range(1, 100_001)) + "[exit code 3]\n")
        return ToolOutput(
            "1\n2\n3\n(preview)",
            is_error=True,
            full_output=path,
            details={"status": args.text or "exit code 3"},
        )


class Pager:
    """A tool returning a page of its own that is over the size rule but marked ``no_spill``."""

    name: ClassVar[str] = "pager"
    description: ClassVar[str] = "Returns a marked page."
    params: ClassVar[type[BaseModel]] = TextArgs
    read_only: ClassVar[bool] = True

    async def run(self, args: TextArgs, ctx: ToolContext) -> ToolOutput:
        return ToolOutput("\n".join(f"{n}\tline" for n in range(1, 2001)), details={"no_spill": True})


async def test_spilled_failure_keeps_its_status_after_the_preview(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    agent, _, events = make_agent(
        [Step(calls=[Call("spill", {})]), Step(text="ok")], [Spiller(tmp_path)], results=store
    )
    await agent.run("go")
    (r,) = results(agent)
    assert r.is_error and r.status == "error"
    assert r.content.endswith("\n[status: exit code 3]") and within_limits(r.content)
    assert 'read_result {"result_id": "r1"' in r.content
    end = next(e for e in events if e.type == "tool_end")
    assert end.is_error and end.output == r.content and end.details == {"status": "exit code 3"}


async def test_status_of_a_job_still_running_is_kept_too(tmp_path: Path) -> None:
    agent, _, _ = make_agent(
        [Step(calls=[Call("spill", {"text": "still running as job 4"})]), Step(text="ok")],
        [Spiller(tmp_path)],
        results=ResultStore(tmp_path / "results"),
    )
    await agent.run("go")
    assert results(agent)[0].content.endswith("[status: still running as job 4]")


async def test_a_marked_page_is_never_saved_again(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    agent, _, _ = make_agent([Step(calls=[Call("pager", {})]), Step(text="ok")], [Pager()], results=store)
    await agent.run("go")
    (r,) = results(agent)
    assert r.content.startswith("1\tline\n2\tline") and "saved as result" not in r.content
    assert not (tmp_path / "results").exists() or not list((tmp_path / "results").iterdir())


async def test_following_the_offered_calls_pages_without_respilling(tmp_path: Path) -> None:
    """The exact call of the preview, then of each page, reads the whole result; no page becomes r2."""
    store = ResultStore(tmp_path / "results")
    lines = [f"row {i} " + "é" * (i % 40) for i in range(1, 9001)]  # multi-byte: prefixes count
    rid, path = store.save("\n".join(lines) + "\n")
    preview = store.preview(rid, path, "big")
    calls = [json.loads(CALL.findall(preview)[-1])]

    def step(req):  # the model makes exactly the call the last result offered
        last = req.messages[-1]
        if isinstance(last, ToolResult):
            found = CALL.findall(last.content)
            if not found:
                return Step(text="read it all")
            calls.append(json.loads(found[-1]))
        return Step(calls=[Call("read_result", calls[-1])])

    agent, _, _ = make_agent(step, [Echo()], results=store, max_rounds=50)
    out = await agent.run("read everything")
    assert out.reason == "done"
    got = preview.split("\n")[: calls[0]["offset"] - 1]  # the head: whole lines
    for r in results(agent):
        assert within_limits(r.content) and "saved as result" not in r.content
        body = r.content.split("\n\n[")[0]
        got += [line.split("\t", 1)[1] for line in body.split("\n")]
    assert got == lines
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == ["r1.txt"]  # never r2
    check_history(agent)


async def test_a_huge_single_line_reads_in_character_ranges(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    line = "".join(f"{i:09d}," for i in range(300_000))  # 3 MB, one line
    rid, path = store.save(line + "\nend\n")
    preview = store.preview(rid, path, "big")
    assert within_limits(preview) and preview.startswith(line[:1000])
    call = json.loads(CALL.findall(preview)[-1])
    assert call["offset"] == 1 and call["column"] > 1
    got = line[: call["column"] - 1]
    tool = ReadResult(store)
    ctx = ToolContext(workspace=tmp_path, cancel=CancelToken())
    pages = 0
    while True:
        out = await tool.run(ReadResultParams(**call), ctx)
        pages += 1
        assert within_limits(out.content) and out.details["no_spill"]
        first = out.content.split("\n")[0]
        got += first.split("\t", 1)[1]
        found = CALL.findall(out.content)
        if not found or "column" not in found[-1]:
            break
        assert f'"column": {json.loads(found[-1])["column"]}' in found[-1]
        call = json.loads(found[-1])
    assert got == line and pages > 50
    assert out.content.split("\n")[1] == "2\tend"


async def test_preview_of_a_huge_line_never_holds_it_whole(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    path = tmp_path / "src.txt"
    with path.open("w") as fh:
        for _ in range(40):
            fh.write("x" * 500_000)  # 20 MB without a newline
        fh.write("\n[exit code 1]\n")
    rid, saved = store.save(None, path)
    tracemalloc.start()
    preview = store.preview(rid, saved, "bash")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 2_000_000, peak
    assert within_limits(preview) and preview.rstrip("]").endswith('"column": 30721}')
    assert "[exit code 1]" in preview and "(2 lines, 20000015 bytes)" in preview


async def test_read_result_past_the_end_and_unknown_ids(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    rid, _ = store.save("a\nb\n")
    ctx = ToolContext(workspace=tmp_path, cancel=CancelToken())
    out = await ReadResult(store).run(ReadResultParams(result_id=rid, offset=5), ctx)
    assert "no lines from 5 on (2 lines)" in out.content and out.details["no_spill"]
    with pytest.raises(ToolError, match="No saved result"):
        await ReadResult(store).run(ReadResultParams(result_id="r9"), ctx)
