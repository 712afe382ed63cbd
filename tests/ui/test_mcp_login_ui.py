"""Pilot test: ``/mcp login`` in the TUI, launched the way ``owltui`` launches it (the boot frame,
then the real runtime built in the start-up thread, its warnings routed to the conversation) in a
workspace whose ``--mcp-config`` names an HTTP MCP server behind a local authorization server (a
real process). At start the transcript says the server needs login and how; ``/mcp login hosted``
typed in the prompt runs the login in the background (the URL shown, the stand-in ``$BROWSER``
following the redirect to the loopback); the server connects and says its tools are available from
the next turn; ``/mcp`` lists it connected with its tools; the first turn's request offers them and
a call to one answers. The access and refresh tokens appear nowhere on the screen, in the
transcript or in the session's files (which are saved)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from owltui.agent.messages import ToolResult
from owltui.session.paths import sessions_root
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.testing.scripted import Call, ScriptedModel, Step
from owltui.tools.mcp.auth.provider import login_line
from owltui.ui.app import OwlApp
from owltui.ui.boot import Boot, Started
from owltui.ui.widgets.blocks import NoticeBlock
from tests.tools.mcp_oauth.conftest import AuthServer, auth_server, browser, env  # noqa: F401
from tests.ui.conftest import SIZE, owl_app, texts
from tests.ui.test_first_screen import screen_lines
from tests.ui.test_input import type_text
from tests.ui.test_launched_keys import attached

pytestmark = pytest.mark.anyio
READY = "MCP server 'hosted' connected: its "


async def until(pilot: Any, cond: Any, what: str, seconds: float = 30) -> None:
    """Let the app run until ``cond()`` holds (the servers are real processes: bounded by time)."""
    try:
        with anyio.fail_after(seconds):
            while not cond():
                await pilot.pause()
    except TimeoutError:
        said = notices(pilot.app)
        raise AssertionError(f"timed out waiting for {what}; the notices: {said}") from None


def launched(options: Options, environ: dict[str, str], model: ScriptedModel) -> tuple[OwlApp, Boot]:
    """As ``owltui.ui.launch.launch`` makes it: the runtime built in the start-up thread, its
    warnings going to the app once it exists."""
    route: list[Any] = [print]

    def start() -> Started:
        runtime = build_runtime(options, model=model, env=environ, warn=lambda text: route[0](text))
        return Started(runtime, keymap=dict(runtime.config.keys), close=lambda: anyio.run(runtime.aclose))

    boot = Boot(start, options.workspace)
    app = owl_app(boot)
    route[0] = app.warn
    return app, boot


def notices(app: OwlApp) -> list[str]:
    return texts(app, NoticeBlock)


def stored_tokens(environ: dict[str, str], url: str) -> list[str]:
    data = json.loads((Path(environ["XDG_DATA_HOME"]) / "owltui" / "mcp-oauth.json").read_text())
    tokens = data["servers"][url]["tokens"]
    return [tokens["access_token"], tokens["refresh_token"]]


async def test_mcp_login_in_the_tui(auth_server: AuthServer, env: dict[str, str], tmp_path: Path) -> None:  # noqa: F811
    ws = tmp_path / "ws"
    ws.mkdir()
    environ = {**env, "XDG_CONFIG_HOME": str(tmp_path / "cfg"), "HOME": str(tmp_path)}
    cfg = tmp_path / "mcp.json"
    cfg.write_text(json.dumps({"mcpServers": {"hosted": {"type": "http", "url": auth_server.url}}}))
    options = Options(workspace=ws, mcp_config=cfg, yes=True, no_session=False)
    steps = [Step(calls=[Call("mcp__hosted__echo", {"text": "hi"}, id="e1")]), Step(text="done")]
    model = ScriptedModel(steps, name="scripted")
    app, boot = launched(options, environ, model)
    async with app.run_test(size=SIZE) as pilot:
        await attached(pilot, app, boot)
        need = login_line("hosted")
        assert need == "MCP server 'hosted' needs login: run /mcp login hosted"
        await until(pilot, lambda: need in notices(app), "the login line")

        await type_text(pilot, "/mcp login hosted")
        await pilot.press("enter")
        await until(pilot, lambda: any("log in at http" in n for n in notices(app)), "the login URL")
        (url_line,) = [n for n in notices(app) if "log in at" in n]
        assert url_line.startswith(f"MCP server 'hosted': log in at {auth_server.base}/authorize?")
        await until(pilot, lambda: any(n.startswith(READY) for n in notices(app)), "the server connected")
        said = notices(app)
        (ready,) = [n for n in said if n.startswith(READY)]
        assert ready.endswith(" tools are available from the next turn")
        assert "Logged in to MCP server 'hosted'. Connecting it again." in said
        assert said.index(url_line) < said.index(ready)

        await type_text(pilot, "/mcp")
        await pilot.press("enter")
        await until(pilot, lambda: any(n.startswith("hosted: connected") for n in notices(app)), "/mcp")
        (listing,) = [n for n in notices(app) if n.startswith("hosted: connected")]
        count = ready.removeprefix(READY).split()[0]
        assert listing.startswith(f"hosted: connected, {count} tools (http: {auth_server.url}")
        assert "  mcp__hosted__echo" in listing

        await type_text(pilot, "echo hi")  # the first turn: the server's tools are in its request
        await pilot.press("enter")
        await until(pilot, lambda: model.calls == 2 and not app.agent.running, "the turn")
        assert "mcp__hosted__echo" in [t.name for t in model.requests[0].tools]
        results = [r for r in app.agent.history.items() if isinstance(r, ToolResult)]
        assert [r.content for r in results] == ["echo: hi"]

        secrets = stored_tokens(environ, auth_server.url)
        blocks = [str(getattr(w, "text", "")) for w in app.conversation.query("*")]
        shown = "\n".join(screen_lines(app) + blocks)
        transcript = [str(item) for item in app.agent.history.items()]
        for token in secrets:
            assert len(token) >= 16 and token not in shown and token not in "\n".join(transcript)
        await app.action_quit()
    await anyio.to_thread.run_sync(boot.join, 30)
    check_files(environ, ws, secrets)


def check_files(environ: dict[str, str], ws: Path, secrets: list[str]) -> None:
    """The session was saved (the turn's tool result is in it) and no token is in any file of the
    data directory but the token store, nor in the workspace."""
    files = [p for p in Path(environ["XDG_DATA_HOME"]).rglob("*") if p.is_file()]
    files = [p for p in files if p.name != "mcp-oauth.json"]
    saved = [p for p in files if p.is_relative_to(sessions_root(environ))]
    assert any(b"echo: hi" in p.read_bytes() for p in saved), saved
    for path in files + [p for p in ws.rglob("*") if p.is_file()]:
        body = path.read_bytes()
        for token in secrets:
            assert token.encode() not in body, path
