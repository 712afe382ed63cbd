"""``fetch`` against a real loopback server: pages as Markdown, text and JSON as they are, binaries
refused by type, the cap, redirects to another host put to the policy again, no cookies and no
credentials sent, and an abort that closes the connection."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from owltui.agent.cancel import CancelToken
from owltui.tools.web.fetch import MAX_BYTES
from tests.tools.web.conftest import Asker, Outcome, make_policy, run_fetch
from tests.tools.web.server import Web

pytestmark = pytest.mark.anyio


async def test_a_page_comes_back_as_markdown_without_its_scripts(web: Web, tmp_path: Path) -> None:
    out = await run_fetch(make_policy(tmp_path, ["127.0.0.1"]), web.url("/page"))
    assert out.output is not None and not out.output.is_error, out.text
    text = out.text
    assert text.startswith(web.url("/page") + "\n[text/html, ")
    assert "# Owls" in text and "Owls are **birds**." in text and "- barn\n- snowy" in text
    assert f"[more]({web.url('/more')})" in text  # links made absolute
    assert "steal()" not in text and "color: red" not in text and "<" not in text.split("]", 1)[1]
    assert any(p.startswith("GET ") for p in out.progress)


async def test_text_and_json_pass_through(web: Web, tmp_path: Path) -> None:
    policy = make_policy(tmp_path, ["127.0.0.1"])
    text = await run_fetch(policy, web.url("/text"))
    assert text.text.endswith("\n\nplain café\n")
    data = await run_fetch(policy, web.url("/json"))
    assert data.text.endswith('\n\n{"owl": [1, 2]}') and "[application/json, 15 bytes]" in data.text


async def test_a_binary_is_refused_with_its_type_and_size(web: Web, tmp_path: Path) -> None:
    out = await run_fetch(make_policy(tmp_path, ["127.0.0.1"]), web.url("/bin"))
    assert out.output is not None and out.output.is_error
    assert "application/octet-stream (16.0 KB)" in out.text and "not a page or text" in out.text
    assert "\x00" not in out.text and len(out.text) < 300


async def test_an_error_page_is_an_error_with_its_text(web: Web, tmp_path: Path) -> None:
    out = await run_fetch(make_policy(tmp_path, ["127.0.0.1"]), web.url("/missing"))
    assert out.output is not None and out.output.is_error
    assert "answered HTTP 404 Not Found" in out.text and "No owl here" in out.text


async def test_the_body_is_read_up_to_the_cap_and_says_so(web: Web, tmp_path: Path) -> None:
    out = await run_fetch(make_policy(tmp_path, ["127.0.0.1"]), web.url("/endless"))
    assert out.output is not None and not out.output.is_error
    head, body = out.text.split("\n\n", 1)
    assert "cut at the 5.0 MB cap" in head and len(body) == MAX_BYTES
    assert any("stopped at the 5.0 MB cap" in p for p in out.progress)


async def test_an_allowed_host_runs_without_asking_and_another_asks(web: Web, tmp_path: Path) -> None:
    asker = Asker(answers=["allow"])
    policy = make_policy(tmp_path, ["127.0.0.1"], ask=asker)
    assert (await run_fetch(policy, web.url("/text"))).refusal is None
    assert asker.asked == []
    out = await run_fetch(policy, web.url("/text", "localhost"))
    assert asker.asked == [web.url("/text", "localhost")] and out.text.endswith("plain café\n")
    denied = await run_fetch(policy, web.url("/text", "localhost"))  # the next answer: deny
    assert denied.refusal is not None and "the user denied" in denied.refusal
    assert len(web.requests) == 2


async def test_always_saves_the_host(web: Web, tmp_path: Path) -> None:
    asker = Asker(answers=["always"])
    policy = make_policy(tmp_path, [], ask=asker)
    assert (await run_fetch(policy, web.url("/text", "localhost"))).output is not None
    assert (await run_fetch(policy, web.url("/json", "localhost"))).output is not None
    assert len(asker.asked) == 1
    saved = (tmp_path / ".owltui" / "permissions.toml").read_text()
    assert f'"localhost:{web.port}"' in saved


async def test_a_redirect_to_another_host_asks_again_and_carries_no_cookie(web: Web, tmp_path: Path) -> None:
    asker = Asker(answers=["allow"])
    policy = make_policy(tmp_path, ["127.0.0.1"], ask=asker)
    target = web.url("/echo", "localhost")
    out = await run_fetch(policy, web.url(f"/redirect?to={target}"))
    assert asker.asked == [target]  # the first host is allowed; the hop to the other one asked
    assert asker.arguments[0]["redirected_from"] == web.url(f"/redirect?to={target}")
    assert out.output is not None and not out.output.is_error, out.text
    assert f"(redirected from {web.url('/redirect')}" in out.text
    echoed = {k.lower(): v for k, v in json.loads(out.text.split("\n\n", 1)[1]).items()}
    assert "cookie" not in echoed and "authorization" not in echoed
    assert echoed["host"] == f"localhost:{web.port}"
    assert [r["path"] for r in web.requests] == ["/redirect", "/echo"]


async def test_a_refused_redirect_is_not_followed(web: Web, tmp_path: Path) -> None:
    policy = make_policy(tmp_path, ["127.0.0.1"])  # nobody to ask: print mode
    target = web.url("/echo", "localhost")
    out = await run_fetch(policy, web.url(f"/redirect?to={target}"))
    assert out.output is not None and out.output.is_error
    assert f"redirects to {target}, which was not fetched: Refused: fetch needs approval" in out.text
    assert [r["path"] for r in web.requests] == ["/redirect"]


async def test_a_redirect_on_the_same_host_is_followed_silently(web: Web, tmp_path: Path) -> None:
    asker = Asker()
    policy = make_policy(tmp_path, ["127.0.0.1"], ask=asker)
    out = await run_fetch(policy, web.url(f"/redirect?to={web.url('/echo')}"))
    assert asker.asked == [] and out.output is not None and not out.output.is_error
    assert "cookie" not in {k.lower() for k in json.loads(out.text.split("\n\n", 1)[1])}


async def test_no_credentials_in_the_url(web: Web, tmp_path: Path) -> None:
    out = await run_fetch(make_policy(tmp_path, ["127.0.0.1"]), f"http://u:pw@127.0.0.1:{web.port}/echo")
    assert out.refusal is not None and "sends no credentials" in out.refusal and web.requests == []


async def test_the_network_off_refuses_every_fetch(web: Web, tmp_path: Path) -> None:
    out = await run_fetch(make_policy(tmp_path, ["127.0.0.1"], network=False), web.url("/text"))
    assert out.refusal is not None and "sandbox_network = false" in out.refusal and web.requests == []


async def test_an_abort_closes_the_connection_of_a_slow_page(web: Web, tmp_path: Path) -> None:
    cancel = CancelToken()
    got: list[Outcome] = []
    async with anyio.create_task_group() as tg:

        async def call() -> None:
            policy = make_policy(tmp_path, ["127.0.0.1"])
            got.append(await run_fetch(policy, web.url("/slow"), cancel, on_progress))

        def on_progress(text: str) -> None:
            if text.startswith("received"):
                arrived.set()

        arrived = anyio.Event()
        tg.start_soon(call)
        with anyio.fail_after(30):
            await arrived.wait()  # the first part came, and was reported as progress
        assert web.slow_started.is_set()
        cancel.cancel("aborted")
        assert await anyio.to_thread.run_sync(web.slow_closed.wait, 30)  # the server saw the close
    assert got and got[0].text.startswith("Cancelled (aborted)")
    assert "received 26 bytes of 976.6 KB\n" in got[0].progress  # progress while the page came


async def test_cancelling_the_scope_closes_the_connection_too(web: Web, tmp_path: Path) -> None:
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(run_fetch, make_policy(tmp_path, ["127.0.0.1"]), web.url("/slow"))
            assert await anyio.to_thread.run_sync(web.slow_started.wait, 30)
            scope.cancel()
    assert await anyio.to_thread.run_sync(web.slow_closed.wait, 30)


async def test_a_host_that_is_down_is_one_line(tmp_path: Path, web: Web) -> None:
    web.close()
    out = await run_fetch(make_policy(tmp_path, ["127.0.0.1"]), web.url("/page"))
    assert out.output is not None and out.output.is_error
    assert out.text.startswith("could not connect to 127.0.0.1") and "\n" not in out.text
