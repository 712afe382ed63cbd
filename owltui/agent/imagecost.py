"""What an image costs in tokens, by each provider's published rule.

Anthropic: the image is first scaled down to a long edge of at most 1568 px and about 1.15
megapixels, then costs width × height / 750 tokens. OpenAI (high detail): fitted in 2048 × 2048,
then the short side scaled to at most 768 px, then 85 tokens plus 170 per 512-px tile. A model
that knows its provider's rule says so (``PricesImages``: the providers' models); the context budget
counts an image by the rule of the model the request goes to (``image_cost_for``), and by the larger
of the two (``image_tokens``) where no model is known - an estimate that never falls short.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from owltui.agent.messages import ImageRef

ANTHROPIC_EDGE = 1568
ANTHROPIC_PIXELS = 1_150_000


def _fit(width: int, height: int, scale: float) -> tuple[int, int]:
    if scale >= 1:
        return width, height
    return max(1, int(width * scale)), max(1, int(height * scale))


def anthropic_tokens(width: int, height: int) -> int:
    """Tokens of an image in a Messages API request."""
    scale = min(1.0, ANTHROPIC_EDGE / max(width, height), math.sqrt(ANTHROPIC_PIXELS / (width * height)))
    w, h = _fit(width, height, scale)
    return math.ceil(w * h / 750)


def openai_tokens(width: int, height: int) -> int:
    """Tokens of a high-detail image in a Chat Completions request."""
    w, h = _fit(width, height, min(1.0, 2048 / max(width, height)))
    w, h = _fit(w, h, min(1.0, 768 / min(w, h)))
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def image_tokens(ref: ImageRef) -> int:
    """The budget's count for one image: the larger of the two rules."""
    return max(anthropic_tokens(ref.width, ref.height), openai_tokens(ref.width, ref.height))


@runtime_checkable
class PricesImages(Protocol):
    """A model that counts an image's tokens by its provider's rule."""

    def image_tokens(self, ref: ImageRef) -> int: ...


def image_cost_for(model: object) -> Callable[[ImageRef], int]:
    """The token rule for images sent to ``model``: its provider's, else the larger of the two."""
    return model.image_tokens if isinstance(model, PricesImages) else image_tokens
