"""Model providers: Anthropic Messages, OpenAI-compatible Chat Completions and the offline demo model.

The CLI and session layers use ``resolve_provider`` and ``make_model``; everything else is internal.
Names load on first use (PEP 562), so ``owltui.providers.table`` can be imported without httpx.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "AnthropicModel": "anthropic",
    "ModelInfo": "catalog",
    "lookup": "catalog",
    "DemoModel": "demo",
    "ProviderConfigError": "errors",
    "ProviderError": "errors",
    "OpenAICompatModel": "openai_compat",
    "ResolvedProvider": "resolve",
    "make_model": "resolve",
    "probe_openai_compatible": "resolve",
    "resolve_provider": "resolve",
    "RetryPolicy": "retry",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)


__all__ = [
    "AnthropicModel",
    "DemoModel",
    "ModelInfo",
    "OpenAICompatModel",
    "ProviderConfigError",
    "ProviderError",
    "ResolvedProvider",
    "RetryPolicy",
    "lookup",
    "make_model",
    "probe_openai_compatible",
    "resolve_provider",
]
