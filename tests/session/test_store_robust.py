"""The session store under hostile input and faults (issue 11, items 1 and 4), with real files and
real processes: non-UTF-8 text, corrupt lines anywhere, early tool results and kill -9, the
per-file lock, short writes under ``ulimit -f``, a full device, an unwritable data directory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from owltui.agent.messages import AssistantMessage, Item, ToolCall, ToolResult, UserMessage
from owltui.session.store.file import SessionError
from owltui.session.store.replay import GAP_NOTICE
from owltui.session.store.store import SessionStore

WEIRD = "bad_\udcff.txt \ud800 lone, \u2028 LS, \u2029 PS, \u0085 NEL, \x00 NUL, \x1e RS, \x7f DEL, é 😀"


def _lines(path: Path) -> list[str]:
    text = path.read_bytes().decode("utf-8")  # strict: the file is valid UTF-8
    lines = text.splitlines()  # the most eager splitter: every line must still be one record
    assert len(lines) == text.count("\n")
    for line in lines:
        json.loads(line)
    return lines


def _conversation() -> list[Item]:
    return [
        UserMessage(text="first question"),
        AssistantMessage(
            text="Looking.",
            tool_calls=[ToolCall(id="c1", name="ls", arguments={"path": "."})],
            stop_reason="tool_use",
        ),
        ToolResult(call_id="c1", name="ls", content="a.txt"),
        AssistantMessage(text="One file."),
        UserMessage(text="second question"),
        AssistantMessage(text="Second answer."),
    ]


def test_non_utf8_text_round_trips_exactly(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path / "s", tmp_path / "bad_\udcfe", "m")
    items: list[Item] = [
        UserMessage(text=WEIRD),
        AssistantMessage(
            text=WEIRD,
            tool_calls=[ToolCall(id="c1", name="ls", arguments={"path": WEIRD})],
            stop_reason="tool_use",
        ),
        ToolResult(call_id="c1", name="ls", content=WEIRD),
    ]
    for item in items:
        store.append(item)
    store.close()
    lines = _lines(store.path)
    assert len(lines) == 4
    assert all(ch not in line for line in lines for ch in "\u2028\u2029\u0085")
    loaded = SessionStore.open(store.path)
    assert list(loaded.items()) == items  # lone surrogates come back as they were
    assert str(loaded.cwd).endswith("bad_\udcfe")
    loaded.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    texts=st.lists(
        st.text(alphabet=st.characters(codec=None, categories=None), max_size=40), min_size=1, max_size=4
    )
)
def test_any_text_round_trips(tmp_path: Path, texts: list[str]) -> None:
    joined = "".join(texts)
    # a high surrogate followed by a low one is written as a pair of escapes and read back as one
    # character; that is the only change the round trip may make
    assume(not any("\ud800" <= a <= "\udbff" and "\udc00" <= b <= "\udfff" for a, b in pairwise(joined)))
    directory = tmp_path / f"p{abs(hash(joined))}"
    store = SessionStore.create(directory, tmp_path, "m")
    items = [UserMessage(text=t) for t in texts]
    for item in items:
        store.append(item)
    store.close()
    _lines(store.path)
    loaded = SessionStore.open(store.path)
    assert list(loaded.items()) == items
    loaded.close()


@pytest.mark.parametrize("bad", range(1, 8))
def test_a_corrupt_line_anywhere_is_skipped_and_the_chain_repaired(tmp_path: Path, bad: int) -> None:
    store = SessionStore.create(tmp_path, tmp_path, "m")
    items = _conversation()
    for item in items:
        store.append(item)
    store.close()
    raw = store.path.read_bytes().split(b"\n")
    assert len(raw) == 8 and raw[-1] == b""  # header + 6 entries + the final newline
    garbage = b'{"type":"message","id":"zz","item":{"role":"assis\xff\xfe' if bad % 2 else b"[" * 5000
    raw[bad - 1] = garbage  # line `bad`, 1-based: 1 is the header
    store.path.write_bytes(b"\n".join(raw))
    warnings: list[str] = []
    loaded = SessionStore.open(store.path, warn=warnings.append)
    got = list(loaded.items())
    assert warnings and any("line" in w or "header" in w for w in warnings)
    assert isinstance(got[0], UserMessage)  # never starts with an assistant message
    lost = None if bad == 1 else items[bad - 2]
    kept = [i for i in got if not (isinstance(i, UserMessage) and i.text == GAP_NOTICE)]
    assert kept == [i for i in items if i is not lost]  # everything else, in order
    if bad in (2, 3, 4, 5, 6):  # a gap inside the chain is marked where it was
        assert any(isinstance(i, UserMessage) and i.text == GAP_NOTICE for i in got)
    loaded.append(UserMessage(text="after repair"))
    loaded.close()
    again = SessionStore.open(store.path, warn=warnings.append)
    assert list(again.items())[-1] == UserMessage(text="after repair")
    assert list(again.items())[:-1] == got
    again.close()


def test_early_results_are_written_at_once_and_put_back_in_call_order(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path, "m")
    calls = [ToolCall(id=f"c{n}", name="read", arguments={"path": f"f{n}"}) for n in (1, 2, 3)]
    store.append(UserMessage(text="read three"))
    store.append(AssistantMessage(text="", tool_calls=calls, stop_reason="tool_use"))
    results = [ToolResult(call_id=c.id, name="read", content=f"content {c.id}") for c in calls]
    assert store.record_result_early(results[2])  # c3 finished first
    assert store.record_result_early(results[0])
    assert not store.record_result_early(results[0])  # once
    assert not store.record_result_early(ToolResult(call_id="other", name="x", content="?"))
    before = len(_lines(store.path))
    for r in results:  # the loop appends in call order when the group ends
        store.append(r)
    assert len(_lines(store.path)) == before + 1  # only c2 was still to write
    store.append(AssistantMessage(text="done"))
    assert [type(i).__name__ for i in store.items()][-4:] == ["ToolResult"] * 3 + ["AssistantMessage"]
    store.close()
    loaded = SessionStore.open(store.path)
    assert list(loaded.items()) == list(store.items())  # disk order c3, c1, c2 -> call order
    loaded.close()


CHILD = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from owltui.agent.messages import AssistantMessage, ToolCall, ToolResult, UserMessage
    from owltui.session.store.store import SessionStore
    store = SessionStore.create(Path(sys.argv[1]), Path(sys.argv[1]), "m")
    calls = [ToolCall(id="r", name="read", arguments={}), ToolCall(id="w", name="job_output", arguments={})]
    store.append(UserMessage(text="go"))
    store.append(AssistantMessage(text="", tool_calls=calls, stop_reason="tool_use"))
    store.record_result_early(ToolResult(call_id="r", name="read", content="the file"))
    print(store.path, flush=True)  # tool_end of `read` is out; `job_output` is still waiting
    os.kill(os.getpid(), signal.SIGKILL)
""")


