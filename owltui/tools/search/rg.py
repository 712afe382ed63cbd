"""ripgrep, the one search engine of ``grep``, ``find`` and the "did you mean" suggestions.

Ignore semantics are ripgrep's everywhere: ``.gitignore`` (nested files, negations, the parent
directories up to the repository root; inside a git repository only, as git does), ``.ignore``,
``.rgignore``, ``.git/info/exclude`` and git's global excludes file. Hidden files are included and
``.git`` is skipped. Symbolic links are not followed (an explicitly named path is). A user
configuration file (``RIPGREP_CONFIG_PATH``) is not read.

``run_rg`` runs the binary in the calling (worker) thread and hands stdout to a consumer chunk by
chunk, so nothing is buffered quadratically and the consumer decides what to keep.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from owltui.tools.base import require_rg

# Flags every walk shares: hidden files in, .git out, no user config, no colours.
WALK_FLAGS = ["--no-config", "--hidden", "--glob", "!.git", "--color", "never"]
STDERR_KEEP = 8192


class RgResult:
    def __init__(self, code: int, stderr: bytes, stopped: bool) -> None:
        self.code = code
        self.stderr = stderr
        self.stopped = stopped

    def error(self) -> str:
        """rg's own message (the first lines of its stderr)."""
        text = self.stderr.decode("utf-8", errors="backslashreplace").strip()
        return "\n".join(text.splitlines()[:20])


def run_rg(
    args: list[str],
    cwd: Path,
    consume: Callable[[bytes], bool],
    stop: threading.Event,
    deadline: float | None = None,
) -> RgResult:
    """Run ``rg args`` in ``cwd``. ``consume`` gets each stdout chunk and returns False to stop
    early (rg is then killed). ``stop`` (a cancelled call) or the ``deadline`` (monotonic) kills it
    too."""
    cmd = [require_rg(), *args]
    proc = subprocess.Popen(
        cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    errors = bytearray()
    stopped = False
    open_fds = {proc.stdout.fileno(), proc.stderr.fileno()}
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout.fileno(), selectors.EVENT_READ, "out")
            sel.register(proc.stderr.fileno(), selectors.EVENT_READ, "err")
            while open_fds:
                if stop.is_set() or (deadline is not None and time.monotonic() > deadline):
                    stopped = True
                    break
                for key, _ in sel.select(0.1):
                    fd = int(key.fd)
                    data = os.read(fd, 1 << 18)
                    if not data:
                        sel.unregister(fd)
                        open_fds.discard(fd)
                    elif key.data == "err":
                        if len(errors) < STDERR_KEEP:
                            errors += data[: STDERR_KEEP - len(errors)]
                    elif not consume(data):
                        stopped = True
                        break
                if stopped:
                    break
    finally:
        if stopped or open_fds:
            with contextlib.suppress(OSError):
                proc.kill()
        code = proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    return RgResult(code, bytes(errors), stopped)


def rg_arg(root: Path, workspace: Path) -> str:
    """How to name ``root`` to rg running in the workspace: ``./``-relative inside it (rg then prints
    workspace-relative paths once the ``./`` is dropped), absolute outside."""
    try:
        rel = root.relative_to(workspace).as_posix()
    except ValueError:
        return str(root)
    return "./" if rel == "." else "./" + rel


def rg_name(raw: bytes) -> str:
    """A path as rg printed it, as a Python path string (bytes that are not UTF-8 as surrogate
    escapes), without the leading ``./``."""
    name = os.fsdecode(raw)
    return name[2:] if name.startswith("./") else name


def list_files_raw(
    arg: str,
    cwd: Path,
    stop: threading.Event,
    extra: list[str] | None = None,
    deadline: float | None = None,
) -> tuple[RgResult, bytes]:
    """``rg --files --null`` for ``arg`` (see ``rg_arg``): rg's result and the names exactly as it
    printed them, each ending in NUL."""
    parts: list[bytes] = []

    def keep(chunk: bytes) -> bool:
        parts.append(chunk)
        return True

    args = [*WALK_FLAGS, "--files", "--null", *(extra or []), "--", arg]
    return run_rg(args, cwd, keep, stop, deadline), b"".join(parts)


def list_files(
    arg: str,
    cwd: Path,
    stop: threading.Event,
    extra: list[str] | None = None,
    deadline: float | None = None,
) -> list[str]:
    """``rg --files`` for ``arg`` (see ``rg_arg``), in no particular order. Raises RgError when rg
    fails without listing anything (a missing path, an invalid glob)."""
    result, out = list_files_raw(arg, cwd, stop, extra, deadline)
    if result.code == 2 and not result.stopped and not out:
        raise RgError(result.error() or f"rg exited with status {result.code}")
    return [rg_name(p) for p in out.split(b"\0") if p]


class RgError(Exception):
    """rg failed; the message is rg's own."""
