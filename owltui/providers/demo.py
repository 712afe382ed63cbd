"""The offline demo model: deterministic, no network, turns plain requests into real tool calls.

It understands "list the files", "read README.md", "run pytest", "search for TODO" and
"create notes.txt saying …", summarises tool results when the last item is one, and otherwise explains
what it can do. Text streams word by word with a small delay so the UI shows streaming.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any

from owltui.agent.messages import AssistantMessage, Item, ToolResult, Usage, UserMessage
from owltui.agent.model import (
    ForceTool,
    ModelRequest,
    StreamDone,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)

EXAMPLES = (
    "list the files",
    "read README.md",
    "run pytest",
    "search for TODO",
    "create notes.txt saying hello",
)
"""Requests the demo model understands (its welcome and its help offer them)."""


def try_saying() -> str:
    """The examples as a sentence: "list the files", …, or "create notes.txt saying hello"."""
    quoted = [f'"{example}"' for example in EXAMPLES]
    return ", ".join(quoted[:-1]) + " or " + quoted[-1]


HELP = (
    f"I'm the offline demo model, so I can only follow simple requests. Try: {try_saying()}. "
    "For real work, set ANTHROPIC_API_KEY or OPENAI_API_KEY, or start a local Ollama server."
)

_FILE = r"[\w./~-]+\.[\w]+|[\w./~-]*/[\w./~-]+|README|Makefile|Dockerfile"
_WRITE = re.compile(
    r"\b(?:create|write|make|save)\s+(?:a\s+)?(?:file\s+)?(?:called\s+|named\s+)?[`'\"]?"
    rf"(?P<path>{_FILE})[`'\"]?\s*(?:saying|with|containing|that says|:)\s*(?P<content>.+)",
    re.IGNORECASE | re.DOTALL,
)
_READ = re.compile(
    rf"\b(?:read|show|open|cat|view|print|display)\b(?:\s+(?:me|the|file|contents of))*\s+"
    rf"[`'\"]?(?P<path>{_FILE})",
    re.IGNORECASE,
)
_RUN = re.compile(r"\b(?:run|execute|exec)\s+(?:the\s+command\s+)?(?P<cmd>`[^`]+`|.+)", re.IGNORECASE)
_SEARCH = re.compile(
    r"\b(?:search|grep|look)\s+(?:the\s+code\s+)?(?:for\s+)?[`'\"]?(?P<pat>[^`'\"\s]+)", re.IGNORECASE
)
_LIST = re.compile(r"\b(?:list|ls|show)\b.*\b(?:files?|director(?:y|ies)|folders?)\b|^\s*ls\b", re.IGNORECASE)
_LIST_PATH = re.compile(r"\b(?:in|under|of)\s+[`'\"]?(?P<path>[\w./~-]+)", re.IGNORECASE)
_WORDS = re.compile(r"\S+\s*|\s+")


def _request_text(messages: Sequence[Item]) -> str:
    for item in reversed(messages):
        if isinstance(item, UserMessage) and item.lane in ("user", "steer", "follow_up"):
            return item.text
    return ""


def plan(text: str) -> tuple[str, dict[str, Any]] | None:
    """The tool call a plain request asks for, or ``None``."""
    if m := _WRITE.search(text):
        content = m.group("content").strip().strip("\"'`")
        return "write", {"path": m.group("path"), "content": content + "\n"}
    if m := _RUN.search(text):
        cmd = m.group("cmd").strip().strip("`").rstrip(".!?")
        return "bash", {"command": cmd}
    if m := _SEARCH.search(text):
        return "grep", {"pattern": m.group("pat").rstrip(".!?")}
    if _LIST.search(text):
        path = _LIST_PATH.search(text)
        return "ls", ({"path": path.group("path").rstrip(".!?")} if path else {})
    if m := _READ.search(text):
        return "read", {"path": m.group("path").rstrip(".!?,")}
    return None


def plausible_args(tool: str, text: str) -> dict[str, Any]:
    """Arguments for a forced tool, from the request when it says enough."""
    planned = plan(text)
    if planned and planned[0] == tool:
        return planned[1]
    defaults: dict[str, dict[str, Any]] = {
        "ls": {},
        "read": {"path": "README.md"},
        "bash": {"command": "ls"},
        "grep": {"pattern": "TODO"},
        "find": {"pattern": "*.py"},
        "write": {"path": "notes.txt", "content": (text or "notes") + "\n"},
    }
    return defaults.get(tool, {})


def _results_since_assistant(messages: Sequence[Item]) -> list[ToolResult]:
    out: list[ToolResult] = []
    for item in reversed(messages):
        if isinstance(item, AssistantMessage):
            break
        if isinstance(item, ToolResult):
            out.append(item)
    return out[::-1]


def _summary(result: ToolResult) -> str:
    lines = [ln for ln in result.content.splitlines() if ln.strip()]
    if result.is_error or result.status != "ok":
        first = lines[0] if lines else "no details"
        return f"The {result.name} call did not succeed ({result.status}): {first}"
    if result.name == "ls":
        names = ", ".join(ln.strip() for ln in lines[:8])
        more = f" and {len(lines) - 8} more" if len(lines) > 8 else ""
        if not lines or lines == ["(empty directory)"]:
            return "The directory is empty."
        count = "1 entry" if len(lines) == 1 else f"{len(lines)} entries"
        return f"The directory has {count}: {names}{more}."
    if result.name == "read":
        head = " / ".join(ln.strip() for ln in lines[:3])
        if not lines:
            return "The file is empty."
        return f"The file has {len(lines)} non-empty lines. It begins: {head}"
    if result.name == "grep":
        return f"Found {len(lines)} matching lines, e.g. {lines[0].strip()}" if lines else "No matches found."
    if result.name == "write":
        return "Done: the file is written."
    if result.name == "bash":
        tail = " / ".join(ln.strip() for ln in lines[-3:])
        if not lines:
            return "The command finished with no output."
        return f"The command finished. Last output: {tail}"
    head = " / ".join(ln.strip() for ln in lines[:3])
    return f"The {result.name} call returned: {head}" if head else f"The {result.name} call returned nothing."


_STEP = re.compile(r"^(\d+)\. (.+)((?:\n   .*)*)", re.MULTILINE)


def _playbook_step(system: str, msgs: Sequence[Item]) -> tuple[str, tuple[str, dict[str, Any]] | None]:
    """A playbook run (``step_complete`` offered): do each step's plain request, then mark it done."""
    steps_text = system.rsplit("Steps:\n", 1)[-1] if "Steps:\n" in system else ""
    steps = [
        (m.group(2).strip(), m.group(3).replace("\n   ", " ").strip()) for m in _STEP.finditer(steps_text)
    ]
    done = sum(
        1 for m in msgs if isinstance(m, ToolResult) and m.name == "step_complete" and m.status == "ok"
    )
    if done >= len(steps):
        return f"All {len(steps)} steps are complete.", None
    step, (title, body) = done + 1, steps[done]
    since = _results_since_assistant(msgs)
    worked = [r for r in since if r.name != "step_complete"]
    planned = plan(body) or plan(title)
    text = body or title
    if worked or planned is None:
        summary = " ".join(_summary(r) for r in worked) or f"Nothing to run for “{text}”."
        return f"Step {step} is done.", ("step_complete", {"step": step, "summary": summary})
    return f"Step {step}: {text}", planned


