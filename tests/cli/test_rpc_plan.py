"""Plan mode through the real ``owltui`` process: RPC (``plan_proposed`` then ``plan_answer``: accept
switches the mode, a ``permission_mode`` event follows and the same run goes on with the write allowed;
refine keeps plan mode) and print mode (nobody can accept: the plan is the answer; ``--yes`` accepts)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import Proc, openai_args, run_cli

PLAN = "# Plan\n1. write out.txt"


@pytest.fixture
def rpc(fake: FakeOpenAI, env: dict[str, str], workspace: Path) -> Iterator[Proc]:
    proc = Proc(["--rpc", "--permission-mode", "plan", *openai_args(fake.url)], env, workspace)
    yield proc
    proc.kill()


def test_rpc_plan_accept_then_the_run_goes_on(rpc: Proc, fake: FakeOpenAI, workspace: Path) -> None:
    fake.add(
        Turn(calls=[("write", {"path": "out.txt", "content": "early\n"})]),
        Turn(calls=[("exit_plan", {"plan": PLAN})]),
        Turn(calls=[("write", {"path": "out.txt", "content": "done\n"})]),
        Turn(text="finished"),
    )
    assert rpc.call({"type": "get_state", "id": 1})["permission_mode"] == "plan"
    rpc.call({"type": "prompt", "text": "add out.txt", "id": 2})
    refused = rpc.expect(type="tool_end")
    assert refused["status"] == "refused" and "plan mode" in refused["output"]
    proposed = rpc.expect(type="plan_proposed")
    assert proposed["plan"] == PLAN
    assert rpc.call({"type": "get_state", "id": 3})["plans"] == [proposed["call_id"]]
    nobody = rpc.call({"type": "plan_answer", "call_id": "nope", "decision": "accept", "id": 4})
    assert nobody["ok"] is False and "no plan" in nobody["error"]
    answer = rpc.call(
        {
            "type": "plan_answer",
            "call_id": proposed["call_id"],
            "decision": "accept",
            "mode": "edits",
            "id": 5,
        }
    )
    assert answer["ok"] is True and answer["mode"] == "edits"
    changed = rpc.expect(type="permission_mode")
    assert (changed["mode"], changed["previous"]) == ("edits", "plan")
    accepted = rpc.expect(type="tool_end", name="exit_plan")
    assert "permission mode is now edits" in accepted["output"]
    wrote = rpc.expect(type="tool_end", name="write")
    assert wrote["status"] == "ok" and (workspace / "out.txt").read_text() == "done\n"
    rpc.expect(type="agent_end", reason="done")
    assert rpc.call({"type": "get_state", "id": 6})["permission_mode"] == "edits"
    assert rpc.call({"type": "set_permission_mode", "mode": "plan", "id": 7})["ok"] is True
    assert rpc.expect(type="permission_mode")["mode"] == "plan"


def test_rpc_plan_refine_stays_in_plan_mode(rpc: Proc, fake: FakeOpenAI) -> None:
    fake.add(Turn(calls=[("exit_plan", {"plan": PLAN})]), Turn(text="revising"))
    rpc.call({"type": "prompt", "text": "plan it", "id": 1})
    proposed = rpc.expect(type="plan_proposed")
    rpc.call(
        {
            "type": "plan_answer",
            "call_id": proposed["call_id"],
            "decision": "refine",
            "text": "smaller",
            "id": 2,
        }
    )
    end = rpc.expect(type="tool_end", name="exit_plan")
    assert "smaller" in end["output"] and "still in plan mode" in end["output"]
    rpc.expect(type="agent_end", reason="done")
    assert rpc.call({"type": "get_state", "id": 3})["permission_mode"] == "plan"


def test_print_mode_plan(fake: FakeOpenAI, env: dict[str, str], workspace: Path) -> None:
    fake.add(Turn(calls=[("exit_plan", {"plan": PLAN})]), Turn(text=PLAN))
    args = ["-p", "plan it", "--permission-mode", "plan", *openai_args(fake.url)]
    done = run_cli(args, env, workspace)
    assert done.returncode == 0 and "write out.txt" in done.stdout
    assert "Nobody can accept a plan" in str(fake.requests[1]["messages"])

    fake.add(
        Turn(calls=[("exit_plan", {"plan": PLAN})]),
        Turn(calls=[("write", {"path": "out.txt", "content": "yes\n"})]),
        Turn(text="done"),
    )
    done = run_cli([*args, "--yes"], env, workspace)
    assert done.returncode == 0, done.stderr
    assert (workspace / "out.txt").read_text() == "yes\n"
