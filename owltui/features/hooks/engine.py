"""``HookRunner``: runs the hooks configured for an event, announces each run (``hook_start`` /
``hook_end``) and hands back their outcomes.

Matching hooks of one event run together (as in Claude Code); an identical command configured twice
for the same event runs once. Hooks a project defines run only while ``trusted`` says so (the
user's approval of exactly their content, ``trust.py``). The stdin JSON carries the common fields
(``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``, ``permission_mode``) and the
event's own; a hook from a Claude Code settings file sees Claude Code's tool names and fields.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from owltui.agent.events import Emitter, HookEnd, HookStart
from owltui.agent.services import CommandFreezer
from owltui.features.hooks.config import ConfiguredHook, Dialect
from owltui.features.hooks.outcome import Outcome, read_outcome
from owltui.features.hooks.runner import run_command

Payload = Callable[[Dialect], dict[str, Any]]  # the event's own fields, as a hook of that dialect sees them
Subject = Callable[[Dialect], str | None]  # what the matcher is matched against (a tool name), per dialect
Judge = Callable[[ConfiguredHook, Outcome], None]  # may amend an outcome before its hook_end is told


@dataclass
class Ran:
    hook: ConfiguredHook
    outcome: Outcome


@dataclass
class HookRunner:
    hooks: Sequence[ConfiguredHook]
    workspace: Path
    emitter: Emitter | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    session: Callable[[], tuple[str, str]] = lambda: ("", "")  # (session id, transcript path)
    permission_mode: str = "default"
    trusted: Callable[[ConfiguredHook], bool] = lambda hook: not hook.source.project
    freezer: CommandFreezer | None = None  # a pause freezes running hooks with the tool commands
    # (call id, why): the permission check asks about that call even where its rules allow it
    ask_for: Callable[[str, str], None] | None = None

    def configured(self, event: str) -> bool:
        return any(h.event == event and self.trusted(h) for h in self.hooks)

    def _selected(self, event: str, subject: Subject | None) -> list[ConfiguredHook]:
        seen: set[str] = set()
        chosen: list[ConfiguredHook] = []
        for hook in self.hooks:
            if hook.event != event or not self.trusted(hook) or hook.command in seen:
                continue
            if hook.matcher and subject is not None and not hook.matches(subject(hook.source.dialect)):
                continue
            seen.add(hook.command)
            chosen.append(hook)
        return chosen

    def _payload(self, event: str, hook: ConfiguredHook, payload: Payload) -> dict[str, Any]:
        sid, transcript = self.session()
        common: dict[str, Any] = {
            "session_id": sid,
            "transcript_path": transcript,
            "cwd": str(self.workspace),
            "hook_event_name": event,
            "permission_mode": self.permission_mode,
        }
        return common | payload(hook.source.dialect)

    def _emit(self, event: HookStart | HookEnd, agent: str | None) -> None:
        if self.emitter is not None:
            event.agent = agent
            self.emitter.emit(event)

    async def _one(
        self, event: str, hook: ConfiguredHook, payload: Payload, agent: str | None, judge: Judge | None
    ) -> Ran:
        matcher = hook.matcher or None
        self._emit(HookStart(hook_event=event, matcher=matcher, command=hook.command), agent)
        done = await run_command(
            hook.command,
            self._payload(event, hook, payload),
            workspace=self.workspace,
            env=self.env,
            limit_s=hook.timeout,
            freezer=self.freezer,
        )
        outcome = read_outcome(event, done)
        if judge is not None:
            judge(hook, outcome)
        self._emit(
            HookEnd(
                hook_event=event,
                matcher=matcher,
                decision=outcome.decision,
                duration_s=round(done.duration_s, 3),
                error=outcome.error,
            ),
            agent,
        )
        return Ran(hook, outcome)

    async def fire(
        self,
        event: str,
        payload: Payload,
        subject: Subject | None = None,
        agent: str | None = None,
        judge: Judge | None = None,
    ) -> list[Ran]:
        """Run every trusted hook of ``event`` whose matcher takes ``subject``; outcomes in
        configuration order. Cancellation (an abort) kills the hooks still running."""
        chosen = self._selected(event, subject)
        if not chosen:
            return []
        if len(chosen) == 1:
            return [await self._one(event, chosen[0], payload, agent, judge)]
        results: list[Ran | None] = [None] * len(chosen)

        async def run(i: int, hook: ConfiguredHook) -> None:
            results[i] = await self._one(event, hook, payload, agent, judge)

        async with anyio.create_task_group() as tg:
            for i, hook in enumerate(chosen):
                tg.start_soon(run, i, hook)
        return [r for r in results if r is not None]
