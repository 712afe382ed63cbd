"""Provider errors: the exception types and the one-line messages users see for HTTP failures."""

from __future__ import annotations

import json
from collections.abc import Mapping

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


class ProviderError(Exception):
    """A provider failure with a message fit to show the user as is."""


class ProviderConfigError(ProviderError):
    """The provider cannot be set up (unknown provider, missing API key, bad base URL)."""


def bad_event_message(provider: str, event: str, data: str, why: str) -> str:
    """The one line shown when a stream event cannot be understood (garbage on a data line)."""
    return f"{provider}: could not understand the {event!r} event from the server ({why}): {data[:120]!r}"


def is_retryable_status(status: int) -> bool:
    """408, 409, 429, 529 and every 5xx are worth another attempt."""
    return status in RETRYABLE_STATUS or 500 <= status <= 599


def server_message(body: bytes, limit: int = 400) -> str:
    """The server's own error message out of an error body (Anthropic, OpenAI, Ollama shapes)."""
    text = body.decode("utf-8", "replace").strip()
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict):
        err = value.get("error", value)
        if isinstance(err, str) and err:
            return err[:limit]
        if isinstance(err, dict):
            msg = err.get("message") or err.get("detail") or err.get("type")
            if isinstance(msg, str) and msg:
                return msg[:limit]
        msg = value.get("message") or value.get("detail")
        if isinstance(msg, str) and msg:
            return msg[:limit]
    text = " ".join(text.split())
    return text[:limit] if text else "no error message from the server"


def http_error_message(provider: str, status: int, body: bytes, api_key_env: str | None) -> str:
    """One line describing an HTTP error: auth failures name the variable to check."""
    if status in (401, 403):
        hint = f"check {api_key_env}" if api_key_env else "check the API key"
        return f"{provider}: authentication failed (HTTP {status}): {hint}"
    return f"{provider}: {server_message(body)} (HTTP {status})"


def header_retry_delay(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asked us to wait (retry-after-ms, then retry-after), if it said."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw:
        try:
            return max(0.0, float(raw))
        except ValueError:
            from email.utils import parsedate_to_datetime

            try:
                when = parsedate_to_datetime(raw)
            except (TypeError, ValueError):
                return None
            import time

            return max(0.0, when.timestamp() - time.time())
    return None
