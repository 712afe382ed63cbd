"""What ``owltui.ui.textual_compat`` relies on in Textual's internals still holds: each test fails
when Textual changes it, before a user finds the workaround silently gone (or no longer needed).

``install_alt_enter``: Textual's key parser looks escape sequences up in the private table
``textual._ansi_sequences.ANSI_SEQUENCES_KEYS``, whose tuple values are ``Keys`` members it reads
``.value`` of, and ESC CR is not in it. ``follows_bottom``: Textual keeps whether the user scrolled
an anchored widget away in ``Widget._anchor_released``, set by scrolling up, cleared by ``anchor()``
and by scrolling back to the bottom. ``release_styles_caches``: Textual's ``StylesCache.get_inner_outer``
is an ``lru_cache`` on the method, whose keys keep every instance it saw."""

from __future__ import annotations

import gc
import time
import weakref

import pytest
from textual import events
from textual._ansi_sequences import ANSI_SEQUENCES_KEYS
from textual._styles_cache import StylesCache
from textual._xterm_parser import XTermParser
from textual.app import App, ComposeResult
from textual.color import Color
from textual.containers import VerticalScroll
from textual.keys import Keys
from textual.widgets import Static

from owltui.ui.textual_compat import (
    TEXTUAL_INNER_OUTER,
    drop_exit_traceback,
    follows_bottom,
    install_alt_enter,
    release_styles_caches,
)

ESC_CR = "\x1b\r"


def keys_of(sequence: str) -> list[str]:
    """The keys Textual's parser reads from ``sequence`` (an Esc alone is read once the parser waits)."""
    parser = XTermParser()
    found = list(parser.feed(sequence))
    time.sleep(0.15)
    found += parser.tick()
    return [e.key for e in found if isinstance(e, events.Key)]


def test_the_sequence_table_is_a_dict_of_keys_members() -> None:
    assert isinstance(ANSI_SEQUENCES_KEYS, dict)  # the workaround adds an entry to it
    assert ANSI_SEQUENCES_KEYS["\x1b[A"] == (Keys.Up,)  # tuples of members: the parser reads .value
    assert keys_of("\x1b[A") == ["up"]


def test_textual_does_not_map_esc_cr_itself() -> None:
    """When this fails, Textual reads ESC CR itself: check it is alt+enter and drop the workaround."""
    value = ANSI_SEQUENCES_KEYS.get(ESC_CR)  # None, or the entry install_alt_enter added
    assert value is None or not isinstance(value[0], Keys), f"Textual maps ESC CR to {value}"


def test_esc_cr_reads_as_alt_enter_once_installed() -> None:
    install_alt_enter()
    install_alt_enter()  # again: changes nothing
    assert keys_of(ESC_CR) == ["alt+enter"]
    assert keys_of("\r") == ["enter"]  # a plain Enter stays one


class Tall(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield from (Static(f"line {i}") for i in range(60))

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).anchor()


@pytest.mark.anyio
async def test_the_anchor_release_is_kept_where_follows_bottom_reads_it() -> None:
    app = Tall()
    async with app.run_test(size=(40, 10)) as pilot:
        view = app.query_one(VerticalScroll)
        await pilot.pause()
        assert view._anchor_released is False and follows_bottom(view)
        view.scroll_page_up(animate=False)  # the user scrolls away: released
        await pilot.pause()
        assert view._anchor_released is True and view.is_anchored and not follows_bottom(view)
        view.anchor()  # anchoring again takes the release back
        await pilot.pause()
        assert follows_bottom(view) and view.scroll_y == view.max_scroll_y
        view.scroll_page_up(animate=False)
        await pilot.pause()
        view.scroll_end(animate=False)  # and so does the bottom, reached by scrolling
        await pilot.pause()
        assert follows_bottom(view)


def test_an_uncaught_exception_reaches_the_hook_and_its_traceback_can_be_dropped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``App._handle_exception`` sees what nothing caught and queues Textual's traceback in
    ``App._exit_renderables``; ``drop_exit_traceback`` empties it, so nothing is printed at the end."""
    seen: list[tuple[Exception, int]] = []

    class Failing(App[None]):
        def on_mount(self) -> None:
            raise RuntimeError("nothing catches this")

        def _handle_exception(self, error: Exception) -> None:
            super()._handle_exception(error)
            seen.append((error, len(self._exit_renderables)))
            drop_exit_traceback(self)

    app = Failing()
    app.run(headless=True)
    [(error, queued)] = seen
    assert str(error) == "nothing catches this" and queued == 1
    assert app.return_code == 1
    captured = capsys.readouterr()
    assert "nothing catches this" not in captured.err + captured.out


BASE, BACK = Color(10, 20, 30), Color(200, 100, 0, 0.5)


def test_textuals_inner_outer_keeps_every_styles_cache_it_saw() -> None:
    cache = StylesCache()
    kept = weakref.ref(cache)
    TEXTUAL_INNER_OUTER(cache, BASE, BACK)
    del cache
    gc.collect()
    assert kept() is not None  # still needed: Textual's memo holds the instance


def test_with_the_workaround_a_styles_cache_dies_with_its_widget() -> None:
    release_styles_caches()
    release_styles_caches()
    cache = StylesCache()
    kept = weakref.ref(cache)
    assert cache.get_inner_outer(BASE, BACK) == TEXTUAL_INNER_OUTER(StylesCache(), BASE, BACK)
    del cache
    gc.collect()
    assert kept() is None


@pytest.mark.anyio
async def test_blocks_mounted_and_removed_leave_no_styles_cache_behind() -> None:
    release_styles_caches()

    class Churn(App[None]):
        def compose(self) -> ComposeResult:
            yield VerticalScroll()

    app = Churn()
    async with app.run_test(size=(40, 10)) as pilot:
        scroll = app.query_one(VerticalScroll)
        gc.collect()
        before = sum(type(o) is StylesCache for o in gc.get_objects())
        for round_ in range(30):
            block = Static(f"block {round_}")
            block.styles.background = Color(round_ * 8, 0, 0)
            await scroll.mount(block)
            await pilot.pause()
            await block.remove()
        await pilot.pause()
        gc.collect()
        after = sum(type(o) is StylesCache for o in gc.get_objects())
    assert after - before < 5
