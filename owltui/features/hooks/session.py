"""``HookSession``: one session's configured hooks, their trust and the loop they are installed on;
``/hooks`` reads it (``attach``/``attached`` find it from the loop configuration)."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from owltui.agent.config import LoopConfig
from owltui.agent.context import CompactRequest
from owltui.agent.events import ApprovalRequest, Emitter, Event
from owltui.agent.services import CommandFreezer
from owltui.features.hooks.config import ConfiguredHook, load_hooks
from owltui.features.hooks.engine import HookRunner
from owltui.features.hooks.trust import Decisions, ProjectTrust
from owltui.features.hooks.wiring import LoopHooks, install


@dataclass
class HookSession:
    hooks: list[ConfiguredHook]
    trust: ProjectTrust
    runner: HookRunner
    loop: LoopHooks

    def listing(self) -> str:
        """``/hooks``: every configured hook (file, event, matcher, command) and whether it runs."""
        if not self.hooks:
            return (
                "no hooks configured (see docs/hooks.md: [[hooks.EVENT]] in config.toml, hooks_from_claude)"
            )
        lines: list[str] = []
        by_file: dict[Path, list[ConfiguredHook]] = {}
        for h in self.hooks:
            by_file.setdefault(h.source.path, []).append(h)
        for path, hooks in by_file.items():
            src = hooks[0].source
            names = "Claude Code names" if src.dialect == "claude" else "OwlTUI names"
            state = ""
            if src.project:
                state = ", approved" if self.trust.approved else ", NOT approved: not run (/hooks approve)"
            lines.append(f"{path} ({'project' if src.project else 'user'}, {names}{state})")
            for h in hooks:
                matcher = f" [{h.matcher}]" if h.matcher else ""
                lines.append(f"  {h.event}{matcher}: {h.command} (timeout {h.timeout:g} s)")
        return "\n".join(lines)

    def decide(self, approved: bool) -> str:
        return self.trust.decide(approved)


_SESSIONS: dict[int, tuple[weakref.ref[LoopConfig], HookSession]] = {}


def attach(cfg: LoopConfig, session: HookSession) -> None:
    key = id(cfg)
    _SESSIONS[key] = (weakref.ref(cfg, lambda _r: _SESSIONS.pop(key, None)), session)


def attached(cfg: LoopConfig) -> HookSession | None:
    found = _SESSIONS.get(id(cfg))
    return found[1] if found is not None and found[0]() is cfg else None


def start_session(
    cfg: LoopConfig,
    hooks: list[ConfiguredHook],
    trust: ProjectTrust,
    runner: HookRunner,
    warn: Callable[[str], None],
) -> HookSession:
    """Install the hooks on ``cfg`` and say once when project hooks wait for an approval."""
    runner.trusted = trust.trusted
    session = HookSession(hooks, trust, runner, install(cfg, runner))
    attach(cfg, session)
    if trust.pending():
        warn(trust.notice())
    return session


def build_hooks(
    cfg: LoopConfig,
    table: Mapping[str, Any],
    config_path: Path,
    *,
    from_claude: bool,
    home: Path,
    env: Mapping[str, str],
    emitter: Emitter,
    warn: Callable[[str], None],
    decisions: Decisions | None,
    session: Callable[[], tuple[str, str]],
    permission_mode: str,
    freezer: CommandFreezer | None = None,
    ask_for: Callable[[str, str], None] | None = None,
) -> HookSession | None:
    """Read, check and install the session's hooks on ``cfg``; None (nothing installed) when none is
    configured. A malformed table or file is one warning and counts as no hooks."""
    workspace = cfg.workspace
    hooks = load_hooks(table, config_path, from_claude=from_claude, workspace=workspace, home=home, warn=warn)
    if not hooks:
        return None
    trust = ProjectTrust(hooks, workspace, decisions)
    runner = HookRunner(
        hooks, workspace, emitter, env=env, session=session, permission_mode=permission_mode, freezer=freezer
    )
    runner.ask_for = ask_for
    started = start_session(cfg, hooks, trust, runner, warn)
    _before_compaction(cfg, runner)
    return started


def _before_compaction(cfg: LoopConfig, runner: HookRunner) -> None:
    """``PreCompact`` (trigger ``auto``) before the loop's automatic compaction; it cannot stop it."""
    inner = cfg.compactor
    if inner is None or not any(h.event == "PreCompact" for h in runner.hooks):
        return

    async def compactor(request: CompactRequest) -> object:
        await runner.fire("PreCompact", lambda _d: {"trigger": "auto", "custom_instructions": ""})
        return await inner(request)

    cfg.compactor = compactor


def notify_on_approvals(
    runner: HookRunner, emitter: Emitter, spawn: Callable[[Callable[[], Any], str], bool]
) -> Callable[[], None]:
    """``Notification`` while an approval waits for the user (run in the background: the question
    is already shown). Returns the unsubscribe function."""

    def heard(event: Event) -> None:
        if not isinstance(event, ApprovalRequest):
            return
        message = f"OwlTUI needs your permission to use {event.name}"

        async def fire() -> None:
            payload = {"message": message, "notification_type": "permission_prompt"}
            await runner.fire("Notification", lambda _d: payload)

        spawn(fire, "Notification hook")

    return emitter.subscribe(heard, deltas=False)
