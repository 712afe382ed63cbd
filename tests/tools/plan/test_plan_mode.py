"""Plan mode below the UI: the policy (reads run; write, edit, apply_patch, bash refused with the
plan-mode line, even with every rule allowing them), the plan broker (the mode before plan mode,
accept / refine / reject, the events, print mode with and without --yes) and the ``exit_plan`` tool."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from owltui.agent.cancel import CancelToken
from owltui.agent.events import Emitter, Event, ModeChanged, PlanProposed
from owltui.agent.messages import ToolCall
from owltui.agent.services import Services
from owltui.agent.tool import ToolContext, ToolError
from owltui.policy.permissions.model import MODES
from owltui.policy.permissions.policy import PermissionPolicy
from owltui.session.plans import PlanBroker
from owltui.tools.plan.exit_plan import ExitPlanParams, ExitPlanTool
from owltui.tools.registry import builtin_tools

pytestmark = pytest.mark.anyio


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(id="c1", name=name, arguments=arguments)


def policy(tmp_path: Path, mode: str = "plan") -> PermissionPolicy:
    async def yes(_call: ToolCall, _reason: str) -> str:
        return "allow"

    return PermissionPolicy(tmp_path, mode, yes, config_dir=tmp_path / "cfg")  # type: ignore[arg-type]


def test_plan_is_a_mode() -> None:
    assert "plan" in MODES


@pytest.mark.parametrize(
    "tool",
    [
        call("read", path="a.txt"),
        call("ls"),
        call("grep", pattern="x"),
        call("find", pattern="*"),
        call("read_result", result_id="r1"),
        call("exit_plan", plan="p"),
    ],
)
async def test_plan_mode_allows_reading(tmp_path: Path, tool: ToolCall) -> None:
    assert await policy(tmp_path).check(tool, False) is None  # by name, whatever the flag


@pytest.mark.parametrize(
    "tool",
    [
        call("write", path="a.txt", content="x"),
        call("edit", path="a.txt", old_text="a", new_text="b"),
        call("apply_patch", patch="*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch"),
        call("bash", command="ls"),
        call("bash", command="git status"),
    ],
)
async def test_plan_mode_refuses_changes_and_bash(tmp_path: Path, tool: ToolCall) -> None:
    (tmp_path / ".owltui").mkdir()
    (tmp_path / ".owltui" / "permissions.toml").write_text(
        '[allow]\nbash = ["*"]\nwrite = ["*"]\nedit = ["*"]\napply_patch = ["*"]\n'
    )
    refusal = await policy(tmp_path).check(tool, False)
    assert refusal is not None and "plan mode" in refusal and "exit_plan" in refusal
    assert await policy(tmp_path, "ask").check(tool, False) is None  # the rules allow it outside plan mode


def broker(tmp_path: Path, mode: str = "ask", **kw: bool) -> tuple[PlanBroker, list[Event]]:
    emitter = Emitter()
    seen: list[Event] = []
    emitter.subscribe(seen.append)
    return PlanBroker(emitter, policy(tmp_path, mode), **kw), seen


def test_set_mode_remembers_the_mode_before_plan(tmp_path: Path) -> None:
    plans, seen = broker(tmp_path, "edits")
    plans.set_mode("plan")
    assert plans.active and plans.before_plan == "edits"
    assert [(e.mode, e.previous) for e in seen if isinstance(e, ModeChanged)] == [("plan", "edits")]
    with pytest.raises(ValueError, match="unknown permission mode"):
        plans.set_mode("wild")


def test_the_mode_key_cycles(tmp_path: Path) -> None:
    plans, _ = broker(tmp_path, "ask")
    assert [plans.cycle() for _ in range(4)] == ["edits", "plan", "ask", "edits"]
    started_yolo, _ = broker(tmp_path, "yolo")
    assert [started_yolo.cycle() for _ in range(4)] == ["ask", "edits", "plan", "yolo"]


def asked(plans: PlanBroker) -> anyio.Event:
    """Set when a plan waits for its answer."""
    event = anyio.Event()
    plans.subscribe(lambda action, _p: event.set() if action == "asked" else None)
    return event


async def answered(plans: PlanBroker, decision: str, **kw: str) -> tuple[str, str, str]:
    out: list[tuple[str, str, str]] = []
    waiting = asked(plans)

    async def propose() -> None:
        a = await plans.propose("p1", "the plan")
        out.append((a.decision, a.mode, a.text))

    async with anyio.create_task_group() as tg:
        tg.start_soon(propose)
        with anyio.fail_after(5):
            await waiting.wait()
        assert plans.answer("p1", decision, **kw) is None
    return out[0]


async def test_accept_switches_to_the_mode_before_plan_or_the_one_chosen(tmp_path: Path) -> None:
    plans, seen = broker(tmp_path, "edits")
    plans.set_mode("plan")
    assert await answered(plans, "accept") == ("accept", "edits", "")
    assert plans.mode == "edits"
    assert [e.plan for e in seen if isinstance(e, PlanProposed)] == ["the plan"]
    plans.set_mode("plan")
    assert await answered(plans, "accept", mode="yolo") == ("accept", "yolo", "")
    assert plans.answer("p1", "accept") is not None  # nothing waits any more


async def test_refine_and_reject_stay_in_plan_mode(tmp_path: Path) -> None:
    plans, _ = broker(tmp_path, "plan")
    assert await answered(plans, "refine", text="smaller") == ("refine", "plan", "smaller")
    assert await answered(plans, "reject") == ("reject", "plan", "")
    assert plans.mode == "plan"


async def test_a_bad_answer_is_one_line_and_the_plan_still_waits(tmp_path: Path) -> None:
    plans, _ = broker(tmp_path, "plan")
    waiting = asked(plans)
    async with anyio.create_task_group() as tg:
        tg.start_soon(plans.propose, "p1", "x")
        with anyio.fail_after(5):
            await waiting.wait()
        assert "cannot accept into mode 'plan'" in (plans.answer("p1", "accept", mode="plan") or "")
        assert "unknown decision" in (plans.answer("p1", "maybe") or "")
        assert plans.get("p1") is not None
        tg.cancel_scope.cancel()
    assert plans.pending() == []  # a cancelled run withdraws it


async def test_print_mode_cannot_answer_unless_yes(tmp_path: Path) -> None:
    plans, _ = broker(tmp_path, "plan", interactive=False)
    assert (await plans.propose("p1", "x")).decision == "unanswerable"
    assert plans.mode == "plan"
    plans_yes, _ = broker(tmp_path, "plan", interactive=False, yes=True)
    answer = await plans_yes.propose("p1", "x")
    assert (answer.decision, answer.mode, plans_yes.mode) == ("accept", "yolo", "yolo")


async def test_exit_plan_tool(tmp_path: Path) -> None:
    assert "exit_plan" in [t.name for t in builtin_tools()]
    tool = ExitPlanTool()
    plans, _ = broker(tmp_path, "ask", interactive=False, yes=True)
    ctx = ToolContext(tmp_path, CancelToken(), call_id="p1", services=Services(plans=plans))
    with pytest.raises(ToolError, match="Not in plan mode"):
        await tool.run(ExitPlanParams(plan="x"), ctx)
    with pytest.raises(ToolError, match="Not in plan mode"):
        await tool.run(ExitPlanParams(plan="x"), ToolContext(tmp_path, CancelToken()))
    plans.set_mode("plan")
    out = await tool.run(ExitPlanParams(plan="x"), ctx)
    assert not out.is_error and "permission mode is now yolo" in out.content
