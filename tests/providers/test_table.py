"""The provider table is the one list of providers: the CLI, the config and the catalog agree with it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

from owltui.cli import build_parser
from owltui.providers.table import NAMES, PROVIDERS
from owltui.session.config import Config


def test_cli_choices_are_the_table() -> None:
    action = next(a for a in build_parser()._actions if a.dest == "provider")
    assert tuple(action.choices or ()) == NAMES


def test_config_accepts_exactly_the_table() -> None:
    annotation = Config.model_fields["provider"].annotation
    assert set(get_args(get_args(annotation)[0])) == set(NAMES)


def test_catalog_names_only_table_providers() -> None:
    import owltui.providers as providers

    data = json.loads((Path(providers.__file__).parent / "catalog.json").read_text())
    assert set(data["models"]) <= set(PROVIDERS)
    assert set(data["defaults"]) <= set(PROVIDERS)


def test_a_model_asked_for_never_falls_back_to_the_demo() -> None:
    import pytest

    from owltui.providers.http.errors import ProviderConfigError
    from owltui.providers.resolve import resolve_provider

    for model, needle in (
        ("gpt-4.1", "OPENAI_API_KEY"),
        ("claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("foo:bar", "--base-url"),
    ):
        with pytest.raises(ProviderConfigError, match=needle):
            resolve_provider(model=model, env={}, probe=lambda url: None)
        with pytest.raises(ProviderConfigError, match=needle):
            resolve_provider(config_model=model, env={}, probe=lambda url: None)
    assert resolve_provider(env={}, probe=lambda url: None).provider == "demo"


def test_a_key_never_goes_to_another_providers_host() -> None:
    import pytest

    from owltui.providers.http.errors import ProviderConfigError
    from owltui.providers.resolve import resolve_provider

    env = {"ANTHROPIC_API_KEY": "sk-ant-secret", "OPENAI_API_KEY": "sk-oai-secret"}
    with pytest.raises(ProviderConfigError, match="belongs to openai"):
        resolve_provider(provider="anthropic", base_url="https://api.openai.com/v1", env=env, probe=None)
    with pytest.raises(ProviderConfigError, match="belongs to anthropic"):
        resolve_provider(provider="openai", base_url="https://api.anthropic.com", env=env, probe=None)
    # a base URL with no provider named is OpenAI-compatible: the Anthropic key is not sent there
    r = resolve_provider(
        base_url="https://llm.example.com/v1", env={"ANTHROPIC_API_KEY": "sk-ant"}, probe=None
    )
    assert r.provider == "openai" and r.api_key is None
    r = resolve_provider(
        env={"ANTHROPIC_API_KEY": "a", "ANTHROPIC_BASE_URL": "http://proxy:8080"}, probe=None
    )
    assert r.provider == "anthropic" and r.api_key == "a"
