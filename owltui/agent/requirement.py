"""Soft tool requirements: "the next round must call TOOL", escalating to a forced tool choice.

The host owns the slot (``/require`` in the UI, ``require_tool`` in RPC); the loop reads it once per
turn, injects the reminder once per id, and escalates at most ``MAX_ESCALATIONS`` times.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from pydantic import BaseModel, Field

MAX_ESCALATIONS = 3


class SoftRequirement(BaseModel):
    id: str = Field(default_factory=lambda: uuid.uuid4().hex[:8])
    tool: str
    reason: str = ""
    satisfies: list[str] = Field(default_factory=list)  # other tools that also satisfy it

    def accepts(self, name: str) -> bool:
        return name == self.tool or name in self.satisfies

    def reminder(self) -> str:
        why = f" Reason: {self.reason}" if self.reason else ""
        return f"Before anything else, call the `{self.tool}` tool.{why}"


class RequirementSlot:
    """Holds at most one requirement; listeners hear every change (set, cleared, satisfied)."""

    def __init__(self) -> None:
        self.current: SoftRequirement | None = None
        self.reminded: set[str] = set()  # ids whose reminder was injected (once per id)
        self._listeners: list[Callable[[str, SoftRequirement | None], None]] = []

    def subscribe(self, fn: Callable[[str, SoftRequirement | None], None]) -> None:
        self._listeners.append(fn)

    def _notify(self, what: str, req: SoftRequirement | None) -> None:
        for fn in tuple(self._listeners):
            fn(what, req)

    def set(self, tool: str, reason: str = "", satisfies: list[str] | None = None) -> SoftRequirement:
        self.current = SoftRequirement(tool=tool, reason=reason, satisfies=satisfies or [])
        self._notify("set", self.current)
        return self.current

    def clear(self, what: str = "cleared") -> None:
        req, self.current = self.current, None
        if req is not None:
            self._notify(what, req)
