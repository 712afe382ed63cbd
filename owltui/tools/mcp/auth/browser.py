"""Sending the user to the authorization page: the URL is always shown (to copy where no browser
opens, an SSH session), then Python's ``webbrowser`` opens it (it honours ``$BROWSER``) in a
thread of its own, not waited for: a ``$BROWSER`` command may only return once the redirect it
follows was answered, and the loopback answers it after this returns."""

from __future__ import annotations

import threading
import webbrowser
from collections.abc import Callable


def _open(url: str) -> None:
    try:
        webbrowser.open(url)
    except Exception:  # no browser: the URL shown is the way
        pass


async def send_user_to(url: str, show: Callable[[str], None], server: str) -> None:
    show(f"MCP server '{server}': log in at {url}")
    threading.Thread(target=_open, args=(url,), name="owltui-browser", daemon=True).start()
