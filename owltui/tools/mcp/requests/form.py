"""A form elicitation's ``requestedSchema``: a flat object of string, number, integer, boolean and
enum fields. Read into ``FormField``s (title, description, default, bounds), defaults filled in, and
an answer checked against it before it is sent."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel

Kind = Literal["string", "number", "integer", "boolean", "enum", "multi"]
_FORMATS = {
    "email": re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$"),
    "uri": re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$"),
    "date": re.compile(r"^\d{4}-\d{2}-\d{2}$"),
    "date-time": re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?$"),
}


class FormProblem(ValueError):
    """The schema is not a form OwlTUI can show, or an answer does not fit it."""


class FormField(BaseModel):
    """One field of the form."""

    name: str
    kind: Kind
    title: str
    description: str = ""
    required: bool = False
    default: Any = None
    choices: list[str] = []
    choice_titles: list[str] = []
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None


def _choices(prop: dict[str, Any]) -> tuple[list[str], list[str]] | None:
    if isinstance(prop.get("enum"), list):
        values = [str(v) for v in prop["enum"]]
        names = prop.get("enumNames")
        titles = [str(n) for n in names] if isinstance(names, list) and len(names) == len(values) else values
        return values, titles
    options = prop.get("oneOf") or prop.get("anyOf")
    if isinstance(options, list) and all(isinstance(o, dict) and "const" in o for o in options):
        return [str(o["const"]) for o in options], [str(o.get("title", o["const"])) for o in options]
    return None


def _field(name: str, prop: Any, required: bool) -> FormField:
    if not isinstance(prop, dict):
        raise FormProblem(f"field {name!r} has no schema")
    base: dict[str, Any] = {
        "name": name,
        "title": str(prop.get("title") or name),
        "description": str(prop.get("description") or ""),
        "required": required,
        "default": prop.get("default"),
    }
    kind = prop.get("type")
    if kind == "array":
        items = prop.get("items")
        found = _choices(items) if isinstance(items, dict) else None
        if found is None:
            raise FormProblem(f"field {name!r}: only arrays of enum values can be asked")
        return FormField(**base, kind="multi", choices=found[0], choice_titles=found[1])
    found = _choices(prop)
    if found is not None:
        return FormField(**base, kind="enum", choices=found[0], choice_titles=found[1])
    if kind in ("number", "integer"):
        return FormField(**base, kind=kind, minimum=prop.get("minimum"), maximum=prop.get("maximum"))
    if kind == "boolean":
        return FormField(**base, kind="boolean")
    if kind == "string":
        return FormField(
            **base,
            kind="string",
            min_length=prop.get("minLength"),
            max_length=prop.get("maxLength"),
            format=prop.get("format"),
        )
    raise FormProblem(f"field {name!r} has type {kind!r}, which a form cannot ask")


def parse_form(schema: Any) -> list[FormField]:
    """The form's fields in the schema's order; ``FormProblem`` for a schema that is not flat."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise FormProblem("the requested schema is not an object")
    props = schema.get("properties") or {}
    if not isinstance(props, dict):
        raise FormProblem("the requested schema's properties are not an object")
    required = set(schema.get("required") or [])
    return [_field(str(name), prop, name in required) for name, prop in props.items()]


def fill_defaults(fields: list[FormField], content: dict[str, Any] | None = None) -> dict[str, Any]:
    """``content`` with each missing field that has a default set to it."""
    out = dict(content or {})
    for f in fields:
        if f.name not in out and f.default is not None:
            out[f.name] = f.default
    return out


def _check(f: FormField, value: Any) -> Any:
    if f.kind == "boolean":
        if not isinstance(value, bool):
            raise FormProblem(f"{f.title}: expected true or false")
        return value
    if f.kind in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise FormProblem(f"{f.title}: expected a number")
        if f.kind == "integer":
            if float(value) != int(value):
                raise FormProblem(f"{f.title}: expected a whole number")
            value = int(value)
        if f.minimum is not None and value < f.minimum:
            raise FormProblem(f"{f.title}: at least {f.minimum:g}")
        if f.maximum is not None and value > f.maximum:
            raise FormProblem(f"{f.title}: at most {f.maximum:g}")
        return value
    if f.kind == "multi":
        if not isinstance(value, list) or any(str(v) not in f.choices for v in value):
            raise FormProblem(f"{f.title}: choose among {', '.join(f.choices)}")
        return [str(v) for v in value]
    if not isinstance(value, str):
        raise FormProblem(f"{f.title}: expected text")
    if f.kind == "enum":
        if value not in f.choices:
            raise FormProblem(f"{f.title}: choose one of {', '.join(f.choices)}")
        return value
    if f.min_length is not None and len(value) < f.min_length:
        raise FormProblem(f"{f.title}: at least {f.min_length} characters")
    if f.max_length is not None and len(value) > f.max_length:
        raise FormProblem(f"{f.title}: at most {f.max_length} characters")
    pattern = _FORMATS.get(f.format or "")
    if pattern is not None and not pattern.match(value):
        raise FormProblem(f"{f.title}: not a valid {f.format}")
    return value


def validate(fields: list[FormField], content: dict[str, Any]) -> dict[str, Any]:
    """The answer as it will be sent (integers made whole), or ``FormProblem`` naming the first bad
    field. Unknown keys are dropped; a required field must be present."""
    out: dict[str, Any] = {}
    for f in fields:
        if f.name not in content or content[f.name] is None:
            if f.required:
                raise FormProblem(f"{f.title} is required")
            continue
        out[f.name] = _check(f, content[f.name])
    return out