def test_kill_9_after_an_early_result_keeps_it(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    path = Path(proc.stdout.strip())
    loaded = SessionStore.open(path)  # the dead process's lock went with it
    items = list(loaded.items())
    assert items[-1] == ToolResult(call_id="r", name="read", content="the file")
    assert isinstance(items[0], UserMessage)
    loaded.close()


LOCKER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from owltui.session.store.file import SessionError
    from owltui.session.store.store import SessionStore
    try:
        SessionStore.open(Path(sys.argv[1])).close()
    except SessionError as exc:
        print(exc)
        sys.exit(3)
""")


def test_a_second_process_cannot_continue_a_session_in_use(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path, "m")
    store.append(UserMessage(text="mine"))  # the file exists now, locked by this store
    other = subprocess.run(
        [sys.executable, "-c", LOCKER, str(store.path)], capture_output=True, text=True, timeout=60
    )
    assert other.returncode == 3, other.stderr
    message = other.stdout.strip()
    assert "in use by another OwlTUI process" in message and store.id in message and "\n" not in message
    store.close()
    free = subprocess.run(
        [sys.executable, "-c", LOCKER, str(store.path)], capture_output=True, text=True, timeout=60
    )
    assert free.returncode == 0, free.stdout + free.stderr
    assert len(SessionStore.open(store.path).items()) == 1


FSIZE_CHILD = textwrap.dedent("""
    import resource, sys
    from pathlib import Path
    from owltui.agent.messages import UserMessage
    from owltui.session.store.file import SessionError
    from owltui.session.store.store import SessionStore
    resource.setrlimit(resource.RLIMIT_FSIZE, (4000, 4000))
    store = SessionStore.create(Path(sys.argv[1]), Path(sys.argv[1]), "m", warn=lambda w: print("W", w))
    n = 0
    try:
        while True:
            n += 1
            store.append(UserMessage(text=f"message {n} " + "x" * 700))
    except SessionError as exc:
        print("E", exc)
    store.append(UserMessage(text="short: fits under the limit, so it is written"))
    print("P", store.path)
    print("N", len(store.items()))
""")


def test_ulimit_f_short_write_is_cut_back_and_raised_once(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", FSIZE_CHILD, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    out = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert "file too large" in out["E"] and "ulimit -f" in out["E"] and "\n" not in out["E"]
    path = Path(out["P"])
    data = path.read_bytes()
    assert len(data) <= 4000 and data.endswith(b"\n")  # the cut line is gone, no partial record
    lines = _lines(path)
    loaded = SessionStore.open(path)
    assert len(loaded.items()) == len(lines) - 1 == int(out["N"])  # the failed one was never kept
    assert loaded.items()[-1] == UserMessage(text="short: fits under the limit, so it is written")
    loaded.close()


def test_full_device_is_one_clear_error(tmp_path: Path) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    store = SessionStore(Path("/dev/full"), "full", tmp_path, "m", datetime.now(UTC))
    warned: list[str] = []
    store.warn = warned.append
    with pytest.raises(SessionError, match="no space left on the device"):
        store.append(UserMessage(text="hello"))
    assert store.items() == [] and store.failure is not None
    store.append(UserMessage(text="not raised twice"))  # the run is ending: no second message
    assert len(store.items()) == 1 and store.unsaved == 1 and warned == []
    store.record_model("x")  # not from append: warned, never raised
    assert store.unsaved == 2 and warned == []  # same outage, already told
    store.close()


def test_unwritable_data_directory_names_it_and_no_session(tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("a file where the data directory should be")
    with pytest.raises(SessionError) as info:
        SessionStore.create(blocker / "owltui" / "sessions" / "ws", tmp_path, "m")
    message = str(info.value)
    assert str(blocker) in message and "--no-session" in message and "\n" not in message
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        with pytest.raises(SessionError, match="--no-session"):
            SessionStore.create(ro / "sessions", tmp_path, "m")


def test_a_fifo_or_directory_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "20250101T000000_abc.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(SessionError, match="not a regular file"):
        SessionStore.open(fifo)  # no reader: must not block
    with pytest.raises(SessionError, match="not a regular file"):
        SessionStore.open(tmp_path)


def test_a_result_appended_unlike_its_early_copy_wins_on_load(tmp_path: Path) -> None:
    store = SessionStore.create(tmp_path, tmp_path, "m")
    store.append(UserMessage(text="go"))
    store.append(
        AssistantMessage(
            text="",
            tool_calls=[
                ToolCall(id="a", name="read", arguments={}),
                ToolCall(id="b", name="read", arguments={}),
            ],
            stop_reason="tool_use",
        )
    )
    store.record_result_early(ToolResult(call_id="b", name="read", content="early b"))
    store.append(ToolResult(call_id="a", name="read", content="a"))
    store.append(ToolResult(call_id="b", name="read", content="b, as the loop recorded it"))
    store.close()
    loaded = SessionStore.open(store.path)
    assert [getattr(i, "content", None) for i in loaded.items()][2:] == ["a", "b, as the loop recorded it"]
    loaded.close()
