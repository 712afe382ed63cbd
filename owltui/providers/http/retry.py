"""Retry policy: which failures are retried, how long to wait, and the injectable sleep."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from owltui.providers.http.errors import header_retry_delay


@dataclass(slots=True)
class RetryPolicy:
    """Exponential backoff: ``base · 2ⁿ`` capped at ``cap`` with jitter, at most ``max_attempts`` attempts.

    A server's retry-after-ms / retry-after wins (up to ``max_server_delay``). ``scale`` multiplies
    every delay and ``sleep`` does the waiting, so tests run in milliseconds.
    """

    max_attempts: int = 4
    base: float = 0.5
    cap: float = 8.0
    jitter: float = 0.25
    max_server_delay: float = 60.0
    scale: float = 1.0
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, retry: int, headers: Mapping[str, str] | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1 for the first retry)."""
        asked = header_retry_delay(headers) if headers is not None else None
        if asked is not None:
            return min(asked, self.max_server_delay) * self.scale
        backoff: float = min(self.cap, self.base * 2.0 ** (retry - 1))
        backoff *= 1.0 - self.jitter * self.rng.random()
        return backoff * self.scale
