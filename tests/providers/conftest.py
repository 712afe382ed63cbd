"""Fixtures for provider tests: a fresh loopback server per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.providers.loopback import LoopbackServer


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as srv:
        yield srv
