"""``build_runtime``: the composition root - configuration, provider, session, the runtime, and
what hangs off it (jobs, the freezer, tool sources, MCP, checkpoints). ``owltui.session.runtime.runtime``
re-exports it (``from owltui.session.runtime.runtime import build_runtime, Options, Runtime``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from owltui.agent.agent import Agent
from owltui.agent.history import History, MemoryHistory
from owltui.agent.inbox import Inbox
from owltui.agent.model import Model
from owltui.agent.pause import GATE
from owltui.agent.requirement import RequirementSlot
from owltui.agent.services import Sandbox, SandboxRerun, Services
from owltui.agent.todo import TodoBoard
from owltui.session.approvals import ApprovalBroker
from owltui.session.checkpoints.rewind import STORE_NAME, Checkpointing
from owltui.session.config import Config, ConfigError, load_config
from owltui.session.redact import RedactingEmitter, RedactingResultStore, Redactor
from owltui.session.runtime.options import Options
from owltui.session.runtime.runtime import Runtime, Warn, context_window, resolve_model
from owltui.session.runtime.vision import ModelImages
from owltui.session.store.sessions import find_session, latest_session
from owltui.session.store.store import SessionStore

if TYPE_CHECKING:
    from owltui.session.runtime.sources import ToolSource
    from owltui.tools.mcp.source import McpSource


def _stderr_warn(text: str) -> None:
    print(f"owltui: warning: {text}", file=sys.stderr)


def _open_store(
    options: Options, env: Mapping[str, str], label: str, redactor: Redactor, warn: Warn
) -> SessionStore | None:
    from owltui.session.paths import sessions_dir, sessions_root

    workspace = options.workspace
    if options.no_session:
        if options.resume or options.continue_session:
            raise ConfigError("--no-session cannot be combined with --continue or --resume.")
        return None
    if options.resume:
        path = find_session(sessions_root(env), options.resume)
        return SessionStore.open(path, redactor, warn)
    if options.continue_session:
        latest = latest_session(sessions_dir(workspace, env))
        if latest is not None:
            return SessionStore.open(latest, redactor, warn)
        warn("no earlier session in this directory: starting a new one")
    return SessionStore.create(sessions_dir(workspace, env), workspace, label, redactor)


def _scrubbed(warn: Warn, redactor: Redactor) -> Warn:
    def scrubbed(text: str) -> None:
        warn(redactor.scrub(text))

    return scrubbed


def _rerun_asker(approvals: ApprovalBroker) -> SandboxRerun:
    """``ctx.services.sandbox_rerun``: ask the user (never the rules, never ``--yes``) whether a
    command the sandbox blocked may run once outside it. The request is a ``bash`` approval whose
    arguments also carry ``sandbox: "off"`` and the reason."""

    async def ask(call_id: str, command: str, reason: str) -> bool:
        from types import SimpleNamespace

        call = SimpleNamespace(
            id=call_id, name="bash", arguments={"command": command, "sandbox": "off", "reason": reason}
        )
        return await approvals.ask(call) in ("allow", "always")

    return ask


def build_runtime(
    options: Options,
    *,
    model: Model | None = None,
    env: Mapping[str, str] | None = None,
    warn: Warn | None = None,
    tools: list[Any] | None = None,
) -> Runtime:
    """Everything wired; raises ConfigError / ProviderConfigError / SessionError with one clear sentence.

    The composition root: configuration, provider, session, then the runtime itself, then what hangs
    off it (jobs, tool sources). ``model`` overrides provider resolution (tests pass a ScriptedModel);
    ``tools`` replaces the built-in sources (the built-in tools and ``task``).
    """
    from owltui.features.chat import chat_config
    from owltui.features.compaction import compact_for_loop
    from owltui.features.instructions import instructions_text
    from owltui.features.skills.catalog import catalog_text
    from owltui.features.skills.discovery import discover_skills, user_roots
    from owltui.policy.permissions.policy import PermissionPolicy
    from owltui.policy.sandbox.kernel import SandboxPolicy
    from owltui.session.paths import config_dir, data_dir
    from owltui.session.runtime.sources import StaticSource, builtin_source, collect_tools, task_source
    from owltui.tools.exec.freeze import Freezer
    from owltui.tools.jobs.manager import JobManager

    env = dict(os.environ if env is None else env)
    redactor = Redactor.from_env(env, [options.base_url])
    warn = _scrubbed(warn or _stderr_warn, redactor)
    overrides: dict[str, Any] = {
        "max_rounds": options.max_rounds,
        "permission_mode": options.permission_mode,
        "sandbox": options.sandbox,
        "context_window": options.context_window,
    }
    config = load_config(env, overrides)
    if options.yes and config.permission_mode not in ("read-only", "plan"):  # --yes never widens them
        config.permission_mode = "yolo"
    workspace = options.workspace.resolve()
    options.workspace = workspace
    if model is None:
        model, label = resolve_model(
            config, env, provider=options.provider, model=options.model, base_url=options.base_url
        )
    else:
        label = model.name
    key, url = getattr(model, "api_key", None), getattr(model, "base_url", None)
    redactor.add(key if isinstance(key, str) else None)  # the key in use, wherever it came from
    redactor.add_urls(config.base_url, url if isinstance(url, str) else None)
    store = _open_store(options, env, label, redactor, warn)
    history: History = store if store is not None else MemoryHistory()
    results = RedactingResultStore(
        redactor, store.path.with_suffix("") / "results" if store is not None else None
    )
    skill_dirs = user_roots(config_dir(env), env, config.hooks_from_claude)  # the model reads, never writes
    sandbox = SandboxPolicy(
        config.sandbox,
        workspace,
        writable=config.sandbox_writable,
        network=config.sandbox_network,
        unix_sockets=config.sandbox_unix_sockets,
        env_keep=config.env_keep,
        protected=[config_dir(env), data_dir(env), *skill_dirs],
    )
    for note in sandbox.startup_notes():
        warn(note)
    if sandbox.enforced:
        from owltui.tools.exec.spawn import SPAWNER

        SPAWNER.prestart()  # the fork server reads its code now, before the model has done anything

    emitter = RedactingEmitter(redactor)  # JSONL, RPC and the UI see scrubbed events
    approvals = ApprovalBroker(emitter)
    permissions = PermissionPolicy(
        workspace,
        config.permission_mode,
        approvals.ask if options.interactive else None,
        sandbox_enforced=lambda: sandbox.enforced,
        sandbox_off=not sandbox.active,
        config_dir=config_dir(env),
        writable_roots=sandbox.writable_roots if sandbox.active else None,  # file tools obey them too
        protected=skill_dirs,
        network=config.sandbox_network or not sandbox.active,  # off for commands: fetch is off too
    )
    todo = TodoBoard(emitter.emit)
    todo.restore(history.items())  # a resumed session's list, as its last todo call saved it
    from owltui.session.plans import PlanBroker

    if options.yes and permissions.mode == "plan":
        permissions.before_plan = "yolo"  # an accepted plan goes on as --yes would
    plans = PlanBroker(emitter, permissions, interactive=options.interactive, yes=options.yes)
    services = Services(
        emitter=emitter,
        plans=plans,
        sandbox=sandbox,
        sandbox_rerun=_rerun_asker(approvals) if options.interactive else None,
        redactor=redactor,
        permissions=permissions,
        read_filter=permissions.read_denied,
        todo=todo,
    )  # the job manager and the freezer join once the runtime they report to exists
    notes = instructions_text(workspace, config_dir(env))
    skills = discover_skills(workspace, config_dir(env), env, claude=config.hooks_from_claude)
    for notice in skills.notices:
        warn(notice)
    notes = "\n\n".join(part for part in (notes, catalog_text(skills, workspace)) if part)
    loop_config = chat_config(
        model,
        [],
        workspace=workspace,
        permission=permissions.check,
        results=results,
        services=services,
        max_rounds=config.max_rounds,
        steering=config.steering,
        project_notes=notes,
    )
    # automatic compaction near the window (owltui.agent.context), written by the compaction feature
    loop_config.context_window = context_window(config, model)
    loop_config.compactor = compact_for_loop
    loop_config.compaction_confirm = config.compaction_confirm
    loop_config.follow_up_mode = config.follow_up_mode
    loop_config.max_escalations = config.max_escalations
    agent = Agent(
        loop_config, history, inbox=Inbox(), emitter=emitter, gate=GATE, requirement=RequirementSlot()
    )
    if store is not None:
        if store.model != label and store.items():
            store.record_model(label)
        store.attach(agent.inbox)
    runtime = Runtime(
        agent=agent,
        config=config,
        options=options,
        model_label=label,
        store=store,
        approvals=approvals,
        permissions=permissions,
        env=env,
    )
    runtime.sandbox = sandbox
    runtime.plans = plans
    runtime.skills = skills
    runtime.jobs = JobManager(on_event=runtime.on_job, sandbox=sandbox, scrubber=redactor)
    runtime.freezer = Freezer(GATE, runtime.jobs, enabled=config.pause_freeze)
    agent.config.services = replace(
        services,
        jobs=runtime.jobs,
        freezer=runtime.freezer,
        images=ModelImages(lambda: runtime.agent.config.model),
    )
    runtime._unsubscribe.append(runtime.freezer.close)
    runtime.checkpoints = _checkpointing(agent, config, options, store, redactor, env, warn)
    if tools is None:
        builtin = builtin_source(edit_tool(config, model))  # once: /model keeps the list
        sources: list[ToolSource] = [
            builtin,
            task_source(lambda: runtime.agent.config.model, builtin.tools(), workspace),
        ]
        runtime.mcp = _mcp_source(config, options, env, warn, sandbox)
        if runtime.mcp is not None and options.interactive:  # else the [mcp] elicitation policy
            runtime.mcp.requests.ask_through(emitter.emit)
        if runtime.mcp is not None:
            from owltui.tools.mcp.catalog.index import catalog_of

            sources += [runtime.mcp, catalog_of(runtime.mcp)]  # resources and prompts beside tools
            agent.before_first_run = runtime.fix_tools  # MCP tools join before the first request
    else:
        sources = [StaticSource("given", tools)]
    runtime.add_sources(sources)
    agent.config.set_tools(collect_tools(runtime.sources))
    _user_hooks(runtime, config, env, warn)
    return runtime


def edit_tool(config: Config, model: Model) -> str:
    """The edit tool the session offers: config ``edit_tool``, else the catalog's choice for the
    starting model's family (``apply_patch`` for OpenAI's reasoning and coding models). A model's
    name is ``PROVIDER:ID`` as the status bar shows it (``openai:gpt-5``), or a bare id; the catalog
    is searched by the id, that provider's table first."""
    from owltui.providers.catalog import lookup
    from owltui.providers.table import NAMES

    if config.edit_tool is not None:
        return config.edit_tool
    prefix, colon, rest = model.name.partition(":")  # an id may hold colons too (qwen2.5-coder:7b)
    provider, model_id = (prefix, rest) if colon and prefix in NAMES else ("openai", model.name)
    return lookup(provider, model_id).edit_tool


