"""``fetch`` in whole runs: a huge page saved as a large result and paged with ``read_result``
through the real runtime, and print mode through the real ``owltui -p`` against a loopback model
(refused with one stderr line unless the host is allowed, the sandbox's network setting obeyed)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from owltui.agent.messages import ToolResult
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import cli_env, openai_args, run_cli
from tests.tools.web.server import HUGE_PARAGRAPHS, Web


def allow(workspace: Path, *hosts: str) -> None:
    (workspace / ".owltui").mkdir(parents=True, exist_ok=True)
    (workspace / ".owltui" / "permissions.toml").write_text(
        "[allow]\nfetch = [" + ", ".join(f'"{h}"' for h in hosts) + "]\n"
    )


def result(model: ScriptedModel, call_id: str) -> str:
    found = [
        m.content for m in model.requests[-1].messages if isinstance(m, ToolResult) and m.call_id == call_id
    ]
    assert len(found) == 1
    return found[0]


@pytest.mark.anyio
async def test_a_huge_page_is_saved_whole_and_paged_with_read_result(web: Web, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    allow(ws, "127.0.0.1")
    env = {
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "c"),
        "XDG_DATA_HOME": str(tmp_path / "d"),
    }

    def step(request: object) -> Step:
        n = len(model.requests)
        if n == 1:
            return Step(calls=[Call("fetch", {"url": web.url("/huge")}, id="f1")])
        if n == 2:
            preview = result(model, "f1")
            found = re.search(r"read_result (\{[^}]*\})", preview)
            assert found is not None, preview
            args = json.loads(found.group(1))
            return Step(calls=[Call("read_result", {**args, "offset": 3000, "limit": 5}, id="r1")])
        return Step(text="done")

    model = ScriptedModel(step)
    rt = build_runtime(Options(workspace=ws, no_session=True), model=model, env=env, warn=lambda _: None)
    async with rt:
        await rt.agent.run("read the huge page")
    preview = result(model, "f1")
    assert "paragraph 0 of the huge page" in preview and f"paragraph {HUGE_PARAGRAPHS - 1} " in preview
    assert "paragraph 2000 of" not in preview  # the middle is in the file, not the context
    assert len(preview) < 60 * 1024
    page = result(model, "r1")
    assert page.startswith("3000\tparagraph 1498 of") and "paragraph 2000 of" not in page


def test_print_mode_refuses_a_host_not_allowed_in_one_stderr_line(web: Web, tmp_path: Path) -> None:
    fake = FakeOpenAI()
    try:
        ws = tmp_path / "ws"
        ws.mkdir()
        url = web.url("/page")
        fake.add(Turn(calls=[("fetch", {"url": url})]), Turn(text="could not read it"))
        r = run_cli(["-p", "read the page", *openai_args(fake.url)], cli_env(tmp_path), ws)
        assert r.returncode == 3, r.stderr
        lines = [line for line in r.stderr.splitlines() if line.startswith("owltui: refused fetch")]
        assert len(lines) == 1 and lines[0].startswith(f"owltui: refused fetch ({url}): fetch needs approval")
        assert web.requests == []  # nothing was fetched
        tool_msg = fake.requests[1]["messages"][-1]
        assert tool_msg["role"] == "tool" and '[allow] fetch = ["127.0.0.1:' in tool_msg["content"]
    finally:
        fake.close()


def test_print_mode_fetches_an_allowed_host(web: Web, tmp_path: Path) -> None:
    fake = FakeOpenAI()
    try:
        ws = tmp_path / "ws"
        ws.mkdir()
        allow(ws, "127.0.0.1")
        fake.add(Turn(calls=[("fetch", {"url": web.url("/page")})]), Turn(text="Owls are birds."))
        r = run_cli(["-p", "read the page", *openai_args(fake.url)], cli_env(tmp_path), ws)
        assert r.returncode == 0, r.stderr
        assert r.stdout == "Owls are birds.\n"
        content = fake.requests[1]["messages"][-1]["content"]
        assert "# Owls" in content and "Owls are **birds**." in content and "steal()" not in content
        # the network off for commands is off for fetch too, allowed host or not
        (tmp_path / "config" / "owltui").mkdir(parents=True)
        (tmp_path / "config" / "owltui" / "config.toml").write_text("sandbox_network = false\n")
        fake.add(Turn(calls=[("fetch", {"url": web.url("/page")})]), Turn(text="no network"))
        r = run_cli(["-p", "read the page", "--yes", *openai_args(fake.url)], cli_env(tmp_path), ws)
        assert r.returncode == 3, r.stderr
        assert "owltui: refused fetch" in r.stderr and "sandbox_network = false" in r.stderr
        assert len(web.requests) == 1
    finally:
        fake.close()
