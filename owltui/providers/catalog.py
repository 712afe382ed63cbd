"""Model catalog: context window, output limit, prices and the preferred edit tool per model, loaded
from ``catalog.json``.

Unknown models work with the provider's defaults (and a cost of zero).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from owltui.agent.messages import Usage

_PATH = Path(__file__).with_name("catalog.json")


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """Limits and prices (US dollars per million tokens) of one model."""

    id: str
    provider: str
    context_window: int
    max_output_tokens: int
    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    known: bool = True
    edit_tool: str = "edit"  # the edit tool the model's family is offered: "edit" or "apply_patch"
    vision: bool = False  # the model accepts images (catalog ``vision``); unknown models do not

    def cost(self, usage: Usage, *, input_includes_cache: bool = True) -> float:
        """Dollars for one call. OwlTUI's ``input_tokens`` counts the whole prompt, cache reads and
        writes included (``input_includes_cache``); those are billed at their own prices."""
        fresh = usage.input_tokens
        if input_includes_cache:
            fresh = max(0, fresh - usage.cache_read_tokens - usage.cache_write_tokens)
        return (
            fresh * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * self.cache_read
            + usage.cache_write_tokens * self.cache_write
        ) / 1_000_000


@cache
@functools.cache
def _data() -> dict[str, Any]:
    """The catalog, read once per process (it ships with the package and does not change)."""
    data: dict[str, Any] = json.loads(_PATH.read_text(encoding="utf-8"))
    return data


def catalog_models() -> dict[str, list[str]]:
    """Every catalogued model id, per provider (``/model``'s picker)."""
    return {provider: list(models) for provider, models in _data()["models"].items()}


def _info(model_id: str, provider: str, entry: dict[str, Any], known: bool) -> ModelInfo:
    return ModelInfo(
        id=model_id,
        provider=provider,
        context_window=int(entry["context_window"]),
        max_output_tokens=int(entry["max_output_tokens"]),
        input=float(entry["input"]),
        output=float(entry["output"]),
        cache_read=float(entry["cache_read"]),
        cache_write=float(entry["cache_write"]),
        known=known,
        edit_tool=str(entry.get("edit_tool", "edit")),
        vision=bool(entry.get("vision", False)),
    )


def lookup(provider: str, model: str) -> ModelInfo:
    """Catalog entry for ``model``: exact id, else the longest catalogued id it starts with.

    A routing prefix such as ``anthropic/`` (OpenRouter) is ignored, and the other provider's table
    is searched too, so ``openai`` pointed at a Claude model still gets Claude's prices.
    """
    data = _data()
    bare = model.rsplit("/", 1)[-1].lower()
    tables = [provider] + [p for p in data["models"] if p != provider]
    for prov in tables:
        table = data["models"].get(prov, {})
        if bare in table:
            return _info(model, prov, table[bare], True)
    for prov in tables:
        table = data["models"].get(prov, {})
        best = max(
            (k for k in table if bare.startswith(k + "-") or bare.startswith(k + "@")), key=len, default=None
        )
        if best is not None:
            return _info(model, prov, table[best], True)
    defaults = data["defaults"].get(provider, data["defaults"]["openai"])
    return _info(model, provider, defaults, False)