def _user_hooks(runtime: Runtime, config: Config, env: Mapping[str, str], warn: Warn) -> None:
    """The user's hooks (config ``hooks``, Claude Code's settings with ``hooks_from_claude``) on the
    loop's hook points; project hooks wait for ``/hooks approve``. SessionStart runs before the
    first request. Nothing is imported when no hook could be configured."""
    from pathlib import Path

    home = Path(env.get("HOME") or Path.home())
    if (
        not config.hooks
        and not config.hooks_from_claude
        and not (runtime.workspace / ".owltui" / "hooks.toml").exists()  # hooks.config.PROJECT_FILE
    ):
        return
    from functools import partial

    from owltui.features.hooks.session import build_hooks
    from owltui.features.hooks.trust import APPROVALS_FILE
    from owltui.features.hooks.wiring import install_subagent
    from owltui.features.subagent import TaskTool
    from owltui.session.paths import config_file, data_dir
    from owltui.tools.mcp.approvals import McpApprovals

    agent = runtime.agent

    def session() -> tuple[str, str]:
        store = runtime.store
        return (runtime.session_id or "", str(store.path) if store is not None else "")

    hooks = build_hooks(
        agent.config,
        config.hooks,
        config_file(env),
        from_claude=config.hooks_from_claude,
        home=home,
        env=env,
        emitter=runtime.emitter,
        warn=warn,
        decisions=McpApprovals(data_dir(env) / APPROVALS_FILE),
        session=session,
        permission_mode=config.permission_mode,
        freezer=runtime.freezer,
        ask_for=runtime.permissions.must_ask.__setitem__ if runtime.permissions is not None else None,
    )
    if hooks is None:
        return
    if any(h.event == "Notification" for h in hooks.hooks):
        from owltui.features.hooks.session import notify_on_approvals

        runtime._unsubscribe.append(notify_on_approvals(hooks.runner, runtime.emitter, runtime.spawn))
    earlier = agent.before_first_run

    async def first_run() -> None:  # MCP's tools first, then SessionStart's context
        if earlier is not None:
            await earlier()
        await hooks.loop.session_start()

    agent.before_first_run = first_run
    runtime.on_close.append(hooks.loop.session_end)
    for tool in agent.config.all_tools().values():
        if isinstance(tool, TaskTool):  # subagents: the tool hooks and SubagentStop
            tool.configure = partial(install_subagent, runner=hooks.runner)


