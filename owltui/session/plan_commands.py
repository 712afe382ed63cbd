"""Plan mode's commands: ``/plan [TEXT]`` (enter plan mode, and send TEXT), ``plan_answer`` (accept,
refine or reject the plan the model presented; the TUI's plan screen, plain mode's ``/plan-answer``,
RPC) and the mode switch every front end shares (``set_mode``, ``/mode`` and the TUI's mode key)."""

from __future__ import annotations

from owltui.session.commands.messages import prompt
from owltui.session.commands.spec import Arg, Args, Command, CommandError, Context, Reply, Unavailable
from owltui.session.plans import PlanBroker

ACCEPT_MODES = ("ask", "edits", "yolo", "read-only")  # what an accepted plan may switch to
DECISIONS = ("accept", "refine", "reject")


def _plans(ctx: Context) -> PlanBroker:
    plans = ctx.host.plans
    if plans is None:
        raise Unavailable("this session has no permission policy, so no plan mode")
    return plans


def set_mode(ctx: Context, mode: str) -> Reply:
    """Switch the permission mode through the session's plan broker (it remembers the mode before plan
    mode and announces the change), else straight on the policy."""
    plans = ctx.host.plans
    if plans is not None:
        plans.set_mode(mode)
    elif ctx.host.permissions is not None:
        ctx.host.permissions.mode = mode
    else:
        raise Unavailable("this session has no permission policy to set a mode on")
    return Reply(f"permission mode: {mode}", data={"mode": mode})


def plan(ctx: Context, a: Args) -> Reply:
    """``/plan [TEXT]``: plan mode from the next tool call on; TEXT is sent as the prompt."""
    plans = _plans(ctx)
    plans.set_mode("plan")
    text = a.get("text")
    words = f"plan mode: reading tools only until you accept a plan (it was {plans.before_plan})"
    if not text:
        return Reply(words, data={"mode": "plan"})
    agent = ctx.host.agent
    sent = prompt(ctx, {"text": text, "as": "steer" if agent.running else None})
    return Reply(f"{words}\n{sent.text}".rstrip(), sent.kind, data={"mode": "plan", **sent.data})


def plan_answer(ctx: Context, a: Args) -> Reply:
    """Answer the plan ``call_id`` (``/plan-answer``: the oldest waiting plan when no id is given)."""
    plans = _plans(ctx)
    call_id = a.get("call_id") or ""
    if not call_id:
        oldest = plans.oldest()
        if oldest is None:
            raise CommandError("no plan is waiting for an answer", "warning")
        call_id = oldest.call_id
    why = plans.answer(call_id, a["decision"], a.get("mode") or None, a.get("text") or "")
    if why is not None:
        raise CommandError(why, "warning")
    decision = a["decision"]
    if decision == "accept":
        return Reply(
            f"plan accepted: permission mode {plans.mode}",
            "success",
            data={"call_id": call_id, "mode": plans.mode},
        )
    return Reply(
        f"plan {'to refine' if decision == 'refine' else 'rejected'}: still in plan mode",
        data={"call_id": call_id, "mode": plans.mode},
    )


def plan_answer_line(ctx: Context, a: Args) -> Reply:
    """``/plan-answer accept [MODE]``, ``/plan-answer refine TEXT``, ``/plan-answer reject [TEXT]``:
    the oldest waiting plan."""
    rest = (a.get("rest") or "").strip()
    if a["decision"] == "accept":
        if rest and rest not in ACCEPT_MODES:
            raise CommandError(f"accept into which mode? one of {', '.join(ACCEPT_MODES)}")
        return plan_answer(ctx, {"decision": "accept", "mode": rest})
    return plan_answer(ctx, {"decision": a["decision"], "text": rest})


PLAN_COMMANDS: tuple[Command, ...] = (
    Command(
        "enter plan mode (reading tools only until you accept a plan); TEXT: and send it",
        plan,
        slash="plan",
        args=(Arg("text", required=False, metavar="TEXT"),),
    ),
    Command(
        "answer the waiting plan: accept [MODE], refine TEXT or reject [TEXT]",
        plan_answer_line,
        slash="plan-answer",
        args=(Arg("decision", choices=DECISIONS), Arg("rest", "str", required=False, metavar="MODE|TEXT")),
    ),
    Command(
        "answer a plan",
        plan_answer,
        rpc="plan_answer",
        args=(
            Arg("call_id"),
            Arg("decision", choices=DECISIONS),
            Arg("mode", required=False, choices=ACCEPT_MODES),
            Arg("text", "str", required=False),
        ),
        doc="Answer a `plan_proposed` event. `accept` switches to `mode` (default: the mode before "
        "plan mode) and the run goes on; `refine` (`text`: how to change it) and `reject` stay in "
        "plan mode, `text` going back to the model. Response data `{call_id, mode}`; `ok: false` if "
        "no such plan is waiting.",
    ),
)
