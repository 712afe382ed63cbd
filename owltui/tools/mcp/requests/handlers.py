"""``McpRequests``: the session's answers to what servers ask. The SDK client gets its callbacks
(``callbacks(server)``): elicitation goes to the ``Asker`` (or the policy), roots are the workspace,
sampling is refused. A workspace change (``set_workspace``) tells every connected server that its
roots changed."""

from __future__ import annotations

import itertools
import logging
import math
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio

from owltui.tools.mcp.requests.form import FormProblem, fill_defaults, parse_form, validate
from owltui.tools.mcp.requests.question import Answer, Asker, ElicitPolicy, Question

if TYPE_CHECKING:  # the SDK's types cost most of a second to import: only once a server connects
    import mcp_types

log = logging.getLogger(__name__)

SAMPLING_REFUSED = "OwlTUI does not let MCP servers sample the model"
NO_ONE_TO_ASK = "OwlTUI has no user to ask here (print mode); the request is declined"
_ids = itertools.count(1)


class McpRequests:
    """Shared by a session's servers. ``asker``: who answers elicitations when ``policy`` is
    ``"ask"`` (None: nobody, so they are declined); ``open_url``: how a URL the user consented to is
    opened."""

    def __init__(
        self,
        workspace: Path,
        policy: ElicitPolicy = "ask",
        asker: Asker | None = None,
        open_url: Callable[[str], Any] | None = None,
    ) -> None:
        self.workspace = workspace
        self.policy: ElicitPolicy = policy
        self.asker = asker
        self.open_url = open_url or _open_in_browser
        self._sessions: set[Any] = set()
        self._calls: dict[str, list[tuple[anyio.CancelScope, float]]] = {}  # server: (clock, limit)
        self._asking: dict[str, set[anyio.CancelScope]] = {}  # server: its questions being asked

    def ask_through(self, emit: Callable[[Any], None]) -> None:
        """Ask the user through the session's events (an ``ElicitBroker``: RPC, the TUI)."""
        from owltui.tools.mcp.requests.broker import ElicitBroker

        self.asker = ElicitBroker(emit)

    # ---- the SDK client's keyword arguments -----------------------------------------------------
    def callbacks(self, server: str) -> dict[str, Any]:
        """``elicitation_callback`` and ``list_roots_callback`` for ``Client`` (which then
        advertises elicitation, form and url, and roots with ``listChanged``)."""

        async def elicit(context: Any, params: Any) -> mcp_types.ElicitResult | mcp_types.ErrorData:
            self._sessions.add(context.session)
            return await self.elicit(server, params)

        async def roots(context: Any) -> mcp_types.ListRootsResult:
            self._sessions.add(context.session)
            return self.roots()

        return {"elicitation_callback": elicit, "list_roots_callback": roots}

    async def refuse_sampling(self, context: Any, params: Any) -> mcp_types.ErrorData:
        """Sampling: an error the server sees (the capability is never advertised)."""
        import mcp_types

        return mcp_types.ErrorData(code=mcp_types.INVALID_REQUEST, message=SAMPLING_REFUSED)

    def connected(self, session: Any) -> None:
        """A client session that may be told of roots changes."""
        self._sessions.add(session)

    def disconnected(self, session: Any) -> None:
        self._sessions.discard(session)

    # ---- questions during a tool call ----------------------------------------------------------
    @contextmanager
    def during_call(self, server: str, clock: anyio.CancelScope, limit: float) -> Iterator[None]:
        """Around one ``tools/call`` to ``server``: its time limit (``clock``, ``limit`` seconds)
        stops while the user is asked; when the server's last call ends (answered, aborted, timed
        out) the questions it left open are withdrawn."""
        calls = self._calls.setdefault(server, [])
        calls.append((clock, limit))
        if self._asking.get(server):
            clock.deadline = math.inf
        try:
            yield
        finally:
            calls.remove((clock, limit))
            if not calls:
                for scope in self._asking.get(server, set()):
                    scope.cancel()

    def _pause_clocks(self, server: str) -> None:
        for clock, _limit in self._calls.get(server, []):
            clock.deadline = math.inf

    def _restart_clocks(self, server: str) -> None:
        if not self._asking.get(server):
            for clock, limit in self._calls.get(server, []):
                clock.deadline = anyio.current_time() + limit

    # ---- roots ----------------------------------------------------------------------------------
    def roots(self) -> mcp_types.ListRootsResult:
        """The workspace as the one root."""
        import mcp_types

        path = self.workspace.absolute()
        root = mcp_types.Root.model_validate({"uri": path.as_uri(), "name": path.name or str(path)})
        return mcp_types.ListRootsResult(roots=[root])

    async def set_workspace(self, workspace: Path) -> None:
        """The session now works in ``workspace``: each connected server is told its roots changed."""
        if workspace == self.workspace:
            return
        self.workspace = workspace
        for session in list(self._sessions):
            try:
                with warnings.catch_warnings():  # deprecated in the newest protocol version only
                    warnings.simplefilter("ignore")
                    await session.send_roots_list_changed()
            except Exception as exc:  # a closed connection: nothing to tell
                log.debug("roots/list_changed not sent: %s", exc)
                self._sessions.discard(session)

    # ---- elicitation ----------------------------------------------------------------------------
    async def elicit(self, server: str, params: Any) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        """Answer one elicitation: shown to the asker, or the policy's answer."""
        import mcp_types

        mode = getattr(params, "mode", "form") or "form"
        if mode == "url":
            url = str(params.url)
            if urlsplit(url).scheme not in ("http", "https"):
                return mcp_types.ErrorData(
                    code=mcp_types.INVALID_PARAMS, message=f"not an http(s) URL: {url}"
                )
            question = Question(
                id=f"elicit-{next(_ids)}", server=server, mode="url", message=params.message, url=url
            )
        else:
            try:
                fields = parse_form(params.requested_schema)
            except FormProblem as exc:
                return mcp_types.ErrorData(code=mcp_types.INVALID_PARAMS, message=f"unusable form: {exc}")
            question = Question(
                id=f"elicit-{next(_ids)}",
                server=server,
                mode="form",
                message=params.message,
                fields=fields,
                requested_schema=params.requested_schema,
            )
        asking = self._asking.setdefault(server, set())
        with anyio.CancelScope() as scope:
            asking.add(scope)
            self._pause_clocks(server)
            try:
                answer = await self._answer(question)
            finally:
                asking.discard(scope)
                self._restart_clocks(server)
        if scope.cancelled_caught:  # the call that led to it ended: withdrawn
            return mcp_types.ElicitResult(action="cancel")
        return self._result(question, answer)

    async def _answer(self, question: Question) -> Answer:
        if self.policy == "decline":
            return Answer(action="decline")
        if self.policy == "accept-defaults":
            if question.mode == "url":
                return Answer(action="decline")
            return Answer(action="accept", content=fill_defaults(question.fields))
        if self.asker is None:
            log.info("%s: %s", question.server, NO_ONE_TO_ASK)
            return Answer(action="decline")
        return await self.asker(question)

    def _result(self, question: Question, answer: Answer) -> mcp_types.ElicitResult:
        import mcp_types

        if answer.action != "accept":
            return mcp_types.ElicitResult(action=answer.action)
        if question.mode == "url":
            assert question.url is not None
            try:
                self.open_url(question.url)
            except Exception as exc:  # no browser: the user has the URL on screen
                log.info("cannot open %s: %s", question.url, exc)
            return mcp_types.ElicitResult(action="accept")
        try:
            content = validate(question.fields, fill_defaults(question.fields, answer.content))
        except FormProblem as exc:
            log.info("%s: the answer does not fit the form (%s); declined", question.server, exc)
            return mcp_types.ElicitResult(action="decline")
        return mcp_types.ElicitResult(action="accept", content=content)


def _open_in_browser(url: str) -> None:
    import webbrowser

    webbrowser.open(url)
