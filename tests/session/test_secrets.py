"""Secrets: key values and URL credentials are masked in everything OwlTUI writes or emits, and the
commands tools start never get them (end to end: a print-mode run whose model runs ``env``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from owltui.agent.events import ToolEnd, ToolStart
from owltui.policy.sandbox.kernel import SandboxPolicy
from owltui.session.redact import (
    MASK,
    RedactingEmitter,
    RedactingResultStore,
    Redactor,
    secrets_from_env,
    url_credentials,
)
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.testing.scripted import ScriptedModel, Step
from owltui.tools.exec.proc import OutputSink
from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import cli_env, openai_args, run_cli

OPENAI_KEY = "sk-e2e-openai-0123456789abcdef"
ANTHROPIC_KEY = "sk-ant-e2e-anthropic-0123456789"
GH_TOKEN = "e2e-gh-token-value-0123456789"
URL_PASSWORD = "pw-e2e-url-secret-987654"


# ---- the redactor ----------------------------------------------------------------------------------
def test_secrets_from_env_and_url_credentials() -> None:
    env = {
        "OPENAI_API_KEY": OPENAI_KEY,
        "GITHUB_TOKEN": GH_TOKEN,
        "SHORT_TOKEN": "abc",
        "MY_KEYRING_PATH": "/home/me/.keyring/with/slashes",
        "HOME": "/home/me",
        "OPENAI_BASE_URL": f"https://me:{URL_PASSWORD}@proxy.example/v1",
    }
    found = secrets_from_env(env)
    assert OPENAI_KEY in found and GH_TOKEN in found and URL_PASSWORD in found
    assert "abc" not in found and "/home/me" not in found and not any("keyring" in s for s in found)
    assert url_credentials("http://u:p@h") == []  # too short to mask by value (the pattern still does)
    assert url_credentials("https://ghp_0123456789abcdefghij@github.com/x") == ["ghp_0123456789abcdefghij"]


def test_scrub_values_patterns_and_urls() -> None:
    r = Redactor.from_env({"OPENAI_API_KEY": OPENAI_KEY}, [f"http://bob:{URL_PASSWORD}@10.0.0.1:8080/v1"])
    text = (
        f"key {OPENAI_KEY}; url http://bob:{URL_PASSWORD}@10.0.0.1:8080/v1; other https://al:x1@h/p; "
        "Authorization: Bearer abcdefghijkl; x-api-key: zzzzzzzzzz; sk-ant-api03-abcdefghijklmnopqrst"
    )
    clean = r.scrub(text)
    for secret in (OPENAI_KEY, URL_PASSWORD, "x1@", "abcdefghijkl", "zzzzzzzzzz", "api03"):
        assert secret not in clean
    assert "http://bob:" + MASK + "@10.0.0.1:8080/v1" in clean and "https://al:" + MASK + "@h/p" in clean
    assert r.scrub("nothing here") == "nothing here"
    value = {"a": [f"x {OPENAI_KEY}", 3], "b": "fine"}
    assert r.scrub_value(value) == {"a": [f"x {MASK}", 3], "b": "fine"}
    same = {"a": ["fine"]}
    assert r.scrub_value(same) is same


def test_emitter_masks_every_event() -> None:
    r = Redactor([OPENAI_KEY])
    emitter = RedactingEmitter(r)
    seen: list[object] = []
    emitter.subscribe(seen.append)
    emitter.emit(ToolStart(call_id="c", name="bash", arguments={"command": f"echo {OPENAI_KEY}"}))
    clean = ToolEnd(call_id="c", name="bash", is_error=False, output="ok", status="ok")
    emitter.emit(clean)
    assert json.dumps([e.wire() for e in seen]).count(MASK) == 1  # type: ignore[attr-defined]
    assert OPENAI_KEY not in json.dumps([e.wire() for e in seen])  # type: ignore[attr-defined]
    assert seen[1] is clean  # nothing to mask: the same object


def test_saved_results_are_scrubbed(tmp_path: Path) -> None:
    store = RedactingResultStore(Redactor([OPENAI_KEY]), tmp_path)
    _, path = store.save(f"line\n{OPENAI_KEY}\n")
    assert OPENAI_KEY not in path.read_text() and MASK in path.read_text()


def test_output_sink_scrubs_secrets_split_between_reads_and_its_spill_file(tmp_path: Path) -> None:
    sink = OutputSink(tmp_path, Redactor([OPENAI_KEY]))
    half = len(OPENAI_KEY) // 2
    sink.write(f"start {OPENAI_KEY[:half]}")
    sink.write(f"{OPENAI_KEY[half:]} end\n")
    assert OPENAI_KEY[:half] not in sink.take_progress()
    for _ in range(3000):  # past the limits: spilled to a file
        sink.write(f"again {OPENAI_KEY} and again\n")
    sink.write(f"unfinished {OPENAI_KEY}")
    sink.close()
    assert sink.path is not None
    whole = sink.path.read_text()
    assert OPENAI_KEY not in whole and OPENAI_KEY[:half] not in whole
    assert whole.startswith(f"start {MASK} end\n") and whole.endswith(f"unfinished {MASK}")
    assert OPENAI_KEY not in sink.preview()


# ---- the runtime wires it in ---------------------------------------------------------------------------
def test_runtime_hands_tools_the_sandbox_and_the_redactor(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "HOME": str(tmp_path),
        "OPENAI_API_KEY": OPENAI_KEY,
    }
    (tmp_path / "cfg" / "owltui").mkdir(parents=True)
    (tmp_path / "cfg" / "owltui" / "config.toml").write_text(
        'sandbox = "read-only"\nsandbox_writable = ["/opt/x"]\nsandbox_network = false\nenv_keep = ["GH_*"]\n'
    )
    warnings: list[str] = []
    rt = build_runtime(
        Options(workspace=ws, sandbox="workspace-write", interactive=False),
        model=ScriptedModel([Step(text="hi")]),
        env=env,
        warn=warnings.append,
    )
    services = rt.agent.config.services
    policy = services.sandbox
    assert isinstance(policy, SandboxPolicy) and policy is rt.sandbox
    assert policy.mode == "workspace-write"  # the flag wins over the file
    assert policy.env_keep == ("GH_*",) and not policy.network and policy.writable == [Path("/opt/x")]
    assert isinstance(services.redactor, Redactor) and OPENAI_KEY in services.redactor.secrets
    assert services.sandbox_rerun is None  # print mode: nobody to ask
    assert isinstance(rt.emitter, RedactingEmitter)
    assert rt.jobs is not None and rt.jobs.sandbox is policy
    assert any("/opt/x" in w for w in warnings)  # a sandbox_writable path that does not exist


# ---- end to end: print mode, the model runs env -----------------------------------------------------
@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    yield server
    server.close()


def test_keys_absent_from_data_dir_jsonl_and_requests_after_env(fake: FakeOpenAI, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text(f"the key is {OPENAI_KEY}\n")  # a file holding the key in use
    env = cli_env(tmp_path, OPENAI_API_KEY=OPENAI_KEY, ANTHROPIC_API_KEY=ANTHROPIC_KEY, GITHUB_TOKEN=GH_TOKEN)
    command = "env; cat notes.txt; seq 1 60000; env; cat notes.txt"  # large: spilled, saved as a result
    fake.add(
        Turn(text="Looking.", calls=[("bash", {"command": command})]), Turn(text=f"I saw {OPENAI_KEY}")
    )  # even the model's own text is masked on the way out
    r = run_cli(
        ["-p", "show me the environment", "--yes", "--output", "jsonl", *openai_args(fake.url)], env, ws
    )
    assert r.returncode == 0, r.stderr
    assert fake.requests[0]["_headers"]["authorization"] == f"Bearer {OPENAI_KEY}"  # the key in use
    secrets = [OPENAI_KEY, ANTHROPIC_KEY, GH_TOKEN]
    events = [json.loads(line) for line in r.stdout.splitlines()]
    [end] = [e for e in events if e["type"] == "tool_end"]
    assert "PATH=" in end["output"] and MASK in end["output"]  # env ran; the file's key was masked
    for name in ("OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", "GITHUB_TOKEN="):
        assert name not in end["output"]  # not even masked: the command never had them
    for secret in secrets:
        assert secret not in r.stdout and secret not in r.stderr
    files = [f for f in (tmp_path / "data").rglob("*") if f.is_file()]
    assert any(f.parent.name == "results" for f in files), files  # the spilled output was saved
    for f in files:
        data = f.read_bytes()
        for secret in secrets:
            assert secret.encode() not in data, (f, secret)
    sent = json.dumps(fake.requests[-1]["messages"])
    assert "PATH=" in sent
    for secret in secrets:
        assert secret not in sent  # the model never saw them either


def test_base_url_password_absent_from_errors_and_files(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = cli_env(tmp_path, OPENAI_API_KEY=OPENAI_KEY)
    url = f"http://me:{URL_PASSWORD}@127.0.0.1:9/v1"  # nothing listens there: the error names the URL
    r = run_cli(
        ["-p", "hi", "--output", "jsonl", "--provider", "openai", "--model", "m", "--base-url", url], env, ws
    )
    assert r.returncode == 1
    assert "cannot reach http://me:" + MASK + "@127.0.0.1:9" in r.stderr
    assert URL_PASSWORD not in r.stdout + r.stderr
    for f in (tmp_path / "data").rglob("*"):
        if f.is_file():
            assert URL_PASSWORD.encode() not in f.read_bytes(), f
