"""Fixtures for CLI tests: the fake OpenAI-compatible server, a workspace and an environment."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.fake_openai import FakeOpenAI
from tests.cli.helpers import cli_env


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    yield server
    server.close()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "hello.txt").write_text("hello\n")
    return ws


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return cli_env(tmp_path)
