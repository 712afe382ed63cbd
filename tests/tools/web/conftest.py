"""The loopback web server, an environment without proxies, and a call run the way the loop runs it
(the policy first, then the tool with the policy as its service)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from owltui.agent.cancel import CancelToken
from owltui.agent.messages import ToolCall
from owltui.agent.services import Services
from owltui.agent.tool import ToolContext, ToolError, ToolOutput
from owltui.policy.permissions.model import Answer
from owltui.policy.permissions.policy import PermissionPolicy
from owltui.tools.web.fetch import FetchParams, FetchTool
from tests.tools.web.server import Web

PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture
def web(monkeypatch: pytest.MonkeyPatch) -> Iterator[Web]:
    for var in PROXY_VARS:
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.upper(), raising=False)
    server = Web()
    yield server
    server.release.set()
    server.close()


@dataclass
class Asker:
    """The user at the approval: answers each question with the next answer, records the URLs."""

    answers: list[Answer] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)
    arguments: list[dict[str, object]] = field(default_factory=list)

    async def __call__(self, call: ToolCall, reason: str) -> Answer:
        self.asked.append(str(call.arguments.get("url")))
        self.arguments.append(dict(call.arguments))
        return self.answers.pop(0) if self.answers else "deny"


def make_policy(workspace: Path, allow: list[str] | None = None, **kw: object) -> PermissionPolicy:
    if allow is not None:
        rules = workspace / ".owltui" / "permissions.toml"
        rules.parent.mkdir(parents=True, exist_ok=True)
        rules.write_text("[allow]\nfetch = [" + ", ".join(f'"{a}"' for a in allow) + "]\n")
    return PermissionPolicy(workspace, config_dir=workspace / "cfg", **kw)  # type: ignore[arg-type]


@dataclass
class Outcome:
    refusal: str | None = None
    output: ToolOutput | None = None
    progress: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        if self.refusal is not None:
            return self.refusal
        assert self.output is not None
        return self.output.content


async def run_fetch(
    policy: PermissionPolicy | None,
    url: str,
    cancel: CancelToken | None = None,
    on_progress: Callable[[str], None] = lambda _text: None,
) -> Outcome:
    """The call as the loop makes it: the policy's check, then the tool (a ToolError as its text)."""
    call = ToolCall(id="call_1", name="fetch", arguments={"url": url})
    out = Outcome()

    def progress(text: str) -> None:
        out.progress.append(text)
        on_progress(text)

    if policy is not None:
        out.refusal = await policy.check(call, True)
        if out.refusal is not None:
            return out
    ctx = ToolContext(
        workspace=Path("."),
        cancel=cancel or CancelToken(),
        call_id=call.id,
        progress=progress,
        services=Services(permissions=policy),
    )
    try:
        out.output = await FetchTool().run(FetchParams(url=url), ctx)
    except ToolError as exc:
        out.output = ToolOutput(str(exc), is_error=True)
    return out
