"""OwlTUI's events as ACP updates: translation tables (wire events in, updates out, compared as the
JSON the client gets), and a real runtime's turn with a read, an edit and a command translated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from owltui.modes.acp.updates import Notice, Updates
from owltui.modes.event_text import wire_event
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.testing.scripted import Call, ScriptedModel, Step


def dump(out: list[Any]) -> list[dict[str, Any]]:
    return [
        {"notice": o.method, **o.params}
        if isinstance(o, Notice)
        else o.model_dump(by_alias=True, exclude_none=True)
        for o in out
    ]


def feed(updates: Updates, *events: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[Any] = []
    for e in events:
        out += updates.event(e)
    return dump(out)


def end(text: str = "", calls: list[dict[str, Any]] | None = None, stop: str = "stop") -> dict[str, Any]:
    return {
        "type": "message_end",
        "role": "assistant",
        "text": text,
        "thinking": "",
        "tool_calls": calls or [],
        "stop_reason": stop,
        "usage": {"input_tokens": 100, "output_tokens": 20, "cache_read_tokens": 30, "cache_write_tokens": 0},
    }


def usage(used: int = 150, size: int = 0) -> dict[str, Any]:
    return {
        "sessionUpdate": "usage_update",
        "used": used,
        "size": size,
        "_meta": {
            "owltui": {
                "usage": {
                    "input_tokens": 100,
                    "output_tokens": 20,
                    "cache_read_tokens": 30,
                    "cache_write_tokens": 0,
                }
            }
        },
    }


def chunk(kind: str, text: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def test_streamed_answer_and_thinking(tmp_path: Path) -> None:
    u = Updates(tmp_path, context_window=lambda: 200_000)
    out = feed(
        u,
        {"type": "agent_start", "run_id": "r1"},
        {"type": "message_start", "role": "assistant"},
        {"type": "message_delta", "thinking": "hmm"},
        {"type": "message_delta", "text": "Hel"},
        {"type": "message_delta", "text": "lo"},
        end("Hello"),
        {"type": "agent_end", "reason": "done"},
    )
    assert out == [
        chunk("agent_thought_chunk", "hmm"),
        chunk("agent_message_chunk", "Hel"),
        chunk("agent_message_chunk", "lo"),
        usage(size=200_000),
    ]
    assert u.stop_reason() == "end_turn"


def test_a_message_that_streamed_nothing_is_sent_whole(tmp_path: Path) -> None:
    u = Updates(tmp_path)
    out = feed(u, {"type": "message_start"}, {**end("all at once"), "thinking": "why"})
    assert out[:2] == [chunk("agent_thought_chunk", "why"), chunk("agent_message_chunk", "all at once")]


@pytest.mark.parametrize(
    ("reason", "last_stop", "expected"),
    [
        ("done", "stop", "end_turn"),
        ("done", "length", "max_tokens"),
        ("aborted", "aborted", "cancelled"),
        ("round_limit", "tool_use", "max_turn_requests"),
        ("failure_limit", "stop", "end_turn"),
    ],
)
def test_stop_reasons(tmp_path: Path, reason: str, last_stop: str, expected: str) -> None:
    u = Updates(tmp_path)
    assert u.stop_reason() is None
    feed(u, {"type": "message_start"}, end("x", stop=last_stop), {"type": "agent_end", "reason": reason})
    assert u.stop_reason() == expected
    assert u.error() is None


def test_an_error_is_told_and_kept(tmp_path: Path) -> None:
    u = Updates(tmp_path)
    out = feed(u, {"type": "agent_end", "reason": "error", "error": "provider said no"})
    assert out == [chunk("agent_message_chunk", "\n\nerror: provider said no")]
    assert u.error() == "provider said no" and u.stop_reason() == "end_turn"


def test_delivered_steering_is_shown_the_prompt_is_not(tmp_path: Path) -> None:
    u = Updates(tmp_path)
    out = feed(
        u,
        {"type": "input", "lane": "user", "text": "the prompt"},
        {"type": "input", "lane": "steer", "text": "use tabs"},
        {"type": "input", "lane": "follow_up", "text": "then test"},
        {"type": "input", "lane": "reminder", "text": "call read"},
    )
    assert out == [chunk("user_message_chunk", "use tabs"), chunk("user_message_chunk", "then test")]


def test_read_call_pending_running_completed(tmp_path: Path) -> None:
    u = Updates(tmp_path)
    call = {"id": "c1", "name": "read", "arguments": {"path": "src/a.py", "offset": 3}}
    out = feed(
        u,
        {"type": "message_start"},
        end("", [call], stop="tool_use"),
        {"type": "tool_start", "call_id": "c1", "name": "read", "arguments": call["arguments"]},
        {
            "type": "tool_end",
            "call_id": "c1",
            "name": "read",
            "is_error": False,
            "output": "3\tx = 1",
            "status": "ok",
        },
    )
    assert out[0] == {
        "sessionUpdate": "tool_call",
        "toolCallId": "c1",
        "title": "read src/a.py",
        "kind": "read",
        "status": "pending",
        "locations": [{"path": str(tmp_path / "src/a.py"), "line": 3}],
        "rawInput": {"path": "src/a.py", "offset": 3},
    }
    assert out[2] == {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "in_progress"}
    assert out[3] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": "3\tx = 1"}}],
    }


def test_edit_diff_is_the_whole_file_before_and_after(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
    u = Updates(tmp_path)
    args = {"path": "a.txt", "old_text": "two", "new_text": "2"}
    out = feed(u, {"type": "message_start"}, end("", [{"id": "e1", "name": "edit", "arguments": args}]))
    assert out[0]["kind"] == "edit" and out[0]["title"] == "edit a.txt"
    assert out[0]["content"] == [
        {
            "type": "diff",
            "path": str(tmp_path / "a.txt"),
            "oldText": "one\ntwo\nthree\n",
            "newText": "one\n2\nthree\n",
        }
    ]
    req = u.tool_call("e1")
    assert req is not None and req.content is not None and req.content[0].type == "diff"
    (tmp_path / "a.txt").write_text("one\ntwo\n2\n")  # changed meanwhile: the start shows the new diff
    started = feed(u, {"type": "tool_start", "call_id": "e1", "name": "edit", "arguments": args})
    assert started[0]["content"][0]["oldText"] == "one\ntwo\n2\n"
    done = feed(
        u,
        {
            "type": "tool_end",
            "call_id": "e1",
            "name": "edit",
            "is_error": False,
            "output": "Replaced",
            "status": "ok",
        },
    )
    assert done == [{"sessionUpdate": "tool_call_update", "toolCallId": "e1", "status": "completed"}]


def test_write_diff_old_text_is_none_for_a_new_file(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("before")
    u = Updates(tmp_path)
    calls = [
        {"id": "w1", "name": "write", "arguments": {"path": "new.txt", "content": "hi"}},
        {"id": "w2", "name": "write", "arguments": {"path": "old.txt", "content": "after"}},
    ]
    out = feed(u, {"type": "message_start"}, end("", calls))
    assert out[0]["content"] == [{"type": "diff", "path": str(tmp_path / "new.txt"), "newText": "hi"}]
    assert out[1]["content"] == [
        {"type": "diff", "path": str(tmp_path / "old.txt"), "oldText": "before", "newText": "after"}
    ]


@pytest.mark.parametrize("status", ["refused", "skipped", "cancelled"])
def test_refused_skipped_cancelled_are_failed_with_a_line_saying_which(tmp_path: Path, status: str) -> None:
    u = Updates(tmp_path)
    call = {"id": "b1", "name": "bash", "arguments": {"command": "rm -rf build"}}
    out = feed(
        u,
        {"type": "message_start"},
        end("", [call]),
        {
            "type": "tool_end",
            "call_id": "b1",
            "name": "bash",
            "is_error": False,
            "output": "not allowed",
            "status": status,
        },
    )
    assert out[0]["kind"] == "execute" and out[0]["title"] == "bash rm -rf build"
    assert out[-1] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "b1",
        "status": "failed",
        "content": [{"type": "content", "content": {"type": "text", "text": f"{status}: not allowed"}}],
    }


def test_a_call_first_seen_at_its_end_is_announced_there(tmp_path: Path) -> None:
    u = Updates(tmp_path)
    out = feed(
        u,
        {
            "type": "tool_end",
            "call_id": "x",
            "name": "grep",
            "is_error": True,
            "output": "bad",
            "status": "error",
        },
    )
    assert out == [
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "x",
            "title": "grep",
            "kind": "search",
            "status": "failed",
            "content": [{"type": "content", "content": {"type": "text", "text": "bad"}}],
            "locations": [{"path": str(tmp_path)}],
            "rawInput": {},
        }
    ]


def test_command_output_as_text_and_streamed(tmp_path: Path) -> None:
    u = Updates(tmp_path)
    out = feed(
        u,
        {"type": "tool_start", "call_id": "s", "name": "bash", "arguments": {"command": "echo hi"}},
        {"type": "tool_update", "call_id": "s", "name": "bash", "text": "hi\n"},
        {
            "type": "tool_end",
            "call_id": "s",
            "name": "bash",
            "is_error": False,
            "output": "hi\n",
            "status": "ok",
            "details": {"exit_code": 0},
        },
    )
    assert out[0]["status"] == "in_progress" and out[0]["kind"] == "execute"
    assert out[1]["content"] == [{"type": "content", "content": {"type": "text", "text": "hi\n"}}]
    assert out[2]["status"] == "completed" and out[2]["rawOutput"] == {"exit_code": 0}
    assert out[2]["content"] == [{"type": "content", "content": {"type": "text", "text": "hi\n"}}]


def test_terminal_convention_when_the_client_asks_for_it(tmp_path: Path) -> None:
    u = Updates(tmp_path, terminal_output=True)
    out = feed(
        u,
        {"type": "message_start"},
        end("", [{"id": "t", "name": "bash", "arguments": {"command": "ls"}}]),
        {"type": "tool_start", "call_id": "t", "name": "bash", "arguments": {"command": "ls"}},
        {"type": "tool_update", "call_id": "t", "name": "bash", "text": "a\n"},
        {
            "type": "tool_end",
            "call_id": "t",
            "name": "bash",
            "is_error": True,
            "output": "a\nexit code 2",
            "status": "error",
            "details": {"exit_code": 2},
        },
    )
    assert out[2] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t",
        "status": "in_progress",
        "content": [{"type": "terminal", "terminalId": "t"}],
        "_meta": {"terminal_info": {"terminal_id": "t", "cwd": str(tmp_path)}},
    }
    assert out[3] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "t",
        "_meta": {"terminal_output": {"terminal_id": "t", "data": "a\n"}},
    }
    assert out[4]["status"] == "failed"
    assert out[4]["_meta"] == {"terminal_exit": {"terminal_id": "t", "exit_code": 2, "signal": None}}


def test_notices_pause_jobs_queue(tmp_path: Path) -> None:
    u = Updates(tmp_path)
    out = feed(
        u,
        {"type": "paused"},
        {"type": "resumed", "paused_ms": 1200},
        {"type": "job_started", "job_id": "j1", "command": "sleep 100"},
        {"type": "job_finished", "job_id": "j1", "command": "sleep 100", "exit_code": 0},
    )
    assert out == [
        {"notice": "_owltui/paused", "paused": True},
        {"notice": "_owltui/paused", "paused": False, "paused_ms": 1200},
        {"notice": "_owltui/job", "job_id": "j1", "command": "sleep 100", "state": "started"},
        {
            "notice": "_owltui/job",
            "job_id": "j1",
            "command": "sleep 100",
            "state": "finished",
            "exit_code": 0,
        },
    ]
    queue = {"steer": [{"id": "q1", "text": "hi", "source": "user"}], "follow_up": [], "aside": []}
    assert dump(u.queue(queue)) == [{"notice": "_owltui/queue", "queue": queue}]
    assert u.queue(queue) == []  # unchanged: said once


def test_subagent_events_are_left_out(tmp_path: Path) -> None:
    u = Updates(tmp_path)
    assert feed(u, {"type": "message_delta", "text": "inner", "agent": "task"}) == []
    assert feed(
        u, {"type": "approval_request", "call_id": "i", "name": "bash", "arguments": {}, "agent": "task"}
    )


def test_titles_are_drawn_text(tmp_path: Path) -> None:
    u = Updates(tmp_path)
    out = feed(
        u,
        {
            "type": "tool_start",
            "call_id": "z",
            "name": "bash",
            "arguments": {"command": "echo \x1b]52;c;x\x07 hi"},
        },
    )
    assert "\x1b" not in out[0]["title"] and "\x07" not in out[0]["title"]
    assert out[0]["rawInput"] == {"command": "echo \x1b]52;c;x\x07 hi"}  # what will run, exactly


@pytest.mark.anyio
async def test_a_real_turn_translated(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("alpha\nbeta\n")
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "HOME": str(tmp_path),
    }
    steps = [
        Step(calls=[Call("read", {"path": "notes.txt"}, id="r1")]),
        Step(calls=[Call("edit", {"path": "notes.txt", "old_text": "beta", "new_text": "gamma"}, id="e1")]),
        Step(calls=[Call("bash", {"command": "cat notes.txt"}, id="b1")]),
        Step(text="done, it says gamma", chunk=4),
    ]
    rt = build_runtime(Options(workspace=ws, yes=True), model=ScriptedModel(steps), env=env)
    u = Updates(ws)
    out: list[Any] = []
    rt.emitter.subscribe(lambda ev: out.extend(u.event(wire_event(ev))))
    async with rt:
        assert rt.agent.prompt("go")
        await rt.wait_settled()
    got = dump(out)
    starts = {o["toolCallId"]: o for o in got if o["sessionUpdate"] == "tool_call"}
    assert [starts[c]["kind"] for c in ("r1", "e1", "b1")] == ["read", "edit", "execute"]
    assert starts["e1"]["content"] == [
        {
            "type": "diff",
            "path": str(ws / "notes.txt"),
            "oldText": "alpha\nbeta\n",
            "newText": "alpha\ngamma\n",
        }
    ]
    finals = {o["toolCallId"]: o["status"] for o in got if o.get("status") in ("completed", "failed")}
    assert finals == {"r1": "completed", "e1": "completed", "b1": "completed"}
    bash_end = next(o for o in got if o.get("toolCallId") == "b1" and o.get("status") == "completed")
    assert "gamma" in bash_end["content"][0]["content"]["text"]
    answer = "".join(o["content"]["text"] for o in got if o["sessionUpdate"] == "agent_message_chunk")
    assert answer == "done, it says gamma"
    assert sum(o["sessionUpdate"] == "usage_update" for o in got) == 4
    assert u.stop_reason() == "end_turn"
