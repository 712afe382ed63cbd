"""Shared pytest configuration: anyio on asyncio for async tests."""

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
