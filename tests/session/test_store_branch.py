"""The session store as a tree (issue 14, item 3): ``branch_from`` forks the conversation at an
entry, the old branch stays in the file, ``-c`` resumes the latest branch; the paused state is
recorded (item 1); the split modules keep the store's public names."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from owltui.agent.messages import AssistantMessage, UserMessage
from owltui.session.store.file import SessionError, parse_lines, wire_line
from owltui.session.store.replay import GAP_NOTICE
from owltui.session.store.store import SessionStore


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _texts(store: SessionStore) -> list[str]:
    return [getattr(i, "text", "") for i in store.items()]


def _turn(store: SessionStore, n: int) -> str | None:
    """Append turn ``n``; returns the leaf before it (where a rewind to it forks)."""
    leaf = store.leaf
    store.append(UserMessage(text=f"q{n}"))
    store.append(AssistantMessage(text=f"a{n}"))
    return leaf


def test_branch_from_forks_and_keeps_the_old_branch(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path, "m")
    first = _turn(store, 1)
    second = _turn(store, 2)
    _turn(store, 3)
    view_before = store.model_view()
    store.branch_from(second)
    assert _texts(store) == ["q1", "a1"] and store.model_view() is not view_before  # new lists
    _turn(store, 4)
    assert _texts(store) == ["q1", "a1", "q4", "a4"]
    store.close()
    recs = _records(store.path)
    assert [r.get("item", {}).get("text") for r in recs if r["type"] == "message"] == [
        "q1",
        "a1",
        "q2",
        "a2",
        "q3",
        "a3",
        "q4",
        "a4",
    ]  # nothing is lost
    branch = next(r for r in recs if r["type"] == "branch")
    assert branch["parent_id"] == second
    again = SessionStore.open(store.path)  # -c: the latest branch
    assert _texts(again) == ["q1", "a1", "q4", "a4"]
    # the old branch can be gone back to: its entries are still in the tree
    old_leaf = next(r["id"] for r in recs if r.get("item", {}).get("text") == "a3")
    again.branch_from(old_leaf)
    assert _texts(again) == ["q1", "a1", "q2", "a2", "q3", "a3"]
    again.branch_from(first)  # before the first message: an empty conversation
    assert first is None and _texts(again) == []
    again.append(UserMessage(text="fresh"))
    again.close()
    assert _texts(SessionStore.open(again.path)) == ["fresh"]


def test_branch_without_writes_and_after_reopen(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path, "m")
    store.branch_from(None)  # an empty session: nothing to fork, a branch entry all the same
    assert _texts(store) == []
    leaf = _turn(store, 1)
    store.close()
    store = SessionStore.open(store.path)
    store.branch_from(leaf)
    store.close()
    assert _texts(SessionStore.open(store.path)) == []  # the branch point holds without a new message


def test_branch_from_an_unknown_entry_is_refused(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path, "m")
    _turn(store, 1)
    with pytest.raises(SessionError, match="no entry nope"):
        store.branch_from("nope")
    assert _texts(store) == ["q1", "a1"]
    store.append(UserMessage(text="q2"))
    store.close()
    assert _texts(SessionStore.open(store.path)) == ["q1", "a1", "q2"]


def test_a_compaction_after_the_fork_is_left_behind(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path, "m")
    _turn(store, 1)
    early = _turn(store, 2)
    store.record_compaction("the first turn", 2)
    late = _turn(store, 3)
    store.record_compaction("two turns", 4)
    store.branch_from(late)  # the first compaction is on the kept part, the second is not
    view = store.model_view()
    assert isinstance(view[0], UserMessage) and "the first turn" in view[0].text
    assert [getattr(i, "text", "") for i in view[1:]] == ["q2", "a2"]
    store.branch_from(early)
    assert store.compaction() is None and list(store.model_view()) == list(store.items())


def test_pause_is_recorded_and_survives_a_crash(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path, "m")
    _turn(store, 1)
    store.record_pause(True)
    store.record_pause(True)  # no change, no entry
    # no close(): a crash leaves the file as written (each line fsynced)
    pauses = [r for r in _records(store.path) if r["type"] == "pause"]
    assert [p["paused"] for p in pauses] == [True]
    assert pauses[0]["parent_id"] == store.leaf  # not on the chain: the next message hangs on the last one
    assert store._fd is not None
    os.close(store._fd)  # the process is gone: its lock with it
    store._fd = None
    again = SessionStore.open(store.path)
    assert again.paused and _texts(again) == ["q1", "a1"]
    again.record_pause(False)
    again.close()
    assert not SessionStore.open(store.path).paused


def test_split_modules_keep_the_public_names(tmp_path: Path) -> None:
    assert wire_line({"a": 1}) == b'{"a":1}\n'
    records, end, torn = parse_lines(b'{"type":"session"}\n{"torn', tmp_path / "x.jsonl", None)
    assert records == [{"type": "session"}] and end == 19 and torn
    assert GAP_NOTICE.startswith("Part of this conversation")
