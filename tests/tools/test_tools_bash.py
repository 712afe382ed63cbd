import os
import re
import sys
import time
from dataclasses import replace
from pathlib import Path

import anyio
import pytest

from owltui.agent.tool import ToolError
from owltui.tools.exec.bash import BashParams, BashTool
from owltui.tools.exec.proc import Proc
from owltui.tools.exec.signals import group_alive
from owltui.tools.jobs.manager import JobManager
from owltui.tools.jobs.tools import JobKillParams, JobKillTool, JobOutputParams, JobOutputTool
from tests.tools.conftest import Events, MakeCtx, group_members, wait_gone

pytestmark = pytest.mark.anyio


def real(path: Path) -> str:
    return os.path.realpath(path)


async def bash(ctx_factory: MakeCtx, command: str, **kw: object) -> tuple[str, bool]:
    out = await BashTool().run(BashParams(command=command, **kw), ctx_factory())  # type: ignore[arg-type]
    return out.content, out.is_error


async def test_runs_in_workspace_and_merges_stderr(ws: Path, make_ctx: MakeCtx) -> None:
    content, is_error = await bash(make_ctx, "pwd -P; echo err >&2")
    assert not is_error
    assert content == f"{real(ws)}\nerr\n"


async def test_nonzero_exit_is_an_error_with_output_and_code(make_ctx: MakeCtx) -> None:
    content, is_error = await bash(make_ctx, "echo boom; exit 7")
    assert is_error
    assert "boom" in content and "[exit code 7]" in content


async def test_output_streams_to_progress_and_is_sanitized(ws: Path, make_ctx: MakeCtx) -> None:
    seen: list[str] = []
    ctx = make_ctx(progress=seen.append)
    out = await BashTool().run(
        BashParams(command=r"printf 'a\033]0;title\007b\033[2J\n'; printf '10%%\r100%%\n'"), ctx
    )
    assert out.content == "ab\n100%\n"
    assert "".join(seen) == "ab\n100%\n"


async def test_cancel_kills_the_whole_group_quickly(make_ctx: MakeCtx) -> None:
    pid_seen = anyio.Event()
    pids: list[int] = []

    def progress(text: str) -> None:
        if not pids and text.strip():
            pids.append(int(text.split()[0]))
            pid_seen.set()

    ctx = make_ctx(progress=progress)
    async with anyio.create_task_group() as tg:
        tg.start_soon(BashTool().run, BashParams(command="echo $$; sleep 60 & sleep 60"), ctx)
        with anyio.fail_after(5):
            await pid_seen.wait()
        pgid = pids[0]
        deadline = time.monotonic() + 5
        while len(group_members(pgid)) < 3:  # the shell and both sleeps
            assert time.monotonic() < deadline
            await anyio.sleep(0.01)
        members = group_members(pgid)
        started = time.monotonic()
        tg.cancel_scope.cancel()
    assert wait_gone(pgid, 1.0) + (time.monotonic() - started) < 1.0
    assert not any(pid in group_members(pgid) for pid in members)


async def test_cancel_token_kills_group_and_returns_result(make_ctx: MakeCtx) -> None:
    pids: list[int] = []
    ready = anyio.Event()

    def progress(text: str) -> None:
        pids.append(int(text.split()[0]))
        ready.set()

    ctx = make_ctx(progress=progress)
    result = []

    async def run() -> None:
        result.append(await BashTool().run(BashParams(command="echo $$; sleep 60 & sleep 60"), ctx))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        with anyio.fail_after(5):
            await ready.wait()
        ctx.cancel.cancel("aborted")
    wait_gone(pids[0], 1.0)
    assert result[0].is_error and result[0].details["cancelled"]


