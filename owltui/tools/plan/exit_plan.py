"""The ``exit_plan`` tool: the model presents its plan (Markdown) and waits for the user's answer.

Always in the tool list (the list never changes between rounds, so the cached prefix holds); outside
plan mode it answers with a short error. In plan mode it asks ``ctx.services.plans`` (the session's
``PlanBroker``) and tells the model what the user chose: accepted (and the permission mode it now
runs in), refined (with the user's words), rejected, or that nobody can answer here.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from owltui.agent.services import PlanAnswer
from owltui.agent.tool import ToolContext, ToolError, ToolOutput
from owltui.tools.base import Params

MAX_PLAN = 100_000  # characters


class ExitPlanParams(Params):
    plan: str = Field(
        description="The plan, in Markdown: what you will change, where, and how you will check it.",
        min_length=1,
        max_length=MAX_PLAN,
    )


def result_text(answer: PlanAnswer) -> tuple[str, bool]:
    """What the model is told of the user's answer, and whether it is an error result."""
    if answer.decision == "accept":
        return (
            f"The user accepted the plan; permission mode is now {answer.mode}. Carry it out.",
            False,
        )
    if answer.decision == "refine":
        said = answer.text.strip() or "(no words given)"
        return (
            "The user wants the plan refined; you are still in plan mode (reading tools only). "
            f"The user says:\n{said}\nRevise the plan and present it again with exit_plan.",
            True,
        )
    if answer.decision == "unanswerable":
        return (
            "Nobody can accept a plan in this session (print mode without --yes); you stay in plan "
            "mode. End your turn now with the plan as your final answer.",
            True,
        )
    said = f" The user says: {answer.text.strip()}" if answer.text.strip() else ""
    return (
        "The user rejected the plan; you are still in plan mode (reading tools only). Do not carry "
        f"it out.{said} Stop here and wait for the user's next message.",
        True,
    )


class ExitPlanTool:
    name: ClassVar[str] = "exit_plan"
    description: ClassVar[str] = (
        "In plan mode (where write, edit and bash are refused), present your plan once you have looked "
        "around. The user accepts it (then you may change files), asks to refine it, or rejects it; "
        "the result says which."
    )
    params: ClassVar[type[ExitPlanParams]] = ExitPlanParams
    read_only: ClassVar[bool] = True  # it changes nothing itself: the user's answer does

    async def run(self, args: ExitPlanParams, ctx: ToolContext) -> ToolOutput:
        plans = ctx.services.plans
        if plans is None or not plans.active:
            raise ToolError("Not in plan mode: there is no plan to present; go on with the task.")
        answer = await plans.propose(ctx.call_id, args.plan)
        text, is_error = result_text(answer)
        return ToolOutput(text, is_error=is_error, details={"decision": answer.decision, "mode": answer.mode})
