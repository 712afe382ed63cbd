"""The queue item by item (issue 14 item 2, agent side): ids, snapshot objects, edit/remove/move with
clean refusals, observers, and the session file keeping the queue with its ids across a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from owltui.agent.inbox import Inbox, NotQueued, QueueError
from owltui.agent.messages import UserMessage
from owltui.session.store.store import SessionStore


def texts(box: Inbox) -> dict[str, list[str]]:
    return {lane: [q["text"] for q in items] for lane, items in box.snapshot().items()}


def test_every_message_has_an_id_and_snapshot_lists_objects() -> None:
    box = Inbox()
    a = box.push("steer", "one")
    b = box.push("follow_up", "two", source="rpc")
    c = box.push("aside", lambda: "done")
    assert len({a.id, b.id, c.id}) == 3 and all(len(q.id) == 8 for q in (a, b, c))
    assert box.snapshot() == {
        "steer": [{"id": a.id, "text": "one", "source": "user"}],
        "follow_up": [{"id": b.id, "text": "two", "source": "rpc"}],
        "aside": [{"id": c.id, "text": "(pending notice)", "source": "system"}],
    }
    assert box.get(b.id) is b and box.texts("follow_up") == ["two"] and len(box) == 3


def test_edit_remove_move_and_observers() -> None:
    box = Inbox()
    seen: list[tuple[str, str, str | None]] = []
    box.subscribe(lambda action, lane, item: seen.append((action, lane, item.id if item else None)))
    s1 = box.push("steer", "s1")
    s2 = box.push("steer", "s2")
    f1 = box.push("follow_up", "f1")
    assert box.edit(s1.id, "s1 edited") == {"id": s1.id, "text": "s1 edited", "source": "user"}
    assert box.peek("steer")[0] == UserMessage(text="s1 edited", lane="steer")
    # steer -> follow-up, before f1; the message's lane changes with it
    assert box.move(s2.id, lane="follow_up", before=f1.id)["id"] == s2.id
    assert texts(box) == {"steer": ["s1 edited"], "follow_up": ["s2", "f1"], "aside": []}
    assert box.peek("follow_up")[0] == UserMessage(text="s2", lane="follow_up")
    # reorder within the lane: to the end
    box.move(s2.id)
    assert texts(box)["follow_up"] == ["f1", "s2"]
    # and back to steering, before s1
    box.move(s2.id, lane="steer", before=s1.id)
    assert texts(box)["steer"] == ["s2", "s1 edited"]
    assert box.remove(f1.id)["text"] == "f1"
    assert texts(box) == {"steer": ["s2", "s1 edited"], "follow_up": [], "aside": []}
    assert [a for a, _, _ in seen] == ["push", "push", "push", "edit", "move", "move", "move", "remove"]
    assert seen[4] == ("move", "follow_up", s2.id) and seen[-1] == ("remove", "follow_up", f1.id)


def test_refusals_for_ids_delivered_removed_or_unknown() -> None:
    box = Inbox()
    s = box.push("steer", "s")
    f = box.push("follow_up", "f")
    a = box.push("aside", lambda: "notice")
    delivered = box.take("steer")
    assert [m.text for m in delivered] == ["s"]
    for op in (
        lambda: box.edit(s.id, "x"),
        lambda: box.remove(s.id),
        lambda: box.move(s.id, "follow_up"),
        lambda: box.edit("nope", "x"),
        lambda: box.move(f.id, before=s.id),
    ):
        with pytest.raises(NotQueued) as info:
            op()
        assert "delivered or removed" in str(info.value)
    box.remove(f.id)
    with pytest.raises(NotQueued):
        box.remove(f.id)  # removing twice is refused too
    g = box.push("follow_up", "g")
    with pytest.raises(QueueError, match="empty"):
        box.edit(g.id, "  ")
    with pytest.raises(QueueError, match="background notice"):
        box.edit(a.id, "x")
    with pytest.raises(QueueError, match="steer and follow_up"):
        box.move(g.id, lane="aside")
    with pytest.raises(QueueError, match="steer and follow_up"):
        box.move(a.id, lane="steer")
    with pytest.raises(QueueError, match="not in the steer lane"):
        box.move(g.id, lane="steer", before=a.id)
    with pytest.raises(QueueError, match="before itself"):
        box.move(g.id, before=g.id)
    assert texts(box) == {"steer": [], "follow_up": ["g"], "aside": ["(pending notice)"]}  # unchanged


def test_take_limit_pop_last_requeue_and_immediate() -> None:
    box = Inbox()
    f1, f2, f3 = (box.push("follow_up", t) for t in ("f1", "f2", "f3"))
    taken = box.take_queued("follow_up", 1)
    assert [q.id for q in taken] == [f1.id] and box.texts("follow_up") == ["f2", "f3"]
    box.requeue(taken)  # a run that died before delivering: back at the front, same id
    assert [q["id"] for q in box.snapshot()["follow_up"]] == [f1.id, f2.id, f3.id]
    box.move(f3.id, before=f1.id)
    assert box.pop_last().text == "f3"  # type: ignore[union-attr]  # the most recently queued, wherever it is
    u = box.push("steer", "urgent", immediate=True)
    plain = box.push("steer", "plain")
    assert box.interrupting() is u and box.interrupting(all_steering=True) is u
    box.move(u.id, lane="follow_up")
    assert not box.get(u.id).immediate and box.interrupting() is None
    assert box.interrupting(all_steering=True) is plain
    assert box.following(f1.id) == f2.id and box.following(u.id) is None


def test_store_keeps_the_queue_with_ids_edits_moves_and_order(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path, "m")
    box = Inbox()
    store.attach(box)
    store.append(UserMessage(text="start"))
    s1 = box.push("steer", "s1")
    f1 = box.push("follow_up", "f1")
    f2 = box.push("follow_up", "f2")
    gone = box.push("follow_up", "gone")
    box.edit(f1.id, "f1 edited")
    box.move(f2.id, before=f1.id)  # follow-ups: f2, f1 edited, gone
    box.move(s1.id, lane="follow_up", before=gone.id)  # f2, f1 edited, s1, gone
    box.remove(gone.id)
    late = box.push("steer", "late")
    box.edit(late.id, "late edited")
    for msg in box.take("steer"):
        store.append(msg)  # delivered (the edited message): dequeued
    store.close()  # as good as a crash: every line is on disk when written

    loaded = SessionStore.open(store.path)
    assert [(q.qid, q.lane, q.text) for q in loaded.undelivered()] == [
        (f2.id, "follow_up", "f2"),
        (f1.id, "follow_up", "f1 edited"),
        (s1.id, "follow_up", "s1"),
    ]
    fresh = Inbox()
    loaded.attach(fresh)
    assert fresh.snapshot()["follow_up"] == [
        {"id": f2.id, "text": "f2", "source": "user"},
        {"id": f1.id, "text": "f1 edited", "source": "user"},
        {"id": s1.id, "text": "s1", "source": "user"},
    ]
    assert fresh.peek("follow_up")[2] == UserMessage(text="s1", lane="follow_up")
    # the restored ids keep working: edit one, deliver another, reopen again
    fresh.edit(f1.id, "f1 again")
    for msg in fresh.take("follow_up", 1):
        loaded.append(msg)
    loaded.close()
    again = SessionStore.open(store.path)
    assert [(q.qid, q.text) for q in again.undelivered()] == [(f1.id, "f1 again"), (s1.id, "s1")]
    again.close()
