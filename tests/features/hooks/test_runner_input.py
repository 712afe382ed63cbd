"""A hook's stdin: the event's JSON whole, however large, and nothing for the event loop to report
when the hook never reads it (on Python 3.11.2, Debian 12's, a pipe there logged "Future exception
was never retrieved" for each such hook: the newcomer's CI job runs this on that Python)."""

from __future__ import annotations

import asyncio
import gc
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from owltui.features.hooks.runner import run_command

pytestmark = pytest.mark.anyio
ENV = {"PATH": "/usr/bin:/bin"}


@pytest.mark.parametrize("size", [10, 100_000, 2_000_000])
async def test_a_hook_that_never_reads_its_input_leaves_nothing_to_report(tmp_path: Path, size: int) -> None:
    reported: list[dict[str, Any]] = []
    asyncio.get_running_loop().set_exception_handler(lambda _loop, context: reported.append(context))
    for _ in range(10):
        done = await run_command("exit 0", {"x": "y" * size}, workspace=tmp_path, env=ENV, limit_s=30)
        assert done.code == 0 and done.error is None
    gc.collect()  # an unretrieved future is reported when it is collected
    await asyncio.sleep(0)
    assert not reported, [c.get("message") for c in reported]


async def test_a_hook_reads_the_whole_event(tmp_path: Path) -> None:
    payload = {"tool_input": {"content": "é" * 1_000_000}, "hook_event_name": "PreToolUse"}
    done = await run_command("sha256sum", payload, workspace=tmp_path, env=ENV, limit_s=30)
    sent = json.dumps(payload, ensure_ascii=False).encode()
    assert done.code == 0 and done.stdout.split()[0] == hashlib.sha256(sent).hexdigest()
