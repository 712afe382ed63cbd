"""A command that prints a lot, through the real output sink: the file it spills is the output, the
loop's preview of it is the text a pass over every line gives at the cost of its head and tail, and
its follower is woken at a bounded rate, not once per read."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from owltui.agent import results
from owltui.agent.results import ResultStore
from owltui.tools.exec.bash import BashParams, BashTool
from owltui.tools.exec.proc import PROGRESS_GAP
from tests.agent.test_results_preview import calls_during, reference_preview
from tests.tools.conftest import MakeCtx

pytestmark = pytest.mark.anyio


async def test_a_spilled_output_is_previewed_from_its_ends(make_ctx: MakeCtx, tmp_path: Path) -> None:
    out = await BashTool().run(BashParams(command="seq 1 300000; printf 'x%.0s' $(seq 3000)"), make_ctx())
    assert out.full_output is not None
    expected = "".join(f"{i}\n" for i in range(1, 300_001)) + "x" * 3000
    assert out.full_output.read_text() == expected
    store = ResultStore(tmp_path / "results")
    rid, path = store.save(out.content, out.full_output)
    small = tmp_path / "small.txt"
    small.write_text("".join(f"{i}\n" for i in range(1, 20_001)) + "x" * 3000)
    preview = store.preview(rid, path, "bash")
    assert preview == reference_preview(rid, path, "bash")
    assert "(300001 lines," in preview and preview.endswith(
        f'{{"result_id": "{rid}", "offset": 1001, "limit": 2000}}]'
    )
    few = calls_during(lambda: store.preview("r9", small, "bash"))
    many = calls_during(lambda: store.preview(rid, path, "bash"))
    assert many < few + 1_000, (few, many)


async def test_a_streaming_command_wakes_its_follower_at_a_bounded_rate(make_ctx: MakeCtx) -> None:
    wakes: list[int] = []
    ctx = make_ctx(progress=lambda text: wakes.append(len(text)))
    started = time.monotonic()
    out = await BashTool().run(BashParams(command="yes | head -c 30000000"), ctx)
    took = time.monotonic() - started
    assert out.details["exit_code"] == 0 and out.details["chars"] == 30_000_000
    assert len(wakes) <= took / PROGRESS_GAP + 3, (len(wakes), took)  # one per 64 KiB read would be 450
    if out.full_output is not None:
        out.full_output.unlink()


@pytest.mark.parametrize(
    "command",
    [
        "seq 1 300000",  # ends with a newline
        "seq 1 300000; printf 'no newline'",  # an unfinished last line
        "seq 1 300000; exit 3",  # the exit code noted at the end of the file
        "seq 1 300000; printf 'abc'; exit 4",  # a note after an unfinished line
        "yes 'a much longer line of output' | head -c 12000000",
    ],
)
async def test_the_sink_counts_the_saved_files_lines_so_the_preview_never_reads_it_whole(
    command: str, make_ctx: MakeCtx, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = await BashTool().run(BashParams(command=command), make_ctx())
    assert out.full_output is not None and out.full_output_lines is not None
    data = out.full_output.read_bytes()
    assert out.full_output_lines == data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    store = ResultStore(tmp_path / "results")
    rid, path = store.save(out.content, out.full_output)
    expected = reference_preview(rid, path, "bash")

    def no_counting(*_: object) -> int:
        raise AssertionError("the preview read the whole file to count its lines")

    monkeypatch.setattr(results, "_count_lines", no_counting)
    assert store.preview(rid, path, "bash", lines=out.full_output_lines) == expected
