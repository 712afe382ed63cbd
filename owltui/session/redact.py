"""Secret scrubbing for anything written to disk: API keys and Authorization values never reach a file."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

MASK = "[REDACTED]"
_SECRET_ENV = re.compile(r"(API_KEY|_TOKEN|_SECRET|PASSWORD|AUTHORIZATION)$", re.IGNORECASE)
_PATTERNS = [
    # Authorization: Bearer xyz / "authorization": "Bearer xyz" / x-api-key: xyz
    re.compile(r"(?i)((?:proxy-)?authorization\\?\"?\s*[:=]\s*\\?\"?\s*(?:bearer\s+|basic\s+|token\s+)?)"
               r"[^\s\"',\\]+"),
    re.compile(r"(?i)((?:x-api-key|api[_-]key)\\?\"?\s*[:=]\s*\\?\"?\s*)[^\s\"',\\]+"),
    re.compile(r"()\bsk-(?:ant-)?[A-Za-z0-9_-]{16,}"),
]


def secrets_from_env(env: Mapping[str, str]) -> list[str]:
    """Values of variables that hold secrets (long enough to be recognisable)."""
    return [v for k, v in env.items() if _SECRET_ENV.search(k) and len(v) >= 8]


class Redactor:
    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets = sorted({s for s in secrets if len(s) >= 8}, key=len, reverse=True)

    def scrub(self, text: str) -> str:
        for s in self.secrets:
            if s in text:
                text = text.replace(s, MASK)
        for pattern in _PATTERNS:
            text = pattern.sub(lambda m: m.group(1) + MASK, text)
        return text
