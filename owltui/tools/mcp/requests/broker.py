"""``ElicitBroker``: the ``Asker`` of an interactive session. A server's question becomes an
``mcp_elicitation`` event (what RPC clients see) and a pending entry the TUI's dialog watches
(``subscribe``); ``answer`` (the RPC ``mcp_elicitation_answer`` command, the dialog) settles it
after checking a form's content against its schema. When the server withdraws its request (or the
connection ends) the waiting call is cancelled: the entry goes and ``mcp_elicitation_closed`` says
so, with ``reason: "withdrawn"``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from owltui.agent.events import Event
from owltui.tools.mcp.requests.form import FormField, FormProblem, fill_defaults, validate
from owltui.tools.mcp.requests.question import Action, Answer, Question

Listener = Callable[[str, "PendingQuestion"], None]


class ElicitationAsked(Event):
    """A server asks the user (answered by ``mcp_elicitation_answer``)."""

    type: Literal["mcp_elicitation"] = "mcp_elicitation"
    id: str
    server: str
    mode: Literal["form", "url"]
    message: str
    fields: list[FormField] = []
    url: str | None = None


class ElicitationClosed(Event):
    """The question is over: ``answered`` (with the action) or ``withdrawn`` by the server."""

    type: Literal["mcp_elicitation_closed"] = "mcp_elicitation_closed"
    id: str
    reason: Literal["answered", "withdrawn"]
    action: str | None = None


@dataclass
class PendingQuestion:
    question: Question
    done: anyio.Event = field(default_factory=anyio.Event)
    answer: Answer | None = None


class ElicitBroker:
    """Questions waiting for the user (see the module docstring). ``emit``: the session's events."""

    def __init__(self, emit: Callable[[Event], None]) -> None:
        self.emit = emit
        self._pending: dict[str, PendingQuestion] = {}
        self._listeners: list[Listener] = []

    def subscribe(self, fn: Listener) -> Callable[[], None]:
        """``fn(action, pending)``: ``asked`` | ``answered`` | ``withdrawn``."""
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn) if fn in self._listeners else None

    def _notify(self, action: str, p: PendingQuestion) -> None:
        for fn in tuple(self._listeners):
            fn(action, p)

    def pending(self) -> list[PendingQuestion]:
        return list(self._pending.values())

    async def __call__(self, question: Question) -> Answer:
        p = PendingQuestion(question)
        self._pending[question.id] = p
        self._notify("asked", p)
        self.emit(ElicitationAsked(**question.model_dump()))
        try:
            await p.done.wait()
        finally:
            if self._pending.pop(question.id, None) is not None and p.answer is None:
                self._notify("withdrawn", p)
                self.emit(ElicitationClosed(id=question.id, reason="withdrawn"))
        assert p.answer is not None
        return p.answer

    def answer(self, qid: str, action: Action, content: dict[str, Any] | None = None) -> str | None:
        """Settle question ``qid``; the reason it cannot be (no such question, a form answer that
        does not fit: the question stays open), else None."""
        p = self._pending.get(qid)
        if p is None:
            return f"no MCP question {qid!r} is waiting"
        q = p.question
        if action == "accept" and q.mode == "form":
            try:
                content = validate(q.fields, fill_defaults(q.fields, content))
            except FormProblem as exc:
                return str(exc)
        else:
            content = None
        p.answer = Answer(action=action, content=content)
        del self._pending[qid]
        p.done.set()
        self._notify("answered", p)
        self.emit(ElicitationClosed(id=qid, reason="answered", action=action))
        return None
