import pytest
from pydantic import ValidationError

from owltui.agent.batch import describe
from owltui.agent.tool import Tool, tool_spec
from owltui.tools.exec.bash import BashParams
from owltui.tools.files.tools import EditParams, ReadParams
from owltui.tools.jobs.tools import JobOutputParams
from owltui.tools.registry import builtin_tools


def test_builtin_tools_sorted_and_typed() -> None:
    tools = builtin_tools()
    names = [t.name for t in tools]
    assert names == sorted(names)
    assert set(names) == {
        "bash",
        "edit",
        "exit_plan",
        "fetch",
        "find",
        "grep",
        "job_kill",
        "job_output",
        "ls",
        "read",
        "todo",
        "write",
    }
    assert all(isinstance(t, Tool) for t in tools)
    read_only = {"read", "ls", "grep", "find", "job_output", "fetch", "todo", "exit_plan"}
    assert {t.name for t in tools if t.read_only} == read_only
    assert [t.name for t in builtin_tools(["read", "bash"])] == ["bash", "read"]
    assert {t.name for t in builtin_tools(read_only=True)} == read_only
    with pytest.raises(ValueError, match="nope"):
        builtin_tools(["nope"])


def test_every_parameter_has_a_description() -> None:
    for tool in builtin_tools():
        spec = tool_spec(tool)
        assert spec.description
        for name, prop in spec.parameters["properties"].items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
        assert spec.parameters.get("additionalProperties") is False


def test_bash_and_job_output_descriptions_say_they_wait() -> None:
    tools = {t.name: t for t in builtin_tools()}
    assert "wait" in tools["bash"].description and "call it once" in tools["bash"].description
    assert "wait" in tools["job_output"].description and "call it once" in tools["job_output"].description


def test_describe_gives_the_parameters_the_model_is_told_of() -> None:
    assert describe(ReadParams) == "{path: string, offset?: integer, limit?: integer, column?: integer}"
    assert describe(EditParams).startswith("{path: string, old_text: string, new_text: string")
    assert describe(BashParams) == "{command: string, timeout?: number}"


@pytest.mark.parametrize(
    ("model", "args"),
    [
        (ReadParams, {}),
        (ReadParams, {"path": "a", "offset": 0}),
        (ReadParams, {"path": "a", "limit": "many"}),
        (ReadParams, {"path": "a", "bogus": 1}),
        (ReadParams, {"path": ["a"]}),
        (BashParams, {"command": "ls", "timeout": 601}),
        (BashParams, {"command": "ls", "timeout": -1}),
        (EditParams, {"path": "a", "old_text": "x"}),
        (JobOutputParams, {"job_id": "1", "wait": 601}),
    ],
)
def test_params_reject_invalid_arguments(model: type, args: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        model.model_validate(args)


def test_params_accept_lax_numbers() -> None:
    assert JobOutputParams.model_validate({"job_id": 3}).job_id == "3"
    assert ReadParams.model_validate({"path": "a", "offset": "5"}).offset == 5
