"""What a login can end in, as exceptions carrying one sentence for the user."""

from __future__ import annotations


class LoginRequired(Exception):
    """The server needs a login and none may run now (no stored tokens, or they were rejected)."""


class LoginFailed(Exception):
    """A login that ran did not end with tokens (refused, timed out, the redirect never came)."""
