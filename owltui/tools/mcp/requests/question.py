"""What reaches whoever answers a server's elicitation: a ``Question`` (a form or a URL), and the
``Answer`` (accept with content, decline, cancel). An ``Asker`` is the TUI, an RPC client or an ACP
client; the ``ElicitPolicy`` says what happens without one (print mode) or instead of one."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from owltui.tools.mcp.requests.form import FormField

ElicitPolicy = Literal["ask", "decline", "accept-defaults"]
Action = Literal["accept", "decline", "cancel"]


class Question(BaseModel):
    """One elicitation as shown: ``id`` is OwlTUI's (an answer names it), ``server`` the asking
    server's name. ``fields`` for a form; ``url`` for URL mode."""

    id: str
    server: str
    mode: Literal["form", "url"]
    message: str
    fields: list[FormField] = Field(default_factory=list)
    url: str | None = None
    requested_schema: dict[str, Any] | None = Field(default=None, exclude=True)  # the server's, as sent

    def defaults(self) -> dict[str, Any]:
        """Each field's default (what a form shows filled in)."""
        return {f.name: f.default for f in self.fields if f.default is not None}


class Answer(BaseModel):
    """The user's answer; ``content`` only with ``accept`` on a form."""

    action: Action
    content: dict[str, Any] | None = None


class Asker(Protocol):
    """Shows ``question`` and returns the answer. Cancelled (the scope around it) when the server
    withdraws its request or the connection ends: the question must then be withdrawn too."""

    async def __call__(self, question: Question) -> Answer: ...
