"""The provider table: every provider's name, key variable, base-URL variable and defaults, once.

``cli`` (``--provider`` choices), ``session.config`` (the ``provider`` key) and ``resolve`` read
this table; ``catalog.json`` holds per-model facts keyed by these names. It imports nothing heavy,
so the command line can use it without loading an HTTP client.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

ProviderName = Literal["anthropic", "openai", "demo"]


@dataclass(frozen=True, slots=True)
class ProviderInfo:
    name: ProviderName
    default_model: str
    key_env: str | None = None  # the variable holding the API key
    base_env: str | None = None  # the variable overriding the base URL
    default_base_url: str | None = None
    help: str = ""


PROVIDERS: dict[ProviderName, ProviderInfo] = {
    "anthropic": ProviderInfo(
        "anthropic",
        "claude-sonnet-4-5",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "https://api.anthropic.com",
        "Anthropic Messages API (base URL without /v1)",
    ),
    "openai": ProviderInfo(
        "openai",
        "gpt-4.1",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "https://api.openai.com/v1",
        "any OpenAI-compatible Chat Completions server (base URL with /v1)",
    ),
    "demo": ProviderInfo("demo", "demo", help="the built-in offline demo model"),
}
NAMES: tuple[ProviderName, ...] = get_args(ProviderName)
assert NAMES == tuple(PROVIDERS), "ProviderName and PROVIDERS disagree"
