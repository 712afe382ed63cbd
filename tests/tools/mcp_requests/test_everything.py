"""Elicitation and roots against server-everything, through the real runtime: a scripted
model calls the server's tools, which ask OwlTUI; the answer comes from the session's asker (or
the policy). server-everything registers these tools only for a client that advertises the
capability, so their presence proves the advertisement. A form accepted and one declined, and the roots,
over stdio and Streamable HTTP (the ``everything`` fixture); the rest over stdio."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from owltui.agent.messages import ToolResult
from owltui.testing.scripted import Call, ScriptedModel, Step
from owltui.tools.mcp.requests.question import Answer, Question
from tests.tools.mcp_resources.helpers import ready, runtime

pytestmark = pytest.mark.anyio
ELICIT = "mcp__everything__trigger-elicitation-request"
URL_ELICIT = "mcp__everything__trigger-url-elicitation"
ROOTS = "mcp__everything__get-roots-list"
SITE = "https://example.com/consent"


def results(rt: Any) -> dict[str, ToolResult]:
    return {r.call_id: r for r in rt.agent.history.items() if isinstance(r, ToolResult)}


def script(*calls: Call) -> ScriptedModel:
    return ScriptedModel([Step(calls=[c]) for c in calls] + [Step(text="done")])


async def test_a_form_is_asked_and_the_validated_answer_reaches_the_server(
    tmp_path: Path, everything: dict[str, Any]
) -> None:
    asked: list[Question] = []

    async def asker(question: Question) -> Answer:
        asked.append(question)
        return Answer(action="accept", content={"name": "Ada", "check": True, "integer": 7})

    model = script(Call(ELICIT, {}, id="e1"))
    rt = runtime(tmp_path, model, everything)
    async with rt:
        await ready(rt)
        assert rt.mcp is not None
        rt.mcp.requests.asker = asker
        names = {t.name for t in rt.mcp.tools()}
        assert ELICIT in names and ROOTS in names  # registered: elicitation and roots advertised
        assert "mcp__everything__trigger-sampling-request" not in names  # sampling is not
        assert rt.agent.prompt("ask me")
        await rt.agent.wait_idle()
        got = results(rt)["e1"]
    (question,) = asked
    assert question.server == "everything" and question.mode == "form"
    by_name = {f.name: f for f in question.fields}
    assert by_name["integer"].kind == "integer" and by_name["integer"].default == 42
    assert by_name["titledSingleSelectEnum"].choice_titles == ["Superman", "Green Lantern", "Wonder Woman"]
    assert by_name["untitledMultipleSelectEnum"].kind == "multi"
    assert not got.is_error, got.content
    assert '"action": "accept"' in got.content or "accept" in got.content
    assert "Ada" in got.content and "It was a dark and stormy night." in got.content  # a default filled in


async def test_a_declined_form_is_reported_to_the_server_as_declined(
    tmp_path: Path, everything: dict[str, Any]
) -> None:
    async def asker(question: Question) -> Answer:
        return Answer(action="decline")

    rt = runtime(tmp_path, script(Call(ELICIT, {}, id="e1")), everything)
    async with rt:
        await ready(rt)
        assert rt.mcp is not None
        rt.mcp.requests.asker = asker
        assert rt.agent.prompt("ask me")
        await rt.agent.wait_idle()
        got = results(rt)["e1"]
    assert "decline" in got.content.lower() and "Ada" not in got.content


async def test_without_anyone_to_ask_the_form_is_declined(tmp_path: Path) -> None:
    rt = runtime(tmp_path, script(Call(ELICIT, {}, id="e1")))
    async with rt:
        await ready(rt)
        assert rt.mcp is not None
        rt.mcp.requests.asker = None  # as in print mode (the real process: test_print_mode)
        assert rt.agent.prompt("ask me")
        await rt.agent.wait_idle()
        got = results(rt)["e1"]
    assert "decline" in got.content.lower()


async def test_accept_defaults_declines_a_form_whose_required_field_has_no_default(
    tmp_path: Path,
) -> None:
    """server-everything requires ``name``, which has no default: nothing valid can be sent."""
    rt = runtime(tmp_path, script(Call(ELICIT, {}, id="e1")))
    async with rt:
        await ready(rt)
        assert rt.mcp is not None
        rt.mcp.requests.policy = "accept-defaults"
        assert rt.agent.prompt("ask me")
        await rt.agent.wait_idle()
        got = results(rt)["e1"]
    assert "declined" in got.content and "stormy" not in got.content


async def test_a_url_elicitation_opens_the_url_only_on_consent(tmp_path: Path) -> None:
    opened: list[str] = []
    answers = iter(["decline", "accept"])
    asked: list[Question] = []

    async def asker(question: Question) -> Answer:
        asked.append(question)
        return Answer(action=next(answers))  # type: ignore[arg-type]

    rt = runtime(
        tmp_path, script(Call(URL_ELICIT, {"url": SITE}, id="u1"), Call(URL_ELICIT, {"url": SITE}, id="u2"))
    )
    async with rt:
        await ready(rt)
        assert rt.mcp is not None
        rt.mcp.requests.asker = asker
        rt.mcp.requests.open_url = opened.append
        assert rt.agent.prompt("open it")
        await rt.agent.wait_idle()
        got = results(rt)
    assert [(q.mode, q.url) for q in asked] == [("url", SITE), ("url", SITE)]
    assert opened == [asked[1].url]  # the declined one was not opened
    assert not got["u2"].is_error


async def test_the_workspace_is_the_root_and_a_change_is_announced(
    tmp_path: Path, everything: dict[str, Any]
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    model = ScriptedModel(
        [
            Step(calls=[Call(ROOTS, {}, id="r1")]),
            Step(text="ok"),
            Step(calls=[Call(ROOTS, {}, id="r2")]),
            Step(text="done"),
        ]
    )
    rt = runtime(tmp_path, model, everything)
    async with rt:
        await ready(rt)
        assert rt.mcp is not None
        requests = rt.mcp.requests
        asked_again = anyio.Event()
        plain = requests.roots

        def roots() -> Any:
            if requests.workspace == other:
                asked_again.set()
            return plain()

        requests.roots = roots  # type: ignore[method-assign]
        assert rt.agent.prompt("roots")
        await rt.agent.wait_idle()
        await requests.set_workspace(other)
        with anyio.fail_after(20):
            await asked_again.wait()  # the server asked again after roots/list_changed
        assert rt.agent.prompt("roots again")
        await rt.agent.wait_idle()
        got = results(rt)
    assert (tmp_path / "ws").as_uri() in got["r1"].content
    assert other.as_uri() in got["r2"].content and (tmp_path / "ws").as_uri() not in got["r2"].content


async def test_an_aborted_call_withdraws_the_question(tmp_path: Path) -> None:
    """The user stops the run while the form is open: the server withdraws its request and the
    question goes (the TUI's dialog with it), answered by nobody."""
    from owltui.tools.mcp.requests.broker import ElicitBroker, PendingQuestion

    rt = runtime(tmp_path, script(Call(ELICIT, {}, id="e1")))
    async with rt:
        await ready(rt)
        assert rt.mcp is not None
        events: list[str] = []
        asked, withdrawn = anyio.Event(), anyio.Event()
        broker = ElicitBroker(lambda event: events.append(event.type))

        def watch(action: str, pending: PendingQuestion) -> None:
            (asked if action == "asked" else withdrawn).set()

        broker.subscribe(watch)
        rt.mcp.requests.asker = broker
        assert rt.agent.prompt("ask me")
        with anyio.fail_after(30):
            await asked.wait()
            assert rt.agent.abort()
            await withdrawn.wait()
            await rt.agent.wait_idle()
        assert broker.pending() == []
    assert events == ["mcp_elicitation", "mcp_elicitation_closed"]
