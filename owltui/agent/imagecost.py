"""What an image costs in tokens, by each provider's published rule.

Anthropic: the image is first scaled down to a long edge of at most 1568 px and about 1.15
megapixels, then costs width × height / 750 tokens. OpenAI (high detail): fitted in 2048 × 2048,
then the short side scaled to at most 768 px, then 85 tokens plus 170 per 512-px tile. The
context budget does not know the provider a request goes to, so it counts an image at the larger
of the two (``image_tokens``): an estimate that never falls short.
"""

from __future__ import annotations

import math

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
