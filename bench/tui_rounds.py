"""A long turn in the TUI: N tool rounds (one small ``ls`` call each) in one turn, the app launched the
way ``owltui`` launches it (a ``Boot`` whose start function builds the real runtime, a scripted model).

Measures, at rounds 100 / 500 / N: the process's resident memory (after a collection; with ``--top``
the traced memory, and what grew most between round 100 and N) and
the client's time per round (the median gap between model requests over the 50 rounds before); then
keystroke latency (key posted -> frame showing it) with the whole conversation mounted, and whether
PageUp reaches the first message. The floor is the same runtime driving the same rounds without
the TUI (in the same process, alternating): the figures are given as TUI / floor.

    PYTHONPATH=/work/main python bench/tui_rounds.py [--rounds 1000] [--repeat 2] [--top 12]
        [--marks 500 1000] [--blocks 40]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
from textual import events
from textual.pilot import WaitForScreenTimeout

from owltui.agent.model import ModelRequest, StreamEvent
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.testing.scripted import Call, ScriptedModel, Step
from owltui.ui.app import OwlApp
from owltui.ui.app_options import AppOptions
from owltui.ui.boot import Boot, Started
from owltui.ui.themes.loader import PACKAGE_THEMES
from owltui.ui.widgets.blocks import InputBlock

MARKS: tuple[int, ...] = (100, 500)
PAGE = os.sysconf("SC_PAGE_SIZE")
PACE = 0.002
BLOCKS: int | None = None  # the conversation's block cap (None: the app's default)


class PacedModel(ScriptedModel):
    """The scripted model behind a server that answers in ``PACE`` seconds (a loop that never waits
    would leave the TUI no idle moment to draw a frame in)."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        await anyio.sleep(PACE)
        async for event in super().stream(request):
            yield event


class Rounds:
    """The scripted model's steps: ``n`` rounds of ``ls``, then an answer; memory and time at marks."""

    def __init__(self, n: int, trace: bool) -> None:
        self.n = n
        self.trace = trace
        self.times: list[float] = []
        self.memory: dict[int, float] = {}
        self.snapshots: dict[int, tracemalloc.Snapshot] = {}

    def step(self, _request: ModelRequest) -> Step:
        self.times.append(time.perf_counter())
        done = len(self.times) - 1
        if done in (*MARKS, self.n):
            gc.collect()
            self.memory[done] = (tracemalloc.get_traced_memory()[0] if self.trace else rss()) / 1e6
            if self.trace and done in (MARKS[0], self.n):
                self.snapshots[done] = tracemalloc.take_snapshot()
        if done >= self.n:
            return Step(text="done")
        return Step(text="", calls=[Call("ls", {"path": "."})])

    def per_round_ms(self, at: int) -> float:
        gaps = [b - a for a, b in zip(self.times[at - 50 : at], self.times[at - 49 : at + 1], strict=False)]
        return statistics.median(gaps) * 1000


