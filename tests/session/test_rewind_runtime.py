"""Checkpoints wired into the runtime (issue 14, item 3) and the pause state kept with the session
(item 1), in-process with a ScriptedModel, real files and real git: a checkpoint before each user
turn (prompt and follow-up), rewinding files and conversation with a session and without one,
/undo, the /rewind picker, a broken store warning once, config switches, -c starting paused. (The
user's repository left untouched: tests/cli/test_rpc_rewind_queue.py.)"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from owltui.agent.messages import AssistantMessage, ToolResult, UserMessage
from owltui.agent.pause import GATE
from owltui.session.checkpoints.listing import skipped_note
from owltui.session.checkpoints.rewind import SHARED_DIR, STORE_NAME
from owltui.session.commands.layer import Commands
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.session.runtime.runtime import Runtime
from owltui.session.store.store import SessionStore
from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.session.test_command_layer import Front

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _open_gate() -> Any:
    """The gate is process-wide: every test leaves it open."""
    yield
    GATE.resume()


def _env(tmp_path: Path, config: str = "") -> dict[str, str]:
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "HOME": str(tmp_path),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
    }
    if config:
        path = tmp_path / "cfg" / "owltui" / "config.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(config)
    return env


def _build(
    tmp_path: Path, steps: list[Step], *, config: str = "", warn: Any = None, **opts: Any
) -> tuple[Runtime, ScriptedModel]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    model = ScriptedModel(steps)
    rt = build_runtime(
        Options(workspace=ws, yes=True, **opts), model=model, env=_env(tmp_path, config), warn=warn
    )
    return rt, model


def _texts(view: list[Any]) -> str:
    return "\n".join(getattr(i, "text", "") or getattr(i, "content", "") for i in view)


EDIT_TURN = [
    Step(
        calls=[
            Call("edit", {"path": "a.txt", "old_text": "one", "new_text": "ONE"}),
            Call("write", {"path": "b.txt", "content": "new file\n"}),
            Call("bash", {"command": "echo x > g.txt"}),
        ]
    ),
    Step(text="changed three files"),
]


async def _run(rt: Runtime, text: str) -> None:
    assert rt.agent.prompt(text)
    await rt.wait_settled()


@pytest.mark.parametrize("no_session", [False, True])
async def test_rewind_files_and_conversation(tmp_path: Path, no_session: bool) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\ntwo\n")
    (ws / "g.txt").write_text("g before\n")
    rt, model = _build(
        tmp_path, [Step(text="looked"), *EDIT_TURN, Step(text="fresh answer")], no_session=no_session
    )
    async with rt:
        await _run(rt, "look around")
        await _run(rt, "change the files")
        assert (ws / "a.txt").read_text() == "ONE\ntwo\n" and (ws / "g.txt").read_text() == "x\n"
        assert (ws / "b.txt").exists()
        cps = rt.checkpoints
        assert cps is not None
        listed = await cps.checkpoints()
        assert [c.prompt for c in listed] == ["look around", "change the files"]
        assert listed[0].files == 0 and listed[1].files == 3
        done = await cps.rewind(listed[1].id)
        assert done.restored == ["a.txt", "b.txt", "g.txt"] and done.conversation
        assert (ws / "a.txt").read_text() == "one\ntwo\n" and (ws / "g.txt").read_text() == "g before\n"
        assert not (ws / "b.txt").exists()
        assert [type(i) for i in rt.agent.history.items()] == [UserMessage, AssistantMessage]
        await _run(rt, "start over")
    last = _texts(model.views[-1])
    assert "look around" in last and "start over" in last
    assert "change the files" not in last and "changed three files" not in last and "g.txt" not in last
    assert not any(isinstance(i, ToolResult) for i in model.views[-1])
    if no_session:
        assert not cps.directory.exists()  # the temporary store went with the runtime
        return
    assert rt.store is not None
    # one store for the workspace's sessions, this session's checkpoints on its own ref there
    assert not (rt.store.path.with_suffix("") / STORE_NAME).exists()
    assert cps.directory.parent == tmp_path / "data" / "owltui" / SHARED_DIR
    assert cps.session == rt.store.path.stem
    # the old branch stays in the file; -c resumes the new one
    text = rt.store.path.read_text()
    assert "changed three files" in text and '"type":"branch"' in text.replace(" ", "")
    again = SessionStore.open(rt.store.path)
    assert [getattr(i, "text", "") for i in again.items()] == [
        "look around",
        "looked",
        "start over",
        "fresh answer",
    ]
    again.close()


async def test_follow_ups_get_their_own_checkpoint_and_undo(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\n")
    hold = anyio.Event()
    steps = [
        Step(text="first", gate=hold),
        Step(calls=[Call("write", {"path": "a.txt", "content": "two\n"})]),
        Step(text="wrote"),
        Step(text="noted"),
    ]
    rt, model = _build(tmp_path, steps)
    async with rt:
        c = Commands(rt, Front())
        streaming = anyio.Event()
        rt.emitter.subscribe(lambda ev: streaming.set() if ev.type == "message_start" else None)
        assert rt.agent.prompt("one")
        await streaming.wait()
        c.call("follow_up", text="rewrite a.txt")
        c.call("follow_up", text="just note it")
        hold.set()
        await rt.wait_settled()
        assert rt.checkpoints is not None
        prompts = [cp.prompt for cp in await rt.checkpoints.checkpoints()]
        assert prompts == ["one", "rewrite a.txt", "just note it"]
        assert (ws / "a.txt").read_text() == "two\n"
        undo = c.slash("/undo")  # the last turn changed nothing
        assert undo is not None and undo.then is not None
        assert (await undo.then).data == {"restored": []}
        picked = c.slash("/rewind")
        assert picked is not None and picked.then is not None
        reply = await picked.then
        assert reply.pick is not None and reply.pick.command == "rewind"
        assert reply.pick.options == [cp.id for cp in reversed(await rt.checkpoints.checkpoints())]
        assert "rewrite a.txt" in reply.pick.labels[1] and "1 file" in reply.pick.labels[1]
        assert "rewrite a.txt" in reply.text
        chosen = c.slash(f"/rewind {reply.pick.options[1]} files")
        assert chosen is not None and chosen.then is not None
        done = await chosen.then
        assert done.ok and done.data == {"restored": ["a.txt"], "conversation": False}
        assert not done.clear_view and (ws / "a.txt").read_text() == "one\n"
        assert len(rt.agent.history.items()) == 8  # the conversation was left alone
        busy_hold = anyio.Event()
        model.add(Step(text="slow", gate=busy_hold))
        rt.agent.prompt("busy")
        refused = c.call("rewind", id=reply.pick.options[0])
        assert not refused.ok and "a run is going" in refused.text
        busy_hold.set()
        await rt.wait_settled()
        unknown = c.call("rewind", id="nope")
        assert unknown.then is not None
        missing = await unknown.then
        assert not missing.ok and "no checkpoint nope" in missing.text


async def test_a_broken_store_warns_once_and_turns_pass(tmp_path: Path) -> None:
    warnings: list[str] = []
    rt, model = _build(tmp_path, [Step(text="a"), Step(text="b")], warn=warnings.append)
    assert rt.checkpoints is not None and rt.store is not None
    blocker = tmp_path / "data" / "owltui" / SHARED_DIR
    blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text("in the way")  # the checkpoint directory cannot be made
    async with rt:
        await _run(rt, "first")
        await _run(rt, "second")
    assert model.calls == 2
    off = [w for w in warnings if "checkpoints are off" in w]
    assert len(off) == 1 and not rt.checkpoints.enabled
    reply = Commands(rt, Front()).call("checkpoints")
    assert reply.then is not None
    failed = await reply.then
    assert not failed.ok and "Checkpoints are off for this session" in failed.text


async def test_config_switches(tmp_path: Path) -> None:
    rt, _ = _build(tmp_path, [], config='checkpoints = false\nfollow_up_mode = "all"\n')
    assert rt.checkpoints is None and rt.agent.config.before_user_turn is None
    assert rt.agent.config.follow_up_mode == "all"
    refused = Commands(rt, Front()).call("checkpoints")
    assert not refused.ok and "not taken" in refused.text
    rt2, _ = _build(
        tmp_path, [], config="checkpoint_max_file_bytes = 10\n", no_session=True, interactive=False
    )
    assert rt2.checkpoints is None  # print mode without a session: nothing could rewind them
    rt3, _ = _build(tmp_path, [], config="checkpoint_max_file_bytes = 10\n")
    assert rt3.checkpoints is not None and rt3.checkpoints.max_file_bytes == 10
    for r in (rt, rt2, rt3):
        await r.aclose()


async def test_continue_after_a_paused_quit_starts_paused(tmp_path: Path) -> None:
    hold = anyio.Event()
    rt, _ = _build(tmp_path, [Step(text="parked", gate=hold)])
    async with rt:
        assert rt.pause()
        c = Commands(rt, Front())
        c.call("follow_up", text="later")
        rt.agent.prompt("go")  # parks before its model call
        with anyio.fail_after(10):
            while not rt.gate.parked:
                await anyio.wait_all_tasks_blocked()
    GATE.resume()  # the process-wide gate of a new process starts open
    rt2, model = _build(tmp_path, [Step(text="answered"), Step(text="later done")], continue_session=True)
    async with rt2:
        assert rt2.gate.paused and rt2.state()["paused"] is True
        assert [q["text"] for q in rt2.state()["queue"]["follow_up"]] == ["later"]
        assert rt2.store is not None and rt2.store.paused
        rt2.gate.resume()
        assert rt2.store is not None and not rt2.store.paused
    rt3, _ = _build(tmp_path, [], continue_session=True)
    async with rt3:
        assert not rt3.gate.paused  # resumed before the last quit


def test_skipped_note() -> None:
    from owltui.session.checkpoints.records import Skipped

    assert skipped_note([]) == ""
    note = skipped_note(
        [
            Skipped("big.bin", "too large", 6_000_000),
            Skipped("vendor/lib", "repository"),
            *(Skipped(f"d{i}/", "ignored") for i in range(6)),
        ]
    )
    assert note == (
        "not restored - too large: big.bin 6.0 MB; nested repositories: vendor/lib; "
        "ignored: d0/, d1/, d2/, d3/ and 2 more"
    )


async def test_the_snapshot_overlaps_the_model_call_and_holds_the_first_tool(tmp_path: Path) -> None:
    """A slow snapshot (a big workspace) does not delay the turn's first request; the first tool
    waits for it, so the checkpoint still has the files as they were before the turn."""
    rt, model = _build(tmp_path, EDIT_TURN)
    (rt.workspace / "a.txt").write_text("one\n")
    cps = rt.checkpoints
    assert cps is not None
    release = threading.Event()
    store = cps.store()
    real = store.checkpoint

    def slow(*args: Any, **kwargs: Any) -> Any:
        assert release.wait(10)
        return real(*args, **kwargs)

    store.checkpoint = slow  # type: ignore[method-assign]
    async with rt:
        rt.agent.prompt("make it loud")
        with anyio.fail_after(10):
            while model.calls < 1:  # the first request goes out while the snapshot is held
                await anyio.wait_all_tasks_blocked()
        await anyio.wait_all_tasks_blocked()  # the edit would have run by now, were it not held
        assert (rt.workspace / "a.txt").read_text() == "one\n"
        release.set()
        await rt.wait_settled()
        assert (rt.workspace / "a.txt").read_text() == "ONE\n"
        rewound = await cps.rewind(None)  # the snapshot has the file as it was before the turn
    assert "a.txt" in rewound.restored and (rt.workspace / "a.txt").read_text() == "one\n"
