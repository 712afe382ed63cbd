"""A property test over whole runs (issue 11): random bytes as file names, random Unicode
(surrogates, separators, controls) and random JSON nesting as tool arguments and model text go
through the real loop, the real tools and the JSONL writer; every run ends, every tool call gets its
result, and every output line parses after splitting with ``str.splitlines()``."""

from __future__ import annotations

import io
import json
import os
from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from owltui.agent.agent import Agent
from owltui.agent.events import AgentEnd, ToolEnd, ToolStart
from owltui.agent.messages import ToolResult
from owltui.agent.pause import PauseGate
from owltui.features.chat import chat_config
from owltui.modes.output import JsonLines
from owltui.policy.permissions.policy import PermissionPolicy
from owltui.testing.scripted import Call, ScriptedModel, Step
from owltui.tools.registry import builtin_tools

NASTY = st.sampled_from(
    [
        "\ud800",
        "\udcff",
        "\u2028",
        "\u2029",
        "\x85",
        "\x00",
        "\r",
        "\x1b[2J",
        "\ufeff",
        "\u202e",
        "é",
        "\U0001f989",
        "\\",
        '"',
        "\n",
    ]
)
TEXT = st.lists(st.one_of(NASTY, st.text(max_size=6)), max_size=8).map("".join)
NAMES = st.binary(min_size=1, max_size=12).map(lambda b: b.replace(b"/", b"_").replace(b"\0", b"_"))
JSONISH = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)),
    max_leaves=12,
)


def _deep(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    names=st.lists(NAMES, min_size=1, max_size=4, unique=True),
    path=TEXT,
    pattern=TEXT,
    said=TEXT,
    junk=JSONISH,
    depth=st.sampled_from([1, 50, 3000]),
)
def test_hostile_runs_end_and_every_line_parses(
    tmp_path_factory: Any, names: list[bytes], path: str, pattern: str, said: str, junk: Any, depth: int
) -> None:
    ws = tmp_path_factory.mktemp("ws")
    for name in names:
        if name in (b".", b".."):
            continue
        (ws / os.fsdecode(name)).write_bytes(b"hello " + name + b"\n")
    first = os.fsdecode(names[0]) if names[0] not in (b".", b"..") else "x"
    model = ScriptedModel(
        [
            Step(
                text=said,
                calls=[
                    Call("ls", {}),
                    Call("find", {"pattern": "*"}),
                    Call("grep", {"pattern": pattern}),
                    Call("read", {"path": first}),
                    Call("read", {"path": path}),
                ],
            ),
            Step(
                calls=[
                    Call("read", {"path": junk}),
                    Call("grep", {"pattern": _deep(depth)}),
                    Call("write", {"path": said or "x", "content": said}),
                ]
            ),
            Step(text=said + " done"),
        ]
    )
    out = io.BytesIO()
    writer = JsonLines(out)
    config = chat_config(
        model, builtin_tools(), workspace=ws, permission=PermissionPolicy(ws, "ask", None).check
    )
    agent = Agent(config, gate=PauseGate())
    events: list[Any] = []
    agent.emitter.subscribe(lambda ev: (events.append(ev), writer.write(ev.wire())))

    async def main() -> None:
        with anyio.fail_after(60):
            await agent.run("look at these files " + said)

    anyio.run(main)
    assert isinstance(events[-1], AgentEnd)
    starts = {e.call_id for e in events if isinstance(e, ToolStart)}
    ends = {e.call_id for e in events if isinstance(e, ToolEnd)}
    assert starts <= ends
    calls = [c.id for m in agent.history.items() for c in getattr(m, "tool_calls", [])]
    results = [r.call_id for r in agent.history.items() if isinstance(r, ToolResult)]
    assert sorted(calls) == sorted(results)  # one result per call
    text = out.getvalue().decode("utf-8")  # valid UTF-8, whatever the names and the model sent
    lines = [line for line in text.splitlines() if line]
    assert len(lines) == len(events)
    for line in lines:
        json.loads(line)
