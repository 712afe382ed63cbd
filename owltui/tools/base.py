"""Shared pieces of the built-in tools: limits, parameter models, path handling, ``describe_params``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from owltui.agent.tool import Tool, ToolError

MAX_LINES = 2000
MAX_BYTES = 50 * 1024


class Params(BaseModel):
    """Base of every tool's parameter model: unknown arguments are rejected, numbers may stand
    in for strings (a model sending ``"job_id": 3``)."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)


def _type_name(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in schema:
        return _type_name(defs.get(schema["$ref"].rsplit("/", 1)[-1], {}), defs)
    if "enum" in schema:
        return "|".join(repr(v) if isinstance(v, str) else str(v) for v in schema["enum"])
    if "anyOf" in schema:
        names = [_type_name(s, defs) for s in schema["anyOf"] if s.get("type") != "null"]
        return "|".join(names) or "null"
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_type_name(schema.get('items', {}), defs)}"
    return str(kind)


def describe_params(model: type[BaseModel], name: str | None = None) -> str:
    """Short human summary of a parameter model, e.g. ``read {path: string, offset?: integer}``."""
    schema = model.model_json_schema()
    required = set(schema.get("required", []))
    defs = schema.get("$defs", {})
    fields = [
        f"{key}{'' if key in required else '?'}: {_type_name(prop, defs)}"
        for key, prop in schema.get("properties", {}).items()
    ]
    body = "{" + ", ".join(fields) + "}"
    return f"{name} {body}" if name else body


def describe_tool(tool: Tool) -> str:
    return describe_params(tool.params, tool.name)


def resolve_path(workspace: Path, path: str) -> Path:
    """An absolute, normalised path; relative paths are taken from the workspace."""
    if not path.strip():
        raise ToolError("path is empty")
    p = Path(os.path.expanduser(path))
    if not p.is_absolute():
        p = workspace / p
    return Path(os.path.normpath(p))


def is_inside(workspace: Path, path: Path) -> bool:
    """True when ``path`` (symlinks resolved, even for a file not yet created) is in the workspace."""
    root = Path(os.path.realpath(workspace))
    real = Path(os.path.realpath(path))
    return real == root or root in real.parents


def display_path(workspace: Path, path: Path) -> str:
    try:
        return path.relative_to(workspace).as_posix() or "."
    except ValueError:
        return str(path)


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", errors="replace"))
