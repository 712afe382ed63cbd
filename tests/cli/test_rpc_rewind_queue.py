"""Issue 14 over RPC, the real CLI against the fake OpenAI server: the queue item by item while
paused, checkpoints and rewind (real files, real git, the real bash tool), the paused state kept
with the session (-c after a quit or a crash), mcp_status, and lane timing (issue 14 item 5)."""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import Proc, openai_args


def _rpc(fake: FakeOpenAI, env: dict[str, str], ws: Path, *extra: str) -> Proc:
    return Proc(["--rpc", *openai_args(fake.url), *extra], env, ws)


@pytest.fixture
def procs() -> Iterator[list[Proc]]:
    started: list[Proc] = []
    yield started
    for p in started:
        p.kill()


def _users(request: dict[str, Any]) -> list[str]:
    """The user messages' texts of one request, in order."""
    out = []
    for m in request["messages"]:
        if m.get("role") == "user":
            content = m["content"]
            out.append(content if isinstance(content, str) else " ".join(c.get("text", "") for c in content))
    return out


def _turns_paired(seen: list[dict[str, Any]]) -> None:
    open_round: int | None = None
    for ev in seen:
        if ev.get("agent"):
            continue
        if ev["type"] == "turn_start":
            assert open_round is None, "turn_start inside a turn"
            open_round = ev["round"]
        elif ev["type"] == "turn_end":
            assert ev["round"] == open_round
            open_round = None
        elif ev["type"] == "agent_end":
            assert open_round is None, "agent_end with its turn open"


# ---- the queue, item by item ------------------------------------------------------------------
def test_queue_edit_remove_move_while_paused(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path, procs: list[Proc]
) -> None:
    rpc = _rpc(fake, env, workspace)
    procs.append(rpc)
    fake.add(Turn(text="answered go"), Turn(text="answered steering"), Turn(text="answered follow-up"))
    paused = rpc.call({"type": "pause", "id": 1})
    assert paused["ok"] and paused["changed"] is True and paused["frozen"] is True
    rpc.call({"type": "prompt", "text": "go", "id": 2})
    rpc.expect(type="turn_start")
    ids = {}
    for n, (lane, text) in enumerate(
        [("steer", "s1"), ("follow_up", "f1"), ("follow_up", "f2"), ("follow_up", "f3")]
    ):
        ids[text] = rpc.call({"type": lane, "text": text, "id": 10 + n})["queue_id"]
    # the queue commands' `id` is the message's: the response echoes it
    edited = rpc.call({"type": "queue_edit", "id": ids["f1"], "text": "f1 edited"})
    assert edited["ok"] and edited["item"] == {"id": ids["f1"], "text": "f1 edited", "source": "user"}
    assert edited["lane"] == "follow_up"
    removed = rpc.call({"type": "queue_remove", "id": ids["f2"]})
    assert removed["ok"] and removed["item"]["text"] == "f2"
    moved = rpc.call({"type": "queue_move", "id": ids["f3"], "lane": "steer", "before": ids["s1"]})
    assert moved["ok"] and moved["lane"] == "steer"
    state = rpc.call({"type": "get_state", "id": 30})
    assert state["paused"] is True and not fake.requests
    assert state["queue"] == {
        "steer": [
            {"id": ids["f3"], "text": "f3", "source": "user"},
            {"id": ids["s1"], "text": "s1", "source": "user"},
        ],
        "follow_up": [{"id": ids["f1"], "text": "f1 edited", "source": "user"}],
        "aside": [],
    }
    bad = rpc.call({"type": "queue_move", "id": ids["f1"], "before": ids["s1"]})
    assert bad["ok"] is False and "not in the follow_up lane" in bad["error"]

    rpc.call({"type": "resume", "id": 31})
    rpc.expect(type="agent_end", reason="done")  # one run: the steering, then the follow-up
    users = [_users(r) for r in fake.requests]
    everything = "\n".join("\n".join(u) for u in users)
    assert len(fake.requests) == 3 and "f2" not in everything
    assert "f1 edited" in everything and not re.search(r"\bf1\b(?! edited)", everything)
    assert users[0][-1] == "go"
    steer = users[1][-1]
    assert "f3" in steer and "s1" in steer and steer.index("f3") < steer.index("s1")  # steering merges
    assert users[2][-1].endswith("f1 edited") and "s1" not in users[2][-1]
    # delivered meanwhile: refused cleanly, with the reason
    for cmd in (
        {"type": "queue_edit", "id": ids["f1"], "text": "too late"},
        {"type": "queue_remove", "id": ids["s1"]},
        {"type": "queue_move", "id": ids["f3"], "lane": "follow_up"},
    ):
        answer = rpc.call(cmd)
        assert answer["ok"] is False and "delivered or removed meanwhile" in answer["error"]
    _turns_paired(rpc.seen)


