"""The README's worked examples of hooks, custom commands and skills, run as written: its hook script
and config block keep ``rm -rf`` away, its shell lines make the ``/git:review`` command and its
``owltui -p`` line sends the template with the file attached, its skill lines put the skill in the
catalog the model gets."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import cli_env, openai_args, run_cli

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


def home_env(tmp_path: Path) -> dict[str, str]:
    """The README's paths are under ``~``: HOME is the test's, no XDG_CONFIG_HOME."""
    env = cli_env(tmp_path)
    env.pop("XDG_CONFIG_HOME")
    return env


def test_the_hook_example_keeps_rm_rf_away(fake: FakeOpenAI, tmp_path: Path) -> None:
    hooks = section("Hooks")
    (script,) = blocks(hooks, "python")
    (config,) = [b for b in blocks(hooks, "toml") if "[[hooks.PreToolUse]]" in b]
    where = tmp_path / ".config" / "owltui"
    (where / "hooks").mkdir(parents=True)
    (where / "hooks" / "no-rm-rf.py").write_text(script)
    (where / "hooks" / "no-rm-rf.py").chmod(0o755)
    (where / "config.toml").write_text(config)
    ws = tmp_path / "ws"
    (ws / "build").mkdir(parents=True)
    fake.add(Turn(calls=[("bash", {"command": "rm -rf build"})]), Turn(text="left it"))
    r = run_cli(["-p", "clean up", "--yes", *openai_args(fake.url)], home_env(tmp_path), ws)
    assert (ws / "build").is_dir(), r.stderr
    assert "Blocked: rm -rf is not allowed here" in json.dumps(fake.requests[1]["messages"][-1])
    assert "hook PreToolUse [bash]: deny" in r.stderr, r.stderr


def test_the_custom_command_example_runs_as_written(fake: FakeOpenAI, tmp_path: Path) -> None:
    (example,) = [b for b in blocks(section("Custom commands"), "sh") if "git/review.md" in b]
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("print('app')\n")
    setup, _, run_line = example.rstrip().rpartition("\n")
    subprocess.run(["bash", "-c", setup], cwd=ws, check=True)
    argv = shlex.split(run_line)
    assert argv[0] == "owltui"
    fake.add(Turn(text="reviewed"))
    r = run_cli([*argv[1:], *openai_args(fake.url)], home_env(tmp_path), ws)
    assert r.returncode == 0 and r.stdout == "reviewed\n", r.stderr
    sent = str(fake.requests[0]["messages"][-1]["content"])
    assert sent.startswith("Review @src/app.py against `git diff --staged`. Focus on: error handling.")
    assert '<file path="src/app.py">' in sent


def test_the_skill_example_reaches_the_catalog(fake: FakeOpenAI, tmp_path: Path) -> None:
    (example,) = [b for b in blocks(section("Agent Skills"), "bash") if "SKILL.md" in b]
    env = home_env(tmp_path)
    subprocess.run(["bash", "-c", example], env=env, check=True)
    skill = tmp_path / ".agents" / "skills" / "changelog" / "SKILL.md"
    assert skill.is_file() and (skill.parent / "scripts" / "commits.sh").is_file()
    ws = tmp_path / "ws"
    ws.mkdir()
    fake.add(Turn(text="ok"))
    r = run_cli(["-p", "write the changelog entry", *openai_args(fake.url)], env, ws)
    assert r.returncode == 0, r.stderr
    system = str(fake.requests[0]["messages"][0]["content"])
    assert "- changelog: Write the CHANGELOG entry for the work on this branch." in system
    assert str(skill) in system


def test_the_skill_example_activated_with_slash_skill_in_print_mode(fake: FakeOpenAI, tmp_path: Path) -> None:
    (example,) = [b for b in blocks(section("Agent Skills"), "bash") if "SKILL.md" in b]
    env = home_env(tmp_path)
    subprocess.run(["bash", "-c", example], env=env, check=True)
    ws = tmp_path / "ws"
    ws.mkdir()
    fake.add(Turn(text="entry written"))
    r = run_cli(["-p", "/skill changelog only user-facing changes", *openai_args(fake.url)], env, ws)
    assert r.returncode == 0 and r.stdout == "entry written\n", r.stderr
    sent = str(fake.requests[0]["messages"][-1]["content"])
    skill = tmp_path / ".agents" / "skills" / "changelog"
    assert sent.startswith(
        f"[skill changelog, activated by the user: the instructions of {skill / 'SKILL.md'}"
    )
    assert sent.endswith("[the user's request for this skill]\nonly user-facing changes")
    r = run_cli(["-p", "/skill nonesuch", *openai_args(fake.url)], env, ws)
    assert r.returncode == 1 and r.stderr.startswith("owltui: no skill named 'nonesuch'"), r.stderr
    assert len(fake.requests) == 1  # nothing was sent for it
