"""Running the TUI from the CLI: the app draws its first frame at once and builds the runtime in a
thread meanwhile (``start`` here, run by the app's ``Boot``); start-up warnings and OwlTUI's logged warnings
go into the conversation (scrubbed of secrets); once the app has exited, what could not be shown is
printed, a runtime the app never took is closed, a start-up error is one line (exit code 1), an
exception nothing caught is one line and a log (``crash``: exit code 1, the session closed, what was
typed or queued printed), and the ``owltui --resume ID`` line follows. ``owltui.ui.app.run_tui``
calls ``launch`` with ``OwlApp``.

The first frame's theme is read without the config's validation (``configured_theme``: the
environment, then the file's ``theme``); the full config is checked in the thread, and a bad one
ends the app with its one line.
"""

from __future__ import annotations

import logging
import os
import sys
import tomllib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from owltui.session.paths import config_file
from owltui.ui.app_options import AppOptions
from owltui.ui.boot import Boot, Started

if TYPE_CHECKING:
    from owltui.session.runtime.options import Options
    from owltui.ui.crash import Crash


class LaunchedApp(Protocol):
    """What ``launch`` uses of the app it makes (``OwlApp``); the rest it reads from the ``Boot``."""

    crash: Crash | None  # an exception nothing in the app caught

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


def configured_theme(env: Mapping[str, str]) -> str | None:
    """The theme the config asks for, read cheaply for the first frame (None: the default)."""
    name = env.get("OWLTUI_THEME")
    if name:
        return name
    try:
        value = tomllib.loads(config_file(env).read_text(encoding="utf-8")).get("theme")
    except (OSError, ValueError):  # (a bad file is reported by the full check, in the thread)
        return None
    return value if isinstance(value, str) else None


def launch(
    make_app: Callable[[Boot, AppOptions], LaunchedApp], options: Options, prompt: str | None = None
) -> int:
    """The interactive TUI (CLI entry). Returns the exit code."""
    scrubbers: list[Callable[[str], str]] = []

    def scrub(text: str) -> str:  # the runtime's redactor once built, else one from the environment
        if not scrubbers:
            from owltui.session.redact import Redactor

            scrubbers.append(Redactor.from_env(os.environ, [options.base_url]).scrub)
        return scrubbers[-1](text)

    def to_stderr(text: str) -> None:
        print(f"owltui: warning: {text}", file=sys.stderr)

    route: list[Callable[[str], None]] = [to_stderr]  # the app's notices while it runs

    def warn(text: str) -> None:  # build_runtime scrubs what it hands here
        route[0](text)

    def start() -> Started:
        """In the app's start-up thread, after the first frame: the runtime, and the main screen's
        modules imported here rather than on the app's thread when it swaps the main screen in."""
        import anyio

        from owltui.session.config import save_config_value
        from owltui.session.runtime.build import build_runtime
        from owltui.ui.control import actions, input_routing, lifecycle, queue_keys  # noqa: F401
        from owltui.ui.themes.loader import load_themes
        from owltui.ui.widgets import main_screen  # noqa: F401

        runtime = build_runtime(options, warn=warn)
        redactor = runtime.agent.config.services.redactor
        if redactor is not None:
            scrubbers.append(redactor.scrub)

        def save(name: str) -> None:
            save_config_value("theme", name, env=runtime.env)

        return Started(
            runtime,
            keymap=dict(runtime.config.keys),
            theme=runtime.config.theme,
            themes=load_themes(),
            save_theme=save,
            close=lambda: anyio.run(runtime.aclose),
        )

    boot = Boot(start, options.workspace)
    app = make_app(boot, AppOptions(prompt=prompt, theme=configured_theme(os.environ)))
    route[0] = app.warn
    handler = _NoticeHandler(lambda text: app.warn(scrub(text)))
    owl_log = logging.getLogger("owltui")
    owl_log.addHandler(handler)
    try:
        result = app.run()
    finally:
        owl_log.removeHandler(handler)
        route[0] = to_stderr
        boot.join()  # the runtime is built (or failed) before anything is printed
        for line in app.unshown_notices():
            to_stderr(line)
        if boot.started is not None and (not boot.taken or app.crash is not None):
            boot.started.close()  # quit on the first frame, or a crash: the session is closed (once)
    crash = app.crash
    if crash is not None:  # one line and the log's path; what was typed or queued follows
        from owltui.ui.crash import report

        for line in report(crash, os.environ, scrub):
            print(line, file=sys.stderr)
    error = boot.error
    if error is not None:  # config/provider/session errors are one clear sentence
        print(f"owltui: {scrub(str(error) or type(error).__name__)}", file=sys.stderr)
        if boot.unsent:  # nothing typed is lost: shown as typed, for copying
            print("owltui: not sent (typed while OwlTUI was starting):", file=sys.stderr)
            for text in boot.unsent:
                print(text, file=sys.stderr)
        return 1
    if boot.started is not None:
        from owltui.ui.plain import resume_line

        resume = resume_line(boot.started.runtime)
        if resume:
            print(resume)
    return 1 if crash is not None else int(result or 0)
