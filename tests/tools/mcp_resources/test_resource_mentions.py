"""``@server:uri`` mentions against server-everything (over stdio and Streamable HTTP): completion offers the server's resources beside
the workspace's files, and a message naming one goes with the resource's content attached (as a file
mention does); a resource the server cannot read is a note, the message still goes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from owltui.agent.messages import UserMessage
from owltui.session.commands.layer import Commands
from owltui.session.input.mentions import split_attachments
from owltui.testing.scripted import ScriptedModel, Step
from owltui.tools.mcp.catalog.mentions import ResourceMention, find_resource_mentions
from tests.session.test_command_layer import Front
from tests.tools.mcp_resources.helpers import ready, runtime

pytestmark = pytest.mark.anyio
DOC = "demo://resource/static/document/architecture.md"


async def test_a_resource_mention_attaches_the_resource(tmp_path: Path, everything: dict[str, Any]) -> None:
    started = anyio.Event()
    model = ScriptedModel([Step(text="ok", started=started)])
    rt = runtime(tmp_path, model, everything)
    (tmp_path / "ws" / "notes.txt").write_text("my notes\n")
    warnings: list[str] = []
    assert rt.mcp is not None
    rt.mcp.warn = warnings.append
    async with rt:
        await ready(rt)
        offered = rt.mentions.complete_mentions("every")
        assert f"everything:{DOC}" in offered[:7]  # the server's name typed: its resources first
        assert "notes.txt" in rt.mentions.complete_mentions("")  # files still offered
        assert rt.mentions.complete_mentions("everything:arch")[0] == f"everything:{DOC}"

        c = Commands(rt, Front())
        reply = c.send(f"summarise @everything:{DOC}, and @notes.txt; @everything:demo://nope/x too")
        assert reply.ok
        with anyio.fail_after(30):
            await started.wait()
        await rt.agent.wait_idle()
        sent = next(i for i in rt.agent.history.items() if isinstance(i, UserMessage))
    assert sent.text.startswith(f"summarise @everything:{DOC}, and @notes.txt;")
    assert '<file path="notes.txt">' in sent.text
    assert f'<resource uri="{DOC}" mimeType="text/markdown">\n# Everything Server' in sent.text
    assert "demo://nope/x" not in sent.text.split("too", 1)[1]  # nothing attached for it
    assert any(getattr(m, "text", None) == sent.text for m in model.requests[0].messages)
    assert warnings == [
        f"attached notes.txt, @everything:{DOC}; @everything:demo://nope/x: The MCP server 'everything' "
        "answered resources/read with an error: MCP error -32602: Resource demo://nope/x not found"
    ]
    typed, blocks = split_attachments(sent.text)  # the TUI shows the attachments apart
    assert typed.endswith("too") and [b.split(">", 1)[0] for b in blocks] == [
        '<file path="notes.txt"',
        f'<resource uri="{DOC}" mimeType="text/markdown"',
    ]


def test_mentions_are_found_only_for_known_servers_and_outside_code() -> None:
    text = "see @srv:file:///a.txt. and `@srv:x` or bob@srv:y and @other:z"
    assert find_resource_mentions(text, {"srv"}) == [ResourceMention("srv", "file:///a.txt")]
    assert find_resource_mentions("@srv:a @srv:a", {"srv"}) == [ResourceMention("srv", "a")]
