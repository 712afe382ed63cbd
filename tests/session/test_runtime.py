"""The runtime in-process (ScriptedModel): state, gate events, jobs waking the agent, approvals,
model switching, config errors and clean shutdown."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from owltui.agent.events import Event
from owltui.providers.http.errors import ProviderConfigError
from owltui.session.config import ConfigError
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.session.runtime.runtime import Runtime
from owltui.session.store.store import SessionStore
from owltui.testing.scripted import Call, ScriptedModel, Step

pytestmark = pytest.mark.anyio


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "HOME": str(tmp_path),
    }


def _build(tmp_path: Path, steps: list[Step], **opts: object) -> tuple[Runtime, ScriptedModel, list[Event]]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    model = ScriptedModel(steps)
    rt = build_runtime(Options(workspace=ws, **opts), model=model, env=_env(tmp_path))  # type: ignore[arg-type]
    events: list[Event] = []
    rt.emitter.subscribe(events.append)
    return rt, model, events


async def test_state_and_tools(tmp_path: Path) -> None:
    rt, _, _ = _build(tmp_path, [Step(text="hi")])
    async with rt:
        state = rt.state()
        assert state["running"] is False and state["paused"] is False
        assert state["queue"] == {"steer": [], "follow_up": [], "aside": []}
        assert state["session_id"] == rt.session_id and state["model"] == "scripted"
        names = rt.tool_names()
        assert names == sorted(names) and {"bash", "read", "read_result", "job_output"} <= set(names)
        assert rt.agent.prompt("hello")
        assert rt.state()["running"] is True
        await rt.wait_settled()
    assert rt.store is not None and rt.store.closed


async def test_gate_events(tmp_path: Path) -> None:
    rt, _, events = _build(tmp_path, [])
    async with rt:
        try:
            rt.gate.pause()
            assert rt.state()["paused"] is True
        finally:
            rt.gate.resume()
    assert [e.type for e in events] == ["paused", "resumed"]
    assert events[1].wire()["paused_ms"] >= 0
    rt.gate.pause()  # after close: no longer subscribed
    rt.gate.resume()
    assert len(events) == 2


async def test_finished_job_wakes_the_agent(tmp_path: Path) -> None:
    steps = [
        Step(calls=[Call("bash", {"command": "echo begin; sleep 0.5; echo end", "timeout": 0.1})]),
        Step(text="It runs in the background."),
        Step(text="The job is done."),
    ]
    rt, model, events = _build(tmp_path, steps, yes=True)
    async with rt:
        rt.agent.prompt("start it")
        await rt.wait_settled()
        assert rt.active_jobs == {}
    types = [e.type for e in events]
    assert types.count("job_started") == 1 and types.count("job_finished") == 1
    assert types.count("agent_start") == 2
    assert model.calls == 3
    items = list(rt.agent.history.items())  # requests hold the live history: read it at the end
    aside = items[-2]
    assert getattr(aside, "lane", None) == "aside" and "exit code 0" in aside.text  # type: ignore[union-attr]
    assert getattr(items[-1], "text", None) == "The job is done."


async def test_interactive_approval(tmp_path: Path) -> None:
    steps = [Step(calls=[Call("write", {"path": "a.txt", "content": "x"})]), Step(text="written")]
    rt, _, events = _build(tmp_path, steps)
    async with rt:
        asked = anyio.Event()
        rt.approvals.subscribe(lambda action, _p: asked.set() if action == "asked" else None)
        rt.agent.prompt("write it")
        await asked.wait()
        [pending] = rt.approvals.pending()
        assert rt.state()["approvals"] == [pending.call_id]
        assert not rt.approvals.answer(pending.call_id, "perhaps")
        assert rt.approvals.answer(pending.call_id, "allow")
        await rt.wait_settled()
    assert (tmp_path / "ws" / "a.txt").read_text() == "x"
    assert "approval_request" in [e.type for e in events]


async def test_aborting_withdraws_a_pending_approval(tmp_path: Path) -> None:
    rt, _, events = _build(tmp_path, [Step(calls=[Call("bash", {"command": "true"})])])
    async with rt:
        asked = anyio.Event()
        rt.approvals.subscribe(lambda action, _p: asked.set() if action == "asked" else None)
        rt.agent.prompt("go")
        await asked.wait()
        rt.agent.abort()
        await rt.wait_settled()
        assert rt.approvals.pending() == []
    ends = [e.wire() for e in events if e.type in ("tool_end", "agent_end")]
    assert ends[0]["status"] == "cancelled" and ends[-1]["reason"] == "aborted"


async def test_non_interactive_refuses(tmp_path: Path) -> None:
    steps = [Step(calls=[Call("bash", {"command": "touch nope"})]), Step(text="refused")]
    rt, model, _ = _build(tmp_path, steps, interactive=False)
    async with rt:
        rt.agent.prompt("go")
        await rt.wait_settled()
    assert not (tmp_path / "ws" / "nope").exists()
    result = rt.agent.history.items()[2]
    assert getattr(result, "status", None) == "refused" and model.calls == 2


async def test_set_model_records_the_change(tmp_path: Path) -> None:
    rt, _, _ = _build(tmp_path, [])
    async with rt:
        rt.agent.prompt("hi")
        await rt.wait_settled()
        rt.set_model("demo")
        assert rt.model_label == "demo (offline)" and rt.state()["model"] == "demo (offline)"
        with pytest.raises(ProviderConfigError):
            rt.set_model("anthropic:claude-sonnet-4-5")  # no key in this environment
    assert rt.store is not None
    assert SessionStore.open(rt.store.path).model == "demo (offline)"


def test_config_and_provider_errors(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg" / "owltui" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text("bogus = 1\n")
    with pytest.raises(ConfigError, match="bogus"):
        build_runtime(Options(workspace=tmp_path), env=_env(tmp_path))
    cfg.write_text("")
    with pytest.raises(ProviderConfigError, match="ANTHROPIC_API_KEY"):
        build_runtime(Options(workspace=tmp_path, provider="anthropic"), env=_env(tmp_path))
    rt = build_runtime(Options(workspace=tmp_path, provider="demo", no_session=True), env=_env(tmp_path))
    assert rt.model_label == "demo (offline)" and rt.store is None and rt.session_id is None


async def test_continue_loads_history(tmp_path: Path) -> None:
    rt, _, _ = _build(tmp_path, [Step(text="first answer")])
    async with rt:
        rt.agent.prompt("first")
        await rt.wait_settled()
    rt2, model, _ = _build(tmp_path, [Step(text="second answer")], continue_session=True)
    assert rt2.session_id == rt.session_id
    async with rt2:
        rt2.agent.prompt("second")
        await rt2.wait_settled()
    texts = [getattr(m, "text", "") for m in model.requests[0].messages]
    assert texts == ["first", "first answer", "second", "second answer"]


async def test_compact_and_new_session(tmp_path: Path) -> None:
    rt, model, _ = _build(
        tmp_path, [Step(text="answer one"), Step(text="The user asked one thing."), Step(text="answer two")]
    )
    async with rt:
        rt.agent.prompt("question one")
        await rt.wait_settled()
        result = await rt.compact()
        assert "2 items" in result
        # the summary is written by the same loop: no tools, the transcript in one message
        assert model.requests[1].tools == () and "question one" in model.views[1][0].text
        rt.agent.prompt("question two")
        await rt.wait_settled()
        view = [getattr(m, "text", "") for m in rt.agent.history.model_view()]
        assert view == [
            "Summary of the earlier conversation:\nThe user asked one thing.",
            "question two",
            "answer two",
        ]
        first = rt.session_id
        rt.new_session()
        assert rt.session_id != first and list(rt.agent.history.items()) == []
        model.add(Step(text="fresh answer"))
        rt.agent.prompt("fresh start")
        await rt.wait_settled()
    assert rt.store is not None
    texts = [getattr(i, "text", "") for i in SessionStore.open(rt.store.path).items()]
    assert texts == ["fresh start", "fresh answer"]
