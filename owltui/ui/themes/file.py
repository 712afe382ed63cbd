"""One theme file's schema (Textual's Theme fields) and its loading: ``load_theme_file`` parses and
validates a ``*.toml`` with pydantic and gives a Textual ``Theme``, or a ValueError naming the file
and the field. ``themes`` finds the files."""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from textual.color import Color, ColorParseError
from textual.theme import Theme


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

    @field_validator(
        "primary",
        "secondary",
        "accent",
        "foreground",
        "background",
        "surface",
        "panel",
        "boost",
        "success",
        "warning",
        "error",
    )
    @classmethod
    def _check_color(cls, value: str | None) -> str | None:
        return None if value is None else _color(value)

    def to_theme(self) -> Theme:
        return Theme(**self.model_dump())


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
