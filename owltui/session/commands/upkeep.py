"""Slow work on the session and the project: ``/compact`` (summarise the conversation to free
context) and ``/init`` (write or update AGENTS.md from a look at the repository). Each answers at
once; the rest comes later (the reply's ``then``, or work the host runs in the background)."""

from __future__ import annotations

from owltui.agent.cancel import CancelToken
from owltui.session.commands.background import background
from owltui.session.commands.spec import Args, CommandError, Context, Reply
from owltui.session.describe import COMPACTING


def compact(ctx: Context, _a: Args) -> Reply:
    if ctx.host.agent.running:
        raise CommandError(
            f"a run is going: wait or abort ({ctx.front.abort_key}) before /compact", "warning"
        )
    work = ctx.host.compact()

    async def finish() -> Reply:
        try:
            result = await work
        except Exception as exc:
            return Reply(f"compaction failed: {exc}", "error", ok=False)
        # the compaction's own notice says it, in the words the automatic one uses: not said twice
        return Reply("", "success", data={"result": result})

    return Reply(f"compacting: {COMPACTING}", then=finish())


def init(ctx: Context, _a: Args) -> Reply:
    """``/init``: write or update AGENTS.md (``owltui.features.init``) on the current model."""
    from owltui.features.init import TARGET, run_init
    from owltui.session.input.shell import deliver_context

    host = ctx.host
    if host.agent.running:
        raise CommandError(f"a run is going: wait or abort ({ctx.front.abort_key}) before /init", "warning")
    work_on = background(host)
    if work_on.busy("init"):
        raise CommandError("/init is already running", "warning")
    cfg = host.agent.config
    tools = list(cfg.all_tools().values())
    if "write" not in {t.name for t in tools}:
        raise CommandError("/init needs the write tool, which this agent does not have")

    async def work(token: CancelToken) -> Reply:
        done = await run_init(
            cfg.model,
            tools,
            cfg.workspace,
            permission=cfg.permission,
            services=cfg.services,
            emitter=host.emitter,
            gate=host.gate,
            cancel=token,
        )
        if done.written:  # the system prompt keeps the session's first version: say so
            deliver_context(
                host.agent,
                f"{done.summary()}. The system prompt still holds the project "
                f"instructions from the start of this session; read {TARGET} for the new "
                "ones.",
                "init",
            )
        return Reply(done.summary(), "success" if done.written else "warning", ok=done.written)

    then = work_on.start("init", work)
    return Reply(
        f"/init: looking at the repository to write {TARGET} (the write is approved like any other)",
        then=then,
    )
