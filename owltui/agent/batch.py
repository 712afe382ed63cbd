"""Batch execution: the tool calls of one model response, checked, run, and answered in call order.

Before a call runs, in this order: the call cap (a limit's ``refuse``), delegation expansion,
argument validation, the feature's refusal checks, then permission. A refusal or a bad call is
that call's result and the batch goes on; so is anything those steps or the tool raise (a path
the permission review cannot resolve, a bug in a check), told in one short line. Consecutive
read-only calls run together, any other call alone; the pause gate is asked before each start. A
result over the size limit is saved whole to a file and the model gets a preview with the exact
call that reads the rest, then the tool's status (``ToolOutput.details["status"]``); a page of
saved text (``details["no_spill"]``) is never saved again. With
``steering = "immediate"``, a steering message skips the calls not yet started; so does one sent
as immediate (``Agent.steer(text, immediate=True)``) whatever the config says.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.to_thread
from pydantic import BaseModel, ValidationError

from owltui.agent.cancel import CancelToken
from owltui.agent.config import LoopConfig
from owltui.agent.events import Emit, ToolStart, ToolUpdate
from owltui.agent.inbox import Inbox
from owltui.agent.ledger import Ledger, result_for
from owltui.agent.limits import Limits
from owltui.agent.messages import ToolCall, ToolResult
from owltui.agent.pause import PauseGate, park
from owltui.agent.results import is_large
from owltui.agent.state import RunState
from owltui.agent.tool import Tool, ToolContext, ToolError, ToolOutput

FAILURE_CHARS = 500  # of an unexpected exception's message in a call's result


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


def describe(model: type[BaseModel]) -> str:
    """A tool's parameters in one line, e.g. ``{path: string, offset?: integer}``."""
    schema = model.model_json_schema()
    required = set(schema.get("required", ()))
    defs = schema.get("$defs", {})
    parts = [
        f"{key}{'' if key in required else '?'}: {_type_name(prop, defs)}"
        for key, prop in schema.get("properties", {}).items()
    ]
    return "{" + ", ".join(parts) + "}"


def invalid_arguments(name: str, tool: Tool, problems: str) -> str:
    """The result of a call whose arguments do not parse or validate, with the expected shape."""
    return f"Invalid arguments for `{name}`: {problems}. Expected {name} {describe(tool.params)}."


def validation_message(call: ToolCall, tool: Tool, exc: ValidationError) -> str:
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()[:5]
    )
    return invalid_arguments(call.name, tool, problems)


