"""MCP servers' questions in an ACP session: asked of the editor through ACP's elicitation
(``elicitation/create``, session-scoped) when the client advertised it, form and URL each on its own;
else declined (the client has no way to show them). The editor opens a URL itself."""

from __future__ import annotations

import logging
from typing import Any

from owltui.session.commands.host import Host
from owltui.tools.mcp.requests.question import Answer, Question

log = logging.getLogger(__name__)


class AcpAsker:
    """Asks the ACP client; ``form`` / ``url``: which modes it advertised."""

    def __init__(self, conn: Any, session_id: str, form: bool, url: bool) -> None:
        self.conn = conn
        self.session_id = session_id
        self.form = form
        self.url = url

    async def __call__(self, question: Question) -> Answer:
        from acp.schema import (
            AcceptElicitationResponse,
            CancelElicitationResponse,
            ElicitationFormSessionMode,
            ElicitationSchema,
            ElicitationUrlSessionMode,
        )

        mode: Any
        try:
            if question.mode == "url":
                if not self.url:
                    return Answer(action="decline")
                mode = ElicitationUrlSessionMode.model_validate(
                    {"sessionId": self.session_id, "elicitationId": question.id, "url": question.url}
                )
            else:
                if not self.form:
                    return Answer(action="decline")
                schema = ElicitationSchema.model_validate(question.requested_schema or {})
                mode = ElicitationFormSessionMode(session_id=self.session_id, requested_schema=schema)
        except ValueError as exc:  # a schema ACP's types cannot carry
            log.info("%s: the question cannot be sent to the editor (%s); declined", question.server, exc)
            return Answer(action="decline")
        try:
            reply = await self.conn.create_elicitation(message=question.message, mode=mode)
        except Exception as exc:  # the editor failed on it (an unknown method, a closed pipe)
            log.info("%s: the editor did not answer the question (%s); declined", question.server, exc)
            return Answer(action="decline")
        if isinstance(reply, AcceptElicitationResponse):
            return Answer(action="accept", content=reply.content)
        return Answer(action="cancel" if isinstance(reply, CancelElicitationResponse) else "decline")


def install_acp_asker(runtime: Host, conn: Any, session_id: str, caps: Any) -> None:
    """The session's MCP questions go to the editor (or are declined when it cannot show them)."""
    source = runtime.mcp
    if source is None:
        return
    elicitation = getattr(caps, "elicitation", None)
    form = elicitation is not None and elicitation.form is not None
    url = elicitation is not None and elicitation.url is not None
    source.requests.asker = AcpAsker(conn, session_id, form, url) if form or url else None
    source.requests.open_url = lambda _url: None  # the editor opened it
