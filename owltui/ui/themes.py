"""Theme files: ``*.toml`` validated with pydantic and turned into Textual themes.

Searched in order (a later file with the same name wins): the themes shipped inside the package
(``owltui/ui/themes`` is a link to the repository's top-level ``themes/``, the one copy; the wheel
carries the files), then ``$XDG_CONFIG_HOME/owltui/themes/``. A bad file yields a warning naming the
file and the field.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from textual.color import Color, ColorParseError
from textual.theme import Theme

PACKAGE_THEMES = Path(__file__).parent / "themes"


def _color(value: str) -> str:
    try:
        Color.parse(value)
    except ColorParseError as exc:
        raise ValueError(f"not a colour: {value!r}") from exc
    return value


class ThemeFile(BaseModel):
    """The schema of a theme file (Textual's Theme fields)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    primary: str
    secondary: str | None = None
    accent: str | None = None
    foreground: str | None = None
    background: str | None = None
    surface: str | None = None
    panel: str | None = None
    boost: str | None = None
    success: str | None = None
    warning: str | None = None
    error: str | None = None
    dark: bool = True
    luminosity_spread: float = Field(0.15, ge=0, le=1)
    text_alpha: float = Field(0.95, ge=0, le=1)
    variables: dict[str, str] = Field(default_factory=dict)

    @field_validator("primary", "secondary", "accent", "foreground", "background", "surface", "panel",
                     "boost", "success", "warning", "error")
    @classmethod
    def _check_color(cls, value: str | None) -> str | None:
        return None if value is None else _color(value)

    def to_theme(self) -> Theme:
        return Theme(**self.model_dump())


@dataclass
class ThemeLoad:
    themes: dict[str, Theme] = field(default_factory=dict)
    sources: dict[str, Path] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def theme_dirs(env: Mapping[str, str] | None = None) -> list[Path]:
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", str(Path.home()))) / ".config")
    return [PACKAGE_THEMES, Path(base) / "owltui" / "themes"]


def load_theme_file(path: Path) -> Theme:
    """Parse and validate one file. Raises ValueError with a message naming the file and field."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"theme file {path}: {exc}") from None
    try:
        return ThemeFile.model_validate(data).to_theme()
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "?"
        what = "unknown field" if first["type"] == "extra_forbidden" else first["msg"]
        raise ValueError(f"theme file {path}: field '{where}': {what}") from None


def load_themes(dirs: Iterable[Path] | None = None) -> ThemeLoad:
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
