"""Print mode never hides a call that did not run: a real ``owltui -p`` against the fake server.
Each refused call is one stderr line naming the tool, its target and why; a run that ends with
refusals standing exits 3 and says so last; ``--output jsonl`` keeps stdout pure JSON lines. The
README's wording is the one the program uses."""

from __future__ import annotations

import json
import re
from pathlib import Path

from owltui.modes.refusals import EXIT_REFUSED, refusal_summary
from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import openai_args, run_cli

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()
EDIT = ("edit", {"path": "src/a.py", "old_text": "x = 1", "new_text": "x = 2"})


def _print_mode_paragraph() -> str:
    return README.split("**Print mode**", 1)[1].split("\n\n", 1)[0]


def _refused(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("owltui: refused ")]


def _source(workspace: Path) -> Path:
    (workspace / "src").mkdir()
    path = workspace / "src" / "a.py"
    path.write_text("x = 1\n")
    return path


def test_refused_edit_is_a_stderr_line_and_exit_3(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path
) -> None:
    source = _source(workspace)
    fake.add(Turn(calls=[EDIT]), Turn(text="Fixed."))
    r = run_cli(["-p", "fix it", *openai_args(fake.url)], env, workspace)
    assert r.returncode == EXIT_REFUSED == 3, r.stderr
    assert r.stdout == "Fixed.\n"
    assert source.read_text() == "x = 1\n"
    (line,) = _refused(r.stderr)
    assert line.startswith("owltui: refused edit (src/a.py): edit needs approval")
    assert "--yes" in line and "[allow] edit" in line
    assert r.stderr.splitlines()[-1] == refusal_summary(1)
    assert refusal_summary(1) == "owltui: 1 call was refused; the answer may describe work that was not done"


def test_with_yes_no_line_exit_0(fake: FakeOpenAI, env: dict[str, str], workspace: Path) -> None:
    source = _source(workspace)
    fake.add(Turn(calls=[EDIT]), Turn(text="Fixed."))
    r = run_cli(["-p", "fix it", "--yes", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 0, r.stderr
    assert source.read_text() == "x = 2\n"
    assert _refused(r.stderr) == [] and "refused" not in r.stderr


def test_deny_rule_is_named(fake: FakeOpenAI, env: dict[str, str], workspace: Path) -> None:
    (workspace / ".owltui").mkdir()
    (workspace / ".owltui" / "permissions.toml").write_text('[deny]\nbash = ["rm *"]\n')
    fake.add(Turn(calls=[("bash", {"command": "rm hello.txt"})]), Turn(text="Removed it."))
    r = run_cli(["-p", "clean up", "--yes", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 3, r.stderr
    assert (workspace / "hello.txt").exists()
    (line,) = _refused(r.stderr)
    assert line.startswith("owltui: refused bash (rm hello.txt): the deny rule bash = 'rm *' in ")
    assert ".owltui/permissions.toml" in line
    assert r.stderr.splitlines()[-1] == refusal_summary(1)


def test_jsonl_stdout_stays_json_and_stderr_has_the_lines(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path
) -> None:
    source = _source(workspace)
    fake.add(Turn(calls=[EDIT, ("bash", {"command": "touch made.txt"})]), Turn(text="Fixed."))
    r = run_cli(["-p", "fix it", "--output", "jsonl", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 3, r.stderr
    events = [json.loads(line) for line in r.stdout.splitlines()]  # every stdout line is JSON
    assert [e["status"] for e in events if e["type"] == "tool_end"] == ["refused", "refused"]
    assert events[-1] == {"type": "agent_end", "reason": "done"}
    assert source.read_text() == "x = 1\n" and not (workspace / "made.txt").exists()
    lines = _refused(r.stderr)
    assert [line.split(":", 2)[1] for line in lines] == [
        " refused edit (src/a.py)",
        " refused bash (touch made.txt)",
    ]
    assert r.stderr.splitlines()[-1] == refusal_summary(2)


def test_a_failed_run_keeps_exit_1(fake: FakeOpenAI, env: dict[str, str], workspace: Path) -> None:
    _source(workspace)
    fake.add(Turn(calls=[EDIT]), Turn(status=401, error="invalid api key"))
    r = run_cli(["-p", "fix it", *openai_args(fake.url)], env, workspace)
    assert r.returncode == 1
    assert len(_refused(r.stderr)) == 1 and "authentication failed" in r.stderr.splitlines()[-1]


def test_readme_says_what_the_program_does() -> None:
    text = " ".join(_print_mode_paragraph().split())
    codes = re.search(r"Exit codes: (.*)", text)
    assert codes is not None
    assert re.findall(r"`(\d+)`", codes.group(1)) == ["0", "1", "2", "3", "130"]
    assert f"`{refusal_summary(2)}`" in text
    example = re.search(r"`(owltui: refused [^`]*)…`", text)
    assert example is not None
    assert example.group(1) == "owltui: refused edit (src/a.py): edit needs approval ("
