"""Pilot tests for the daily-driver pieces of issue 13 in the TUI: `!command` and `@` echoes, Esc and
Ctrl+C stopping a `!command` and /init, `@` completion, resumed transcripts (-c, --resume, /sessions
switching in place), /new asking about the queue, the resume line on quit, Up/Down history and
Ctrl+R, the /model picker, the status bar's context figure, spinner and elapsed time, tool blocks
from the keyboard, the welcome line, Alt+Enter and the footer, [keys]."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from owltui.session.commands.background import background
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.testing.host import LocalRuntime, MemoryInputHistory
from owltui.testing.scripted import Call, ScriptedModel, Step
from owltui.ui.app import OwlApp
from owltui.ui.plain import resume_line
from owltui.ui.textual_compat import alt_enter_distinct
from owltui.ui.widgets.blocks import AssistantBlock, AttachmentsBlock, InputBlock, NoticeBlock, WelcomeBlock
from owltui.ui.widgets.history_search import HistorySearchScreen
from owltui.ui.widgets.picker import PickerScreen
from owltui.ui.widgets.prompt_input import CompletionList
from owltui.ui.widgets.tool_block import ToolBlock
from tests.ui.conftest import SIZE, SlowTool, make_app, make_runtime_app, owl_app, wait_for
from tests.ui.test_input import abort_with_a_follow_up_queued, start_run, type_text
from tests.ui.test_tools_approvals import env_for

pytestmark = pytest.mark.anyio


def notes(app: OwlApp) -> list[str]:
    return [b.text for b in app.conversation.query(NoticeBlock)]


def inputs(app: OwlApp) -> list[tuple[str, str]]:
    return [(b.lane, b.text) for b in app.conversation.query(InputBlock)]


def status(app: OwlApp) -> str:
    return str(app.status.render())


async def send(pilot: Any, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")
    await pilot.pause()


# ---- fixes: `!` and `@` echoes, Esc / Ctrl+C stop `!` and /init ------------------------------------
async def test_shell_command_shows_its_block_and_no_stale_echo(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    app = make_runtime_app([], ws, env_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await send(pilot, "!echo hi")
        await wait_for(
            pilot, lambda: any(b.status == "ok" for b in app.conversation.query(ToolBlock)), "the bash block"
        )
        block = app.conversation.query_one(ToolBlock)
        assert block.call_id.startswith("shell-") and "hi" in block._output
        assert not block.collapsed  # the user asked to see the output
        assert inputs(app) == []  # no "you !echo hi" left over
        await app.action_quit()


async def test_mention_echo_matches_and_shows_attachments_folded(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("alpha\nbeta\n")
    app = make_runtime_app([Step(text="read it")], ws, env_for(tmp_path))
    model = app.agent.config.model
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await type_text(pilot, "what is in @notes.txt")
        comp = app.main.completions
        await wait_for(pilot, lambda: comp.current_path == "notes.txt", "the completion")
        await pilot.press("enter")  # the mention is complete already: Enter sends
        await app.agent.wait_idle()
        await wait_for(pilot, lambda: bool(app.conversation.query(AttachmentsBlock)), "the attachments")
        assert inputs(app) == [("user", "what is in @notes.txt")]  # drawn once, as typed
        attached = app.conversation.query_one(AttachmentsBlock)
        assert attached.paths == ["notes.txt"] and attached.collapsed
        assert "beta" in model.views[0][-1].text  # the model got the file
        await app.action_quit()


@pytest.mark.parametrize("key", ["escape", "ctrl+c"])
async def test_escape_and_ctrl_c_stop_a_shell_command(tmp_path: Path, key: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    app = make_runtime_app([], ws, env_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await send(pilot, "!echo started && sleep 30")
        await wait_for(
            pilot,
            lambda: any("started" in b._output for b in app.conversation.query(ToolBlock)),
            "the command running",
        )
        assert app.busy() and not app.agent.running
        await pilot.press(key)
        await wait_for(
            pilot, lambda: app.conversation.query_one(ToolBlock).status == "cancelled", "stopped", limit=2000
        )
        assert not background(app.runtime).keys and app.is_running
        await app.action_quit()


async def test_escape_stops_init(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    never = anyio.Event()
    app = make_runtime_app([Step(text="looking", gate=never)], ws, env_for(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await send(pilot, "/init")
        await wait_for(pilot, lambda: background(app.runtime).busy("init"), "/init running")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not background(app.runtime).keys, "/init stopped", limit=2000)
        await app.action_quit()


# ---- @ completion -----------------------------------------------------------------------------------
def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "docs").mkdir()
    (ws / "src" / "app.py").write_text("x = 1\n")
    (ws / "docs" / "guide.md").write_text("# guide\n")
    (ws / "my notes.txt").write_text("n\n")
    return ws


async def test_at_opens_fuzzy_file_completion(tmp_path: Path) -> None:
    app = make_app(workspace=_workspace(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        comp = app.query_one(CompletionList)
        await type_text(pilot, "see @ap")
        assert comp.display and comp.kind == "mention"
        await wait_for(pilot, lambda: "src/app.py" in comp.paths, "the file list")
        assert comp.current_path == "src/app.py"
        await pilot.press("tab")
        assert app.input.text == "see @src/app.py " and not comp.display
        # Enter takes the highlighted file (it does not send)
        await type_text(pilot, "and @gde")
        await wait_for(pilot, lambda: comp.current_path == "docs/guide.md", "guide ranked first")
        await pilot.press("enter")
        assert app.input.text == "see @src/app.py and @docs/guide.md " and not app.agent.running
        # a directory stays open for more; a name with spaces is quoted
        await pilot.press("ctrl+u")
        await type_text(pilot, "@docs")
        await wait_for(pilot, lambda: comp.current_path == "docs/", "the directory")
        await pilot.press("tab")
        assert app.input.text == "@docs/"
        await wait_for(pilot, lambda: comp.display and "docs/guide.md" in comp.paths, "inside the directory")
        await pilot.press("ctrl+u")
        await type_text(pilot, "@mynot")
        await wait_for(pilot, lambda: comp.current_path == "my notes.txt", "the spaced name")
        await pilot.press("down", "up", "tab")
        assert app.input.text == '@"my notes.txt" '
        await type_text(pilot, "@src/ap")
        await wait_for(pilot, lambda: comp.display and comp.kind == "mention", "the list again")
        await pilot.press("escape")
        assert not comp.display and not app.agent.running
        await app.action_quit()


# ---- sessions: -c / --resume, /sessions switching, /new, the resume line ---------------------------
async def _saved_session(ws: Path, env: dict[str, str], prompt: str, answer: str) -> str:
    tool = SlowTool()
    steps = [Step(text="Reading it.", calls=[Call("slow", {"text": "abc"})]), Step(text=answer)]
    runtime = build_runtime(
        Options(workspace=ws, yes=True), model=ScriptedModel(steps), env=env, tools=[tool]
    )
    async with runtime:
        runtime.agent.prompt(prompt)
        await runtime.agent.wait_idle()
    assert runtime.session_id is not None
    return runtime.session_id


async def test_continue_draws_the_transcript_folded(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = env_for(tmp_path)
    sid = await _saved_session(ws, env, "look at the code", "All **done** here.")
    runtime = build_runtime(
        Options(workspace=ws, continue_session=True), model=ScriptedModel([]), env=env, tools=[SlowTool()]
    )
    app = owl_app(runtime, elapsed=lambda: 1.0)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        assert runtime.session_id == sid
        welcome = app.conversation.query_one(WelcomeBlock).text
        assert f"session {sid}" in welcome and "/help" in welcome
        assert inputs(app) == [("user", "look at the code")]
        block = app.conversation.query_one(ToolBlock)
        assert block.collapsed and block.status == "ok" and "done: abc" in block._output
        await wait_for(pilot, lambda: all(b.done for b in app.conversation.query(AssistantBlock)), "answers")
        assert [b.text for b in app.conversation.query(AssistantBlock)] == [
            "Reading it.",
            "All **done** here.",
        ]
        await pilot.pause()
        assert app.conversation.following  # the end of the transcript in view
        assert any(n.startswith(f"resumed session {sid} (4 messages)") for n in notes(app))
        await app.action_quit()
    assert resume_line(runtime) == f"Resume this session with: owltui --resume {sid}"


async def test_resume_by_id_and_the_resume_line(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = env_for(tmp_path)
    sid = await _saved_session(ws, env, "first thing", "first answer")
    runtime = build_runtime(
        Options(workspace=ws, resume=sid[:6]), model=ScriptedModel([]), env=env, tools=[SlowTool()]
    )
    app = owl_app(runtime, elapsed=lambda: 1.0)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        assert inputs(app) == [("user", "first thing")]
        await app.action_quit()
    unsaved = build_runtime(Options(workspace=ws, no_session=True), model=ScriptedModel([]), env=env)
    assert resume_line(unsaved) is None


async def test_sessions_picker_switches_in_place(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = env_for(tmp_path)
    old = await _saved_session(ws, env, "the old task", "old answer")
    runtime = build_runtime(
        Options(workspace=ws), model=ScriptedModel([Step(text="new answer")]), env=env, tools=[SlowTool()]
    )
    app = owl_app(runtime, elapsed=lambda: 1.0)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await send(pilot, "a new task")
        await app.agent.wait_idle()
        await send(pilot, "/sessions")
        await wait_for(pilot, lambda: isinstance(app.screen, PickerScreen), "the picker")
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        assert [value for value, _label in picker.options] == [old]
        assert "the old task" in picker.options[0][1]
        await pilot.press("enter")
        await wait_for(pilot, lambda: runtime.session_id == old, "the switch")
        await wait_for(pilot, lambda: inputs(app) == [("user", "the old task")], "the old transcript")
        assert any(n.startswith(f"resumed session {old}") for n in notes(app))
        assert (
            next(i.text for i in app.agent.history.items() if getattr(i, "role", "") == "user")
            == "the old task"
        )
        await app.action_quit()


async def test_new_asks_about_the_queue_and_clears_the_requirement() -> None:
    gate = anyio.Event()
    app = make_app([Step(text="never", gate=gate)], tools=[SlowTool()])
    async with app.run_test(size=SIZE) as pilot:
        await abort_with_a_follow_up_queued(pilot, app)
        app.runtime.require("slow")
        await send(pilot, "/new")
        await wait_for(pilot, lambda: isinstance(app.screen, PickerScreen), "the question")
        picker = app.screen
        assert isinstance(picker, PickerScreen) and [v for v, _ in picker.options] == ["keep", "drop"]
        assert "1 queued message" in picker.title_text
        await pilot.press("down", "enter")  # drop
        await wait_for(pilot, lambda: "new session" in notes(app), "the new session")
        assert app.runtime.inbox.texts("follow_up") == [] and app.runtime.requirement.current is None
        assert app.conversation.query(WelcomeBlock) and not app.conversation.query(InputBlock)
        await app.action_quit()


async def test_new_keep_carries_the_queue() -> None:
    gate = anyio.Event()
    app = make_app([Step(text="never", gate=gate)])
    async with app.run_test(size=SIZE) as pilot:
        await abort_with_a_follow_up_queued(pilot, app)
        await send(pilot, "/new keep")
        assert "new session; 1 queued message carried over" in notes(app)
        assert app.runtime.inbox.texts("follow_up") == ["later"]
        await app.action_quit()


# ---- input: history, Ctrl+R, /model, status bar, tool blocks, welcome -----------------------------------
async def test_up_down_walk_the_history() -> None:
    app = make_app([Step(text="one"), Step(text="two")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        for text in ("first", "second"):
            await send(pilot, text)
            await app.agent.wait_idle()
        assert app.input_history.entries() == ["first", "second"]
        await type_text(pilot, "draft")
        await pilot.press("up")
        assert app.input.text == "second"
        await pilot.press("up")
        assert app.input.text == "first"
        await pilot.press("up")
        assert app.input.text == "first"  # the oldest: stays
        await pilot.press("down")
        assert app.input.text == "second"
        await pilot.press("down")
        assert app.input.text == "draft"  # back to what was being typed
        # on a second line Up moves the cursor first; on the first line it recalls
        await pilot.press("ctrl+n")
        await type_text(pilot, "more")
        await pilot.press("up")
        assert app.input.text == "draft\nmore" and app.input.cursor_location[0] == 0
        await pilot.press("up")
        assert app.input.text == "second"
        assert not app.query_one(CompletionList).display
        await app.action_quit()


async def test_history_is_kept_per_workspace(tmp_path: Path) -> None:
    env = env_for(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = make_runtime_app([Step(text="ok")], tmp_path / "a", env)
    async with first.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: first.ready)
        await send(pilot, "remember me")
        await first.agent.wait_idle()
        await first.action_quit()
    again = make_runtime_app([], tmp_path / "a", env)
    async with again.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: again.ready)
        await pilot.press("up")
        assert again.input.text == "remember me"
        await again.action_quit()
    other = make_runtime_app([], tmp_path / "b", env)
    async with other.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: other.ready)
        await pilot.press("up")
        assert other.input.text == ""
        await other.action_quit()


async def test_ctrl_r_searches_the_history() -> None:
    app = make_app()
    app.runtime.input_history = MemoryInputHistory(["git status", "run the tests", "git log -3"])  # type: ignore[attr-defined]
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, HistorySearchScreen), "the search")
        screen = app.screen
        assert isinstance(screen, HistorySearchScreen)
        await type_text(pilot, "git")
        assert screen.found == ["git log -3", "git status"]
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: app.input.text == "git status", "the entry in the input")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, HistorySearchScreen), "the search again")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, HistorySearchScreen), "closed")
        assert app.input.text == "git status"
        await app.action_quit()


async def test_model_picker_lists_catalog_and_local_server(tmp_path: Path) -> None:
    from tests.cli.fake_openai import FakeOpenAI

    server = FakeOpenAI()
    try:
        env = {**env_for(tmp_path), "ANTHROPIC_API_KEY": "sk-test", "OPENAI_BASE_URL": server.url}
        ws = tmp_path / "ws"
        ws.mkdir()
        app = make_runtime_app([], ws, env)
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.ready)
            await send(pilot, "/model")
            assert "model: scripted" in notes(app)
            await wait_for(pilot, lambda: isinstance(app.screen, PickerScreen), "the model picker")
            picker = app.screen
            assert isinstance(picker, PickerScreen)
            values = [v for v, _ in picker.options]
            assert "anthropic:claude-sonnet-4-5" in values and "openai:fake-model" in values
            assert "openai:gpt-4.1" not in values  # no OpenAI key: its catalog is not offered
            assert any("local server" in label for _, label in picker.options)
            picker.query_one("OptionList").highlighted = values.index("anthropic:claude-sonnet-4-5")  # type: ignore[attr-defined]
            await pilot.press("enter")
            await wait_for(pilot, lambda: "model: anthropic:claude-sonnet-4-5" in notes(app), "switched")
            assert app.runtime.model_label == "anthropic:claude-sonnet-4-5"
            await wait_for(pilot, lambda: "anthropic:claude-sonnet-4-5" in status(app), "the status bar")
            await app.action_quit()
    finally:
        server.close()


async def test_status_bar_context_spinner_and_elapsed() -> None:
    now = [100.0]
    gate = anyio.Event()
    app = make_app([Step(text="one"), Step(text="two", gate=gate)], clock=lambda: now[0])
    app.agent.config.context_window = 1000  # type: ignore[attr-defined]
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        assert "ctx" not in status(app)  # nothing sent yet
        await send(pilot, "hi")
        await app.agent.wait_idle()
        await wait_for(pilot, lambda: "ctx 2%" in status(app), "context used: 15 of 1000 tokens")
        await send(pilot, "again")
        await wait_for(pilot, lambda: "working 0s" in status(app), "the spinner")
        first = status(app).split("working")[0][-2]
        now[0] += 65.25
        await wait_for(pilot, lambda: "working 1m 05s" in status(app), "elapsed time")
        assert status(app).split("working")[0][-2] != first  # the spinner turned
        gate.set()
        await app.agent.wait_idle()
        await wait_for(pilot, lambda: " idle" in status(app) and "working" not in status(app), "idle")
        await app.action_quit()


async def test_tool_blocks_expand_and_collapse_from_the_keyboard() -> None:
    app = make_app(
        [Step(text="running", calls=[Call("slow", {"text": "abc"})]), Step(text="done")], tools=[SlowTool()]
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await send(pilot, "go")
        await app.agent.wait_idle()
        block = app.conversation.query_one(ToolBlock)
        await wait_for(pilot, lambda: block.collapsed, "folded after success")
        await pilot.press("ctrl+o")
        assert not block.collapsed and app.input.has_focus
        await pilot.press("ctrl+o")
        assert block.collapsed
        await pilot.press("shift+tab")  # focus walks back to the block's title
        assert app.focused is not None and app.focused.parent is block
        await pilot.press("enter")
        assert not block.collapsed
        await pilot.press("escape")  # back to the input (nothing to abort anyway)
        assert app.input.has_focus
        await app.action_quit()


async def test_welcome_line() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        (welcome,) = app.conversation.query(WelcomeBlock)
        assert welcome.text == (
            "OwlTUI · scripted:scripted · /srv/project · session not saved · /help for commands and keys"
        )
        await app.action_quit()


# ---- keys: Alt+Enter, the footer, [keys] ----------------------------------------------------------------
def test_esc_cr_is_alt_enter() -> None:
    import time

    from textual._xterm_parser import XTermParser

    for seq in ("\x1b\r", "\x1b[13;3u"):  # Alt as Esc (tmux, xterm...), the kitty protocol
        parser = XTermParser()
        keys = [getattr(e, "key", None) for e in parser.feed(seq)]
        time.sleep(0.15)
        keys += [getattr(e, "key", None) for e in parser.tick()]
        assert keys == ["alt+enter"], (seq, keys)
    parser = XTermParser()
    assert [getattr(e, "key", None) for e in parser.feed("\r")] == ["enter"]


def test_which_terminals_tell_alt_enter_apart() -> None:
    assert alt_enter_distinct({"TERM": "xterm-kitty"})
    assert alt_enter_distinct({"TERM": "xterm-256color", "TERM_PROGRAM": "WezTerm"})
    assert not alt_enter_distinct({"TERM": "xterm-kitty", "TMUX": "/tmp/tmux-1/default,1,0"})
    assert not alt_enter_distinct({"TERM": "xterm-256color"})
    assert not alt_enter_distinct({"TERM": "foot", "TEXTUAL_DISABLE_KITTY_KEY": "1"})


@pytest.mark.parametrize(("alt_enter", "shown"), [(True, "alt+⏎"), (False, "^j")])
async def test_footer_names_the_follow_up_key_that_works(alt_enter: bool, shown: str) -> None:
    from textual.widgets._footer import FooterKey

    app = make_app(alt_enter=alt_enter)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await wait_for(pilot, lambda: any(k.action == "follow_up" for k in app.query(FooterKey)), "footer")
        (key,) = [k for k in app.query(FooterKey) if k.action == "follow_up"]
        assert key.key_display == shown
        await app.action_quit()


async def test_alt_enter_queues_a_follow_up() -> None:
    gate = anyio.Event()
    app = make_app([Step(text="x", gate=gate)])
    async with app.run_test(size=SIZE) as pilot:
        await start_run(pilot, app)
        await type_text(pilot, "next")
        await pilot.press("alt+enter")
        await wait_for(pilot, lambda: app.runtime.inbox.texts("follow_up") == ["next"], "the follow-up")
        gate.set()
        await app.action_quit()


async def test_readme_keys_example_moves_pause_and_the_palette() -> None:
    """`[keys] pause = "ctrl+p"`: Ctrl+P pauses; the command palette moves to F1."""
    from textual.command import CommandPalette

    app = make_app(keymap={"pause": "ctrl+p"})
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: app.runtime.gate.paused, "paused by ctrl+p")
        assert not isinstance(app.screen, CommandPalette)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: not app.runtime.gate.paused, "resumed by ctrl+p")
        await pilot.press("f2")  # the default key is gone
        await pilot.pause()
        assert not app.runtime.gate.paused
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette on f1")
        await pilot.press("escape")
        await app.action_quit()


async def test_a_bad_keymap_is_one_notice_and_the_defaults() -> None:
    app = make_app(keymap={"paws": "f5"})
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        assert any(n.startswith("[keys] paws: unknown binding id") for n in notes(app))
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.runtime.gate.paused, "f2 still pauses")
        await app.action_quit()


def test_ui_bindings_are_the_keys_table() -> None:
    """Every binding id the TUI declares is in owltui.session.commands.keys, with the same keys."""
    from textual.binding import Binding

    from owltui.session.commands.keys import BINDINGS
    from owltui.ui.widgets.main_screen import MainScreen
    from owltui.ui.widgets.prompt_input import PromptInput

    declared: dict[str, str] = {}
    for cls in (MainScreen, PromptInput, OwlApp):
        for b in cls.BINDINGS:
            assert isinstance(b, Binding)
            if b.id is not None:
                declared[b.id] = b.key
    table = {bid: keys for bid, (keys, _) in BINDINGS.items()}
    assert declared.items() <= table.items()
    assert set(table) - set(declared) <= {"queue", "steer_now"}  # (issue 14's keys, wired with its panel)


async def test_followup_command() -> None:
    gate = anyio.Event()
    app = make_app([Step(text="x", gate=gate)])
    async with app.run_test(size=SIZE) as pilot:
        await start_run(pilot, app)
        await send(pilot, "/followup then the docs")
        await wait_for(pilot, lambda: app.runtime.inbox.texts("follow_up") == ["then the docs"], "queued")
        gate.set()
        await app.action_quit()


def test_local_runtime_history_in_memory() -> None:
    rt = LocalRuntime(ScriptedModel([]))
    assert rt.input_history.add("a") and not rt.input_history.add("a")
    assert rt.input_history.entries() == ["a"] and rt.input_history.search("A") == ["a"]


# ---- plain mode: the follow-up lane, the resume line -------------------------------------------------
async def test_plain_mode_alt_enter_and_followup_queue_follow_ups() -> None:
    from owltui.agent.messages import UserMessage
    from tests.ui.test_plain import drive, until

    gate = anyio.Event()
    model = ScriptedModel([Step(text="working", gate=gate), Step(text="followed up")])
    rt = LocalRuntime(model)

    async def script(inp, out, repl) -> None:
        await until(lambda: any("plain mode" in line for line in out), "banner")
        inp.send_text("go\r")
        await until(lambda: rt.agent.running, "run")
        inp.send_text("then the docs\x1b\r")  # Alt+Enter
        await until(lambda: rt.inbox.texts("follow_up") == ["then the docs"], "the follow-up")
        assert "· queued as a follow-up" in out and rt.inbox.texts("steer") == []
        inp.send_text("/followup and the tests\r")
        await until(lambda: rt.inbox.texts("follow_up") == ["then the docs", "and the tests"], "the second")
        gate.set()
        await until(lambda: "followed up" in out, "delivered")
        inp.send_text("/quit\r")

    out = await drive(rt, script)
    seen = [
        m.text for m in model.requests[-1].messages if isinstance(m, UserMessage) and m.lane == "follow_up"
    ]
    assert seen[:1] == ["then the docs"]
    assert any("[follow-up] then the docs" in line for line in out)
