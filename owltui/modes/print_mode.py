"""Print mode (``-p``): one run, the final text on stdout, progress and errors on stderr.

Nobody can approve here: without ``--yes`` a call that needs approval is refused and the refusal is
the tool's result. The mode ends when the agent is idle and no background job it started is
running (a finished job wakes the agent with an aside first). ``--output jsonl`` writes every
event instead of the text. Exit codes: 0 done, 1 failed, 130 interrupted.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Mapping
from typing import Any, TextIO

import anyio

from owltui.agent.events import AgentEnd, Event, JobFinished, JobStarted, MessageEnd, Retry, ToolStart
from owltui.agent.model import Model
from owltui.session.runtime import Options, Runtime, build_runtime
from owltui.tools.sanitize import sanitize

from .output import JsonLines

EXIT_CODES = {"done": 0, "aborted": 130}


class _Progress:
    """Short progress lines on stderr for text mode; remembers the final answer and end reason."""

    def __init__(self, err: TextIO | None, jsonl: JsonLines | None) -> None:
        self.err = err
        self.jsonl = jsonl
        self.text = ""
        self.end: AgentEnd | None = None

    def _say(self, line: str) -> None:
        if self.err is not None:
            print(sanitize(line), file=self.err, flush=True)

    def __call__(self, ev: Event) -> None:
        if self.jsonl is not None:
            self.jsonl.write(ev.wire())
        if ev.agent is not None:  # a subagent's events are not the final answer
            return
        if isinstance(ev, MessageEnd):
            self.text = ev.text
        elif isinstance(ev, AgentEnd):
            self.end = ev
        if self.jsonl is not None:
            return
        if isinstance(ev, ToolStart):
            args = " ".join(f"{k}={v!r}" for k, v in ev.arguments.items())
            self._say(f"· {ev.name} {args[:160]}")
        elif isinstance(ev, Retry):
            self._say(f"· retrying in {ev.delay_s:.1f} s (attempt {ev.attempt}): {ev.reason}")
        elif isinstance(ev, JobStarted):
            self._say(f"· background job {ev.job_id} started: {ev.command}")
        elif isinstance(ev, JobFinished):
            self._say(f"· background job {ev.job_id} finished (exit {ev.exit_code})")


async def print_run(options: Options, prompt: str, output: str = "text", *, model: Model | None = None,
                    env: Mapping[str, str] | None = None, out: Any = None, err: TextIO | None = None,
                    handle_signals: bool = True, prepare: Callable[[Runtime], None] | None = None) -> int:
    """The whole of print mode; returns the exit code. ``prepare`` adjusts the runtime before the
    run (``owltui run`` adds the playbook's prompt, hooks and tool)."""
    options.interactive = False
    out = out if out is not None else sys.stdout.buffer
    err = err if err is not None else sys.stderr
    runtime = build_runtime(options, model=model, env=env)
    if prepare is not None:
        prepare(runtime)
    jsonl = JsonLines(out) if output == "jsonl" else None
    progress = _Progress(err, jsonl)
    runtime.emitter.subscribe(progress)
    interrupted = False
    async with runtime, anyio.create_task_group() as tg:
        if handle_signals:
            async def on_signals() -> None:
                nonlocal interrupted
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for _ in signals:
                        interrupted = True
                        runtime.agent.abort()
                        tg.cancel_scope.cancel()
                        return

            tg.start_soon(on_signals)
        runtime.agent.prompt(prompt)
        await runtime.wait_settled()
        tg.cancel_scope.cancel()
    if interrupted:
        print("owltui: interrupted", file=err)
        return 130
    end = progress.end
    reason = end.reason if end is not None else "error"
    if jsonl is None and progress.text.strip():
        text = sanitize(progress.text).rstrip("\n") + "\n"
        try:
            out.write(text.encode("utf-8"))
            out.flush()
        except BrokenPipeError:
            pass
    if end is not None and end.error:
        print(f"owltui: {sanitize(end.error)}", file=err)
    elif reason == "round_limit":
        print(f"owltui: stopped at the round limit ({runtime.config.max_rounds} rounds).", file=err)
    elif reason == "failure_limit":
        print("owltui: stopped because a tool kept failing.", file=err)
    elif end is None:
        print("owltui: the run did not start.", file=err)
    return EXIT_CODES.get(reason, 1)


def run_print(options: Options, prompt: str, output: str = "text") -> int:
    return anyio.run(print_run, options, prompt, output)
