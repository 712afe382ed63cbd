"""A server's input schema, passed through to the providers after a check, and the parameter model the
loop validates arguments with.

The loop knows tools only by a pydantic model (``tool.params``): it validates arguments with
``params.model_validate`` and ``tool_spec`` sends ``params.model_json_schema()``. An MCP tool has no
model of its own, so ``params_model`` makes one per tool: a ``RootModel`` of any JSON object whose
``model_json_schema`` returns the server's schema unchanged (``tool_spec`` drops only a root
``title``) and whose validation checks the arguments against that schema with ``jsonschema`` (a
dependency of the MCP SDK) — a bad call is answered by the loop's usual "Invalid arguments" result
without a round trip to the server.

``check_schema`` refuses what a provider would reject for the whole request (so one bad server
cannot break every request of the session): a root that is not ``type: object`` or that has
``oneOf``/``anyOf``/``allOf``/``not``/``enum`` at the top level (Anthropic and OpenAI both reject
these), and anything that is not a valid JSON Schema. A root without ``type`` gets ``type: object``.
"""

from __future__ import annotations

import copy
import importlib
import json
from typing import Any

from pydantic import BaseModel, RootModel, model_validator

TOP_LEVEL_REJECTED = ("oneOf", "anyOf", "allOf", "not", "enum")
MAX_ERRORS = 3


class SchemaProblem(ValueError):
    """Why a tool's input schema cannot be sent to the providers (one sentence)."""


def _validator_class(schema: dict[str, Any]) -> Any:
    validators: Any = importlib.import_module("jsonschema.validators")  # untyped: no stubs needed
    return validators.validator_for(schema, default=validators.Draft202012Validator)


def check_schema(schema: Any) -> dict[str, Any]:
    """The schema to send (a copy, ``type: object`` added when missing); raises ``SchemaProblem``."""
    if not isinstance(schema, dict):
        raise SchemaProblem(f"its input schema is {type(schema).__name__}, not a JSON object")
    out = copy.deepcopy(schema)
    kind = out.setdefault("type", "object")
    if kind != "object":
        raise SchemaProblem(
            f'its input schema\'s root type is {json.dumps(kind)}; the providers accept only "object"'
        )
    bad = [k for k in TOP_LEVEL_REJECTED if k in out]
    if bad:
        raise SchemaProblem(
            f"its input schema has {', '.join(bad)} at the top level, which the providers reject"
        )
    if "properties" in out and not isinstance(out["properties"], dict):
        raise SchemaProblem("its input schema's properties is not an object")
    try:
        _validator_class(out).check_schema(out)
    except Exception as exc:  # jsonschema.SchemaError, or a $schema it cannot handle
        message = getattr(exc, "message", None) or str(exc).splitlines()[0]
        where = getattr(exc, "json_path", "$")
        message = f"{where}: {message}" if where not in ("$", "") else message
        raise SchemaProblem(f"its input schema is not a valid JSON Schema ({message})") from None
    try:
        json.dumps(out, allow_nan=False)
    except ValueError:
        raise SchemaProblem("its input schema holds a number JSON cannot carry (NaN or infinity)") from None
    return out


def _where(error: Any) -> str:
    path = "/".join(str(p) for p in error.absolute_path)
    return f"{path}: " if path else ""


def params_model(tool: str, schema: dict[str, Any]) -> type[RootModel[dict[str, Any]]]:
    """The parameter model of one MCP tool (see the module docstring); ``args.root`` is the object."""
    frozen = copy.deepcopy(schema)
    validator: Any = None
    try:
        validator = _validator_class(frozen)(frozen)
    except Exception:  # checked by check_schema already; without a validator the server validates
        validator = None

    class McpArguments(RootModel[dict[str, Any]]):
        @model_validator(mode="before")
        @classmethod
        def _against_schema(cls, data: Any) -> Any:
            if not isinstance(data, dict):
                raise ValueError("the arguments must be a JSON object")
            if validator is not None:
                try:
                    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
                except Exception:  # an unresolvable $ref and the like: leave it to the server
                    errors = []
                if errors:
                    raise ValueError("; ".join(f"{_where(e)}{e.message}" for e in errors[:MAX_ERRORS]))
            return data

        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return copy.deepcopy(frozen)

    McpArguments.__name__ = McpArguments.__qualname__ = f"McpArguments_{tool}"
    return McpArguments


def arguments_of(args: BaseModel) -> dict[str, Any]:
    """The argument object of a validated ``params_model`` instance."""
    root = getattr(args, "root", None)
    return dict(root) if isinstance(root, dict) else args.model_dump()