def rss() -> int:
    """The process's resident memory, bytes."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def env_for(home: Path) -> dict[str, str]:
    return {
        "XDG_CONFIG_HOME": str(home / "cfg"),
        "XDG_DATA_HOME": str(home / "data"),
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "OWLTUI_MAX_ROUNDS": "10000",
    }


def options(workspace: Path) -> Options:
    return Options(no_session=True, workspace=workspace, max_rounds=10_000)


async def floor(n: int, workspace: Path, home: Path) -> Rounds:
    rounds = Rounds(n, trace=False)
    runtime = build_runtime(
        options(workspace), model=PacedModel(rounds.step, record=False), env=env_for(home)
    )
    async with anyio.create_task_group() as tg:
        runtime.start(tg)
        runtime.agent.prompt("go")
        await runtime.agent.wait_idle()
        while len(rounds.times) <= n:  # noqa: ASYNC110 - polling the run is the measurement
            await asyncio.sleep(0.01)
        await runtime.agent.wait_idle()
        tg.cancel_scope.cancel()
    await runtime.aclose()
    return rounds


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[max(0, min(len(s) - 1, round(p / 100 * (len(s) - 1))))] if s else float("nan")


async def tui(n: int, workspace: Path, home: Path, trace: bool) -> tuple[Rounds, dict[str, Any]]:
    rounds = Rounds(n, trace)

    def start() -> Started:
        model = PacedModel(rounds.step, name="scripted", record=False)
        runtime = build_runtime(options(workspace), model=model, env=env_for(home))
        return Started(runtime, keymap=dict(runtime.config.keys), close=lambda: anyio.run(runtime.aclose))

    boot = Boot(start, workspace)
    app = OwlApp(boot, AppOptions(theme_dirs=[PACKAGE_THEMES], cursor_blink=False, max_blocks=BLOCKS))
    waiting: dict[str, Any] = {}
    keys: list[float] = []
    original = app._display

    def display(screen: Any, renderable: Any) -> None:
        original(screen, renderable)
        want = waiting.get("len")
        if want is not None and len(app.input.text) >= want:
            keys.append(time.perf_counter() - waiting.pop("t0"))
            waiting.pop("len")

    app._display = display  # type: ignore[method-assign]
    result: dict[str, Any] = {}
    async with app.run_test(headless=True, size=(120, 40)) as pilot:
        while not (app.boot is None and app.ready):
            await pilot.pause()
        app.agent.prompt("go")
        rnd = random.Random(3)
        while len(rounds.times) <= n or app.agent.running:
            if (
                len(rounds.times) > n * 0.8 and len(keys) < 40 and "len" not in waiting
            ):  # typing late in the turn
                ch = rnd.choice("abcdefghij")
                waiting["len"] = len(app.input.text) + 1
                waiting["t0"] = time.perf_counter()
                app.post_message(events.Key(ch, ch))
            await asyncio.sleep(0.02)
        try:
            for _ in range(500):  # the last key drawn before the scrolling starts
                if "len" not in waiting:
                    break
                await asyncio.sleep(0.01)
            await pilot.pause()
            conv = app.conversation
            result["block_widgets"] = len(conv.children)
            for _ in range(300):
                first = next(iter(conv.query(InputBlock)), None)
                if first is not None and first.text == "go" and conv.scroll_y == 0:
                    break
                await pilot.press("pageup")
                await pilot.pause()
            first = next(iter(conv.query(InputBlock)), None)
            result["first_message_reached"] = first is not None and first.text == "go" and conv.scroll_y == 0
        except WaitForScreenTimeout:  # the old transcript: the app never catches up within the wait
            result["first_message_reached"] = "app did not settle"
        await app.action_quit()
    result["key_p50_ms"] = round(pct(keys, 50) * 1000, 1)
    result["key_p95_ms"] = round(pct(keys, 95) * 1000, 1)
    result["key_max_ms"] = round(max(keys) * 1000, 1) if keys else None
    return rounds, result


def top(rounds: Rounds, count: int) -> None:
    if len(rounds.snapshots) < 2:
        return
    early, late = rounds.snapshots[MARKS[0]], rounds.snapshots[rounds.n]
    span = rounds.n - MARKS[0]
    print(f"  what grew between round {MARKS[0]} and {rounds.n} (bytes per round):")
    for stat in late.compare_to(early, "lineno")[:count]:
        frame = stat.traceback[0]
        where = "/".join(Path(frame.filename).parts[-3:])
        print(f"    {stat.size_diff / span:>9.0f}  {where}:{frame.lineno}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--marks", type=int, nargs="*", default=[500], help="rounds measured between 100 and N")
    ap.add_argument("--blocks", type=int, default=None, help="the conversation's block cap")
    ap.add_argument("--top", type=int, default=0, help="show the largest growths (tracemalloc snapshots)")
    args = ap.parse_args()
    n = args.rounds
    global MARKS, BLOCKS
    MARKS, BLOCKS = (100, *args.marks), args.blocks
    if args.top:
        tracemalloc.start(4)
    growth: dict[str, list[float]] = {"tui": [], "floor": []}
    slope: dict[str, list[float]] = {"tui": [], "floor": []}
    per: dict[str, list[float]] = {"tui": [], "floor": []}
    extra: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        for i in range(5):
            (workspace / f"file{i}.txt").write_text("x\n")
        for rep in range(args.repeat):
            for kind in ("floor", "tui") if rep % 2 == 0 else ("tui", "floor"):
                home = Path(tmp) / f"home-{kind}-{rep}"
                if kind == "tui":
                    rounds, info = asyncio.run(tui(n, workspace, home, trace=bool(args.top)))
                    extra.append(info)
                    top(rounds, args.top)
                else:
                    rounds = asyncio.run(floor(n, workspace, home))
                m = rounds.memory
                growth[kind].append((m[n] - m[MARKS[0]]) * 1e6 / (n - MARKS[0]) / 1e3)
                slope[kind].append(rounds.per_round_ms(n) / rounds.per_round_ms(MARKS[0]))
                per[kind].append(rounds.per_round_ms(n))
                marks = ", ".join(
                    f"{k}: {v:.1f} MB / {rounds.per_round_ms(k):.2f} ms" for k, v in sorted(m.items())
                )
                print(f"  {kind:>5} run {rep}: {marks}", flush=True)

    def spread(xs: list[float]) -> str:
        return f"{statistics.median(xs):.2f} (spread {min(xs):.2f}-{max(xs):.2f})"

    print(f"rounds {n}, repeats {args.repeat}")
    for kind in ("tui", "floor"):
        print(f"  {kind:>5}: memory growth kB/round after {MARKS[0]}: {spread(growth[kind])}")
        print(f"  {kind:>5}: time per round at {n} / at {MARKS[0]}: {spread(slope[kind])}")
        print(f"  {kind:>5}: time per round at {n}, ms: {spread(per[kind])}")
    ratio = [t / f for t, f in zip(per["tui"], per["floor"], strict=True)]
    print(f"  tui / floor, time per round at {n}: {spread(ratio)}")
    for info in extra:
        print(f"  tui: {info}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
