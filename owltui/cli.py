"""The ``owltui`` command: parse flags, pick the mode, turn every failure into one line and an exit code.

Imports stay lazy: ``owltui --version`` loads neither Textual nor httpx, and each mode loads only
what it needs. Exit codes: 0 done, 1 failed, 2 usage, 3 done but calls were refused (print mode and
playbooks, ``owltui.modes.refusals``), 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from owltui import __version__, _startup
from owltui.providers.table import NAMES as PROVIDER_NAMES

if TYPE_CHECKING:
    from owltui.session.runtime.options import Options

EPILOG = """\
modes:
  owltui [PROMPT]                  interactive TUI
  owltui --plain [PROMPT]          line-mode REPL
  owltui -p PROMPT [--output jsonl]  print mode: one run, the answer on stdout
  owltui --rpc                     JSON commands on stdin, events on stdout (docs/rpc.md)
  owltui --acp                     Agent Client Protocol on stdio, for editors (docs/acp.md)
  owltui run PLAYBOOK.md           unattended playbook run
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="owltui",
        description="OwlTUI: a terminal coding agent.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("prompt", nargs="*", help="the first prompt (print mode: the only one)")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "-p",
        "--print",
        dest="print_mode",
        action="store_true",
        help="print mode: one run, the final answer on stdout",
    )
    mode.add_argument("--rpc", action="store_true", help="RPC mode: JSON lines on stdin and stdout")
    mode.add_argument(
        "--acp",
        action="store_true",
        help="Agent Client Protocol v1 on stdin/stdout for editors such as Zed; the provider, model, "
        "permission and sandbox options are every session's defaults",
    )
    mode.add_argument("--plain", action="store_true", help="line-mode REPL instead of the full-screen TUI")
    mode.add_argument("--sessions", action="store_true", help="list this directory's sessions and exit")
    mode.add_argument(
        "--gc",
        action="store_true",
        help="prune the checkpoint stores now (deleted sessions' checkpoints, stores over budget) and exit",
    )
    p.add_argument(
        "--output",
        choices=("text", "jsonl"),
        default="text",
        help="print mode output: the final text (default) or every event as JSON lines",
    )
    p.add_argument("--provider", choices=PROVIDER_NAMES, help="model provider")
    p.add_argument("--model", help="model id; PROVIDER:NAME also selects the provider")
    p.add_argument("--base-url", help="provider base URL (openai: with /v1; anthropic: without)")
    p.add_argument("--yes", action="store_true", help="approve every tool call")
    p.add_argument(
        "--permission-mode",
        choices=("ask", "edits", "yolo", "read-only", "plan"),
        help="permission mode (default ask; --yes means yolo; plan: read-only until you accept a plan)",
    )
    p.add_argument("--max-rounds", type=_positive, metavar="N", help="round limit per turn (default 40)")
    p.add_argument(
        "-c",
        "--continue",
        dest="continue_session",
        action="store_true",
        help="continue the most recent session of this directory",
    )
    p.add_argument("--resume", metavar="ID", help="continue session ID")
    p.add_argument("--no-session", action="store_true", help="write no session file")
    p.add_argument(
        "--mcp-config",
        type=Path,
        metavar="FILE",
        help="MCP servers from FILE (.mcp.json format); naming it approves it for this run",
    )
    p.add_argument(
        "--sandbox",
        choices=("workspace-write", "read-only", "off"),
        help="kernel sandbox of the commands tools run (default workspace-write)",
    )
    p.add_argument(
        "--context-window",
        type=_positive,
        metavar="N",
        help="the model's context window in tokens, over the catalog's (local models); "
        "automatic compaction starts at 80 %% of it",
    )
    return p


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def options_from(args: argparse.Namespace, interactive: bool = True) -> Options:
    from owltui.session.runtime.options import Options

    return Options(
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        yes=args.yes,
        max_rounds=args.max_rounds,
        continue_session=args.continue_session,
        resume=args.resume,
        no_session=args.no_session,
        workspace=Path.cwd(),
        interactive=interactive,
        permission_mode=args.permission_mode,
        sandbox=args.sandbox,
        mcp_config=args.mcp_config,
        context_window=args.context_window,
    )


def _fail(message: str, code: int = 1) -> int:
    import os

    from owltui.session.redact import Redactor

    print(f"owltui: {Redactor.from_env(os.environ).scrub(message)}", file=sys.stderr)
    return code