def _failure(exc: BaseException) -> str:
    """An unexpected exception as one short line for the model (its message may echo a huge
    argument); the two a hostile argument usually causes are said in words."""
    if isinstance(exc, UnicodeEncodeError) and "surrogate" in exc.reason:
        bad = ascii(exc.object[exc.start : exc.end])[1:-1]
        return f"the arguments hold a lone surrogate ({bad}), which is not text any file or process takes"
    if isinstance(exc, ValueError) and str(exc) == "embedded null byte":
        return "the arguments hold a NUL character, which no path or command line can carry"
    text = " ".join(str(exc).split())
    if len(text) > FAILURE_CHARS:
        text = text[:FAILURE_CHARS] + "…"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Batch:
    """Runs batches for one run; holds nothing between batches but what the ledger keeps."""

    def __init__(
        self,
        cfg: LoopConfig,
        state: RunState,
        *,
        ledger: Ledger,
        limits: Limits,
        emit: Emit,
        gate: PauseGate,
        inbox: Inbox,
        cancel: CancelToken,
    ) -> None:
        self.cfg = cfg
        self.state = state
        self.tools = cfg.all_tools()
        self.ledger = ledger
        self.limits = limits
        self.emit = emit
        self.gate = gate
        self.inbox = inbox
        self.cancel = cancel

    async def run(self, calls: list[ToolCall], no_tools: str | None) -> list[ToolResult]:
        """Run a batch: consecutive read-only calls together, others alone; results in call order.
        ``no_tools``: every call is skipped with this result."""
        ledger = self.ledger
        ledger.done.clear()
        results: list[ToolResult] = []
        i = 0
        while i < len(calls):
            urgent = self.inbox.interrupting(self.cfg.steering == "immediate") if self.inbox.by_id else None
            if urgent is not None:
                src = urgent.source
                for call in calls[i:]:
                    results.append(
                        ledger.skip(
                            call,
                            f"Not executed: a new message from the {src} arrived before this call "
                            "started. It may be retried if still needed.",
                        )
                    )
                break
            group = self._group(calls, i)
            i += len(group)
            ready: list[tuple[ToolCall, Tool, BaseModel]] = []
            for call in group:
                checked = await self._precheck(call, no_tools)
                if isinstance(checked, ToolResult):
                    ledger.done[call.id] = checked
                else:
                    ready.append((call, *checked))
            if ready:
                await park(self.gate, self.cancel, self.cfg.name, "tool")
                if len(ready) == 1:
                    await self._run_tool(*ready[0])
                else:
                    async with anyio.create_task_group() as tg:
                        for item in ready:
                            tg.start_soon(self._run_tool, *item)
            for call in group:
                results.append(ledger.settle(call))
        return results

    def _group(self, calls: list[ToolCall], i: int) -> list[ToolCall]:
        """The call at ``i`` and, if it is read-only, the read-only calls right after it."""
        group = [calls[i]]
        first = self.tools.get(calls[i].name)
        if first is not None and first.read_only:
            for call in calls[i + 1 :]:
                tool = self.tools.get(call.name)
                if tool is None or not tool.read_only:
                    break
                group.append(call)
        return group

    async def _precheck(self, call: ToolCall, no_tools: str | None) -> tuple[Tool, BaseModel] | ToolResult:
        st = self.state
        if no_tools is not None:
            return result_for(call, no_tools, "skipped")
        why = self.limits.refuse(st, call)
        if why:
            return result_for(call, why, "refused")
        st.calls_made += 1
        try:
            return await self._review(call)
        except anyio.get_cancelled_exc_class():
            raise
        except ToolError as exc:  # e.g. a path the permission review cannot resolve
            return result_for(call, str(exc), "error")
        except Exception as exc:  # a bug in a check or a parameter model: this call's error only
            return result_for(
                call, f"The call to `{call.name}` could not be checked: {_failure(exc)}", "error"
            )

    async def _review(self, call: ToolCall) -> tuple[Tool, BaseModel] | ToolResult:
        """Expansion, validation, the refusal checks and permission; anything they raise is the
        caller's to turn into this call's result."""
        st = self.state
        cfg = self.cfg
        real = cfg.expand(call) if cfg.expand is not None else call
        tool = self.tools.get(real.name)
        if tool is None:
            return result_for(
                call,
                f"Unknown tool `{real.name}`. Available tools: {', '.join(sorted(self.tools))}.",
                "error",
            )
        if real.parse_error is not None:
            return result_for(call, invalid_arguments(real.name, tool, real.parse_error), "error")
        try:
            args = tool.params.model_validate(real.arguments)
        except ValidationError as exc:
            return result_for(call, validation_message(real, tool, exc), "error")
        except RecursionError:
            return result_for(
                call, invalid_arguments(real.name, tool, "arguments nested too deeply"), "error"
            )
        if cfg.refusals:
            key = st.call_key(real)
            st.seen_calls[key] = st.seen_calls.get(key, 0) + 1
        for check in cfg.refusals:
            why = await check(st, real)
            if why:
                return result_for(call, why, "refused")
        if cfg.permission is not None:
            why = await cfg.permission(real, bool(tool.read_only))
            if why:
                return result_for(call, why, "refused")
        return tool, args

    async def _run_tool(self, call: ToolCall, tool: Tool, args: BaseModel) -> None:
        def progress(text: str) -> None:
            self.emit(ToolUpdate, call_id=call.id, name=call.name, text=text)

        self.emit(ToolStart, call_id=call.id, name=call.name, arguments=call.arguments)
        ctx = ToolContext(
            workspace=self.cfg.workspace,
            cancel=self.cancel,
            call_id=call.id,
            progress=progress,
            services=self.cfg.services,
        )
        try:
            out = await tool.run(args, ctx)
        except ToolError as exc:
            out = ToolOutput(str(exc), is_error=True)
        except anyio.get_cancelled_exc_class():
            raise
        except Exception as exc:
            out = ToolOutput(f"Tool `{call.name}` crashed: {_failure(exc)}", is_error=True)
        content, failed = out.content, out.is_error
        if out.full_output is not None or (is_large(content) and not out.details.get("no_spill")):
            # file work (a copy, a scan of up to the whole output): in a thread, never on the event
            # loop; finished even if the run is cancelled meanwhile, like the tool's own result
            try:
                content = await anyio.to_thread.run_sync(self._spill, call.name, out)
            except Exception as exc:
                content = f"Tool `{call.name}` finished but its output could not be saved: {_failure(exc)}"
                failed = True
        result = result_for(call, content, "error" if failed else "ok")
        if out.images:
            result = result.model_copy(update={"images": out.images})
        self.ledger.finished(call, result, out.details)  # tool_end now; the history in call order

    def _spill(self, name: str, out: ToolOutput) -> str:
        """The text the model gets for a large output (or one a tool spilled itself: ``full_output``):
        saved whole and replaced by its preview; a page of a saved text (``details["no_spill"]``, e.g.
        ``read_result``) is never saved again (``_run_tool`` decides). A spilled output keeps the
        tool's status (``details["status"]``, e.g. "exit code 3") after the preview."""
        store = self.cfg.results
        assert store is not None  # all_tools() creates it for any run that carries a tool
        rid, path = store.save(out.content, out.full_output)
        preview = store.preview(rid, path, name, lines=out.full_output_lines)
        status = out.details.get("status")
        if status and isinstance(status, str):
            preview += f"\n[status: {status.strip().strip('[]')}]"
        return preview
