"""An image counts towards the context budget by the rule of the provider the request goes to:
Anthropic's width × height / 750 after its downscale, OpenAI's 85 + 170 per 512-px tile; a model
that states no rule (a scripted one) is counted at the larger of the two."""

from __future__ import annotations

import pytest

from owltui.agent.config import LoopConfig
from owltui.agent.context import ContextBudget
from owltui.agent.imagecost import anthropic_tokens, image_cost_for, image_tokens, openai_tokens
from owltui.agent.messages import ImageRef, UserMessage
from owltui.providers.anthropic.model import AnthropicModel
from owltui.providers.openai_compat.model import OpenAICompatModel
from owltui.testing.scripted import ScriptedModel

SHOT = ImageRef(media_type="image/png", sha256="0" * 64, width=1920, height=1080, size=1)


def test_the_published_rules() -> None:
    assert anthropic_tokens(1000, 1000) == 1334  # 1000 × 1000 / 750, rounded up
    assert anthropic_tokens(3000, 3000) == 1533  # scaled to about 1.15 megapixels first (1072 × 1072)
    assert openai_tokens(1024, 1024) == 765  # 768 × 768: 4 tiles
    assert openai_tokens(2048, 4096) == 1105  # 1024 × 2048 → 768 × 1536: 6 tiles
    assert image_tokens(SHOT) == max(anthropic_tokens(1920, 1080), openai_tokens(1920, 1080))


@pytest.mark.parametrize(
    ("model", "rule"),
    [
        (AnthropicModel("claude-sonnet-4-5", api_key="k", base_url="http://127.0.0.1:9"), anthropic_tokens),
        (OpenAICompatModel("gpt-4.1", api_key="k", base_url="http://127.0.0.1:9/v1"), openai_tokens),
        (ScriptedModel([]), lambda w, h: max(anthropic_tokens(w, h), openai_tokens(w, h))),
    ],
)
def test_the_budget_counts_an_image_by_its_providers_rule(model: object, rule: object) -> None:
    assert image_cost_for(model)(SHOT) == rule(1920, 1080)  # type: ignore[operator]
    cfg = LoopConfig(model=model, context_window=100_000)  # type: ignore[arg-type]
    plain = UserMessage(text="look")
    with_image = UserMessage(text="look", images=(SHOT,))
    budget = ContextBudget()
    added = budget.estimate(cfg, [with_image]) - budget.estimate(cfg, [plain])
    assert added == rule(1920, 1080)  # type: ignore[operator]