def _mcp_source(
    config: Config, options: Options, env: Mapping[str, str], warn: Warn, sandbox: Sandbox
) -> McpSource | None:
    """The session's MCP servers (``.mcp.json`` once approved, ``[mcp.servers.NAME]``,
    ``--mcp-config FILE``); None when nothing is configured. Nothing starts here. Servers a workspace
    file defines run under ``sandbox`` (with the network allowed)."""
    workspace = options.workspace
    if not config.mcp and options.mcp_config is None and not (workspace / ".mcp.json").is_file():
        return None  # the common case: the MCP package is not even imported
    from pydantic import ValidationError

    from owltui.tools.mcp.config import McpConfigError, McpSettings
    from owltui.tools.mcp.wiring import mcp_source

    try:
        settings = McpSettings.model_validate(config.mcp)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"[mcp] in the config file: {where}: {first['msg']}.") from None
    from owltui.session.paths import data_dir

    try:
        return mcp_source(workspace, settings, options.mcp_config, env, warn, data_dir(env), sandbox)
    except McpConfigError as exc:
        raise ConfigError(str(exc)) from None


def _checkpointing(
    agent: Agent,
    config: Config,
    options: Options,
    store: SessionStore | None,
    redactor: Redactor,
    env: Mapping[str, str],
    warn: Warn,
) -> Checkpointing | None:
    """Checkpoints before each user turn (config ``checkpoints``): kept in the session directory, or
    a temporary one with ``--no-session`` (none in print mode then: nothing could rewind them).
    Nothing runs git here: the store is made and warmed in a worker thread once the runtime starts."""
    if not config.checkpoints or (store is None and not options.interactive):
        return None
    directory = store.path.with_suffix("") / STORE_NAME if store is not None else None
    cps = Checkpointing(
        agent,
        options.workspace,
        directory,
        max_file_bytes=config.checkpoint_max_file_bytes,
        max_files=config.checkpoint_max_files,
        budget_mb=config.checkpoint_budget_mb,
        scrub=redactor.scrub,
        env=env,
        warn=warn,
    )
    agent.config.before_user_turn = cps.before_turn
    agent.config.permission = cps.guard(agent.config.permission)  # no tool before the snapshot
    return cps
