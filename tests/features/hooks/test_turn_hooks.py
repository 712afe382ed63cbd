"""UserPromptSubmit, Stop, SessionStart on the real runtime: context joins the prompt in the request
the model gets, a block keeps the prompt from the model, a Stop hook that always refuses is held to
the soft requirement's cap and the run ends with a line naming it."""

from __future__ import annotations

import json

import pytest

from owltui.agent.requirement import MAX_ESCALATIONS
from owltui.session.describe import describe
from owltui.testing.scripted import Call, ScriptedModel, Step
from tests.features.hooks.conftest import World, model_saw, run_prompt

pytestmark = pytest.mark.anyio


def _hook(event: str, command: str) -> str:
    return f'[[hooks.{event}]]\nhooks = [{{ type = "command", command = "{command}" }}]\n'


async def test_user_prompt_submit_adds_context_seen_in_the_request(world: World) -> None:
    hook = world.script(
        "ctx.py",
        "#!/usr/bin/env python3\nimport json, sys\nd = json.load(sys.stdin)\n"
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'UserPromptSubmit', "
        "'additionalContext': 'Sprint ends Friday; prompt was: ' + d['prompt']}}))\n",
    )
    world.config(_hook("UserPromptSubmit", str(hook)))
    model = ScriptedModel([Step(text="ok")])
    await run_prompt(world.runtime(model), "plan the week")
    first = model_saw(model)
    assert "plan the week" in first and "Sprint ends Friday; prompt was: plan the week" in first


async def test_plain_stdout_of_user_prompt_submit_is_context_too(world: World) -> None:
    hook = world.script("ctx.sh", "#!/bin/bash\necho 'branch: main'\n")
    world.config(_hook("UserPromptSubmit", str(hook)))
    model = ScriptedModel([Step(text="ok")])
    await run_prompt(world.runtime(model), "hi")
    assert "branch: main" in model_saw(model)


async def test_exit_2_blocks_the_prompt_and_tells_the_user(world: World) -> None:
    hook = world.script("no.sh", "#!/bin/bash\necho 'no secrets in prompts' >&2\nexit 2\n")
    world.config(_hook("UserPromptSubmit", str(hook)))
    model = ScriptedModel([Step(text="should not be asked")])
    await run_prompt(world.runtime(model), "my password is hunter2")
    assert model.calls == 0
    (end,) = world.hook_ends()
    assert end["decision"] == "block" and "no secrets in prompts" in end["error"]


@pytest.mark.parametrize("cap", [None, 1])
async def test_a_stop_hook_that_always_refuses_is_capped(world: World, cap: int | None) -> None:
    """At most the soft requirement's cap of refusals per turn (3, or config ``max_escalations``)."""
    hook = world.script(
        "stop.sh",
        '#!/bin/bash\necho \'{"decision": "block", "reason": "run the tests first"}\'\n',
    )
    world.config(("" if cap is None else f"max_escalations = {cap}\n") + _hook("Stop", str(hook)))
    limit = MAX_ESCALATIONS if cap is None else cap
    model = ScriptedModel([Step(text=f"answer {i}") for i in range(10)])
    await run_prompt(world.runtime(model), "fix it")
    assert model.calls == limit + 1  # the first answer and one per refusal, no more
    assert "run the tests first" in model_saw(model)
    ends = world.hook_ends()
    assert len(ends) == limit + 1
    last = ends[-1]
    assert "the cap" in last["error"] and str(hook) in last["error"]
    notice = describe(next(e for e in reversed(world.events) if e.type == "hook_end"))
    assert notice is not None and str(hook) in notice.text and notice.text.startswith("hook Stop: block")


async def test_stop_hook_active_is_true_after_the_first_refusal(world: World) -> None:
    log = world.root / "active.log"
    hook = world.script(
        "stop.py",
        "#!/usr/bin/env python3\nimport json, sys\nd = json.load(sys.stdin)\n"
        f"open({str(log)!r}, 'a').write(str(d['stop_hook_active']) + '\\n')\n"
        "if not d['stop_hook_active']:\n"
        "    print(json.dumps({'decision': 'block', 'reason': 'once more'}))\n",
    )
    world.config(_hook("Stop", str(hook)))
    model = ScriptedModel([Step(text="one"), Step(text="two")])
    await run_prompt(world.runtime(model), "go")
    assert log.read_text().split() == ["False", "True"]
    assert model.calls == 2


async def test_session_start_context_reaches_the_first_request(world: World) -> None:
    hook = world.script("start.sh", "#!/bin/bash\necho 'open issues: 3'\n")
    world.config(_hook("SessionStart", str(hook)))
    model = ScriptedModel([Step(text="ok")])
    await run_prompt(world.runtime(model), "hello")
    assert "open issues: 3" in model_saw(model)


async def test_session_end_runs_when_the_session_closes(world: World) -> None:
    seen = world.root / "ended.json"
    hook = world.script(
        "end.py", f"#!/usr/bin/env python3\nimport sys\nopen({str(seen)!r}, 'w').write(sys.stdin.read())\n"
    )
    world.config(_hook("SessionEnd", str(hook)))
    rt = world.runtime(ScriptedModel([Step(text="ok")]))
    async with rt:
        rt.agent.prompt("hello")
        await rt.wait_settled()
        assert not seen.exists()  # not before the session ends
    data = json.loads(seen.read_text())
    assert data["hook_event_name"] == "SessionEnd" and data["reason"] == "other"
    assert [e["hook_event"] for e in world.hook_ends()] == ["SessionEnd"]


async def test_a_subagent_stop_hook_sends_the_subagent_back_once(world: World) -> None:
    """A ``task`` subagent's stop goes through SubagentStop: refused once (exit 2), the subagent goes
    on and its second report is the one the main agent gets."""
    marker = world.root / "asked"
    hook = world.script(
        "sub.sh",
        f"#!/bin/bash\nif [ -e {marker} ]; then exit 0; fi\ntouch {marker}\necho 'cite a file' >&2\nexit 2\n",
    )
    world.config('permission_mode = "yolo"\n' + _hook("SubagentStop", str(hook)))
    model = ScriptedModel(
        [
            Step(calls=[Call("task", {"prompt": "look around"})]),
            Step(text="report one"),  # the subagent's first stop: refused
            Step(text="report two, see a.txt"),
            Step(text="done"),
        ]
    )
    await run_prompt(world.runtime(model), "investigate")
    ends = [e for e in world.hook_ends() if e["hook_event"] == "SubagentStop"]
    assert [e.get("decision") for e in ends] == ["block", None], ends
    assert all(e.get("agent", "").startswith("task-") for e in ends), ends
    result = json.dumps([m.model_dump(mode="json") for m in model.views[-1]])
    assert "report two, see a.txt" in result and "cite a file" in json.dumps(
        [m.model_dump(mode="json") for m in model.views[2]]
    )
