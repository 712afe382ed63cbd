"""The runtime's wiring of automatic compaction: the window from ``--context-window`` / config
``context_window`` over the catalog's, ``compaction_confirm``, the compactor, ``/compact`` reported as
a ``compaction`` event with reason ``manual``."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from owltui.agent.events import Event
from owltui.cli import build_parser, options_from
from owltui.features.compaction import compact_for_loop
from owltui.session.config import ConfigError
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.testing.scripted import ScriptedModel, Step

pytestmark = pytest.mark.anyio


def _env(tmp_path: Path, config: str = "") -> dict[str, str]:
    if config:
        (tmp_path / "cfg" / "owltui").mkdir(parents=True, exist_ok=True)
        (tmp_path / "cfg" / "owltui" / "config.toml").write_text(config)
    return {
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "HOME": str(tmp_path),
    }


def _build(tmp_path: Path, model: Any = None, config: str = "", **opts: Any):
    ws = tmp_path / "ws"
    ws.mkdir(parents=True, exist_ok=True)
    return build_runtime(
        Options(workspace=ws, **opts), model=model or ScriptedModel([]), env=_env(tmp_path, config)
    )


class CatalogModel(ScriptedModel):
    """A provider model as the catalog describes it (``info.context_window``)."""

    info = SimpleNamespace(context_window=200_000)


async def test_the_window_comes_from_the_flag_the_config_or_the_catalog(tmp_path: Path) -> None:
    rt = _build(tmp_path, CatalogModel([]))
    cfg = rt.agent.config
    assert cfg.context_window == 200_000 and cfg.compactor is compact_for_loop and not cfg.compaction_confirm
    assert _build(tmp_path / "a", ScriptedModel([])).agent.config.context_window is None  # unknown: off
    rt = _build(tmp_path / "b", CatalogModel([]), config="context_window = 8192\ncompaction_confirm = true\n")
    assert rt.agent.config.context_window == 8192 and rt.agent.config.compaction_confirm
    rt = _build(tmp_path / "c", CatalogModel([]), config="context_window = 8192\n", context_window=32_000)
    assert rt.agent.config.context_window == 32_000  # the flag over the config
    with pytest.raises(ConfigError, match="context_window"):
        _build(tmp_path / "d", context_window=500)


def test_the_flag_reaches_the_options() -> None:
    args = build_parser().parse_args(["--context-window", "8000", "-p", "hi"])
    assert options_from(args, interactive=False).context_window == 8000
    assert options_from(build_parser().parse_args([])).context_window is None


async def test_manual_compact_is_a_compaction_event(tmp_path: Path) -> None:
    model = ScriptedModel([Step(text="answer one " * 50), Step(text="They asked one thing.")])
    rt = _build(tmp_path, model, no_session=True)
    events: list[Event] = []
    rt.emitter.subscribe(events.append)
    async with rt:
        rt.agent.prompt("question one " * 50)
        await rt.wait_settled()
        await rt.compact()
    (done,) = [e for e in events if e.type == "compaction"]
    assert done.wire() == {
        "type": "compaction",
        "reason": "manual",
        "tokens_before": done.tokens_before,
        "tokens_after": done.tokens_after,
    }
    assert done.tokens_before is not None and done.tokens_after is not None
    assert done.tokens_after < done.tokens_before


def test_set_model_stays_on_the_server_resolution_found(tmp_path: Path) -> None:
    """A local server OwlTUI found itself (no --base-url, no OPENAI_BASE_URL): /model keeps it."""
    from owltui.providers.resolve import ResolvedProvider, make_model
    from owltui.session.runtime.build import build_runtime
    from owltui.session.runtime.options import Options

    found = make_model(ResolvedProvider("openai", "qwen", "http://127.0.0.1:11434/v1", None, "local server"))
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "XDG_DATA_HOME": str(tmp_path / "data")}
    rt = build_runtime(Options(workspace=tmp_path, no_session=True), model=found, env=env)
    rt.model_label = "openai:qwen"
    rt.set_model("llama3")
    assert rt.model_label == "openai:llama3"
    assert rt.agent.config.model.base_url == "http://127.0.0.1:11434/v1"  # type: ignore[attr-defined]
