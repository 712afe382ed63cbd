"""Theme files: ``*.toml`` validated with pydantic and turned into Textual themes.

Searched in order (a later file with the same name wins): the themes shipped inside the package
(``owltui/ui/themes/shipped`` is a link to the repository's top-level ``themes/``, the one copy; the wheel
carries the files), then ``$XDG_CONFIG_HOME/owltui/themes/``. A bad file yields a warning naming the
file and the field (``theme_file`` validates, with pydantic).

Start-up: the first frame is drawn before pydantic is imported (``boot``), with the shipped themes
read by ``package_themes`` (the package's own files, checked against the schema by the tests); a
user's theme file is always validated first.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from textual.theme import Theme

PACKAGE_THEMES = Path(__file__).parent / "shipped"


@dataclass
class ThemeLoad:
    themes: dict[str, Theme] = field(default_factory=dict)
    sources: dict[str, Path] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def theme_dirs(env: Mapping[str, str] | None = None) -> list[Path]:
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", str(Path.home()))) / ".config")
    return [PACKAGE_THEMES, Path(base) / "owltui" / "themes"]


def load_themes(dirs: Iterable[Path] | None = None) -> ThemeLoad:
    """Every theme file of ``dirs`` (default: ``theme_dirs()``), validated."""
    from owltui.ui.themes.file import load_theme_file  # pydantic: not on the way to the first frame

    out = ThemeLoad()
    for folder in theme_dirs() if dirs is None else dirs:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            try:
                theme = load_theme_file(path)
            except ValueError as exc:
                out.warnings.append(str(exc))
                continue
            out.themes[theme.name] = theme
            out.sources[theme.name] = path
    return out


def package_themes() -> dict[str, Theme]:
    """The themes shipped inside the package, without the schema check (they are OwlTUI's own files;
    ``tests/ui/test_themes.py`` checks that validating them gives the same themes)."""
    out: dict[str, Theme] = {}
    for path in sorted(PACKAGE_THEMES.glob("*.toml")):
        theme = Theme(**tomllib.loads(path.read_text(encoding="utf-8")))
        out[theme.name] = theme
    return out
