"""Model providers: Anthropic Messages, OpenAI-compatible Chat Completions and the offline demo model.

The CLI and session layers use ``resolve_provider`` and ``make_model``; everything else is internal.
"""

from .anthropic import AnthropicModel
from .catalog import ModelInfo, lookup
from .demo import DemoModel
from .errors import ProviderConfigError, ProviderError
from .openai_compat import OpenAICompatModel
from .resolve import ResolvedProvider, make_model, probe_openai_compatible, resolve_provider
from .retry import RetryPolicy

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