def _load_front_end(module: str, func: str) -> Any:
    import importlib

    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and module.startswith(exc.name):
            return None
        raise
    fn = getattr(mod, func, None)
    return fn if callable(fn) else None


def _gc() -> int:
    """``owltui --gc``: every workspace's checkpoint store pruned now, a line each."""
    import os

    from owltui.session.checkpoints.prune import prune_everything
    from owltui.session.config import load_config
    from owltui.session.paths import data_dir

    budget = load_config().checkpoint_budget_mb * 1024 * 1024
    reports = prune_everything(data_dir(), budget=budget, env=os.environ)
    for report in reports:
        print(report.line())
    freed = sum(r.freed for r in reports)
    print(f"{len(reports)} checkpoint stores looked at, {freed / 1e6:.1f} MB freed.")
    return 1 if any(r.error for r in reports) else 0


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        print(f"owltui {__version__}")
        return 0
    words: list[str] = list(args.prompt)
    if words[:1] == ["run"] and len(words) == 2 and not (args.print_mode or args.rpc or args.plain):
        from owltui.modes.playbook_mode import run_playbook

        return int(run_playbook(Path(words[1]), options_from(args, interactive=False)))
    prompt = " ".join(words) if words else None
    if prompt is not None and not prompt.strip():
        parser.error("the prompt is empty: give a prompt with words in it")
    if args.sessions:
        from owltui.session.paths import sessions_dir
        from owltui.session.store.sessions import format_listing, list_sessions

        infos = list_sessions(sessions_dir(Path.cwd()))
        if not infos:
            print("No sessions in this directory yet.", file=sys.stderr)
            return 0
        print(format_listing(infos))
        return 0
    if args.gc:
        if prompt is not None:
            parser.error("--gc takes no prompt")
        return _gc()
    if args.output == "jsonl" and not args.print_mode:
        parser.error("--output jsonl needs -p (print mode)")
    if args.print_mode:
        if prompt is None and not sys.stdin.isatty():
            prompt = sys.stdin.read().strip() or None
        if prompt is None:
            parser.error("-p needs a prompt (as an argument or on stdin)")
        from owltui.modes.print_mode import run_print

        return run_print(options_from(args, interactive=False), prompt, args.output)
    if args.rpc:
        if prompt is not None:
            parser.error("--rpc takes no prompt: send a prompt command on stdin")
        from owltui.modes.rpc import run_rpc

        return run_rpc(options_from(args))
    if args.acp:
        if prompt is not None:
            parser.error("--acp takes no prompt: the client sends session/prompt")
        for given, flag in (
            (args.continue_session, "-c"),
            (args.resume, "--resume"),
            (args.no_session, "--no-session"),
        ):
            if given:
                parser.error(
                    f"{flag} cannot be used with --acp: the client opens sessions (session/new, session/load)"
                )
        from owltui.modes.acp.main import acp_main

        return acp_main(options_from(args))
    if args.plain:
        run_plain = _load_front_end("owltui.ui.plain", "run_plain")
        if run_plain is None:
            return _fail("plain mode is not available in this build (owltui.ui.plain is missing).")
        return int(run_plain(options_from(args), prompt))
    run_tui = _load_front_end("owltui.ui.app", "run_tui")
    if run_tui is None:
        return _fail(
            "the TUI is not available in this build (owltui.ui.app is missing); try -p PROMPT or --plain."
        )
    return int(run_tui(options_from(args), prompt))


def _known_error(exc: BaseException) -> bool:
    """Errors whose message is already one clear sentence for the user."""
    from owltui.session.config import ConfigError
    from owltui.session.store.file import SessionError

    if isinstance(exc, ConfigError | SessionError):
        return True
    playbook_error = getattr(sys.modules.get("owltui.features.playbook"), "PlaybookError", None)
    if isinstance(playbook_error, type) and isinstance(exc, playbook_error):
        return True
    try:
        from owltui.providers.http.errors import ProviderError
    except ImportError:
        return False
    return isinstance(exc, ProviderError)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: returns the exit code; never lets a traceback reach the user."""
    _startup.apply()
    try:
        return _run(argv)
    except KeyboardInterrupt:
        print("owltui: interrupted", file=sys.stderr)
        return 130
    except SystemExit as exc:  # argparse: usage errors exit 2, --help 0
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except BrokenPipeError:
        return 1
    except Exception as exc:
        if _known_error(exc):
            return _fail(str(exc))
        return _fail(f"internal error: {type(exc).__name__}: {exc} (please report it)")


if __name__ == "__main__":
    sys.exit(main())
