"""Provider errors: the exception types and the one-line messages users see for HTTP failures."""

from __future__ import annotations

import html
import json
import re
import ssl
from collections.abc import Mapping

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


class ProviderError(Exception):
    """A provider failure with a message fit to show the user as is."""


class ProviderConfigError(ProviderError):
    """The provider cannot be set up (unknown provider, missing API key, bad base URL)."""


class MissingKeyError(ProviderConfigError):
    """No API key for the provider that must serve: ``variables`` names what to set (either one)."""

    def __init__(self, message: str, variables: tuple[str, ...]) -> None:
        super().__init__(message)
        self.variables = variables


class NetworkSetupError(ProviderError):
    """A network failure another attempt cannot heal (an unusable proxy variable, a proxy refusing
    our credentials, a CA file that cannot be loaded); the message names what to set."""


# OpenSSL's verify codes for a certificate issued to another name or address
_NAME_MISMATCH = frozenset({62, 64})


def certificate_problem(exc: BaseException) -> str | None:
    """What to tell the user when ``exc`` (or what caused it) is a failed certificate check: such a
    failure cannot heal by retrying. None for any other failure."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, ssl.SSLCertVerificationError):
            why = cause.verify_message or cause.reason or str(cause)
            if cause.verify_code in _NAME_MISMATCH:
                return (
                    f"the server's certificate is for another host (certificate verify failed: {why}); "
                    "check the host name of the base URL"
                )
            return (
                f"the server's certificate is not trusted (certificate verify failed: {why}); OwlTUI "
                "trusts certifi's CA bundle, not the system store: for a private CA set SSL_CERT_FILE "
                "to its PEM file (or SSL_CERT_DIR to a folder of hashed certificates)"
            )
        cause = cause.__cause__ or cause.__context__
    return None


def bad_event_message(provider: str, event: str, data: str, why: str) -> str:
    """The one line shown when a stream event cannot be understood (garbage on a data line)."""
    return f"{provider}: could not understand the {event!r} event from the server ({why}): {data[:120]!r}"


def is_retryable_status(status: int) -> bool:
    """408, 409, 429, 529 and every 5xx are worth another attempt."""
    return status in RETRYABLE_STATUS or 500 <= status <= 599


def _json_error(value: object, limit: int) -> str | None:
    """The message of an OpenAI (``{"error": {"message"}}``), Anthropic (``{"type": "error",
    "error": {...}}``) or Ollama/FastAPI (``{"error": "..."}``, ``{"detail": ...}``) error object."""
    if not isinstance(value, dict):
        return None
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
    return None


def _loads(text: str) -> object:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def server_message(body: bytes, limit: int = 400) -> str:
    """The server's own error message out of an error body (Anthropic, OpenAI, Ollama shapes)."""
    text = body.decode("utf-8", "replace").strip()
    msg = _json_error(_loads(text), limit)
    if msg is not None:
        return msg
    if text.lstrip("\ufeff").lstrip().startswith("<"):  # a proxy's or gateway's HTML error page
        return _html_line(text)[:limit]
    text = " ".join(text.split())
    return text[:limit] if text else "no error message from the server"


_SSE_START = (b"data:", b"data\n", b"data\r", b"event:", b"id:", b"retry:", b":")
_ERROR_TYPES = ("application/json", "application/problem+json", "text/html", "application/xhtml+xml")


def is_error_body(content_type: str, head: bytes) -> bool:
    """Whether a 200 response that should be an event stream is something else: its first bytes
    are ``{``, ``[`` or ``<``, or it is labelled JSON or HTML and does not start like SSE."""
    start = head.lstrip().removeprefix(b"\xef\xbb\xbf").lstrip()
    if not start:
        return False  # nothing yet (or an empty body: "ended early", as before)
    if start[:1] in (b"{", b"[", b"<"):
        return True
    mime = content_type.split(";", 1)[0].strip().lower()
    return mime in _ERROR_TYPES and not start.startswith(_SSE_START)


def _html_line(text: str) -> str:
    title = re.search(r"<title[^>]*>(.*?)</title", text, re.IGNORECASE | re.DOTALL)
    if title and title.group(1).strip():
        return html.unescape(" ".join(title.group(1).split()))
    body = re.sub(r"(?is)<(script|style)[^>]*>.*?</\1\s*>", " ", text)
    body = re.sub(r"(?s)<!--.*?-->|<[^>]*>", "\n", body)
    for line in body.splitlines():
        line = html.unescape(" ".join(line.split()))
        if line:
            return line
    return "an empty page"


def non_stream_message(provider: str, content_type: str, body: bytes, url: str, limit: int = 300) -> str:
    """One line for an HTTP 200 whose body is an error object, an HTML page or other non-SSE text."""
    text = body.decode("utf-8", "replace").strip().lstrip("\ufeff").strip()
    if text.startswith("<"):
        line = _html_line(text)[:limit]
        return (
            f"{provider}: the server answered with an HTML page instead of an event stream: {line} "
            f"(HTTP 200; check the base URL, {url})"
        )
    value = _loads(text)
    msg = _json_error(value, limit)
    if msg is not None:
        return f"{provider}: {' '.join(msg.split())} (HTTP 200, an error body instead of an event stream)"
    if value is not None:
        shown = " ".join(text.split())[:160]
        return (
            f"{provider}: the server answered with JSON instead of an event stream (HTTP 200; check "
            f"the base URL, {url}, and that the server supports streaming): {shown}"
        )
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "an empty body")
    kind = content_type.split(";", 1)[0].strip() or "a body"
    return (
        f"{provider}: the server answered with {kind} instead of an event stream (HTTP 200): {first[:limit]}"
    )


def http_error_message(provider: str, status: int, body: bytes, api_key_env: str | None) -> str:
    """One line describing an HTTP error: auth failures name the variable to check."""
    if status in (401, 403):
        hint = f"check {api_key_env}" if api_key_env else "check the API key"
        return f"{provider}: authentication failed (HTTP {status}): {hint}"
    if status == 407:
        return (
            f"{provider}: the proxy asks for credentials (HTTP 407): put them in the proxy variable "
            "(HTTP_PROXY, HTTPS_PROXY or ALL_PROXY) as http://user:password@host:port"
        )
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
