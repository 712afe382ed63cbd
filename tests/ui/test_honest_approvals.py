"""Honest approvals (issue 10, item 5), Pilot tests against the real runtime.

- What is shown: a command with ``\\r`` shows both parts; a 300-character command is shown whole at
  the real width; bidi and zero-width characters are escaped and flagged; the review's notes and
  exactly the rules "always" saves (or that it saves none).
- How it is answered: letters typed into the input — one key at a time or in one burst with Enter,
  the way tmux delivers them — all land in the input and answer nothing, however long the approval
  has waited; Ctrl+G then y / a / n answers; Esc on the approval goes back to the input (no abort);
  ``/allow`` typed in full answers.
- A paused gate: an answer is recorded, the tool starts only after resume.
- A re-run outside the sandbox: its own warning style and wording, no "always", asked even with --yes.
- Start-up notes (the sandbox's) and later warnings are notices in the conversation; ``run_tui``'s
  error line is scrubbed of secrets.
"""

from __future__ import annotations

import tomllib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from textual._xterm_parser import XTermParser
from textual.geometry import Region
from textual.pilot import Pilot

from owltui.agent.tool import ToolContext, ToolOutput
from owltui.session.runtime.options import Options
from owltui.testing.scripted import Call, Step
from owltui.ui.app import OwlApp
from owltui.ui.widgets.blocks import NoticeBlock
from owltui.ui.widgets.tool_block import ApprovalPrompt, ToolBlock
from tests.ui.conftest import SIZE, make_runtime_app, wait_for
from tests.ui.test_input import type_text
from tests.ui.test_tools_approvals import env_for

pytestmark = pytest.mark.anyio

CR_COMMAND = "touch pwned #\rls -la"


def app_for(
    tmp_path: Path,
    steps: list[Step],
    *,
    tools: list[Any] | None = None,
    warnings: list[str] | None = None,
    **options: Any,
) -> OwlApp:
    ws = tmp_path / "ws"
    ws.mkdir(parents=True, exist_ok=True)
    # notices: the list itself, which the build fills before the app is made
    return make_runtime_app(
        steps,
        ws,
        env_for(tmp_path),
        tools=tools,
        options=options,
        warn=warnings.append if warnings is not None else None,
        notices=warnings if warnings is not None else (),
    )


@asynccontextmanager
async def waiting_on_approval(
    app: OwlApp,
    size: tuple[int, int] = SIZE,
    what: str = "approval",
) -> AsyncIterator[tuple[Pilot[Any], ApprovalPrompt]]:
    """``app`` running, "go" sent and its run waiting on an approval; the app quits after."""
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_text(pilot, "go")
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(app.conversation.query(ApprovalPrompt)), what)
        yield pilot, app.conversation.query_one(ApprovalPrompt)
        await app.action_quit()


@asynccontextmanager
async def asking(
    tmp_path: Path,
    command: str,
    size: tuple[int, int] = SIZE,
) -> AsyncIterator[tuple[OwlApp, Pilot[Any], ApprovalPrompt]]:
    """An app whose model runs ``bash {command}``, waiting on its approval."""
    app = app_for(tmp_path, [Step(calls=[Call("bash", {"command": command})]), Step(text="all done")])
    async with waiting_on_approval(app, size) as (pilot, prompt):
        yield app, pilot, prompt


def rendered(widget: ApprovalPrompt) -> list[str]:
    """The lines the widget draws at its real size (what is on screen, wrapping included)."""
    width, height = widget.size
    return [strip.text for strip in widget.render_lines(Region(0, 0, width, height))]


def squeeze(text: str) -> str:
    return "".join(text.split())


def burst(app: OwlApp, data: str) -> None:
    """Keys as a terminal (tmux) delivers them: one read, parsed and sent to the app in a row."""
    parser = XTermParser()
    driver = app._driver
    assert driver is not None
    for event in [*parser.feed(data), *parser.tick()]:
        driver.send_message(event)


def notices(app: OwlApp) -> list[str]:
    return [b.text for b in app.conversation.query(NoticeBlock)]


