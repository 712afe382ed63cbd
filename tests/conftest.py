"""Shared pytest configuration: anyio on asyncio for async tests; in CI, a sandbox the machine
should have but the probe did not find fails the run instead of skipping every sandbox test."""

import os
import sys

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def pytest_sessionstart(session: pytest.Session) -> None:
    """``OWLTUI_REQUIRE_SANDBOX=1`` (set by ``.ci/``): Landlock and namespaces must be usable, or the
    security tests would skip without a word."""
    if os.environ.get("OWLTUI_REQUIRE_SANDBOX") != "1" or not sys.platform.startswith("linux"):
        return
    from owltui.policy.sandbox.child import capabilities

    caps = capabilities()
    if caps.landlock_abi < 1 or not caps.namespaces:
        raise pytest.UsageError(
            f"OWLTUI_REQUIRE_SANDBOX=1 but the sandbox probe found Landlock ABI {caps.landlock_abi}, "
            f"namespaces {caps.namespaces} ({caps.detail})"
        )
