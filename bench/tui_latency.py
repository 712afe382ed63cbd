"""TUI latency while a model streams 2,000 tokens a second (headless Textual, real app, real loop).

Measures: time to first frame; key press -> character drawn (p50, p95) while the stream runs; the
time from the model's last token to the frame that shows it. Targets: keystroke p95 < 50 ms, last
token < 100 ms.

    python bench/tui_latency.py [--tokens 6000] [--rate 2000] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual import events

from owltui.agent.messages import Usage
from owltui.agent.model import ModelRequest, StreamDone, StreamEvent, TextDelta
from owltui.testing.host import LocalRuntime
from owltui.ui.app import OwlApp
from owltui.ui.app_options import AppOptions
from owltui.ui.themes.loader import PACKAGE_THEMES
from owltui.ui.widgets.blocks import AssistantBlock

WORDS = (
    "the loop streams tokens while the user types steering messages into the input and the "
    "markdown view appends each batch of text without re-rendering the whole answer"
).split()


def make_tokens(n: int, seed: int = 7) -> list[str]:
    rnd = random.Random(seed)
    out: list[str] = []
    for i in range(n):
        word = rnd.choice(WORDS)
        if i % 97 == 0:
            out.append("\n\n## Section " + str(i // 97) + "\n\n")
        elif i % 13 == 0:
            out.append(" **" + word + "**")
        elif i % 29 == 0:
            out.append(" `" + word + "`")
        elif i % 41 == 0:
            out.append(".\n- " + word)
        else:
            out.append(" " + word)
    return out


class RateModel:
    """Streams ``tokens`` at ``rate`` tokens a second (paced by the clock, not per-token sleeps)."""

    def __init__(self, tokens: list[str], rate: float) -> None:
        self.tokens = tokens
        self.rate = rate
        self.started_at = 0.0
        self.last_token_at = 0.0

    @property
    def name(self) -> str:
        return "bench"

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        start = self.started_at = time.perf_counter()
        for i, tok in enumerate(self.tokens):
            delay = start + i / self.rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            yield TextDelta(text=tok)
        self.last_token_at = time.perf_counter()
        yield StreamDone(stop_reason="stop", usage=Usage(output_tokens=len(self.tokens)))


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    k = max(0, min(len(s) - 1, round(p / 100 * (len(s) - 1))))
    return s[k]


async def bench(n_tokens: int, rate: float, size: tuple[int, int]) -> dict[str, Any]:
    tokens = make_tokens(n_tokens)
    full = "".join(tokens)
    model = RateModel(tokens, rate)
    app = OwlApp(LocalRuntime(model), AppOptions(theme_dirs=[PACKAGE_THEMES], cursor_blink=False))
    frames: list[float] = []
    waiting: dict[str, Any] = {}
    key_latencies: list[float] = []
    last_token_frame: list[float] = []
    original = app._display

    def display(screen: Any, renderable: Any) -> None:
        original(screen, renderable)
        now = time.perf_counter()
        frames.append(now)
        want = waiting.get("len")
        if want is not None and len(app.input.text) >= want:
            key_latencies.append(now - waiting.pop("t0"))
            waiting.pop("len")
        if model.last_token_at and not last_token_frame:
            blocks = list(app.conversation.query(AssistantBlock))
            if blocks and len(blocks[-1].shown.strip()) >= len(full.strip()):
                last_token_frame.append(now)

    app._display = display  # type: ignore[method-assign]
    t_start = time.perf_counter()
    async with app.run_test(headless=True, size=size) as pilot:
        first_frame = frames[0] - t_start if frames else float("nan")
        while not app.ready:
            await pilot.pause()
        app.agent.prompt("stream please")
        while not model.started_at:  # noqa: ASYNC110 - polling is the measurement
            await asyncio.sleep(0.001)
        rnd = random.Random(3)
        typed = 0
        lost = 0
        while not model.last_token_at:
            ch = rnd.choice("abcdefghijklmnopqrstuvwxyz")
            typed += 1
            waiting["len"] = len(app.input.text) + 1
            waiting["t0"] = time.perf_counter()
            app.post_message(events.Key(ch, ch))
            deadline = time.perf_counter() + 1.0
            while "len" in waiting and time.perf_counter() < deadline:  # noqa: ASYNC110
                await asyncio.sleep(0.001)
            if "len" in waiting:  # never drawn within a second
                lost += 1
                waiting.clear()
            await asyncio.sleep(rnd.uniform(0.02, 0.05))
        deadline = time.perf_counter() + 5.0
        while not last_token_frame and time.perf_counter() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.001)
        stream_s = model.last_token_at - model.started_at
        last_token = (last_token_frame[0] - model.last_token_at) if last_token_frame else float("nan")
        await pilot.pause()
        await app.action_quit()
    return {
        "tokens": n_tokens,
        "rate_target": rate,
        "rate_actual": round(n_tokens / stream_s, 1),
        "first_frame_ms": round(first_frame * 1000, 1),
        "keys": len(key_latencies),
        "keys_lost": lost,
        "key_p50_ms": round(pct(key_latencies, 50) * 1000, 1),
        "key_p95_ms": round(pct(key_latencies, 95) * 1000, 1),
        "key_max_ms": round(max(key_latencies) * 1000, 1) if key_latencies else None,
        "last_token_ms": round(last_token * 1000, 1),
        "frames": len(frames),
        "fps_during_stream": round(
            sum(1 for f in frames if model.started_at <= f <= model.last_token_at) / stream_s, 1
        ),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=6000)
    ap.add_argument("--rate", type=float, default=2000.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    result = asyncio.run(bench(args.tokens, args.rate, (120, 40)))
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k:>20}: {v}")
        ok = result["key_p95_ms"] < 50 and result["last_token_ms"] < 100
        print(f"{'targets':>20}: {'met' if ok else 'MISSED'} (key p95 < 50 ms, last token < 100 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
