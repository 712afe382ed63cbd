"""The command line itself: --version without heavy imports, the demo model with no key, the
sessions listing when empty, `owltui run`, and no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.cli.helpers import run_cli

PROBE = (
    "import sys, json; from owltui.cli import main; rc = main({args!r}); "
    "print(json.dumps({{'rc': rc, 'textual': 'textual' in sys.modules, 'httpx': 'httpx' in sys.modules}}))"
)


def _probe(args: list[str], env: dict[str, str], cwd: Path) -> tuple[dict[str, object], str]:
    r = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args)],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    return json.loads(r.stdout.strip().splitlines()[-1]), r.stdout


def test_version_imports_neither_textual_nor_httpx(env: dict[str, str], workspace: Path) -> None:
    info, out = _probe(["--version"], env, workspace)
    assert info == {"rc": 0, "textual": False, "httpx": False}
    assert out.startswith("owltui 0.")


def test_print_mode_never_imports_textual(env: dict[str, str], workspace: Path) -> None:
    info, _ = _probe(["-p", "hello", "--provider", "demo", "--no-session"], env, workspace)
    assert info["rc"] == 0 and info["textual"] is False


def test_demo_model_works_without_any_key(env: dict[str, str], workspace: Path) -> None:
    env = {k: v for k, v in env.items() if k != "OPENAI_API_KEY"}
    r = run_cli(["-p", "list the files", "--provider", "demo"], env, workspace)
    assert r.returncode == 0, r.stderr
    assert "hello.txt" in r.stdout


def test_sessions_listing_when_empty(env: dict[str, str], workspace: Path) -> None:
    r = run_cli(["--sessions"], env, workspace)
    assert r.returncode == 0 and r.stdout == "" and "No sessions" in r.stderr


def test_run_playbook_missing_file_is_one_line(env: dict[str, str], workspace: Path) -> None:
    r = run_cli(["run", "nope.md", "--provider", "demo"], env, workspace)
    assert r.returncode == 1
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_help_and_version_flags(env: dict[str, str], workspace: Path) -> None:
    r = run_cli(["--help"], env, workspace)
    assert r.returncode == 0 and "--rpc" in r.stdout and "--continue" in r.stdout
    r = run_cli(["--version"], env, workspace)
    assert r.returncode == 0 and r.stdout.strip().startswith("owltui ")


def test_empty_prompt_is_a_usage_error_in_every_mode(env: dict[str, str], workspace: Path) -> None:
    for args in (["-p", ""], ["-p", "   "], ["--plain", " "], [" \t"]):
        r = run_cli([*args, "--provider", "demo", "--no-session"], env, workspace)
        assert r.returncode == 2, (args, r.stderr)
        assert "empty" in r.stderr and "Traceback" not in r.stderr


def test_a_model_asked_for_with_no_key_is_exit_1_naming_the_variable(
    env: dict[str, str], workspace: Path
) -> None:
    env = {k: v for k, v in env.items() if not k.endswith("_API_KEY") and not k.endswith("_BASE_URL")}
    r = run_cli(["-p", "hi", "--model", "gpt-4.1", "--no-session"], env, workspace)
    assert r.returncode == 1 and "OPENAI_API_KEY" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