# ---- what is shown ---------------------------------------------------------------------------
async def test_carriage_return_command_shows_both_parts(tmp_path: Path) -> None:
    async with asking(tmp_path, CR_COMMAND) as (app, _pilot, prompt):
        screen = "\n".join(rendered(prompt))
        assert "touch pwned #\\rls -la" in screen  # both parts, the \r as a visible escape
        assert "control characters a terminal would act on or hide: \\r (carriage return)" in squeeze_ws(
            screen
        )
        assert "\r" not in screen
        block = app.conversation.query_one(ToolBlock)
        assert "touch pwned #\\rls -la" in str(block.title)  # the title does not collapse it either


def squeeze_ws(text: str) -> str:
    """Wrapped text joined back: line breaks and the padding around them become one space."""
    return " ".join(text.split())


async def test_300_character_command_is_shown_whole(tmp_path: Path) -> None:
    command = "echo " + " ".join(f"word{i:03d}" for i in range(35)) + " && rm -rf build; touch pwned2"
    command = command.ljust(300, "x") if len(command) < 300 else command
    assert len(command) >= 300
    async with asking(tmp_path, command, size=(80, 40)) as (_app, _pilot, prompt):
        lines = rendered(prompt)
        assert len(lines) > 5  # wrapped over several lines at this width
        assert squeeze(command) in squeeze("".join(lines))  # every character, in order, none cut
        assert "touch pwned2" in squeeze_ws("\n".join(lines))


async def test_bidi_and_zero_width_are_flagged(tmp_path: Path) -> None:
    command = "echo safe \u202e;touch pwned\u202c\u200b"
    async with asking(tmp_path, command) as (_app, _pilot, prompt):
        screen = "\n".join(rendered(prompt))
        assert "\u202e" not in screen and "\u200b" not in screen
        assert "echo safe \\u202e;touch pwned\\u202c\\u200b" in screen
        flat = squeeze_ws(screen)
        assert "invisible or direction-changing characters" in flat
        assert "U+202E (right-to-left override)" in flat and "U+200B (zero width space)" in flat


async def test_notes_and_the_rules_always_saves(tmp_path: Path) -> None:
    async with asking(tmp_path, "git status -s") as (_app, _pilot, prompt):
        text = prompt.text
        assert "why: no allow rule matches `git status -s`" in text
        assert '/always saves bash = ["git status *"] in .owltui/permissions.toml' in text
    # a command no rule can vouch for: "always" saves nothing, and says so
    async with asking(tmp_path / "b", "echo $(whoami)") as (_app, _pilot, prompt):
        text = prompt.text
        assert "/always allows this once; saves no rule" in text
        assert "why: " in text


# ---- how it is answered ------------------------------------------------------------------------
async def test_letters_typed_while_an_approval_waits_land_in_the_input(tmp_path: Path) -> None:
    async with asking(tmp_path, "echo hello") as (app, pilot, prompt):
        for _ in range(30):  # however long after it appeared
            await pilot.pause()
        await type_text(pilot, "actually, no")  # key by key: 'a' first, 'n' later, 'y' nowhere
        assert app.input.text == "actually, no"
        app.input.clear()
        for key in "yan":  # each alone on an empty input
            await pilot.press(key)
        assert app.input.text == "yan"
        app.input.clear()
        burst(app, "actually leave build alone")  # one read, as tmux sends a typed sentence
        await wait_for(pilot, lambda: app.input.text == "actually leave build alone", "burst typed")
        assert app.runtime.approvals.pending() and prompt.is_attached and app.input.has_focus
        app.input.clear()
        burst(app, "no, stop\r")  # text and Enter in one read: a message, not an answer
        await wait_for(pilot, lambda: app.runtime.inbox.texts("steer") == ["no, stop"], "queued as steering")
        assert app.input.text == ""
        assert app.runtime.approvals.pending() and app.conversation.query(ApprovalPrompt)
        assert not (tmp_path / "ws" / ".owltui" / "permissions.toml").exists()


