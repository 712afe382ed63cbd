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

    from owltui.providers import ProviderConfigError, resolve_provider

    for model, needle in (("gpt-4.1", "OPENAI_API_KEY"), ("claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
                          ("foo:bar", "--base-url")):
        with pytest.raises(ProviderConfigError, match=needle):
            resolve_provider(model=model, env={}, probe=lambda url: None)
        with pytest.raises(ProviderConfigError, match=needle):
            resolve_provider(config_model=model, env={}, probe=lambda url: None)
    assert resolve_provider(env={}, probe=lambda url: None).provider == "demo"
