"""The form's schema read into fields, defaults filled in (SEP-1034), answers checked before they
are sent, and the policies' answers, through ``McpRequests.elicit`` with the SDK's own types."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types
import pytest

from owltui.tools.mcp.requests.form import FormProblem, fill_defaults, parse_form, validate
from owltui.tools.mcp.requests.handlers import SAMPLING_REFUSED, McpRequests
from owltui.tools.mcp.requests.question import Answer, Question

pytestmark = pytest.mark.anyio
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "default": "John Doe"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
        "email": {"type": "string", "format": "email"},
    },
    "required": ["name"],
}


def form(schema: dict[str, Any] = SCHEMA) -> mcp_types.ElicitRequestFormParams:
    return mcp_types.ElicitRequestFormParams.model_validate({"message": "Tell me", "requestedSchema": schema})


def test_defaults_are_filled_in_and_kept_when_answered() -> None:
    fields = parse_form(SCHEMA)
    assert fill_defaults(fields) == {
        "name": "John Doe",
        "age": 30,
        "score": 95.5,
        "status": "active",
        "verified": True,
    }
    assert fill_defaults(fields, {"age": 31})["age"] == 31


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ({}, "Name is required"),
        ({"name": "x", "age": 200}, "age: at most 150"),
        ({"name": "x", "age": 1.5}, "age: expected a whole number"),
        ({"name": "x", "status": "gone"}, "status: choose one of active, inactive"),
        ({"name": "x", "verified": "yes"}, "verified: expected true or false"),
        ({"name": "x", "email": "not-an-address"}, "email: not a valid email"),
    ],
)
def test_an_answer_that_does_not_fit_is_refused(content: dict[str, Any], why: str) -> None:
    with pytest.raises(FormProblem, match=why):
        validate(parse_form(SCHEMA), content)


def test_a_nested_schema_is_not_a_form() -> None:
    with pytest.raises(FormProblem, match="cannot ask"):
        parse_form({"type": "object", "properties": {"x": {"type": "object"}}})


async def test_accept_defaults_sends_every_default(tmp_path: Path) -> None:
    result = await McpRequests(tmp_path, policy="accept-defaults").elicit("s", form())
    assert isinstance(result, mcp_types.ElicitResult) and result.action == "accept"
    assert result.content == {
        "name": "John Doe",
        "age": 30,
        "score": 95.5,
        "status": "active",
        "verified": True,
    }


async def test_an_answer_missing_fields_gets_the_defaults(tmp_path: Path) -> None:
    async def asker(question: Question) -> Answer:
        assert question.defaults()["age"] == 30
        return Answer(action="accept", content={"name": "Ada"})

    result = await McpRequests(tmp_path, asker=asker).elicit("s", form())
    assert isinstance(result, mcp_types.ElicitResult)
    assert result.content is not None and result.content["name"] == "Ada" and result.content["age"] == 30


async def test_decline_policy_and_no_asker_decline(tmp_path: Path) -> None:
    for requests in (McpRequests(tmp_path, policy="decline"), McpRequests(tmp_path)):
        result = await requests.elicit("s", form())
        assert isinstance(result, mcp_types.ElicitResult) and result.action == "decline"


async def test_a_url_that_is_not_http_is_an_error_and_never_opened(tmp_path: Path) -> None:
    opened: list[str] = []
    requests = McpRequests(tmp_path, asker=lambda q: pytest.fail("asked"), open_url=opened.append)
    params = mcp_types.ElicitRequestURLParams(message="m", url="file:///etc/passwd", elicitation_id="1")
    result = await requests.elicit("s", params)
    assert isinstance(result, mcp_types.ErrorData) and "not an http(s) URL" in result.message and not opened


async def test_sampling_is_refused_with_the_reason(tmp_path: Path) -> None:
    error = await McpRequests(tmp_path).refuse_sampling(None, None)
    assert error.message == SAMPLING_REFUSED == "OwlTUI does not let MCP servers sample the model"


def test_the_root_is_the_workspace_as_a_file_uri(tmp_path: Path) -> None:
    (root,) = McpRequests(tmp_path).roots().roots
    assert str(root.uri) == tmp_path.as_uri() and root.name == tmp_path.name