@pytest.mark.parametrize(
    ("key", "status", "rule"), [("y", "ok", False), ("a", "ok", True), ("n", "refused", False)]
)
async def test_ctrl_g_then_a_key_answers(tmp_path: Path, key: str, status: str, rule: bool) -> None:
    async with asking(tmp_path, "echo answered") as (app, pilot, prompt):
        assert "Ctrl+G, then y allow once a always n deny" in squeeze_ws("\n".join(rendered(prompt)))
        assert app.input.has_focus
        await pilot.press("ctrl+g")
        assert prompt.has_focus
        assert "Esc back to the input" in squeeze_ws("\n".join(rendered(prompt)))
        await pilot.press(key)
        await wait_for(pilot, lambda: not app.runtime.approvals.pending(), "answered")
        assert app.input.has_focus
        await app.agent.wait_idle()
        block = app.conversation.query_one(ToolBlock)
        await wait_for(pilot, lambda: block.status == status, "tool end")
        rules = tmp_path / "ws" / ".owltui" / "permissions.toml"
        assert rules.exists() == rule
        if rule:
            assert tomllib.loads(rules.read_text())["allow"]["bash"] == ["echo *"]  # exactly what it showed
            assert 'always allowed: saving bash = ["echo *"] as a permission rule' in notices(app)


async def test_esc_on_the_approval_goes_back_without_aborting(tmp_path: Path) -> None:
    async with asking(tmp_path, "echo later") as (app, pilot, prompt):
        await pilot.press("ctrl+g")
        assert prompt.has_focus
        await pilot.press("escape")
        assert app.input.has_focus and app.agent.running and app.runtime.approvals.pending()
        await type_text(pilot, "y")
        assert app.input.text == "y" and app.runtime.approvals.pending()
        prompt.focus()  # focus alone cannot land on it again: only Ctrl+G or a click arm it
        await pilot.pause()
        assert not prompt.has_focus
        await pilot.press("ctrl+g")  # again from the input
        assert prompt.has_focus
        await pilot.press("ctrl+g")  # the last one: back to the input
        assert app.input.has_focus


async def test_typed_allow_command_answers(tmp_path: Path) -> None:
    async with asking(tmp_path, "echo by-command") as (app, pilot, _prompt):
        await type_text(pilot, "/allow")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.runtime.approvals.pending(), "answered")
        await app.agent.wait_idle()
        block = app.conversation.query_one(ToolBlock)
        await wait_for(pilot, lambda: block.status == "ok", "tool end")
        await type_text(pilot, "/deny")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "no approval is waiting" in notices(app), "nothing waits")


# ---- the pause gate ----------------------------------------------------------------------------
async def test_an_answer_while_paused_waits_for_resume(tmp_path: Path) -> None:
    async with asking(tmp_path, "echo after-resume") as (app, pilot, _prompt):
        started: list[str] = []
        app.runtime.emitter.subscribe(lambda e: started.append(e.type) if e.type == "tool_start" else None)
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.runtime.gate.paused, "paused")
        await pilot.press("ctrl+g", "y")
        await wait_for(pilot, lambda: not app.runtime.approvals.pending(), "answer recorded")
        await wait_for(pilot, lambda: app.runtime.gate.parked.get("main") == "tool", "parked before the tool")
        for _ in range(20):
            await pilot.pause()
        block = app.conversation.query_one(ToolBlock)
        assert not started and block.status == "pending"
        await pilot.press("f2")
        await app.agent.wait_idle()
        await wait_for(pilot, lambda: block.status == "ok", "ran after resume")
        assert started == ["tool_start"]


# ---- a re-run outside the sandbox ----------------------------------------------------------------
class ProbeParams(BaseModel):
    command: str


class RerunProbe:
    """Stands for bash after the sandbox blocked a command: asks the runtime's ``sandbox_rerun``."""

    name = "probe"
    description = "test tool"
    params = ProbeParams
    read_only = False

    def __init__(self) -> None:
        self.answers: list[bool] = []

    async def run(self, args: ProbeParams, ctx: ToolContext) -> ToolOutput:
        ask = ctx.services.sandbox_rerun
        assert ask is not None
        ok = await ask(
            ctx.call_id, args.command, "blocked by the sandbox: /etc/owl is outside the writable paths"
        )
        self.answers.append(ok)
        return ToolOutput(f"re-run: {ok}")


