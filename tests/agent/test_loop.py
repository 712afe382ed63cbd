"""The loop's rules: results for every call, validation, limits, checks, large results, hooks."""

from __future__ import annotations

import json

import anyio
import pytest

from owltui.agent.hooks import Directive, Hooks, refuse_repeats
from owltui.agent.messages import ITEM_ADAPTER, AssistantMessage, ToolResult, UserMessage
from owltui.agent.model import ForceTool
from owltui.agent.results import ResultStore
from owltui.testing.scripted import Call, Step
from tests.agent.helpers import Big, Blocker, Crash, Echo, Fail, ReadBlocker, check_history, make_agent, types

pytestmark = pytest.mark.anyio


def results(agent) -> list[ToolResult]:
    return [i for i in agent.history.items() if isinstance(i, ToolResult)]


async def test_items_round_trip_json() -> None:
    agent, _, _ = make_agent(
        [Step(text="a", thinking="hmm", calls=[Call("echo", {"text": "x"})]), Step(text="b")], [Echo()]
    )
    await agent.run("hi")
    for item in agent.history.items():
        again = ITEM_ADAPTER.validate_json(json.dumps(ITEM_ADAPTER.dump_python(item, mode="json")))
        assert again == item


async def test_event_order_one_round_with_one_tool() -> None:
    agent, _, events = make_agent(
        [Step(text="a", calls=[Call("echo", {"text": "x"})]), Step(text="b")], [Echo()]
    )
    out = await agent.run("hi")
    assert out.reason == "done" and out.text == "b"
    assert types(events) == [
        "agent_start",
        "turn_start",
        "input",
        "message_start",
        "message_delta",
        "message_end",
        "tool_start",
        "tool_end",
        "turn_end",
        "turn_start",
        "message_start",
        "message_delta",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    end = next(e for e in events if e.type == "message_end")
    assert end.wire()["tool_calls"] == [{"id": "call_1", "name": "echo", "arguments": {"text": "x"}}]
    assert end.wire()["stop_reason"] == "tool_use"


async def test_tools_sorted_and_identical_every_round() -> None:
    agent, model, _ = make_agent(
        [
            Step(calls=[Call("echo", {"text": "1"})]),
            Step(calls=[Call("fail", {"text": "2"})]),
            Step(text="ok"),
        ],
        [Fail(), Echo()],
    )
    await agent.run("go")
    names = [t.name for t in model.requests[0].tools]
    assert names == sorted(names) == ["echo", "fail", "read_result"]
    assert all(r.tools is model.requests[0].tools for r in model.requests)
    assert all(r.tool_choice == "auto" for r in model.requests)


async def test_malformed_arguments_unknown_tool_and_schema_errors_are_results() -> None:
    agent, model, _ = make_agent(
        [
            Step(
                calls=[
                    Call("echo", '{"text": "unterminated'),
                    Call("nope", {}),
                    Call("echo", {"text": 5}),
                    Call("echo", "[1, 2]"),
                ]
            ),
            Step(text="recovered"),
        ],
        [Echo()],
    )
    out = await agent.run("go")
    assert out.reason == "done" and out.text == "recovered"
    rs = results(agent)
    assert [r.status for r in rs] == ["error"] * 4
    assert "not valid JSON" in rs[0].content and "Expected echo {text?: string}" in rs[0].content
    assert "Unknown tool `nope`" in rs[1].content and "echo" in rs[1].content
    assert "Invalid arguments for `echo`" in rs[2].content and "text" in rs[2].content
    assert "must be a JSON object" in rs[3].content
    check_history(agent)


async def test_tool_crash_becomes_error_result() -> None:
    agent, _, _ = make_agent([Step(calls=[Call("crash", {})]), Step(text="ok")], [Crash()])
    await agent.run("go")
    (r,) = results(agent)
    assert r.status == "error" and "crashed" in r.content and "boom" in r.content


async def test_round_limit_wrap_up_tools_off_and_never_empty() -> None:
    steps = [Step(calls=[Call("echo", {"text": str(i)})]) for i in range(3)] + [Step(text="")]
    agent, model, events = make_agent(steps, [Echo()], max_rounds=3)
    out = await agent.run("go")
    assert out.reason == "round_limit"
    assert model.calls == 4  # N + 1
    assert [r.tool_choice for r in model.requests] == ["auto", "auto", "auto", "none"]
    assert model.requests[3].tools is model.requests[0].tools
    assert out.text and "round limit" in out.text
    assert events[-1].wire() == {"type": "agent_end", "reason": "round_limit"}


async def test_round_limit_wrap_up_that_still_calls_tools_gets_skip_results() -> None:
    steps = [Step(calls=[Call("echo", {"text": str(i)})]) for i in range(2)]
    steps.append(Step(text="summary", calls=[Call("echo", {"text": "again"})]))
    echo = Echo()
    agent, model, _ = make_agent(steps, [echo], max_rounds=2)
    out = await agent.run("go")
    assert out.reason == "round_limit" and out.text == "summary"
    assert echo.ran == ["0", "1"]
    assert results(agent)[-1].status == "skipped"
    check_history(agent)


async def test_round_limit_resets_when_user_steers_mid_turn() -> None:
    echo = Echo()
    agent, model, _ = make_agent([], [echo], max_rounds=2)

    def script(req):
        n = len(model.requests)
        if n == 2:
            agent.steer("keep going")
        return Step(calls=[Call("echo", {"text": str(n)})]) if n <= 3 else Step(text="done")

    model._fn = script
    out = await agent.run("go")
    assert out.reason == "done", out  # without the reset the 3rd call would be the wrap-up
    assert model.calls == 4


async def test_failure_limit_counts_across_other_tools_and_turns_tools_off() -> None:
    calls = []
    for i in range(5):
        calls.append(Step(calls=[Call("fail", {"text": str(i)})]))
        calls.append(Step(calls=[Call("echo", {"text": str(i)})]))  # other tools between: no reset
    steps = calls[:-1] + [Step(text="")]
    agent, model, events = make_agent(steps, [Echo(), Fail()])
    out = await agent.run("go")
    assert out.reason == "failure_limit"
    last = model.requests[-1]
    assert last.tool_choice == "none" and last.tools is model.requests[0].tools
    assert model.calls == 10
    assert "failed 5 times" in out.text
    notices = [e for e in events if e.type == "input" and e.lane == "notice"]
    assert len(notices) == 1 and "`fail`" in notices[0].text


async def test_failure_counter_reset_by_success_of_same_tool() -> None:
    class Flaky(Fail):
        n = 0

        async def run(self, args, ctx):
            Flaky.n += 1
            if Flaky.n == 4:
                from owltui.agent.tool import ToolOutput

                return ToolOutput("fine")
            return await super().run(args, ctx)

    steps = [Step(calls=[Call("fail", {"text": str(i)})]) for i in range(8)] + [Step(text="end")]
    agent, model, _ = make_agent(steps, [Flaky()])
    out = await agent.run("go")
    assert out.reason == "done" and model.calls == 9


async def test_call_cap_refuses_calls_over_it() -> None:
    echo = Echo()
    agent, _, _ = make_agent(
        [Step(calls=[Call("echo", {"text": str(i)}) for i in range(3)]), Step(text="ok")], [echo], call_cap=2
    )
    await agent.run("go")
    rs = results(agent)
    assert [r.status for r in rs] == ["ok", "ok", "refused"]
    assert "cap of 2" in rs[2].content and echo.ran == ["0", "1"]


async def test_repeat_refusal_and_loop_goes_on() -> None:
    echo = Echo()
    agent, model, _ = make_agent(
        [
            Step(calls=[Call("echo", {"text": "a"})]),
            Step(calls=[Call("echo", {"text": "a"}), Call("echo", {"text": "b"})]),
            Step(text="done"),
        ],
        [echo],
        refusals=[refuse_repeats()],
    )
    out = await agent.run("go")
    assert out.text == "done"
    assert [r.status for r in results(agent)] == ["ok", "refused", "ok"]
    assert echo.ran == ["a", "b"]


async def test_check_order_cap_expansion_refusal_permission() -> None:
    seen: list[str] = []
    echo = Echo()

    def expand(call):
        seen.append(f"expand:{call.name}")
        if call.name == "via":
            return call.model_copy(update={"name": "echo", "arguments": call.arguments["inner"]})
        return call

    async def refusal(state, call):
        seen.append(f"refusal:{call.name}")
        return None

    async def permission(call, read_only):
        seen.append(f"permission:{call.name}")
        return "Refused: not allowed" if call.arguments.get("text") == "secret" else None

    agent, _, _ = make_agent(
        [
            Step(
                calls=[
                    Call("via", {"inner": {"text": "secret"}}),
                    Call("echo", {"text": "x"}),
                    Call("echo", {"text": "y"}),
                ]
            ),
            Step(text="ok"),
        ],
        [echo],
        expand=expand,
        refusals=[refusal],
        permission=permission,
        call_cap=2,
    )
    await agent.run("go")
    # the delegating call is judged as the real tool: refusal and permission saw `echo`
    assert seen == [
        "expand:via",
        "refusal:echo",
        "permission:echo",
        "expand:echo",
        "refusal:echo",
        "permission:echo",
    ]
    assert [r.status for r in results(agent)] == ["refused", "ok", "refused"]
    assert echo.ran == ["x"]


async def test_read_only_tools_run_concurrently_results_in_call_order() -> None:
    a, b = ReadBlocker(), ReadBlocker()
    b.name = "rblock2"  # type: ignore[misc]
    agent, _, events = make_agent(
        [Step(calls=[Call("rblock", {"text": "1"}), Call("rblock2", {"text": "2"})]), Step(text="ok")], [a, b]
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await a.started.wait()
        await b.started.wait()  # both running at once
        b.release.set()
        await anyio.wait_all_tasks_blocked()
        a.release.set()
    ends = [e.call_id for e in events if e.type == "tool_end"]
    assert ends == ["call_2", "call_1"]  # finish order ...
    assert [r.call_id for r in results(agent)] == ["call_1", "call_2"]  # ... but recorded in call order


async def test_non_read_only_tools_run_exclusively() -> None:
    blk = Blocker()
    echo = Echo()
    agent, _, _ = make_agent(
        [Step(calls=[Call("block", {}), Call("echo", {"text": "after"})]), Step(text="ok")], [blk, echo]
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await blk.started.wait()
        await anyio.wait_all_tasks_blocked()
        assert echo.ran == []
        blk.release.set()
    assert echo.ran == ["after"]


async def test_large_result_saved_with_exact_reread_call(tmp_path) -> None:
    store = ResultStore(tmp_path / "results")
    agent, model, _ = make_agent(
        [
            Step(calls=[Call("big", {})]),
            Step(calls=[Call("read_result", {"result_id": "r1", "offset": 4990, "limit": 5})]),
            Step(text="ok"),
        ],
        [Big()],
        results=store,
    )
    await agent.run("go")
    first, second = results(agent)
    assert len(first.content) <= 50 * 1024
    assert 'read_result {"result_id": "r1", "offset": ' in first.content
    assert "line 1\n" in first.content and first.content.rstrip().count("line 5000") == 1
    assert (tmp_path / "results" / "r1.txt").read_text().count("\n") == 4999
    assert second.status == "ok"
    assert second.content.splitlines()[0] == "4990\tline 4990"
    assert "4994\tline 4994" in second.content and "More lines follow" in second.content


async def test_provider_error_mid_stream_keeps_text_and_answers_completed_calls() -> None:
    agent, _, events = make_agent(
        [Step(text="partial", calls=[Call("echo", {"text": "x"})], error="connection reset")], [Echo()]
    )
    out = await agent.run("go")
    assert out.reason == "error" and "connection reset" in (out.error or "")
    msg = next(i for i in agent.history.items() if isinstance(i, AssistantMessage))
    assert msg.text == "partial" and msg.stop_reason == "error"
    (r,) = results(agent)
    assert r.status == "skipped" and "connection reset" in r.content
    assert events[-1].type == "agent_end" and events[-1].reason == "error"
    check_history(agent)


async def test_model_exception_is_an_error_end_not_a_crash() -> None:
    class Broken:
        name = "broken"

        async def stream(self, request):
            raise ValueError("bad frame")
            yield  # pragma: no cover

    from owltui.agent.agent import Agent
    from owltui.agent.config import LoopConfig

    agent = Agent(LoopConfig(model=Broken()))
    out = await agent.run("hi")
    assert out.reason == "error" and "bad frame" in (out.error or "")


async def test_abort_mid_tool_kills_tool_and_answers_every_call() -> None:
    blk = Blocker()
    agent, _, events = make_agent(
        [Step(calls=[Call("block", {}), Call("echo", {"text": "never"})]), Step(text="unused")], [blk, Echo()]
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await blk.started.wait()
        agent.steer("queued while running")
        assert agent.abort()
    assert blk.cancelled and blk.token_seen_cancel
    rs = results(agent)
    assert [r.status for r in rs] == ["cancelled", "cancelled"]
    assert events[-1].type == "agent_end" and events[-1].reason == "aborted"
    assert agent.inbox.texts("steer") == ["queued while running"]  # the queue stays
    check_history(agent)


async def test_abort_mid_stream_keeps_partial_text_and_drops_partial_calls() -> None:
    mid = anyio.Event()
    agent, _, events = make_agent([Step(text="hello world", chunk=5, mid_gate=mid)], [Echo()])
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, "go")
        await anyio.wait_all_tasks_blocked()
        agent.abort()
    msg = [i for i in agent.history.items() if isinstance(i, AssistantMessage)]
    assert msg[0].text == "hello" and msg[0].stop_reason == "aborted"
    assert types(events)[-3:] == ["message_end", "turn_end", "agent_end"]  # the turn is closed too


async def test_time_limit_cancels_and_answers() -> None:
    blk = Blocker()
    agent, _, events = make_agent([Step(calls=[Call("block", {})])], [blk], time_limit=0.05)
    out = await agent.run("go")
    assert out.reason == "error" and "time limit" in (out.error or "")
    assert results(agent)[0].status == "cancelled"


async def test_hooks_directives_end_with_tools_off_force_and_replace() -> None:
    echo = Echo()
    seen: list[str] = []

    async def after_response(state, msg):
        seen.append("after_response")
        if msg.tool_calls and len(msg.tool_calls) == 2:
            return Directive(calls=[msg.tool_calls[1]], force_tool="echo")
        return None

    async def after_tools(state, results):
        seen.append("after_tools")
        if state.total_rounds == 2:
            return Directive(tools_off=True, append=[UserMessage(text="note", lane="notice")])
        return None

    async def before_yield(state):
        seen.append("before_yield")
        return Directive(end_with="final words") if state.total_rounds >= 3 else None

    agent, model, _ = make_agent(
        [
            Step(calls=[Call("echo", {"text": "a"}), Call("echo", {"text": "b"})]),
            Step(calls=[Call("echo", {"text": "c"})]),
            Step(text="x"),
        ],
        [echo],
        hooks=Hooks(after_response=after_response, after_tools=after_tools, before_yield=before_yield),
    )
    out = await agent.run("go")
    assert echo.ran == ["b", "c"]
    assert [r.status for r in results(agent)] == ["skipped", "ok", "ok"]
    assert model.requests[1].tool_choice == ForceTool(tool="echo")
    assert model.requests[2].tool_choice == "none"
    assert out.text == "final words"
    assert isinstance(agent.history.items()[-1], AssistantMessage)
    assert seen.count("before_yield") == 1
    check_history(agent)


async def test_hook_append_lands_at_round_start_not_between_call_and_result() -> None:
    async def after_response(state, msg):
        return Directive(append=[UserMessage(text="hook note", lane="notice")])

    agent, _, _ = make_agent(
        [Step(calls=[Call("echo", {"text": "a"})]), Step(text="ok")],
        [Echo()],
        hooks=Hooks(after_response=after_response),
    )
    await agent.run("go")
    check_history(agent)
    items = agent.history.items()
    assert isinstance(items[2], ToolResult) and isinstance(items[3], UserMessage)


async def test_repeated_results_counted_for_researchers() -> None:
    stale: list[int] = []

    async def after_tools(state, results):
        stale.append(state.stale_rounds)
        return Directive(end_with="enough") if state.stale_rounds >= 2 else None

    agent, _, _ = make_agent(
        [Step(calls=[Call("echo", {"text": "same"})])] * 5, [Echo()], hooks=Hooks(after_tools=after_tools)
    )
    out = await agent.run("go")
    assert stale == [0, 1, 2] and out.text == "enough"


async def test_no_tools_run_sends_no_tools_and_auto() -> None:
    agent, model, _ = make_agent([Step(text="hi")])
    await agent.run("hello")
    assert model.requests[0].tools == () and model.requests[0].tool_choice == "auto"


async def test_approval_cap_refuses_approval_calls_beyond_it() -> None:
    from owltui.agent.hooks import approval_cap

    echo = Echo()
    agent, _, _ = make_agent(
        [Step(calls=[Call("echo", {"text": str(i)}) for i in range(3)]), Step(text="ok")],
        [echo],
        refusals=[approval_cap(2, lambda name: name == "echo")],
    )
    await agent.run("go")
    assert [r.status for r in results(agent)] == ["ok", "ok", "refused"]
    assert "at most 2" in results(agent)[2].content


async def test_turn_end_hook_runs_once_per_logical_turn() -> None:
    seen: list[int] = []

    async def turn_end(state):
        seen.append(state.total_rounds)
        return None

    agent, _, _ = make_agent(
        [Step(calls=[Call("echo", {"text": "x"})]), Step(text="ok")], [Echo()], hooks=Hooks(turn_end=turn_end)
    )
    await agent.run("go")
    assert seen == [2]
