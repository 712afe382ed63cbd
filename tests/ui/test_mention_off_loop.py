"""``@`` completion never ranks on the event loop: on an app launched the way ``owltui`` launches it,
a ranking that blocks (on an Event, in its worker thread) does not stop keystrokes from being handled,
the rankings asked for while it ran are dropped but the newest, and only the ranking of what is typed
is shown. ``MentionSource`` on its own: a ranking that ends after the user typed on is dropped, and a
list older than its ``ttl`` is listed again in the background while the old one is ranked."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from owltui.session.input import mention_completion
from owltui.ui.widgets.mention_source import MentionSource
from tests.ui.conftest import SIZE, wait_for
from tests.ui.test_input import type_text
from tests.ui.test_launched_keys import attached, env_for, launched

pytestmark = pytest.mark.anyio


async def test_a_blocked_ranking_does_not_stop_keystrokes(tmp_path: Path, monkeypatch: Any) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    for name in ("app.py", "main.py", "zeta.py"):
        (ws / "src" / name).write_text("x = 1\n")
    loop_thread = threading.get_ident()
    release = threading.Event()
    asked: list[str] = []
    real = mention_completion.rank_paths

    def blocking_rank(query: str, paths: Any, limit: int = 20) -> list[str]:
        asked.append(query)
        assert threading.get_ident() != loop_thread, "ranked on the event loop"
        release.wait(10)
        return real(query, paths, limit)

    monkeypatch.setattr(mention_completion, "rank_paths", blocking_rank)
    app, boot = launched([], ws, env_for(tmp_path))
    try:
        async with app.run_test(size=SIZE) as pilot:
            await attached(pilot, app, boot)
            comp = app.main.completions
            shown: list[list[str] | None] = []
            show_paths = comp.show_paths

            def recorded(paths: list[str] | None, *args: Any, **kwargs: Any) -> None:
                shown.append(None if paths is None else list(paths))
                show_paths(paths, *args, **kwargs)

            comp.show_paths = recorded  # type: ignore[method-assign]
            await type_text(pilot, "see @")
            await wait_for(pilot, lambda: asked == [""], "the ranking of '' started (and blocked)")
            await type_text(pilot, "src/ap")
            assert app.input.text == "see @src/ap", "keystrokes handled while the ranking is blocked"
            assert comp.display and comp.kind == "mention" and comp.paths == []
            release.set()
            await wait_for(pilot, lambda: comp.current_path == "src/app.py", "the ranking of 'src/ap'")
            assert asked == ["", "src/ap"], "one ranking at a time, the ones typed over skipped"
            assert all(s is None or s == comp.paths for s in shown), "a stale ranking was shown"
            await pilot.press("down")
            app.input.refresh_completion(keep_choice=True)  # the same ranking again: the choice stays
            assert comp.current_path != "src/app.py"
            await pilot.press("up", "tab")
            assert app.input.text == "see @src/app.py "
            await app.action_quit()
    finally:
        release.set()


class FakeCompleter:
    """A ``MentionCompleter`` whose list is made on ``refresh`` and ranked by prefix, counted."""

    ttl = 10.0

    def __init__(self, loaded_at: float | None) -> None:
        self.loaded_at = loaded_at
        self.loads = 0
        self.ranked: list[str] = []
        self.entered = threading.Event()  # a ranking has started
        self.gate = threading.Event()  # a ranking may end
        self.gate.set()

    async def load(self) -> list[str]:
        self.loads += 1
        self.loaded_at = 1e12  # fresh from now on
        return []

    def rank(self, prefix: str, limit: int) -> list[str]:
        self.ranked.append(prefix)
        self.entered.set()
        self.gate.wait(10)
        return [f"{prefix}-{len(self.ranked)}"]


def source_for(completer: FakeCompleter) -> tuple[MentionSource, list[Callable[[], Awaitable[None]]]]:
    started: list[Callable[[], Awaitable[None]]] = []
    source = MentionSource(completer, started.append, lambda: None)  # type: ignore[arg-type]
    return source, started


async def test_a_ranking_the_user_typed_over_is_dropped() -> None:
    completer = FakeCompleter(loaded_at=1e12)
    completer.gate.clear()
    source, started = source_for(completer)
    assert source("a") is None and len(started) == 1  # nothing ranked yet: the ranking is started
    ranking = started.pop()

    async def rank() -> None:
        await ranking()

    async with anyio.create_task_group() as tg:
        tg.start_soon(rank)
        await anyio.to_thread.run_sync(completer.entered.wait, 10)
        assert source("ab") is None and not started  # one ranking at a time
        completer.gate.set()
    assert completer.ranked == ["a", "ab"]  # "a" ended after "ab" was typed: ranked again
    assert source("ab") == ["ab-2"] and not started
    assert source("abc") == ["ab-2"] and len(started) == 1  # the last ranking shown meanwhile


async def test_an_old_list_is_listed_again_in_the_background() -> None:
    completer = FakeCompleter(loaded_at=None)
    source, started = source_for(completer)
    assert source("a") is None and len(started) == 1  # never listed: listing
    await started.pop()()
    assert source("a") is None and len(started) == 1
    await started.pop()()
    assert source("a") == ["a-1"]
    completer.loaded_at = 0.0  # older than the ttl
    assert source("a") == ["a-1"] and len(started) == 1  # the old ranking, a listing started
    await started.pop()()
    assert completer.loads == 2 and source("a") == ["a-1"] and len(started) == 1  # ranked again
    await started.pop()()
    assert source("a") == ["a-2"]
