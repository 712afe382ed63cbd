"""Running the TUI from the CLI: build the runtime, route start-up warnings and OwlTUI's logged
warnings into the conversation (scrubbed of secrets), run the app, print what could not be shown
and the ``owltui --resume ID`` line. ``owltui.ui.app.run_tui`` calls ``launch`` with ``OwlApp``."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from .plain import resume_line

if TYPE_CHECKING:
    from owltui.session.runtime import Options


class LaunchedApp(Protocol):
    def warn(self, text: str) -> None: ...

    def run(self) -> Any: ...

    def unshown_notices(self) -> list[str]: ...


class _NoticeHandler(logging.Handler):
    """While the TUI owns the screen, OwlTUI's warnings (log records) become notices: on stderr they
    would be hidden behind the full-screen view, or garble it."""

    def __init__(self, warn: Callable[[str], None]) -> None:
        super().__init__(logging.WARNING)
        self._warn = warn

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._warn(record.getMessage())
        except Exception:
            self.handleError(record)


def launch(make_app: Callable[..., LaunchedApp], options: Options, prompt: str | None = None) -> int:
    """The interactive TUI (CLI entry). Returns the exit code.

    Start-up warnings (the sandbox's notes, the session's) and OwlTUI's logged warnings are shown in
    the conversation, not on stderr where the full-screen view would hide them; everything is
    scrubbed of secrets first."""
    from owltui.session.config import save_config_value
    from owltui.session.redact import Redactor
    from owltui.session.runtime import build_runtime

    early: list[str] = []

    def to_stderr(text: str) -> None:
        print(f"owltui: warning: {text}", file=sys.stderr)

    route: list[Callable[[str], None]] = [early.append]

    def warn(text: str) -> None:  # build_runtime scrubs what it hands here
        route[0](text)

    try:
        runtime = build_runtime(options, warn=warn)
    except Exception as exc:  # config/provider/session errors are one clear sentence
        for line in early:
            to_stderr(line)
        scrub = Redactor.from_env(os.environ, [options.base_url]).scrub
        print(f"owltui: {scrub(str(exc))}", file=sys.stderr)
        return 1

    redactor = runtime.agent.config.services.get("redactor")
    if not isinstance(redactor, Redactor):
        redactor = Redactor.from_env(runtime.env, [options.base_url])

    def save(name: str) -> None:
        save_config_value("theme", name, env=runtime.env)

    app = make_app(runtime, prompt=prompt, theme=runtime.config.theme, keymap=dict(runtime.config.keys),
                   save_theme=save, notices=early)
    route[0] = app.warn
    handler = _NoticeHandler(lambda text: app.warn(redactor.scrub(text)))
    owl_log = logging.getLogger("owltui")
    owl_log.addHandler(handler)
    try:
        result = app.run()
    finally:
        owl_log.removeHandler(handler)
        route[0] = to_stderr
        for line in app.unshown_notices():
            to_stderr(line)
    resume = resume_line(runtime)
    if resume:
        print(resume)
    return int(result or 0)
