"""The session store: round trip, tree ids, torn lines, the queue across processes, compaction,
model changes, redaction and the listing helpers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from owltui.agent.history import History
from owltui.agent.inbox import Inbox
from owltui.agent.messages import AssistantMessage, ToolCall, ToolResult, Usage, UserMessage
from owltui.session.redact import Redactor
from owltui.session.store.file import SessionError
from owltui.session.store.sessions import find_session, format_listing, latest_session, list_sessions
from owltui.session.store.store import SessionStore


def _conversation() -> list[UserMessage | AssistantMessage | ToolResult]:
    return [
        UserMessage(text="list files"),
        AssistantMessage(
            text="Looking.",
            tool_calls=[ToolCall(id="c1", name="ls", arguments={"path": "."})],
            stop_reason="tool_use",
            usage=Usage(input_tokens=5, output_tokens=2),
        ),
        ToolResult(call_id="c1", name="ls", content="a.txt\nb.txt"),
        AssistantMessage(text="Two files: a.txt and b.txt.", model="scripted"),
    ]


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_round_trip_and_tree(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path / "s", tmp_path, "demo (offline)")
    assert isinstance(store, History)
    assert not store.path.exists()  # nothing written for an empty session
    items = _conversation()
    for item in items:
        store.append(item)
    store.close()
    recs = _records(store.path)
    assert recs[0]["type"] == "session" and recs[0]["version"] == 1 and recs[0]["id"] == store.id
    assert recs[0]["cwd"] == str(tmp_path) and recs[0]["model"] == "demo (offline)" and recs[0]["created"]
    assert [r["parent_id"] for r in recs[1:]] == [None, *[r["id"] for r in recs[1:-1]]]
    loaded = SessionStore.open(store.path)
    assert list(loaded.items()) == items
    assert list(loaded.model_view()) == items
    assert loaded.id == store.id


def test_torn_last_line_is_skipped_and_cut(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path, "m")
    for item in _conversation()[:3]:
        store.append(item)
    store.close()
    with store.path.open("ab") as fh:
        fh.write(b'{"type":"message","id":"zz","parent_id":"x","item":{"role":"assis')
    warnings: list[str] = []
    loaded = SessionStore.open(store.path, warn=warnings.append)
    assert len(loaded.items()) == 3
    assert any("torn" in w for w in warnings)
    loaded.append(AssistantMessage(text="after the crash"))
    loaded.close()
    again = SessionStore.open(store.path, warn=warnings.append)
    assert [getattr(i, "text", None) for i in again.items()][-1] == "after the crash"
    assert len(again.items()) == 4 and len(warnings) == 1


def test_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path, "m")
    store.append(UserMessage(text="hi"))
    store.close()
    store.path.write_bytes(store.path.read_bytes().rstrip(b"\n"))
    loaded = SessionStore.open(store.path)
    assert len(loaded.items()) == 1
    loaded.append(UserMessage(text="more"))
    loaded.close()
    assert len(SessionStore.open(store.path).items()) == 2


def test_not_a_session_file(tmp_path: Path) -> None:
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"hello": 1}\n')
    with pytest.raises(SessionError, match="not an OwlTUI session"):
        SessionStore.open(bad)


def test_queue_delivery_and_restore(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path, "m")
    inbox = Inbox()
    store.attach(inbox)
    store.append(UserMessage(text="start"))
    inbox.push("steer", "delivered one")
    inbox.push("follow_up", "never delivered")
    inbox.push("steer", "withdrawn one")
    assert inbox.pop_last() is not None  # the user took it back to edit
    inbox.push("aside", lambda: "a thunk is not persisted")
    for msg in inbox.take("steer"):
        store.append(msg)  # what the loop does when it delivers
    store.close()
    loaded = SessionStore.open(store.path)
    assert [(q.lane, q.text) for q in loaded.undelivered()] == [("follow_up", "never delivered")]
    fresh = Inbox()
    loaded.attach(fresh)
    assert {lane: fresh.texts(lane) for lane in ("steer", "follow_up", "aside")} == {
        "steer": [],
        "follow_up": ["never delivered"],
        "aside": [],
    }
    assert all(set(q) == {"id", "text", "source"} for q in fresh.snapshot()["follow_up"])
    for msg in fresh.take("follow_up"):
        loaded.append(msg)
    loaded.close()
    assert SessionStore.open(loaded.path).undelivered() == []
    kinds = [r["type"] for r in _records(store.path)]
    assert kinds.count("queued") == 3  # restoring did not write the entry again


def test_cleared_queue_is_not_restored(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path, "m")
    inbox = Inbox()
    store.attach(inbox)
    inbox.push("follow_up", "drop me")
    inbox.clear()
    store.close()
    assert SessionStore.open(store.path).undelivered() == []


def test_compaction_and_model_change(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path, "a:1")
    for item in _conversation():
        store.append(item)
    store.record_compaction("The user listed files.", first_kept=3)
    store.record_model("b:2")
    store.append(UserMessage(text="next"))
    view = list(store.model_view())
    assert isinstance(view[0], UserMessage) and "The user listed files." in view[0].text
    assert view[1:] == [_conversation()[3], UserMessage(text="next")]
    store.close()
    loaded = SessionStore.open(store.path)
    assert loaded.model == "b:2" and len(loaded.items()) == 5
    assert list(loaded.model_view()) == view


def test_redaction_before_write(tmp_path: Path) -> None:
    secret = "sk-ant-api03-abcdefghijklmnop"
    store = SessionStore.create(tmp_path, tmp_path, "m", Redactor(["my-env-secret-value"]))
    store.append(UserMessage(text=f"key {secret} and my-env-secret-value"))
    store.append(
        ToolResult(
            call_id="c",
            name="bash",
            content="curl -H \"Authorization: Bearer abc.def.ghi\" -H 'x-api-key: zzz123456'",
        )
    )
    store.close()
    text = store.path.read_text()
    for leaked in (secret, "my-env-secret-value", "abc.def.ghi", "zzz123456"):
        assert leaked not in text
    assert len(SessionStore.open(store.path).items()) == 2  # still valid JSON


def test_listing_latest_and_find(tmp_path: Path) -> None:
    d = tmp_path / "sessions" / "ws"
    a = SessionStore.create(d, tmp_path, "m")
    a.append(UserMessage(text="first prompt of a"))
    a.append(AssistantMessage(text="ok"))
    a.close()
    b = SessionStore.create(d, tmp_path, "m")
    b.append(UserMessage(text="prompt b"))
    b.close()
    import os

    os.utime(a.path, (1, 1))
    assert latest_session(d) == b.path
    infos = list_sessions(d)
    assert [i.id for i in infos] == [b.id, a.id]
    assert infos[1].messages == 2 and infos[1].first_prompt == "first prompt of a"
    listing = format_listing(infos)
    assert a.id in listing and "first prompt of a" in listing
    assert find_session(tmp_path / "sessions", a.id[:5]) == a.path
    with pytest.raises(SessionError):
        find_session(tmp_path / "sessions", "zzzz")


def test_compacting_everything_keeps_later_items(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path, "m")
    for item in _conversation():
        store.append(item)
    store.record_compaction("summary", first_kept=len(store.items()))
    store.append(UserMessage(text="after"))
    assert [getattr(i, "text", "") for i in store.model_view()] == [
        "Summary of the earlier conversation:\nsummary",
        "after",
    ]
    store.close()
    loaded = SessionStore.open(store.path)
    assert [getattr(i, "text", "") for i in loaded.model_view()][1:] == ["after"]
