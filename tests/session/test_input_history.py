"""Input history per workspace (issue 13, item 5): persisted under the data dir, consecutive repeats
kept once, capped at 1,000, secrets scrubbed, searched newest first (Ctrl+R)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from owltui.session.input.history import MAX_ENTRIES, SLACK, InputHistory, history_dir
from owltui.session.paths import workspace_key
from owltui.session.redact import Redactor
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.testing.scripted import ScriptedModel

SECRET = "sk-proj-abcdefghijklmnop0123456789"


def env(tmp_path: Path) -> dict[str, str]:
    return {
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "HOME": str(tmp_path),
    }


def test_persisted_per_workspace_with_consecutive_repeats_once(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    h = InputHistory(a, env=env(tmp_path))
    assert h.path == tmp_path / "data" / "owltui" / "history" / f"{workspace_key(a)}.jsonl"
    assert h.path.parent == history_dir(env(tmp_path))
    assert h.entries() == [] and h.search("x") == []
    for text in ["first", "second", "second", "first", "  ", ""]:
        h.add(text)
    assert h.entries() == ["first", "second", "first"]
    assert InputHistory(a, env=env(tmp_path)).entries() == ["first", "second", "first"]  # persisted
    assert InputHistory(b, env=env(tmp_path)).entries() == []  # another workspace
    assert stat.S_IMODE(os.stat(h.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(h.path.parent).st_mode) == 0o700


def test_search_newest_first_case_insensitive_unique(tmp_path: Path) -> None:
    h = InputHistory(tmp_path, env=env(tmp_path))
    for text in ["Fix the tests", "run pytest", "fix the TESTS again", "Fix the tests", "unrelated"]:
        h.add(text)
    assert h.search("tests") == ["Fix the tests", "fix the TESTS again"]
    assert h.search("TEST", limit=1) == ["Fix the tests"]
    assert h.search("") == ["unrelated", "Fix the tests", "fix the TESTS again", "run pytest"]


def test_capped_at_one_thousand(tmp_path: Path) -> None:
    h = InputHistory(tmp_path, env=env(tmp_path))
    assert MAX_ENTRIES == 1000 and h.max_entries == 1000
    for i in range(MAX_ENTRIES + SLACK + 5):
        h.add(f"prompt {i}")
    entries = h.entries()
    assert len(entries) == MAX_ENTRIES and entries[-1] == f"prompt {MAX_ENTRIES + SLACK + 4}"
    assert len(h.path.read_text().splitlines()) <= MAX_ENTRIES + SLACK  # rewritten when it grew past


def test_secrets_are_scrubbed_and_damage_is_skipped(tmp_path: Path) -> None:
    h = InputHistory(tmp_path, env=env(tmp_path), scrub=Redactor([SECRET]).scrub)
    h.add(f"use the key {SECRET} please")
    h.add("curl -H 'Authorization: Bearer abcdefgh12345678' x")
    with h.path.open("a") as fh:
        fh.write("{not json\n[1, 2]\n")
    h.add("after the damage")
    assert h.entries() == [
        "use the key [REDACTED] please",
        "curl -H 'Authorization: Bearer [REDACTED]' x",
        "after the damage",
    ]
    assert SECRET not in h.path.read_text()


def test_an_unwritable_place_is_not_an_error(tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("a file where the directory should be")
    h = InputHistory(tmp_path, env=env(tmp_path))
    assert h.add("hello") is False and h.entries() == []


def test_the_runtime_offers_it_with_its_redactor(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    rt = build_runtime(
        Options(workspace=ws, no_session=True),
        model=ScriptedModel([]),
        env={**env(tmp_path), "OPENAI_API_KEY": SECRET},
    )
    rt.input_history.add(f"the key is {SECRET}")
    assert rt.input_history is rt.input_history
    assert InputHistory(ws, env=env(tmp_path)).entries() == ["the key is [REDACTED]"]
