"""MCP prompts as ``/mcp__SERVER__PROMPT`` commands through the command layer against server-everything
(over stdio and Streamable HTTP):
listed in ``/help``, completion and ``get_commands`` with their descriptions; arguments bound in order
or by name; a required one missing is a clear error; the prompt's messages (an embedded resource
inlined) are the user's turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from owltui.agent.messages import UserMessage
from owltui.session.commands.layer import Commands
from owltui.session.runtime.runtime import Runtime
from owltui.testing.scripted import ScriptedModel, Step
from owltui.tools.mcp.catalog.prompts import PromptArgsError, bind
from tests.session.test_command_layer import Front
from tests.tools.mcp_resources.helpers import ready, runtime

pytestmark = pytest.mark.anyio


def user_texts(rt: Runtime) -> list[str]:
    return [i.text for i in rt.agent.history.items() if isinstance(i, UserMessage)]


async def run_command(rt: Runtime, c: Commands, line: str) -> str:
    """Run ``line``; the text of the user turn it started."""
    started = anyio.Event()
    assert isinstance(rt.agent.config.model, ScriptedModel)
    rt.agent.config.model.add(Step(text="ok", started=started))
    reply = c.slash(line)
    assert reply is not None and reply.ok, reply
    with anyio.fail_after(30):
        await started.wait()
    await rt.agent.wait_idle()
    return user_texts(rt)[-1]


async def test_prompts_are_slash_commands_listed_and_run(tmp_path: Path, everything: dict[str, Any]) -> None:
    rt = runtime(tmp_path, ScriptedModel([]), everything)
    async with rt:
        await ready(rt)
        c = Commands(rt, Front())
        names = [cmd.name for cmd in c.complete("/mcp__")]
        assert names == [
            "mcp__everything__args-prompt",
            "mcp__everything__completable-prompt",
            "mcp__everything__resource-prompt",
            "mcp__everything__simple-prompt",
        ]
        help_text = c.help_text()
        assert "MCP prompts (their messages are sent as yours):" in help_text
        assert "/mcp__everything__args-prompt CITY [STATE]" in help_text.split("MCP prompts")[1]
        assert (
            "A prompt with two arguments, one required and one optional (MCP server everything)" in help_text
        )
        listed = {d["name"]: d for d in c.rpc("get_commands", {}).data["commands"]}
        assert listed["mcp__everything__args-prompt"]["argument_hint"] == "CITY [STATE]"
        assert listed["mcp__everything__args-prompt"]["source"] == "mcp"

        assert await run_command(rt, c, "/mcp__everything__simple-prompt") == (
            "This is a simple prompt without arguments."
        )
        # the README's examples
        assert (await run_command(rt, c, "/mcp__everything__args-prompt Paris")).startswith(
            "What's weather in Paris"
        )
        assert await run_command(rt, c, '/mcp__everything__args-prompt "San Jose" state=CA') == (
            "What's weather in San Jose, CA?"
        )
        text = await run_command(rt, c, "/mcp__everything__resource-prompt Text 1")
        assert text.startswith("This prompt includes the Text resource with id: 1.")
        assert '<resource uri="demo://resource/dynamic/text/1" mimeType="text/plain">' in text
        assert "Resource 1: This is a plaintext resource" in text

        usage = c.slash("/mcp__everything__args-prompt")
        assert (
            usage is not None
            and not usage.ok
            and usage.text == "usage: /mcp__everything__args-prompt CITY [STATE]"
        )
        missing = c.slash("/mcp__everything__resource-prompt Text")
        assert missing is not None and not missing.ok
        assert "missing required argument: resourceId" in missing.text
        assert len(user_texts(rt)) == 4  # the refused ones sent nothing


def test_arguments_bind_in_order_by_name_and_quoted() -> None:
    from mcp_types import Prompt, PromptArgument

    p = Prompt(
        name="p",
        arguments=[PromptArgument(name="city", required=True), PromptArgument(name="state", required=False)],
    )
    assert bind(p, "Paris") == {"city": "Paris"}
    assert bind(p, 'state=NY "New York"') == {"state": "NY", "city": "New York"}
    assert bind(p, "New York NY") == {"city": "New", "state": "York NY"}  # the last takes the rest
    with pytest.raises(PromptArgsError, match="missing required argument: city"):
        bind(p, "state=NY")
    with pytest.raises(PromptArgsError, match="no arguments"):
        bind(Prompt(name="q"), "extra")


async def test_a_prompt_command_during_a_run_is_steering(tmp_path: Path) -> None:
    gate, first_started, second_started = anyio.Event(), anyio.Event(), anyio.Event()
    model = ScriptedModel(
        [Step(text="working", gate=gate, started=first_started), Step(text="ok", started=second_started)]
    )
    rt = runtime(tmp_path, model)
    async with rt:
        await ready(rt)
        c = Commands(rt, Front())
        queued = anyio.Event()
        rt.inbox.subscribe(lambda *_a: queued.set())
        assert c.send("first").ok
        with anyio.fail_after(30):
            await first_started.wait()
        reply = c.slash("/mcp__everything__simple-prompt")
        assert reply is not None and reply.ok
        with anyio.fail_after(30):
            await queued.wait()
        assert rt.inbox.texts("steer") == ["This is a simple prompt without arguments."]
        gate.set()
        with anyio.fail_after(30):
            await second_started.wait()
        await rt.agent.wait_idle()
    assert user_texts(rt) == ["first", "This is a simple prompt without arguments."]