# ---- checkpoints and rewind --------------------------------------------------------------------
def _git(ws: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ws), "-c", "user.email=t@t", "-c", "user.name=t", *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_rewind_a_turn_of_edits_writes_and_shell_over_rpc(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path, procs: list[Proc]
) -> None:
    ws = workspace
    (ws / "a.txt").write_text("alpha\nbeta\n")
    (ws / "g.txt").write_text("g as committed\n")
    _git(ws, "init", "-q")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-qm", "start")
    (ws / "notes.txt").write_text("untracked, staged later\n")
    _git(ws, "add", "notes.txt")
    status = _git(ws, "status", "--porcelain=v2", "--branch")
    refs = _git(ws, "for-each-ref")
    rpc = _rpc(fake, env, ws, "--yes")
    procs.append(rpc)
    fake.add(
        Turn(text="I looked."),
        Turn(
            text="Changing.",
            calls=[
                ("edit", {"path": "a.txt", "old_text": "beta", "new_text": "BETA"}),
                ("write", {"path": "new.txt", "content": "made by the turn\n"}),
                ("bash", {"command": "echo x > g.txt"}),
            ],
        ),
        Turn(text="Changed a.txt, new.txt and g.txt."),
        Turn(text="A fresh answer."),
    )
    rpc.call({"type": "prompt", "text": "look first", "id": 1})
    rpc.expect(type="agent_end", reason="done")
    rpc.call({"type": "prompt", "text": "change three files", "id": 2})
    rpc.expect(type="agent_end", reason="done")
    assert (ws / "a.txt").read_text() == "alpha\nBETA\n" and (ws / "g.txt").read_text() == "x\n"
    assert (ws / "new.txt").exists()

    listed = rpc.call({"type": "checkpoints", "id": 3})
    assert listed["ok"] is True
    cps = listed["checkpoints"]
    assert [c["prompt"] for c in cps] == ["look first", "change three files"]
    assert set(cps[0]) == {"id", "prompt", "at", "files"} and cps[0]["files"] == 0 and cps[1]["files"] == 3
    assert cps[0]["at"].endswith("+00:00")
    target = cps[1]["id"]
    rewound = rpc.call({"type": "rewind", "id": target})
    assert rewound["ok"] is True and rewound["restored"] == ["a.txt", "g.txt", "new.txt"]
    assert rewound["conversation"] is True
    assert (ws / "a.txt").read_text() == "alpha\nbeta\n" and (ws / "g.txt").read_text() == "g as committed\n"
    assert not (ws / "new.txt").exists()
    assert _git(ws, "status", "--porcelain=v2", "--branch") == status  # the user's repository, untouched
    assert _git(ws, "for-each-ref") == refs and _git(ws, "stash", "list") == ""

    rpc.call({"type": "prompt", "text": "something else", "id": 4})
    rpc.expect(type="agent_end", reason="done")
    last = json.dumps(fake.requests[-1]["messages"])
    assert "look first" in last and "I looked." in last and "something else" in last
    for trace in (
        "change three files",
        "Changing.",
        "tool_calls",
        "BETA",
        "echo x",
        "new.txt",
        "Changed a.txt",
    ):
        assert trace not in last, trace
    # files only, and an unknown id
    files_only = rpc.call({"type": "rewind", "id": cps[0]["id"], "conversation": False})
    assert files_only["ok"] and files_only["restored"] == [] and files_only["conversation"] is False
    unknown = rpc.call({"type": "rewind", "id": "nope"})
    assert unknown["ok"] is False and "no checkpoint nope" in unknown["error"]
    neither = rpc.call({"type": "rewind", "id": target, "files": False, "conversation": False})
    assert neither["ok"] is False and "nothing to rewind" in neither["error"]


