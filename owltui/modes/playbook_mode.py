"""``owltui run PLAYBOOK.md``: an unattended playbook run on the chat runtime.

The playbook feature (prompt, ``step_complete``, before-yield nudges) is plugged into the same
runtime print mode uses: nobody can approve (``--yes`` approves everything), progress goes to
stderr, the final report to stdout. Exit 0 when every step is complete, 1 otherwise, 3 when every
step is complete but calls were refused (as in print mode), 130 on ^C.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from owltui.agent.events import Event, ToolEnd
from owltui.agent.model import Model
from owltui.features.playbook import (
    PlaybookError,
    Progress,
    StepCompleteTool,
    load_playbook,
    playbook_hooks,
    playbook_prompt,
)
from owltui.modes.print_mode import print_run
from owltui.modes.refusals import EXIT_REFUSED
from owltui.session.runtime.options import Options
from owltui.session.runtime.runtime import Runtime


async def playbook_run(
    path: Path,
    options: Options,
    *,
    model: Model | None = None,
    env: Mapping[str, str] | None = None,
    out: Any = None,
    err: TextIO | None = None,
    handle_signals: bool = True,
) -> int:
    err = err if err is not None else sys.stderr
    try:
        book = load_playbook(path)
    except PlaybookError as exc:
        print(f"owltui: {exc}", file=err)
        return 1
    progress = Progress(book)

    def prepare(runtime: Runtime) -> None:
        cfg = runtime.agent.config
        cfg.system_prompt += playbook_prompt(book)
        cfg.hooks = playbook_hooks(progress)
        cfg.max_rounds = book.max_rounds
        cfg.time_limit = book.time_limit
        cfg.set_tools([*cfg.tools, StepCompleteTool(progress)])

        def on_event(ev: Event) -> None:
            if (
                isinstance(ev, ToolEnd)
                and ev.name == "step_complete"
                and ev.status == "ok"
                and ev.agent is None
            ):
                print(f"✓ {ev.output.splitlines()[0]}", file=err, flush=True)

        runtime.emitter.subscribe(on_event)

    print(f"owltui: running playbook “{book.title}” ({len(book.steps)} steps)", file=err, flush=True)
    code = await print_run(
        options,
        f"Run the playbook “{book.title}” now, step by step.",
        model=model,
        env=env,
        out=out,
        err=err,
        handle_signals=handle_signals,
        prepare=prepare,
    )
    if code in (0, EXIT_REFUSED) and not progress.finished:
        left = ", ".join(str(i) for i in range(1, len(book.steps) + 1) if i not in progress.done)
        print(f"owltui: the playbook ended with steps not complete: {left}.", file=err)
        return 1
    return code


def run_playbook(path: Path, options: Options) -> int:
    import anyio

    return anyio.run(playbook_run, path, options)
