"""SIGTERM and SIGINT end ``owltui -p`` at once at any point of a command that prints a lot: while
its output streams, and after it ended while the loop saves the output and makes its preview.

The real CLI runs against the fake server, whose tool call is a ``bash`` command that tells the test
where it is through a FIFO in the workspace (a blocking read: nothing polls)."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import openai_args, owltui_cmd

# ample on a loaded machine, far below the minute the old preview of 100 MB took
ENDS_WITHIN = 5.0
MB = 1_000_000

COMMANDS = {
    # 30 MB printed and spilled, then a command that prints until it is stopped
    "mid-output": f"yes | head -c {30 * MB}; echo here > point; exec yes",
    # 100 MB printed; the command has ended and the loop is saving the result
    "after-output": f"yes | head -c {100 * MB}; echo here > point",
}


def read_fifo(path: Path, into: list[str]) -> None:
    with path.open() as fh:
        into.append(fh.read())


@pytest.mark.parametrize("point", sorted(COMMANDS))
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_ends_print_mode_at_once_around_a_big_output(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path, point: str, sig: signal.Signals
) -> None:
    fifo = workspace / "point"
    os.mkfifo(fifo)
    fake.add(Turn(calls=[("bash", {"command": COMMANDS[point], "timeout": 600})]), Turn(text="done"))
    got: list[str] = []
    reader = threading.Thread(target=read_fifo, args=(fifo, got), daemon=True)
    reader.start()
    p = subprocess.Popen(
        owltui_cmd("-p", "print a lot", "--yes", *openai_args(fake.url)),
        env=env,
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        reader.join(timeout=120)
        assert got == ["here\n"], "the command never reached its point"
        sent = time.monotonic()
        p.send_signal(sig)
        _, err = p.communicate(timeout=60)
        took = time.monotonic() - sent
        assert p.returncode == 130, err
        assert "Traceback" not in err
        assert took < ENDS_WITHIN, f"{took:.2f} s after the signal"
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
