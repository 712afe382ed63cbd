"""`owltui run PLAYBOOK.md` as a real subprocess against the loopback model server."""

from __future__ import annotations

from pathlib import Path

from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import openai_args, run_cli

BOOK = """# Tidy up

## Check the greeting
Read hello.txt.

## Write a note
Create note.txt.
"""


def test_playbook_runs_steps_in_order_and_reports(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path
) -> None:
    (workspace / "tidy.md").write_text(BOOK)
    fake.add(
        Turn(calls=[("read", {"path": "hello.txt"})]),
        Turn(calls=[("step_complete", {"step": 1, "summary": "hello.txt says hello"})]),
        Turn(calls=[("write", {"path": "note.txt", "content": "done\n"})]),
        Turn(calls=[("step_complete", {"step": 2, "summary": "note written"})]),
        Turn(text="Both steps are done."),
    )
    r = run_cli(["run", "tidy.md", "--yes", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Both steps are done.\n"
    assert "✓ Step 1 complete" in r.stderr and "✓ Step 2 complete" in r.stderr
    assert (workspace / "note.txt").read_text() == "done\n"
    first = fake.requests[0]
    system = first["messages"][0]["content"]
    assert "Tidy up" in system and "1. Check the greeting" in system
    assert "step_complete" in [t["function"]["name"] for t in first["tools"]]


def test_playbook_left_unfinished_exits_1_naming_the_steps(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path
) -> None:
    (workspace / "tidy.md").write_text(BOOK)
    fake.add(*[Turn(text="I am done.") for _ in range(4)])  # stops early; nudged 3 times
    r = run_cli(["run", "tidy.md", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 1
    assert "steps not complete: 1, 2" in r.stderr
    assert len(fake.requests) == 4


def test_the_documented_example_runs_offline_on_the_demo_model(env: dict[str, str], workspace: Path) -> None:
    """docs/playbooks.md: `owltui run examples/first-look.md --provider demo --yes`."""
    repo = Path(__file__).resolve().parents[2]
    doc = (repo / "docs" / "playbooks.md").read_text()
    assert "owltui run examples/first-look.md --provider demo --yes" in doc
    (workspace / "README.md").write_text("# A project\n\nIt does things.\n")
    (workspace / "main.py").write_text("# TODO: handle errors\n")
    r = run_cli(
        ["run", str(repo / "examples" / "first-look.md"), "--provider", "demo", "--yes"], env, workspace
    )
    assert r.returncode == 0, r.stderr
    for n in (1, 2, 3, 4):
        assert f"✓ Step {n} complete" in r.stderr
    assert "did not succeed" not in r.stderr
    assert (workspace / "first-look.txt").read_text().startswith("looked around")


def test_playbook_with_a_refused_call(fake: FakeOpenAI, env: dict[str, str], workspace: Path) -> None:
    """Every step complete but a call refused: exit 3 with the refusal on stderr; steps left undone
    as well: exit 1 naming them (the refusal is still said)."""
    (workspace / "tidy.md").write_text(BOOK)
    fake.add(
        Turn(calls=[("step_complete", {"step": 1, "summary": "hello.txt says hello"})]),
        Turn(calls=[("write", {"path": "note.txt", "content": "done\n"})]),
        Turn(calls=[("step_complete", {"step": 2, "summary": "note written"})]),
        Turn(text="Both steps are done."),
    )
    r = run_cli(["run", "tidy.md", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 3, r.stderr
    assert not (workspace / "note.txt").exists()
    assert "owltui: refused write (note.txt): " in r.stderr
    assert r.stderr.splitlines()[-1].startswith("owltui: 1 call was refused")
    fake.add(
        Turn(calls=[("write", {"path": "note.txt", "content": "done\n"})]),
        *[Turn(text="I am done.") for _ in range(4)],
    )
    r = run_cli(["run", "tidy.md", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 1, r.stderr
    assert "owltui: refused write (note.txt): " in r.stderr
    assert "steps not complete: 1, 2" in r.stderr.splitlines()[-1]
