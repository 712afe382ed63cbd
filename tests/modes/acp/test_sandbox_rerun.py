"""A command the real sandbox blocked, offered once outside it over ACP: the permission request is
titled as running without the sandbox and offers once / keep blocked only (even with ``--yes``, no
"always"); allowing it runs the command unconfined once, keeping it blocked leaves nothing written."""

from __future__ import annotations

from pathlib import Path

import acp
import pytest

from owltui.policy.sandbox.child import capabilities
from owltui.session.runtime.options import Options
from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.modes.acp.harness import Recorder, connected
from tests.tools.conftest import outside_dir

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(capabilities().landlock_abi < 1, reason="this kernel has no Landlock"),
]


@pytest.mark.parametrize("choice", ["allow", "deny"])
async def test_a_blocked_command_is_offered_once_outside_the_sandbox(tmp_path: Path, choice: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with outside_dir("acp-rerun") as outside:
        target = outside / "made"
        model = ScriptedModel(
            [
                Step(calls=[Call("bash", {"command": f"touch {target} && echo made"}, id="b1")]),
                Step(text="ok"),
            ]
        )
        client = Recorder(choose=lambda _call, _options: choice)
        options = Options(workspace=tmp_path, yes=True)  # --yes: still asked, never saved
        async with connected(tmp_path, lambda _ws: model, client=client, options=options) as (conn, client):
            await conn.initialize(protocol_version=1)
            sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            answer = await conn.prompt(session_id=sid, prompt=[acp.text_block("go")])
            assert answer.stop_reason == "end_turn"
        assert len(client.asked) == 1, client.asked  # the sandbox's block, not the rules, asked
        call, offered = client.asked[0]
        assert call.title is not None and "WITHOUT the sandbox" in call.title
        assert [o.kind for o in offered] == ["allow_once", "reject_once"]
        assert target.exists() is (choice == "allow")
        final = [u for u in client.of("tool_call_update", sid) if u.status in ("completed", "failed")]
        assert final[-1].status == ("completed" if choice == "allow" else "failed")
