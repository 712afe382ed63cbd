"""Print mode (``-p``): one run, the final text on stdout, progress and errors on stderr.

Nobody can approve here: without ``--yes`` a call that needs approval is refused and the refusal is
the tool's result. The mode ends when the agent is idle and no background job it started is
running (a finished job wakes the agent with an aside first). ``--output jsonl`` writes every
event instead of the text. Every refused or skipped call is one line on stderr, in both outputs
(``owltui.modes.refusals``). Exit codes: 0 done, 1 failed, 3 done but calls were refused (refusals
not made good later: the answer may describe work that was not done), 130 interrupted.

A ``@path`` in the prompt attaches that file, as in every mode (what was not attached is said on
stderr). A prompt ``/NAME args`` naming a custom command (``owltui.session.custom_commands``) sends
that command's template instead, ``/skill NAME args`` that skill's instructions (an unknown one is an
error, exit 1); a command file named like a built-in command is an error (exit 1).
A prompt starting with ``!`` is sent as it is: print mode runs no shell command of its own (the
user's shell is right there; ``!`` is for interactive front ends).
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Mapping
from typing import Any, TextIO

import anyio

from owltui.agent.events import (
    Compaction,
    CompactionFailed,
    Event,
    HookEnd,
    JobFinished,
    JobStarted,
    Retry,
    ToolStart,
)
from owltui.agent.model import Model
from owltui.modes.event_text import wire_event
from owltui.modes.output import JsonLines
from owltui.modes.refusals import EXIT_REFUSED, RefusalLog, refusal_summary
from owltui.session.commands.host import LineFront
from owltui.session.commands.layer import Commands
from owltui.session.commands.spec import CommandError
from owltui.session.custom_commands.mcp_prompts import mcp_turn
from owltui.session.custom_commands.offer import load_at_start
from owltui.session.describe import describe
from owltui.session.input.mentions import attach_mentions
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.session.runtime.runtime import Runtime
from owltui.text.sanitize import sanitize

EXIT_CODES = {"done": 0, "aborted": 130}


class PrintFront(LineFront):
    """Print mode as the command layer sees it: it runs only a custom command's ``/NAME args``."""

    label = "print mode"


class _Progress:
    """Short progress lines on stderr in text mode (each event as a JSON line with ``--output jsonl``).
    The final answer and the end reason are read from the runtime's ``RunStats``."""

    def __init__(self, err: TextIO | None, jsonl: JsonLines | None) -> None:
        self.err = err
        self.jsonl = jsonl
        self.wants_deltas = jsonl is not None  # the text output draws no deltas: none are built
        self._steps: dict[type[Event], Callable[[Any], None]] = {
            ToolStart: self._tool_start,
            Retry: self._notice,
            HookEnd: self._notice,
            JobStarted: self._notice,
            JobFinished: self._notice,
            Compaction: self._notice,
            CompactionFailed: self._notice,
        }

    def _say(self, line: str) -> None:
        if self.err is not None:
            print(sanitize(line), file=self.err, flush=True)

    def __call__(self, ev: Event) -> None:
        if self.jsonl is not None:
            self.jsonl.write(wire_event(ev))  # the text the TUI would draw, never raw escapes
            return
        if ev.agent is not None:  # a subagent's progress is its task's business
            return
        step = self._steps.get(type(ev))
        if step is not None:
            step(ev)

    def note(self, text: str) -> None:
        self._say(f"· {text}")

    def _tool_start(self, ev: ToolStart) -> None:
        args = " ".join(f"{k}={v!r}" for k, v in ev.arguments.items())
        self._say(f"· {ev.name} {args[:160]}")

    def _notice(self, ev: Event) -> None:
        notice = describe(ev)
        if notice is not None:
            self._say(f"· {notice.text}")


async def print_run(
    options: Options,
    prompt: str,
    output: str = "text",
    *,
    model: Model | None = None,
    env: Mapping[str, str] | None = None,
    out: Any = None,
    err: TextIO | None = None,
    handle_signals: bool = True,
    prepare: Callable[[Runtime], None] | None = None,
) -> int:
    """The whole of print mode; returns the exit code. ``prepare`` adjusts the runtime before the
    run (``owltui run`` adds the playbook's prompt, hooks and tool)."""
    options.interactive = False
    out = out if out is not None else sys.stdout.buffer
    err = err if err is not None else sys.stderr
    runtime = build_runtime(options, model=model, env=env)
    custom = load_at_start(options.workspace, env, lambda line: print(f"owltui: {sanitize(line)}", file=err))
    stats = runtime.stats  # counting from before the run
    if prepare is not None:
        prepare(runtime)
    jsonl = JsonLines(out) if output == "jsonl" else None
    progress = _Progress(err, jsonl)
    runtime.emitter.subscribe(progress)
    refusals = RefusalLog(lambda line: print(sanitize(line), file=err, flush=True))
    runtime.emitter.subscribe(refusals)
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
        commands = Commands(runtime, PrintFront(), custom)
        try:  # an MCP prompt command, @server:uri mentions: awaited once the servers listed them
            turn = await mcp_turn(runtime, commands.custom_named, prompt)
        except CommandError as exc:
            print(f"owltui: {sanitize(exc.text)}", file=err)
            tg.cancel_scope.cancel()
            return 1
        named = commands.custom_named(prompt) is not None  # /NAME args: the command's template
        if turn is not None:
            if turn[1]:
                progress.note(turn[1])
            runtime.agent.prompt(turn[0])
        elif named or prompt.split()[:1] == ["/skill"]:  # /skill NAME args: the skill's instructions
            reply = commands.rpc("prompt", {"text": prompt}) if named else commands.slash(prompt)
            if reply is None or not reply.ok or reply.pick is not None:
                why = reply.text if reply is not None and not reply.pick else "name the skill: /skill NAME"
                print(f"owltui: {sanitize(why)}", file=err)
                tg.cancel_scope.cancel()
                return 1
            if reply.text:
                progress.note(reply.text)
        else:
            sent = attach_mentions(runtime.agent, prompt)  # @path: the file goes with the prompt
            if sent.summary():
                progress.note(sent.summary())
            runtime.agent.prompt(sent.message())
        await runtime.wait_settled()
        tg.cancel_scope.cancel()
    if interrupted:
        print("owltui: interrupted", file=err)
        return 130
    end = stats.end
    reason = end.reason if end is not None else "error"
    if jsonl is None and stats.answer.strip():
        text = sanitize(stats.answer).rstrip("\n") + "\n"
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
    code = EXIT_CODES.get(reason, 1)
    if code == 0 and refusals.standing:
        print(refusal_summary(refusals.standing), file=err)
        return EXIT_REFUSED
    return code


def run_print(options: Options, prompt: str, output: str = "text") -> int:
    return anyio.run(print_run, options, prompt, output)
