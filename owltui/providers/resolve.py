"""Provider resolution: which provider, model, base URL and key to use, and building the ``Model``.

Order: ``--provider``/``--model provider:name`` flag → config file → ANTHROPIC_API_KEY →
OPENAI_API_KEY → a local OpenAI-compatible server (Ollama on 127.0.0.1:11434) answering
``/v1/models`` within 300 ms → the offline demo model.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from owltui.agent.model import Model
from owltui.providers.http.errors import MissingKeyError, ProviderConfigError
from owltui.providers.table import NAMES as PROVIDERS
from owltui.providers.table import PROVIDERS as TABLE
from owltui.providers.table import ProviderName

DEFAULT_MODELS: dict[ProviderName, str] = {name: info.default_model for name, info in TABLE.items()}
KEY_ENV: dict[ProviderName, str] = {n: i.key_env for n, i in TABLE.items() if i.key_env}
BASE_ENV: dict[ProviderName, str] = {n: i.base_env for n, i in TABLE.items() if i.base_env}
ANTHROPIC_BASE_URL = TABLE["anthropic"].default_base_url or ""
OPENAI_BASE_URL = TABLE["openai"].default_base_url or ""
LOCAL_BASE_URL = "http://127.0.0.1:11434/v1"

Probe = Callable[[str], list[str] | None]
"""Given an OpenAI-compatible base URL, the model ids it serves, or ``None`` if nothing answers."""


@dataclass(frozen=True, slots=True)
class ResolvedProvider:
    """The outcome of resolution; ``source`` says which rule picked the provider (for messages)."""

    provider: ProviderName
    model: str
    base_url: str | None = None
    api_key: str | None = None
    source: str = "flag"

    @property
    def label(self) -> str:
        return "demo (offline)" if self.provider == "demo" else f"{self.provider}:{self.model}"


def probe_openai_compatible(base_url: str, timeout: float = 0.3) -> list[str] | None:
    """Ask ``{base_url}/models``; the model ids if a server answers in time, else ``None``.

    Plain urllib with no proxy: an httpx client would load the CA bundle first (~40 ms of start-up)
    for what is almost always a plain-http server on this machine."""
    import json
    import urllib.error
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(base_url.rstrip("/") + "/models", timeout=timeout) as resp:
            if resp.status != 200:
                return None
            data = json.loads(resp.read()).get("data") or []
        return [str(m["id"]) for m in data if isinstance(m, dict) and m.get("id")]
    except (OSError, urllib.error.URLError, ValueError, AttributeError, TypeError):
        return None


def split_model(model: str | None) -> tuple[ProviderName | None, str | None]:
    """``provider:name`` → (provider, name); Ollama tags like ``qwen2.5:7b`` stay whole."""
    if model and ":" in model:
        prefix, rest = model.split(":", 1)
        if prefix in PROVIDERS:
            return prefix, rest or None
    return None, model or None


def _check(provider: str | None, what: str) -> ProviderName | None:
    if provider is None or provider == "":
        return None
    if provider not in PROVIDERS:
        raise ProviderConfigError(
            f"Unknown provider {provider!r} from {what}: use one of {', '.join(PROVIDERS)}."
        )
    return provider


def _explicit(
    provider: ProviderName,
    model: str | None,
    base_url: str | None,
    env: Mapping[str, str],
    source: str,
    probe: Probe | None,
) -> ResolvedProvider:
    if provider == "demo":
        return ResolvedProvider("demo", model or "demo", None, None, source)
    base = base_url or env.get(BASE_ENV[provider]) or None
    key = env.get(KEY_ENV[provider]) or None
    default_base = TABLE[provider].default_base_url
    if key is not None and base is not None:
        _refuse_foreign_host(provider, base)
    if key is None:
        official = base is None or "api.openai.com" in base or "api.anthropic.com" in base
        if provider == "anthropic" or official:
            raise MissingKeyError(
                f"{provider}: no API key: set {KEY_ENV[provider]} "
                f"(or choose another provider with --provider).",
                (KEY_ENV[provider],),
            )
    if model is None:
        if provider == "openai" and base is not None and "api.openai.com" not in base and probe is not None:
            served = probe(base)
            if served:
                model = served[0]
        model = model or DEFAULT_MODELS[provider]
    return ResolvedProvider(provider, model, base or default_base, key, source)


def _host(url: str) -> str:
    import httpx  # only the chosen provider's module is loaded on the way to the first request

    try:
        return (httpx.URL(url).host or "").lower()
    except (httpx.InvalidURL, TypeError, ValueError):
        return ""


def _refuse_foreign_host(provider: ProviderName, base: str) -> None:
    """A provider's key never goes to another provider's own host."""
    host = _host(base)
    for other, info in TABLE.items():
        if other != provider and info.default_base_url and host == _host(info.default_base_url):
            raise ProviderConfigError(
                f"{provider}: the base URL {host} belongs to {other}; not sending {KEY_ENV[provider]} "
                f"there (use --provider {other})."
            )


def resolve_provider(
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    config_provider: str | None = None,
    config_model: str | None = None,
    env: Mapping[str, str] | None = None,
    *,
    config_base_url: str | None = None,
    probe: Probe | None = probe_openai_compatible,
) -> ResolvedProvider:
    """Pick the provider; raises ``ProviderConfigError`` (one sentence) when it cannot be used.

    ``probe=None`` skips looking for a local server (tests, or when the user wants no network).
    """
    env = os.environ if env is None else env
    flag_provider = _check(provider, "--provider")
    model_provider, model_name = split_model(model)
    if flag_provider and model_provider and flag_provider != model_provider:
        raise ProviderConfigError(f"--provider {flag_provider} contradicts --model {model}.")
    chosen = flag_provider or model_provider
    if chosen is not None:
        return _explicit(chosen, model_name, base_url, env, "flag", probe)
    cfg_model_provider, cfg_model_name = split_model(config_model)
    cfg = _check(config_provider, "the config file") or cfg_model_provider
    if cfg is not None:
        return _explicit(cfg, model_name or cfg_model_name, base_url or config_base_url, env, "config", probe)
    model_name = model_name or cfg_model_name
    if base_url is not None:
        # A base URL with no provider named is an OpenAI-compatible server (the README's rule); the
        # Anthropic key is never sent to a URL nobody said was Anthropic's.
        return _explicit("openai", model_name, base_url, env, "--base-url", probe)
    if env.get("ANTHROPIC_API_KEY"):
        return _explicit("anthropic", model_name, None, env, "ANTHROPIC_API_KEY", probe)
    if env.get("OPENAI_API_KEY"):
        return _explicit("openai", model_name, None, env, "OPENAI_API_KEY", probe)
    local = env.get("OPENAI_BASE_URL") or LOCAL_BASE_URL
    if probe is not None:
        served = probe(local)
        if served is not None:
            pick = model_name if model_name else (served[0] if served else None)
            if pick is not None:
                return ResolvedProvider("openai", pick, local, None, "local server")
    if model_name is not None and model_name != "demo":
        raise _unservable(model_name)
    return ResolvedProvider("demo", "demo", None, None, "demo")


def _unservable(model: str) -> ProviderConfigError:
    """A model was asked for and nothing can serve it: never fall back to the demo silently."""
    from owltui.providers.catalog import lookup

    info = lookup("openai", model)
    entry = TABLE[info.provider] if info.known and info.provider in TABLE else None
    if entry is not None and entry.key_env:
        return MissingKeyError(
            f"model {model!r} needs the {entry.name} provider: no API key: set "
            f"{entry.key_env} (or choose another provider with --provider).",
            (entry.key_env,),
        )
    variables = tuple(i.key_env for i in TABLE.values() if i.key_env)
    return MissingKeyError(
        f"model {model!r}: no provider can serve it: set {' or '.join(variables)}, or pass "
        f"--base-url for an OpenAI-compatible server (no local server answered).",
        variables,
    )


def make_model(resolved: ResolvedProvider, **opts: Any) -> Model:
    """The ``Model`` for a resolution. ``opts`` go to the model class (e.g. ``retry``, ``idle_timeout``,
    ``client``, ``max_output_tokens``; ``delay`` for the demo model)."""
    if resolved.provider == "demo":
        from owltui.providers.demo import DemoModel

        return DemoModel(**opts)
    if resolved.provider == "anthropic":
        from owltui.providers.anthropic.model import AnthropicModel

        return AnthropicModel(
            resolved.model, api_key=resolved.api_key, base_url=resolved.base_url or ANTHROPIC_BASE_URL, **opts
        )
    from owltui.providers.openai_compat.model import OpenAICompatModel

    return OpenAICompatModel(
        resolved.model, api_key=resolved.api_key, base_url=resolved.base_url or OPENAI_BASE_URL, **opts
    )