async def test_command_outliving_its_cap_becomes_a_job(
    make_ctx: MakeCtx, jobs: JobManager, events: Events
) -> None:
    gate = Path(make_ctx().workspace) / "gate"
    out = await BashTool().run(
        BashParams(
            command=f"echo started; while [ ! -e {gate} ]; do sleep 0.05; done; echo finished; exit 3",
            timeout=0.3,
        ),
        make_ctx(jobs),
    )
    assert not out.is_error and out.details["background"]
    assert "still running" in out.content and "background job 1" in out.content
    assert "started" in out.content and "You will be told when it ends" in out.content
    assert [(e.kind, e.job_id) for e in events.items] == [("started", "1")]
    assert [(j.id, j.running) for j in jobs.jobs()] == [("1", True)]
    gate.touch()
    with anyio.fail_after(10):
        await events.finished.wait()
    done = events.items[-1]
    assert (done.kind, done.job_id, done.exit_code) == ("finished", "1", 3)
    assert done.tail == "started\nfinished"
    assert "exit code 3" in done.aside_text() and "finished" in done.aside_text()
    assert done.to_event().wire() == {
        "type": "job_finished",
        "job_id": "1",
        "command": done.command,
        "exit_code": 3,
    }
    assert events.items[0].to_event().wire() == {
        "type": "job_started",
        "job_id": "1",
        "command": done.command,
    }
    assert [(j.id, j.running, j.exit_code) for j in jobs.jobs()] == [("1", False, 3)]


async def test_without_job_manager_the_cap_kills(make_ctx: MakeCtx) -> None:
    content, is_error = await bash(make_ctx, "echo $$; sleep 60", timeout=0.2)
    assert is_error and "did not finish within 0.2 s" in content
    assert not group_alive(int(content.splitlines()[1]))


async def test_large_output_spills_to_a_file(make_ctx: MakeCtx) -> None:
    out = await BashTool().run(BashParams(command="seq 1 300000"), make_ctx())
    assert out.full_output is not None
    assert out.full_output.read_text() == "".join(f"{i}\n" for i in range(1, 300001))
    assert len(out.content.encode()) < 50 * 1024
    assert out.content.startswith("1\n2\n3\n") and out.content.rstrip().endswith("299999\n300000")
    assert "output is 300000 lines" in out.content
    out.full_output.unlink()


async def test_job_output_waits_for_the_end(make_ctx: MakeCtx, jobs: JobManager) -> None:
    await BashTool().run(BashParams(command="sleep 0.5; echo done", timeout=0.1), make_ctx(jobs))
    out = await JobOutputTool().run(JobOutputParams(job_id="1", wait=10), make_ctx(jobs))
    assert not out.is_error
    assert "Job 1 finished with exit code 0" in out.content and "done" in out.content


async def test_job_output_still_running_is_not_an_error(make_ctx: MakeCtx, jobs: JobManager) -> None:
    await BashTool().run(BashParams(command="echo hello; sleep 60", timeout=0.2), make_ctx(jobs))
    started = time.monotonic()
    out = await JobOutputTool().run(JobOutputParams(job_id=1, wait=0.3), make_ctx(jobs))  # type: ignore[arg-type]
    assert 0.25 < time.monotonic() - started < 5
    assert not out.is_error and out.details["running"]
    assert "still running" in out.content and "hello" in out.content


async def test_job_output_unknown_job(make_ctx: MakeCtx, jobs: JobManager) -> None:
    with pytest.raises(ToolError, match="no job '9'"):
        await JobOutputTool().run(JobOutputParams(job_id="9", wait=0), make_ctx(jobs))


async def test_job_kill(make_ctx: MakeCtx, jobs: JobManager, events: Events) -> None:
    await BashTool().run(BashParams(command="sleep 60 & sleep 60", timeout=0.1), make_ctx(jobs))
    pgid = jobs.get("1").proc.pgid  # type: ignore[union-attr]
    out = await JobKillTool().run(JobKillParams(job_id="1"), make_ctx(jobs))
    assert "Killed job 1 (exit code 143)" in out.content
    wait_gone(pgid, 1.0)
    with anyio.fail_after(5):
        await events.finished.wait()
    assert events.items[-1].exit_code == 143
    again = await JobKillTool().run(JobKillParams(job_id="1"), make_ctx(jobs))
    assert "already finished" in again.content


async def test_shutdown_kills_every_job(ws: Path, tmp_path: Path) -> None:
    manager = JobManager(spill_dir=tmp_path / "spill")
    a = await manager.start("sleep 60 & sleep 60", ws)
    b = await manager.start("trap '' TERM; sleep 60", ws)  # ignores TERM: needs KILL
    assert manager.running
    await manager.shutdown()
    wait_gone(a.proc.pgid, 0.5)
    wait_gone(b.proc.pgid, 0.5)
    assert not manager.running


def test_kill_all_sync(ws: Path, tmp_path: Path) -> None:
    manager = JobManager(spill_dir=tmp_path / "spill")
    job = anyio.run(manager.start, "sleep 60 & sleep 60", ws)
    manager.kill_all()
    wait_gone(job.proc.pgid, 1.0)


