"""``/model SPEC`` switches the model (from the next call on); ``/model`` alone names it and offers a
picker of the models this host can switch to - the catalog's models of every provider with a key
(and of the current one), and the models a local OpenAI-compatible server says it serves
(``/v1/models``, asked in a worker thread). A choice runs ``/model SPEC``.

A host without ``model_sources`` (a bare test host) offers nothing to choose: the reply names the
model. The context window a status bar shows comes from ``context_window``: the agent's window, which
the runtime resolves for each model it switches to (``--context-window``, config, the catalog's entry).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from owltui.session.commands.host import Host, ModelSources
from owltui.session.commands.spec import Args, CommandError, Context, Pick, Reply, Unavailable
from owltui.session.describe import model_display

PROBE_TIMEOUT = 0.5  # seconds a local server has to answer


@dataclass(frozen=True)
class ModelChoice:
    spec: str  # what /model takes: provider:model
    label: str


def context_window(host: Host) -> int | None:
    """The model's context window in tokens, or None when nobody knows it."""
    window = host.agent.config.context_window
    return window if window is not None and window > 0 else None


def _price(value: float) -> str:
    return f"{value:g}"


def catalog_choices(env: Mapping[str, str], current: str) -> list[ModelChoice]:
    """The catalog's models of each provider with a key in ``env`` or in use now."""
    from owltui.providers.catalog import catalog_models, lookup
    from owltui.providers.table import PROVIDERS

    in_use = current.split(":", 1)[0] if ":" in current else None
    out: list[ModelChoice] = []
    table = {str(name): info for name, info in PROVIDERS.items()}
    for provider, models in catalog_models().items():
        info = table.get(provider)
        has_key = info is not None and info.key_env is not None and bool(env.get(info.key_env))
        if not has_key and provider != in_use:
            continue
        for model_id in models:
            entry = lookup(provider, model_id)
            label = (
                f"{provider}:{model_id}  ·  {entry.context_window // 1000}k context  ·  "
                f"${_price(entry.input)} / ${_price(entry.output)} per M tokens"
            )
            out.append(ModelChoice(f"{provider}:{model_id}", label))
    return out


def local_urls(sources: ModelSources) -> list[str]:
    """Where a local OpenAI-compatible server may be: the base URL in use for ``openai`` (when it is
    not OpenAI's own), ``OPENAI_BASE_URL``, and the default local address (Ollama's)."""
    from owltui.providers.resolve import LOCAL_BASE_URL

    urls = [*sources.base_urls, sources.env.get("OPENAI_BASE_URL"), LOCAL_BASE_URL]
    seen: list[str] = []
    for url in urls:
        if url and "api.openai.com" not in url and "api.anthropic.com" not in url and url not in seen:
            seen.append(url)
    return seen


def local_choices(urls: list[str], timeout: float = PROBE_TIMEOUT) -> list[ModelChoice]:
    """The models each local server serves (blocking: call it in a worker thread)."""
    from owltui.providers.resolve import probe_openai_compatible

    out: list[ModelChoice] = []
    for url in urls:
        for model_id in probe_openai_compatible(url, timeout) or []:
            out.append(ModelChoice(f"openai:{model_id}", f"openai:{model_id}  ·  local server {url}"))
    return out


def pick_model(ctx: Context) -> Reply:
    """``/model`` alone: the model now, then (``then``) a picker of the others."""
    host = ctx.host
    current = host.model_label
    head = f"model: {model_display(current)}"
    sources = host.model_sources
    if sources is None:
        return Reply(head)
    urls = local_urls(sources)

    async def choose() -> Reply:
        import anyio.to_thread

        local = await anyio.to_thread.run_sync(local_choices, urls)
        choices = catalog_choices(sources.env, current)
        known = {c.spec for c in choices}
        choices += [c for c in local if c.spec not in known]
        if not choices:
            return Reply(
                "no other model to switch to: set ANTHROPIC_API_KEY or OPENAI_API_KEY, or start "
                "a local server (Ollama)",
                "warning",
            )
        specs = [c.spec for c in choices]
        highlight = current if current in specs else None
        listing = "\n".join(f"  {c.label}" for c in choices)
        return Reply(
            f"models (/model SPEC switches):\n{listing}",
            pick=Pick(
                "Switch model (from the next call on)",
                specs,
                "model",
                highlight=highlight,
                labels=tuple(c.label for c in choices),
            ),
        )

    return Reply(head, then=choose())


def model(ctx: Context, a: Args) -> Reply:
    if a["spec"]:
        try:
            ctx.host.set_model(a["spec"])
        except Unavailable:
            raise
        except Exception as exc:
            raise CommandError(f"cannot switch model: {exc}") from exc
    return Reply(f"model: {model_display(ctx.host.model_label)}")
