"""Theme files: shipped themes are valid and the package's are the repository's themes/ (one copy); user themes
from $XDG_CONFIG_HOME/owltui/themes are registered; a bad file warns (file and field) and the app starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from owltui.ui.themes.loader import PACKAGE_THEMES, load_themes, package_themes, theme_dirs
from owltui.ui.widgets.blocks import NoticeBlock
from tests.ui.conftest import SIZE, make_app, wait_for

SHIPPED = ("owl-dark", "owl-forest", "owl-light")


def test_shipped_themes_valid_and_in_sync() -> None:
    loaded = load_themes([PACKAGE_THEMES])
    assert not loaded.warnings
    assert set(SHIPPED) <= set(loaded.themes)
    repo_themes = Path(__file__).resolve().parents[2] / "themes"
    assert PACKAGE_THEMES.resolve() == repo_themes.resolve(), "owltui/ui/themes must link to themes/"


def test_first_frame_themes_are_the_validated_ones() -> None:
    """The first frame reads the shipped themes without pydantic (``package_themes``): the same
    themes the validated load gives."""
    assert package_themes() == load_themes([PACKAGE_THEMES]).themes


@pytest.mark.anyio
async def test_first_frame_with_a_user_theme_validates_it_first(tmp_path: Path) -> None:
    """A user's theme is on the first frame too: validated before it, not trusted."""
    import threading

    from owltui.ui.app import OwlApp
    from owltui.ui.app_options import AppOptions
    from owltui.ui.boot import Boot

    (tmp_path / "mine.toml").write_text('name = "mine"\nprimary = "#ff0000"\n')
    (tmp_path / "bad.toml").write_text('name = "bad"\nprimary = "not a colour"\n')
    hold = threading.Event()

    def start() -> Any:  # the runtime is never built: only the first frame counts here
        hold.wait(5)

    app = OwlApp(Boot(start), AppOptions(theme="mine", theme_dirs=[PACKAGE_THEMES, tmp_path]))
    async with app.run_test(size=SIZE):
        assert app.theme == "mine" and "bad" not in app.available_themes
        assert any("bad.toml" in w for w in app.theme_warnings)
        hold.set()


def test_xdg_dir_is_searched() -> None:
    dirs = theme_dirs({"XDG_CONFIG_HOME": "/x/cfg"})
    assert dirs[0] == PACKAGE_THEMES and dirs[-1] == Path("/x/cfg/owltui/themes")


def test_bad_files_give_warnings_naming_file_and_field(tmp_path: Path) -> None:
    (tmp_path / "bad-color.toml").write_text('name = "b1"\nprimary = "notacolour"\n')
    (tmp_path / "extra.toml").write_text('name = "b2"\nprimary = "#fff"\nsparkle = true\n')
    (tmp_path / "broken.toml").write_text('name = "b3\n')
    (tmp_path / "good.toml").write_text('name = "mine"\nprimary = "#123456"\ndark = false\n')
    loaded = load_themes([tmp_path])
    assert list(loaded.themes) == ["mine"]
    text = "\n".join(loaded.warnings)
    assert "bad-color.toml: field 'primary'" in text
    assert "extra.toml: field 'sparkle': unknown field" in text
    assert "broken.toml" in text


@pytest.mark.anyio
async def test_app_starts_with_bad_theme_and_registers_user_theme(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text('name = "bad"\nprimary = 7\n')
    (tmp_path / "mine.toml").write_text('name = "mine"\nprimary = "#aa5500"\n')
    app = make_app(theme_dirs=[PACKAGE_THEMES, tmp_path], theme="mine")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        assert app.theme == "mine"
        assert "textual-dark" in app.available_themes and "owl-forest" in app.available_themes
        warnings = [b.text for b in app.conversation.query(NoticeBlock) if b.kind == "warning"]
        assert any("bad.toml: field 'primary'" in w for w in warnings)
        await app.action_quit()


@pytest.mark.anyio
async def test_unknown_configured_theme_falls_back() -> None:
    app = make_app(theme_dirs=[PACKAGE_THEMES], theme="gone")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        assert app.theme == "owl-dark"
        assert any("unknown theme 'gone'" in b.text for b in app.conversation.query(NoticeBlock))
        await app.action_quit()
