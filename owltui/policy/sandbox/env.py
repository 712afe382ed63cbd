"""The environment a command gets: the caller's, without API keys, tokens, passwords and credentials.

``child_env`` drops the provider keys, every variable whose name contains KEY, SECRET, TOKEN or
PASSWORD (any case) and ``*_URL`` values that carry credentials, unless config ``env_keep`` names
them. ``SandboxPolicy.child_env`` applies the session's ``env_keep``.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping

PROVIDER_KEY_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
SECRET_NAME = re.compile(r"KEY|SECRET|TOKEN|PASSWORD", re.IGNORECASE)
_URL_CREDENTIALS = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:[^/\s@]*@")


def child_env(base: Mapping[str, str], keep: Iterable[str] = ()) -> dict[str, str]:
    """``base`` without the provider keys and any variable whose name contains KEY, SECRET, TOKEN
    or PASSWORD (any case), nor a base URL that carries credentials — unless its name matches one
    of ``keep`` (names or shell globs, from config ``env_keep``)."""
    keep = tuple(keep)

    def kept(name: str) -> bool:
        return any(name == k or fnmatch.fnmatchcase(name, k) for k in keep)

    out: dict[str, str] = {}
    for name, value in base.items():
        secret = (
            name in PROVIDER_KEY_VARS
            or SECRET_NAME.search(name) is not None
            or (name.endswith("_URL") and _URL_CREDENTIALS.search(value) is not None)
        )
        if not secret or kept(name):
            out[name] = value
    return out
