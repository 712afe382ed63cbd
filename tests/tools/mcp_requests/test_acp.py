"""ACP: an MCP server's form is asked of the editor through ACP's elicitation (session-scoped, the
server's schema as sent), the editor's answer reaches the server; an editor that did not advertise
elicitation gets no question and the server hears "decline". The session's cwd is its server's root."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from owltui.agent.messages import ToolResult
from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.modes.acp.harness import Recorder, connected
from tests.tools.mcp_resources.helpers import everything_argv

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _unstable_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness's client, with ACP's unstable methods (elicitation) on."""
    import functools

    import acp

    from tests.modes.acp import harness

    monkeypatch.setattr(
        harness, "connect_to_agent", functools.partial(acp.connect_to_agent, use_unstable_protocol=True)
    )


ELICIT = "mcp__everything__trigger-elicitation-request"
ROOTS = "mcp__everything__get-roots-list"


@dataclass
class Editor(Recorder):
    questions: list[tuple[str, Any]] = field(default_factory=list)

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        from acp.schema import AcceptElicitationResponse

        self.questions.append((message, mode))
        return AcceptElicitationResponse(action="accept", content={"name": "Ada", "integer": 9})


async def run_session(tmp_path: Path, editor: Editor, caps: Any, calls: list[Call]) -> list[ToolResult]:
    from acp.schema import McpServerStdio, TextContentBlock

    argv = everything_argv()
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    server = McpServerStdio(name="everything", command=argv[0], args=argv[1:], env=[])
    model = ScriptedModel([Step(calls=calls), Step(text="done")])

    def model_for(_ws: Path) -> ScriptedModel:
        return model

    async with connected(tmp_path, model_for, client=editor) as (conn, _client):
        await conn.initialize(protocol_version=1, client_capabilities=caps)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[server])).session_id
        await conn.prompt(session_id=sid, prompt=[TextContentBlock(type="text", text="ask me")])
    return [m for m in model.views[-1] if isinstance(m, ToolResult)]


async def test_the_editor_answers_the_form(tmp_path: Path) -> None:
    from acp.schema import ClientCapabilities, ElicitationCapabilities, ElicitationFormCapabilities

    editor = Editor()
    caps = ClientCapabilities(elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities()))
    results = await run_session(tmp_path, editor, caps, [Call(ELICIT, {}, id="e1"), Call(ROOTS, {}, id="r1")])
    ((message, mode),) = editor.questions
    assert message.startswith("Please provide inputs") and mode.session_id
    assert mode.requested_schema.required == ["name"]
    texts = {r.call_id: r.content for r in results}
    assert "Ada" in texts["e1"] and '"integer": 9' in texts["e1"]
    assert (tmp_path / "ws").as_uri() in texts["r1"]  # the ACP session's cwd is the root


async def test_an_editor_without_elicitation_gets_no_question(tmp_path: Path) -> None:
    from acp.schema import ClientCapabilities

    editor = Editor()
    results = await run_session(tmp_path, editor, ClientCapabilities(), [Call(ELICIT, {}, id="e1")])
    assert editor.questions == []
    assert "declined" in {r.call_id: r.content for r in results}["e1"]