# ---- the paused state is part of the session ----------------------------------------------------
@pytest.mark.parametrize("how", ["quit", "crash"])
def test_continue_after_a_paused_quit_or_crash_starts_paused(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path, procs: list[Proc], how: str
) -> None:
    rpc = _rpc(fake, env, workspace)
    procs.append(rpc)
    fake.add(Turn(text="before the pause"))
    rpc.call({"type": "prompt", "text": "hello", "id": 1})
    rpc.expect(type="agent_end", reason="done")
    rpc.call({"type": "pause", "id": 2})
    rpc.call({"type": "follow_up", "text": "when you are back", "id": 3})  # wakes a run that parks
    rpc.expect(type="turn_start")
    if how == "quit":
        rpc.call({"type": "quit", "id": 4})
        assert rpc.wait() == 0
    else:
        rpc.p.kill()
        rpc.p.wait()
    again = _rpc(fake, env, workspace, "-c")
    procs.append(again)
    state = again.call({"type": "get_state", "id": 1})
    assert state["paused"] is True and state["running"] is False
    assert [q["text"] for q in state["queue"]["follow_up"]] == ["when you are back"]
    assert len(fake.requests) == 1
    again.call({"type": "resume", "id": 2})
    again.call({"type": "quit", "id": 3})
    assert again.wait() == 0
    third = _rpc(fake, env, workspace, "-c")
    procs.append(third)
    assert third.call({"type": "get_state", "id": 1})["paused"] is False


# ---- MCP ------------------------------------------------------------------------------------------
def test_mcp_status_without_servers_and_with_a_failing_one(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path, procs: list[Proc], tmp_path: Path
) -> None:
    rpc = _rpc(fake, env, workspace)
    procs.append(rpc)
    assert rpc.call({"type": "mcp_status", "id": 1}) == {
        "type": "response",
        "command": "mcp_status",
        "id": 1,
        "ok": True,
        "servers": [],
    }
    rpc.call({"type": "quit", "id": 2})
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"broken": {"command": str(tmp_path / "no-such-server")}}}))
    fake.add(Turn(text="fine without it"))
    rpc = _rpc(fake, env, workspace, "--mcp-config", str(config))
    procs.append(rpc)
    deadline = time.monotonic() + 30
    while True:
        servers = rpc.call({"type": "mcp_status", "id": 3})["servers"]
        if (servers and servers[0]["state"] not in ("pending", "connecting")) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert len(servers) == 1 and servers[0]["name"] == "broken" and servers[0]["state"] == "failed"
    assert servers[0]["tools"] == [] and servers[0]["error"]
    rpc.call({"type": "prompt", "text": "go on", "id": 4})  # the run finishes all the same
    rpc.expect(type="agent_end", reason="done")