async def test_sandbox_rerun_approval_is_distinct_and_never_automatic(tmp_path: Path) -> None:
    probe = RerunProbe()
    app = app_for(
        tmp_path,
        [Step(calls=[Call("probe", {"command": "touch /etc/owl"})]), Step(text="ok")],
        tools=[probe],
        yes=True,
    )  # --yes: everything else runs without asking
    async with waiting_on_approval(app, what="re-run approval") as (pilot, prompt):
        assert prompt.has_class("-rerun") and prompt.view.rerun
        screen = squeeze_ws("\n".join(rendered(prompt)))
        assert "Run this command once WITHOUT the sandbox?" in screen
        assert "touch /etc/owl" in screen and "/etc/owl is outside the writable paths" in screen
        assert "y run once without the sandbox n keep it blocked" in screen
        assert "always" not in screen  # no rule can come of it
        block = app.conversation.query_one(ToolBlock)
        assert "awaiting approval to run WITHOUT the sandbox" in str(block.title)
        await pilot.press("ctrl+g", "a")  # not offered: nothing happens
        assert app.runtime.approvals.pending()
        await pilot.press("escape")
        await type_text(pilot, "/always")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("allowed once or not at all" in n for n in notices(app)), "refused")
        assert app.runtime.approvals.pending() and not probe.answers
        await pilot.press("ctrl+g", "y")
        await app.agent.wait_idle()
        assert probe.answers == [True]
        await wait_for(pilot, lambda: block.status == "ok", "tool end")
        assert any("outside the sandbox" in n for n in notices(app))


async def test_sandbox_rerun_answered_while_paused_waits_for_resume(tmp_path: Path) -> None:
    probe = RerunProbe()
    app = app_for(
        tmp_path,
        [Step(calls=[Call("probe", {"command": "touch /etc/owl"})]), Step(text="ok")],
        tools=[probe],
        yes=True,
    )
    async with waiting_on_approval(app, what="re-run approval") as (pilot, _prompt):
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.runtime.gate.paused, "paused")
        await pilot.press("ctrl+g", "y")
        await wait_for(pilot, lambda: not app.runtime.approvals.pending(), "answer recorded")
        for _ in range(20):
            await pilot.pause()
        assert not probe.answers  # held until the gate opens
        assert any("re-run" in where for where in app.runtime.gate.parked.values())
        await pilot.press("f2")
        await app.agent.wait_idle()
        assert probe.answers == [True]


# ---- start-up notes and warnings -----------------------------------------------------------------
async def test_startup_notes_are_shown_as_notices(tmp_path: Path) -> None:
    warnings: list[str] = []
    app = app_for(tmp_path, [], warnings=warnings, sandbox="off")
    assert any("the sandbox is off" in w for w in warnings)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        shown = [b for b in app.conversation.query(NoticeBlock) if "the sandbox is off" in b.text]
        assert shown and shown[0].kind == "warning"
        app.warn("a warning that came later")
        await wait_for(pilot, lambda: "a warning that came later" in notices(app), "later warning")
        await app.action_quit()


def test_run_tui_error_line_is_scrubbed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import owltui.session.runtime.build as runtime_mod
    from owltui.ui.app import run_tui

    secret = "sk-test-0123456789abcdefghijklmnop"
    monkeypatch.setenv("OPENAI_API_KEY", secret)

    def failing(options: Options, warn: Any = None, **_kw: Any) -> Any:
        warn("an early warning")
        raise RuntimeError(f"provider said: bad key {secret}")

    monkeypatch.setattr(runtime_mod, "build_runtime", failing)
    assert run_tui(Options(no_session=True, workspace=tmp_path)) == 1
    err = capsys.readouterr().err
    assert secret not in err and "[REDACTED]" in err
    assert "owltui: warning: an early warning" in err