async def test_proc_reports_signal_exit(ws: Path, tmp_path: Path) -> None:
    proc = Proc("kill -9 $$", ws, tmp_path)
    assert await proc.wait(5)
    assert proc.exit_code == 137


TQDM = r"""
import sys, time
for i in range(1, 401):
    sys.stdout.write("\r%5d/400 |%-20s| %3d%% [00:0%d<00:00, 123.45it/s]" % (i, "#" * (i // 20), i // 4, i % 10))
    sys.stdout.flush()
    if i % 50 == 0:
        time.sleep(0.01)
sys.stdout.write("\ndone\n")
"""


@pytest.mark.parametrize("scrubbed", [False, True])
async def test_progress_bar_frames_reduce_to_the_last_frame_at_any_size(
    make_ctx: MakeCtx, ws: Path, scrubbed: bool
) -> None:
    """tqdm's 400 frames on one line (over 8 KB without a newline, flushed frame by frame) show as
    the last frame only, streamed and in the result (issue 12 item 4)."""
    from owltui.session.redact import Redactor

    (ws / "bar.py").write_text(TQDM)
    seen: list[str] = []
    ctx = make_ctx(progress=seen.append)
    if scrubbed:
        ctx.services = replace(ctx.services, redactor=Redactor(["not-a-secret-but-long-enough-1234"]))
    out = await BashTool().run(BashParams(command=f"{sys.executable} bar.py"), ctx)
    last = "  400/400 |####################| 100% [00:00<00:00, 123.45it/s]"
    assert out.content == f"{last}\ndone\n"
    assert "".join(seen) == f"{last}\ndone\n"


async def test_exit_code_survives_a_spill(make_ctx: MakeCtx, tmp_path: Path) -> None:
    """``seq 1 100000; exit 3``: the output spills to a file and the loop shows that file's head and
    tail in place of the result's text; the exit code is at its end (issue 12 item 2)."""
    from owltui.agent.results import ResultStore

    out = await BashTool().run(BashParams(command="seq 1 100000; exit 3"), make_ctx())
    assert out.is_error and out.full_output is not None and out.details["exit_code"] == 3
    assert out.details["status"] == "exit code 3"  # the loop shows it after the preview
    assert out.content.rstrip().endswith("[exit code 3]")
    text = out.full_output.read_text()
    assert text.startswith("1\n2\n") and text.endswith("99999\n100000\n\n[exit code 3]\n")
    store = ResultStore(tmp_path / "results")
    rid, path = store.save(out.content, out.full_output)
    preview = store.preview(rid, path, "bash")
    assert re.search(r"\n100000\n+\[exit code 3\]\n", preview), preview[-300:]


async def test_killed_at_the_cap_is_said_when_output_spills(make_ctx: MakeCtx) -> None:
    out = await BashTool().run(BashParams(command="seq 1 100000; sleep 60", timeout=1), make_ctx())
    assert out.is_error and out.full_output is not None
    tail = out.full_output.read_text()[-200:]
    assert "[killed after 1 s: the command did not finish within its time cap]" in tail
    assert "[exit code 143]" in tail
    assert out.content.startswith("The command did not finish within 1 s and was killed.")
    assert out.details["status"] == "killed after 1 s, exit code 143"
    out.full_output.unlink()


async def test_a_finished_jobs_spilled_output_keeps_its_status(
    make_ctx: MakeCtx, jobs: JobManager, ws: Path
) -> None:
    gate = ws / "gate"
    started = await BashTool().run(
        BashParams(command=f"while [ ! -e {gate} ]; do sleep 0.02; done; seq 1 100000; exit 4", timeout=0.2),
        make_ctx(jobs),
    )
    assert started.details["background"]
    gate.touch()
    out = await JobOutputTool().run(
        JobOutputParams(job_id=started.details["job_id"], wait=10), make_ctx(jobs)
    )
    assert out.full_output is not None and out.details["status"] == "job 1 finished, exit code 4"
    assert started.details["status"] == "still running as job 1"
    assert out.full_output.read_text().endswith(
        "100000\n\n[Job 1 finished with exit code 4: "
        f"while [ ! -e {gate} ]; do sleep 0.02; done; seq 1 100000; exit 4]\n"
    )
    out.full_output.unlink()
