"""``@`` completion in the TUI: how long a keystroke's handlers block the event loop while typing
``@src/...`` in a workspace of 10k or 100k files.

The app is launched the way ``owltui`` launches it (a ``Boot`` building the real runtime in its
start-up thread, a scripted model), headless. The file list is made first (``@`` typed and the list
waited for), then ``TYPED`` is typed a key at a time, a fast typist's gap apart (posted as the terminal would:
``Pilot.press`` waits for the process to go idle, which a ranking thread delays). Measured per key: the time
the input's message handlers take (the key, then the text's change: that is where ranking ran), and
the longest the loop went without running a 1 ms ticker (anything blocking it: handlers, drawing).
Modes, alternated: ``floor`` (the same keys, no ``@`` completion: the least code doing the typing),
``inline`` (the ranking in the keystroke's handler, as before it moved to a worker) and ``worker``
(the product). Reported: medians over runs of each run's worst key, the spread (min-max), the ratio
to the floor, and how long after the last key the list showed the ranking of all that was typed
(resolution: the gap between keys). Target: no
keystroke handler blocks more than 16 ms at 100k files.

    PYTHONPATH=. python bench/at_completion.py [--sizes 10000 100000] [--runs 3] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anyio
from textual import events
from textual.keys import _character_to_key

from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.testing.scripted import ScriptedModel
from owltui.ui.app import OwlApp
from owltui.ui.app_options import AppOptions
from owltui.ui.boot import Boot, Started
from owltui.ui.themes.loader import PACKAGE_THEMES
from owltui.ui.widgets.mention_source import MENTION_LIMIT, MentionSource
from owltui.ui.widgets.prompt_input import PromptInput

TYPED = "src/a7/b3/file_157"
GAP = 0.06  # seconds between keys (a fast typist)


def make_workspace(root: Path, n: int) -> Path:
    ws = root / f"ws{n}"
    for i in range(n):
        d = ws / "src" / f"a{i % 50}" / f"b{(i // 50) % 40}"
        if i < 2000:
            d.mkdir(parents=True, exist_ok=True)
        (d / f"file_{i}.py").touch()
    return ws


class InlineSource(MentionSource):
    """The ranking in the keystroke's handler (the code before the worker): what it measured."""

    def __call__(self, prefix: str) -> list[str] | None:
        if self.fresh():
            return list(self.completer.complete_mentions(prefix, limit=MENTION_LIMIT))
        self.load()
        return None


def launched(workspace: Path, home: Path, mode: str) -> tuple[OwlApp, Boot]:
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / "cfg"), "XDG_DATA_HOME": str(home / "data")}
    env["PATH"] = "/usr/bin:/bin"

    def start() -> Started:
        options = Options(no_session=True, workspace=workspace)
        runtime = build_runtime(options, model=ScriptedModel([], name="scripted"), env=env)
        return Started(runtime, keymap=dict(runtime.config.keys), close=lambda: anyio.run(runtime.aclose))

    boot = Boot(start, workspace)
    app = OwlApp(boot, AppOptions(theme_dirs=[PACKAGE_THEMES], cursor_blink=False))
    product = app.mention_source

    def source() -> Callable[[str], list[str] | None] | None:
        made = product()
        assert isinstance(made, MentionSource)
        if mode == "inline":
            made = InlineSource(made.completer, made._start, made._on_ready)
        app.made_source = made  # type: ignore[attr-defined]
        return made if mode != "floor" else None

    app.mention_source = source  # type: ignore[method-assign, assignment]
    return app, boot


async def wait(pilot: Any, cond: Any, limit: float = 120.0) -> None:
    deadline = time.perf_counter() + limit
    while not cond():
        if time.perf_counter() > deadline:
            raise TimeoutError("the app never got there")
        await pilot.pause(0.005)


async def run(workspace: Path, home: Path, mode: str) -> dict[str, float]:
    app, boot = launched(workspace, home, mode)
    handling: list[float] = []
    original = PromptInput._dispatch_message

    async def timed(self: PromptInput, message: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return await original(self, message)
        finally:
            handling.append(time.perf_counter() - t0)

    PromptInput._dispatch_message = timed  # type: ignore[method-assign, assignment]
    stalls: list[float] = []
    ticking = True

    async def ticker() -> None:
        last = time.perf_counter()
        while ticking:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            stalls.append(now - last - 0.001)
            last = now

    try:
        async with app.run_test(headless=True, size=(100, 32)) as pilot:
            await wait(pilot, lambda: boot.thread is not None)
            await anyio.to_thread.run_sync(boot.join, 60)
            await wait(pilot, lambda: app.boot is None and app.ready)
            comp = app.main.completions
            if mode != "floor":  # the list made once, before the measured keys
                await pilot.press("@")
                await wait(pilot, lambda: bool(comp.paths))
                await pilot.press("backspace")
            tick = asyncio.ensure_future(ticker())
            worst_handler = worst_stall = 0.0
            for ch in TYPED if mode == "floor" else "@" + TYPED:
                handling.clear()
                stalls.clear()
                app.post_message(events.Key(_character_to_key(ch), ch))  # (Pilot.press would wait for
                await asyncio.sleep(GAP)  # the process to go idle: for the ranking thread)
                worst_handler = max([worst_handler, *handling])
                worst_stall = max([worst_stall, *stalls])
            t_last = time.perf_counter()
            if mode != "floor":
                made: MentionSource = app.made_source  # type: ignore[attr-defined]

                def ranked() -> bool:  # the ranking of all that was typed is shown
                    done = mode == "inline" or (made._ranked is not None and made._ranked[0] == TYPED)
                    return done and comp.current_path == TYPED + ".py"

                await wait(pilot, ranked, 30)
            arrived = time.perf_counter() - t_last + GAP
            ticking = False
            await tick
            await app.action_quit()
    finally:
        PromptInput._dispatch_message = original  # type: ignore[method-assign]
    return {"handler_ms": worst_handler * 1e3, "stall_ms": worst_stall * 1e3, "list_ms": arrived * 1e3}


def summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    modes = ("floor", "inline", "worker")
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            ws = make_workspace(Path(tmp), n)
            got: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
            for i in range(args.runs):
                for mode in modes if i % 2 == 0 else modes[::-1]:  # alternated
                    got[mode].append(asyncio.run(run(ws, Path(tmp) / "home", mode)))
            size: dict[str, Any] = {}
            floor = statistics.median(r["handler_ms"] for r in got["floor"])
            for mode in modes:
                size[mode] = {k: summary([r[k] for r in got[mode]]) for k in ("handler_ms", "stall_ms")}
                size[mode]["handler_x_floor"] = size[mode]["handler_ms"]["median"] / floor
                if mode != "floor":
                    size[mode]["list_ms"] = summary([r["list_ms"] for r in got[mode]])
            report[str(n)] = size
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for n, size in report.items():
        print(f"{int(n):>7} files   worst key handler ms: median [min-max] (x floor)   worst loop stall ms")
        for mode, r in size.items():
            h, s = r["handler_ms"], r["stall_ms"]
            line = f"  {mode:>7}  {h['median']:7.1f} [{h['min']:.1f}-{h['max']:.1f}] ({r['handler_x_floor']:.1f}x)"
            line += f"   {s['median']:7.1f} [{s['min']:.1f}-{s['max']:.1f}]"
            if "list_ms" in r:
                line += f"   list shown {r['list_ms']['median']:.0f} ms after the last key"
            print(line)


if __name__ == "__main__":
    main()
