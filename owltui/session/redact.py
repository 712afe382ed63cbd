"""Secret scrubbing for everything OwlTUI writes or emits: API keys, Authorization values and URL credentials.

One ``Redactor`` per session knows the secret values in use (the provider keys and any variable
that holds a secret, credentials in base URLs) and a few generic shapes (``Authorization: Bearer …``,
``sk-…`` keys, ``scheme://user:password@``). It reaches:

- the session file (``SessionStore`` scrubs each line before it is written);
- command output (``ctx.services.redactor``: the bash/jobs ``OutputSink`` scrubs before anything
  is kept, so the tool result, the progress events, the spilled file and the next request are clean);
- saved large results (``RedactingResultStore``);
- every event (``RedactingEmitter``: JSONL and RPC on stdout, the UI);
- warnings on stderr and the CLI's error line (``Redactor.from_env(os.environ).scrub``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from owltui.agent.events import Emitter, Event
from owltui.agent.results import ResultStore

MASK = "[REDACTED]"
MIN_SECRET = 8
_SECRET_ENV = re.compile(r"(API_KEY|_TOKEN|_SECRET|PASSWORD|AUTHORIZATION)$", re.IGNORECASE)
_SECRETISH_ENV = re.compile(r"KEY|SECRET|TOKEN|PASSWORD", re.IGNORECASE)
# Each pattern runs only on text that contains its word (the scrub of every streamed delta is cheap).
# Authorization: Bearer xyz / "authorization": "Bearer xyz"
_AUTHORIZATION = re.compile(
    r"(?i)((?:proxy-)?authorization\\?\"?\s*[:=]\s*\\?\"?\s*"
    r"(?:bearer\s+|basic\s+|token\s+)?)[^\s\"',\\]+"
)
# x-api-key: xyz / api_key=xyz
_API_KEY = re.compile(r"(?i)((?:x-api-key|api[_-]key)\\?\"?\s*[:=]\s*\\?\"?\s*)[^\s\"',\\]+")
_SK = re.compile(r"()\bsk-(?:ant-)?[A-Za-z0-9_-]{16,}")
# scheme://user:password@host: the password goes
_URL_PASSWORD = re.compile(r"(://[^/\s:@\"']*:)[^/\s@\"']+(?=@)")


def _keep_prefix(m: re.Match[str]) -> str:
    return m.group(1) + MASK


def secrets_from_env(env: Mapping[str, str]) -> list[str]:
    """Values of variables that hold secrets (long enough to be recognisable): names ending in
    API_KEY, _TOKEN, _SECRET, PASSWORD, AUTHORIZATION; other names with KEY/SECRET/TOKEN/PASSWORD
    when the value looks like a credential (16+ characters, no spaces or slashes); passwords and
    token-like user names in ``*_URL`` values."""
    found: list[str] = []
    for name, value in env.items():
        if _SECRET_ENV.search(name) and len(value) >= MIN_SECRET:
            found.append(value)
        elif _SECRETISH_ENV.search(name) and len(value) >= 16 and not re.search(r"[\s/]", value):
            found.append(value)
        elif name.endswith("_URL") and "@" in value:
            found.extend(url_credentials(value))
    return found


def url_credentials(url: str) -> list[str]:
    """The password (and a token-like user name) in ``url``, if any."""
    try:
        parts = urlsplit(url.strip())
        user, password = parts.username, parts.password
    except ValueError:
        return []
    out = [password] if password else []
    if user and len(user) >= 20:  # a token passed as the user name
        out.append(user)
    return [s for s in out if len(s) >= MIN_SECRET]


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets: list[str] = []
        self.add(*secrets)

    @classmethod
    def from_env(cls, env: Mapping[str, str], urls: Iterable[str | None] = ()) -> Redactor:
        """The secrets of ``env`` and the credentials in ``urls`` (base URLs given by flag or config)."""
        r = cls(secrets_from_env(env))
        r.add_urls(*urls)
        return r

    def add_urls(self, *urls: str | None) -> None:
        """Mask the credentials (``user:password@``) of these URLs."""
        for url in urls:
            if url and "@" in url:
                self.add(*url_credentials(url))

    def add(self, *secrets: str | None) -> None:
        """More values to mask (the key in use, a base URL's password); short ones are ignored."""
        merged = set(self.secrets) | {s for s in secrets if s and len(s) >= MIN_SECRET}
        self.secrets = sorted(merged, key=len, reverse=True)

    @property
    def longest(self) -> int:
        """Length of the longest secret: a stream scrubber holds back this many characters - 1."""
        return len(self.secrets[0]) if self.secrets else 0

    def scrub(self, text: str) -> str:
        for s in self.secrets:
            if s in text:
                text = text.replace(s, MASK)
        low = text.lower()
        if "authorization" in low:
            text = _AUTHORIZATION.sub(_keep_prefix, text)
        if "api-key" in low or "api_key" in low:
            text = _API_KEY.sub(_keep_prefix, text)
        if "sk-" in text:
            text = _SK.sub(_keep_prefix, text)
        if "@" in text:
            text = _URL_PASSWORD.sub(_keep_prefix, text)
        return text

    def scrub_value(self, value: Any) -> Any:
        """``value`` with every string in it (dicts and lists too) scrubbed; the same object when
        nothing changed."""
        if isinstance(value, str):
            clean = self.scrub(value)
            return value if clean == value else clean
        if isinstance(value, dict):
            changed = {k: self.scrub_value(v) for k, v in value.items()}
            if any(changed[k] is not v for k, v in value.items()):
                return changed
            return value
        if isinstance(value, list | tuple):
            items = [self.scrub_value(v) for v in value]
            if any(a is not b for a, b in zip(items, value, strict=True)):
                return type(value)(items)
            return value
        return value

    def scrub_event(self, event: Event) -> Event:
        changes: dict[str, Any] = {}
        for key, value in event.__dict__.items():
            clean = self.scrub_value(value)
            if clean is not value:
                changes[key] = clean
        return event.model_copy(update=changes) if changes else event


class RedactingEmitter(Emitter):
    """The session's emitter: every event is scrubbed before any listener (JSONL, RPC, UI) sees it."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def emit(self, event: Event) -> None:
        super().emit(self.redactor.scrub_event(event))


class RedactingResultStore(ResultStore):
    """Large tool results saved scrubbed. A file a tool spilled itself (``source``) comes from an
    ``OutputSink`` that scrubbed it already."""

    def __init__(self, redactor: Redactor, directory: Path | None = None) -> None:
        super().__init__(directory)
        self.redactor = redactor

    def save(self, content: str | None, source: Path | None = None) -> tuple[str, Path]:
        if source is None and content:
            content = self.redactor.scrub(content)
        return super().save(content, source)