class DemoModel:
    """Offline stand-in model. ``delay`` is the pause per streamed word (0 in tests)."""

    def __init__(self, delay: float = 0.015) -> None:
        self.delay = delay

    @property
    def name(self) -> str:
        return "demo (offline)"

    def respond(self, request: ModelRequest) -> tuple[str, tuple[str, dict[str, Any]] | None]:
        """What the demo model answers: text, and the tool call to make if any."""
        msgs = request.messages
        text = _request_text(msgs)
        available = {t.name for t in request.tools}
        choice = request.tool_choice
        if isinstance(choice, ForceTool):
            return f"Calling {choice.tool} as required.", (choice.tool, plausible_args(choice.tool, text))
        last = msgs[-1] if msgs else None
        if "step_complete" in available and choice != "none":
            return _playbook_step(request.system, msgs)
        if isinstance(last, ToolResult):
            results = _results_since_assistant(msgs)
            return " ".join(_summary(r) for r in results) or "The tool returned nothing.", None
        planned = plan(text)
        if choice == "required" and (planned is None or planned[0] not in available) and available:
            tool = "ls" if "ls" in available else sorted(available)[0]
            planned = (tool, plausible_args(tool, text))
        if planned is None:
            return HELP, None
        if choice == "none" or planned[0] not in available:
            return (
                f"I would use the {planned[0]} tool with {json.dumps(planned[1])}, "
                "but tools are off for this answer."
            ), None
        return "", planned

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        text, call = self.respond(request)
        words = _WORDS.findall(text)
        for i, word in enumerate(words):
            if self.delay and i:
                await asyncio.sleep(self.delay)
            yield TextDelta(text=word)
        if call is not None:
            if self.delay:
                await asyncio.sleep(self.delay)
            n = sum(len(m.tool_calls) for m in request.messages if isinstance(m, AssistantMessage))
            name, args = call
            yield ToolCallStart(index=0, id=f"demo_{n + 1}", name=name)
            yield ToolCallDelta(index=0, arguments=json.dumps(args))
            yield ToolCallEnd(index=0)
        prompt = sum(len(getattr(m, "text", "") or getattr(m, "content", "")) for m in request.messages)
        usage = Usage(
            input_tokens=(len(request.system) + prompt) // 4, output_tokens=len(words) + 8 * bool(call)
        )
        yield StreamDone(
            stop_reason="tool_use" if call else "stop",
            usage=usage,
            raw_stop_reason="tool_use" if call else "end_turn",
        )