# ---- lane timing (issue 14 item 5) ----------------------------------------------------------------
def test_a_steer_queued_during_a_batch_stays_listed_and_editable_while_parked(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path, procs: list[Proc]
) -> None:
    rpc = _rpc(fake, env, workspace, "--yes")
    procs.append(rpc)
    # the command runs until the test lets it end: the pause and the steer come during the batch
    fake.add(
        Turn(calls=[("bash", {"command": "while [ ! -e go ]; do sleep 0.02; done"})]),
        Turn(text="steered answer"),
    )
    rpc.call({"type": "prompt", "text": "run it", "id": 1})
    rpc.expect(type="tool_start")
    rpc.call({"type": "pause", "freeze": False, "id": 2})  # the command finishes; the run parks after it
    qid = rpc.call({"type": "steer", "text": "use python instead", "id": 3})["queue_id"]
    (workspace / "go").touch()
    rpc.expect(type="tool_end")
    rpc.expect(type="turn_end")
    rpc.expect(type="turn_start")  # the next round: parked before its model call
    state = rpc.call({"type": "get_state", "id": 4})
    assert [q["text"] for q in state["queue"]["steer"]] == ["use python instead"]
    assert not any(e["type"] == "input" and e.get("lane") == "steer" for e in rpc.seen)
    assert rpc.call({"type": "queue_edit", "id": qid, "text": "use perl instead"})["ok"] is True
    assert len(fake.requests) == 1
    rpc.call({"type": "resume", "id": 5})
    steer = rpc.expect(type="input", lane="steer")
    assert steer["text"] == "use perl instead"
    rpc.expect(type="agent_end", reason="done")
    assert "use perl instead" in _users(fake.requests[1])[-1]
    assert "python" not in json.dumps(fake.requests[1]["messages"])


def test_steer_and_follow_up_at_the_stop_are_two_requests_and_follow_ups_one_turn_each(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path, procs: list[Proc]
) -> None:
    rpc = _rpc(fake, env, workspace)
    procs.append(rpc)
    hold = threading.Event()
    fake.add(
        Turn(text="final answer", hold=hold), Turn(text="steer answered"), Turn(text="follow-up answered")
    )
    rpc.call({"type": "prompt", "text": "start", "id": 1})
    fake.wait_request()
    rpc.call({"type": "follow_up", "text": "afterwards", "id": 2})
    rpc.call({"type": "steer", "text": "correction", "id": 3})
    hold.set()
    rpc.expect(type="agent_end", reason="done")
    assert len(fake.requests) == 3
    second, third = _users(fake.requests[1])[-1], _users(fake.requests[2])[-1]
    assert "correction" in second and "afterwards" not in second
    assert "afterwards" in third and "correction" not in third

    hold2 = threading.Event()
    fake.add(Turn(text="busy", hold=hold2), *(Turn(text=f"did {n}") for n in (1, 2, 3)))
    while not fake.arrivals.empty():
        fake.arrivals.get()
    rpc.call({"type": "prompt", "text": "again", "id": 4})
    fake.wait_request()
    for n in (1, 2, 3):
        rpc.call({"type": "follow_up", "text": f"follow-up {n}", "id": 10 + n})
    hold2.set()
    rpc.expect(type="agent_end", reason="done")
    tail = [_users(r)[-1] for r in fake.requests[4:]]
    assert len(tail) == 3 and all(t.endswith(f"follow-up {n}") for n, t in zip((1, 2, 3), tail, strict=True))
    assert all(
        f"follow-up {m}" not in t for n, t in zip((1, 2, 3), tail, strict=True) for m in (1, 2, 3) if m != n
    )
    inputs = [e for e in rpc.seen if e["type"] == "input" and e["lane"] == "follow_up"]
    assert [e["text"] for e in inputs[-3:]] == ["follow-up 1", "follow-up 2", "follow-up 3"]
    _turns_paired(rpc.seen)


def test_turns_are_paired_on_abort_and_model_error(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path, procs: list[Proc]
) -> None:
    rpc = _rpc(fake, env, workspace)
    procs.append(rpc)
    hold = threading.Event()
    fake.add(Turn(text="half", hold=hold))
    rpc.call({"type": "prompt", "text": "go", "id": 1})
    fake.wait_request()
    rpc.call({"type": "abort", "id": 2})
    rpc.expect(type="agent_end", reason="aborted")
    hold.set()
    fake.add(Turn(status=400, error="bad request"))
    rpc.call({"type": "prompt", "text": "fail", "id": 3})
    rpc.expect(type="agent_end", reason="error")
    _turns_paired(rpc.seen)
    kinds = [e["type"] for e in rpc.seen if e["type"] in ("turn_start", "turn_end")]
    assert kinds == ["turn_start", "turn_end"] * 2
