"""The command layer: one declaration per command feeds /help, completion, the palette and docs/rpc.md's
table; slash lines and RPC objects bind to the same arguments; replies for every front end."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from owltui.session.commands.layer import Commands
from owltui.session.commands.spec import literal, rpc_table, split_slash
from owltui.session.commands.table import COMMANDS, rpc_commands
from owltui.testing.host import LocalRuntime
from owltui.testing.scripted import ScriptedModel, Step

ROOT = Path(__file__).resolve().parents[2]
SLASH = [
    "followup",
    "pause",
    "resume",
    "queue",
    "now",
    "require",
    "plan",
    "plan-answer",
    "model",
    "mode",
    "steering",
    "sessions",
    "new",
    "compact",
    "init",
    "undo",
    "rewind",
    "mcp",
    "hooks",
    "skills",
    "skill",
    "theme",
    "help",
    "quit",
]
# CONTRACTS section 2, in its order (plus `shell`, issue 13: what `!command` runs; the queue commands,
# checkpoints, rewind and mcp_status of section 6)
RPC = [
    "prompt",
    "steer",
    "follow_up",
    "aside",
    "shell",
    "abort",
    "queue_edit",
    "queue_remove",
    "queue_move",
    "pause",
    "resume",
    "require_tool",
    "clear_requirement",
    "approve",
    "plan_answer",  # plan mode (section 7)
    "mcp_elicitation_answer",
    "get_state",
    "checkpoints",
    "rewind",
    "mcp_status",
    "set_permission_mode",  # /mode
    "get_commands",
    "quit",
]


class Front:
    label = "a test"
    capabilities: frozenset[str] = frozenset()
    abort_key = "Esc"
    keys_help = "Keys: none"
    themes = None

    def __init__(self) -> None:
        self.quits = 0

    def quit(self) -> None:
        self.quits += 1


class Themes:
    def __init__(self) -> None:
        self.current = "dark"

    def names(self) -> list[str]:
        return ["light", "dark"]

    def use(self, name: str) -> None:
        self.current = name


class ThemedFront(Front):
    capabilities = frozenset({"themes"})

    def __init__(self) -> None:
        super().__init__()
        self.themes = Themes()  # type: ignore[assignment]


def commands(front: Front | None = None, tools: list | None = None) -> Commands:
    from tests.ui.conftest import SlowTool

    rt = LocalRuntime(ScriptedModel([Step(text="hi")]), tools=[SlowTool()] if tools is None else tools)
    return Commands(rt, front or Front())


def held_run() -> tuple[anyio.Event, LocalRuntime, Commands]:
    """A bare runtime whose first answer waits for the returned event (a run that stays going), and
    its commands."""
    gate = anyio.Event()
    rt = LocalRuntime(ScriptedModel([Step(text="one", gate=gate)]))
    return gate, rt, Commands(rt, Front())


# ---- one declaration ---------------------------------------------------------------------------
def test_names_are_declared_once() -> None:
    assert [c.slash for c in COMMANDS if c.slash] == SLASH
    assert [c.rpc for c in COMMANDS if c.rpc] == RPC
    assert all(c.help for c in COMMANDS)


def test_docs_rpc_table_is_the_declarations() -> None:
    docs = (ROOT / "docs" / "rpc.md").read_text()
    assert rpc_table(rpc_commands()) in docs


def test_help_completion_follow_the_front_end() -> None:
    plain = commands()
    assert [c.name for c in plain.slash_list] == [n for n in SLASH if n != "theme"]
    text = plain.help_text()
    assert "/require [TOOL [reason]]" in text and "/model [PROVIDER:MODEL]" in text and "/theme" not in text
    themed = commands(ThemedFront())
    assert "/theme [NAME]" in themed.help_text()
    assert [c.name for c in themed.complete("/re")] == ["resume", "require", "rewind"]
    assert themed.complete("/require x") == []
    reply = plain.slash("/help")
    assert reply is not None and reply.text.endswith("\n\nKeys: none")


def test_slash_parsing() -> None:
    assert split_slash("  /Require bash  why  ") == ("require", "bash  why")
    assert split_slash("//etc/hosts") is None and split_slash("hello") is None
    assert literal("//etc/hosts") == "/etc/hosts" and literal("a/b") == "a/b"


# ---- replies ------------------------------------------------------------------------------------
def test_pause_resume_words_and_data() -> None:
    c = commands()
    first = c.slash("/pause")
    assert (
        first is not None and first.ok and first.data == {"changed": True, "frozen": True} and not first.text
    )
    again = c.rpc("pause", {})
    assert again.ok and again.data == {"changed": False, "frozen": True} and again.text == "already paused"
    assert c.call("resume").data == {"changed": True}
    assert c.slash("/resume").text == "not paused"  # type: ignore[union-attr]


def test_require_slash_and_rpc_bind_the_same_arguments() -> None:
    c = commands()
    reply = c.slash("/require slow  be quick ")
    assert reply is not None and reply.text == "requirement: the next turn must call `slow` (be quick)"
    req = c.ctx.host.requirement.current
    assert req is not None and (req.tool, req.reason) == ("slow", "be quick")
    assert c.rpc("clear_requirement", {}).ok and c.ctx.host.requirement.current is None
    bad = c.rpc("require_tool", {"tool": "nope"})
    assert not bad.ok and bad.text.startswith("unknown tool `nope`; tools: ")
    assert c.rpc("require_tool", {"tool": "slow", "reason": 3}).text == "'reason' must be a string"
    assert c.rpc("require_tool", {}).text == "'tool' must be a non-empty string"


def test_missing_first_argument_offers_a_pick() -> None:
    reply = commands().slash("/require")
    assert reply is not None and reply.pick is not None
    assert reply.pick.options == ["read_result", "slow"] and reply.pick.command == "require"
    none = commands(tools=[]).slash("/require")
    assert none is not None and none.text == "this agent has no tools to require" and none.pick is None
    themed = commands(ThemedFront())
    pick = themed.slash("/theme")
    assert pick is not None and pick.pick is not None and pick.pick.highlight == "dark"
    assert themed.slash("/theme light").text == "theme: light"  # type: ignore[union-attr]
    assert themed.ctx.front.themes.current == "light"  # type: ignore[union-attr]


def test_unknown_unavailable_and_bad_fields() -> None:
    c = commands()
    assert c.slash("/frob").text.startswith("unknown command /frob")  # type: ignore[union-attr]
    assert c.slash("/theme x").text == "/theme is not available in a test (/help)"  # type: ignore[union-attr]
    assert c.rpc("dance", {}).text.startswith("unknown command 'dance'; known: prompt, steer")
    assert c.rpc("model", {}).text.startswith("unknown command 'model'")  # slash only
    assert c.rpc("abort", {"clear_queue": "yes"}).text == "'clear_queue' must be true or false"
    assert (
        c.rpc("approve", {"call_id": "x", "decision": "maybe"}).text
        == '\'decision\' must be "allow", "deny" or "always"'
    )
    assert c.rpc("prompt", {"text": "go", "as": "aside"}).text == '\'as\' must be "steer" or "follow_up"'
    nobody = c.rpc("approve", {"call_id": "x", "decision": "allow"})
    assert not nobody.ok and nobody.text == "no approval request 'x' is waiting"
    model = c.slash("/model other")
    assert model is not None and not model.ok and model.kind == "warning"
    assert model.text == "switching models is not available here"
    assert c.slash("/model").text == "model: scripted:scripted"  # type: ignore[union-attr]
    compact = c.slash("/compact")
    assert compact is not None and compact.text == "/compact is not available in this build"


def test_quit_asks_the_front_end() -> None:
    front = Front()
    c = commands(front)
    assert c.rpc("quit", {}).ok and front.quits == 1


@pytest.mark.anyio
async def test_prompt_queues_while_running_and_new_session_clears() -> None:
    gate, rt, c = held_run()
    async with rt:
        assert c.send("first").data == {}
        busy = c.rpc("prompt", {"text": "again"})
        assert not busy.ok and "in progress" in busy.text
        steered = c.send("steer me")
        assert steered.data == {"queued": "steer", "queue_id": rt.inbox.items("steer")[0].id}
        assert c.send("after", "follow_up").ok
        assert {lane: rt.inbox.texts(lane) for lane in ("steer", "follow_up", "aside")} == {
            "steer": ["steer me"],
            "follow_up": ["after"],
            "aside": [],
        }
        refused = c.slash("/new")
        assert refused is not None and refused.text == "a run is going: abort it (Esc) before /new"
        assert c.call("abort", clear_queue=True).data == {"aborted": True}
        await rt.agent.wait_idle()
        assert rt.stats.waiting == 0
        fresh = c.slash("/new")
        assert fresh is not None and fresh.text == "new session" and fresh.clear_view
        state = c.rpc("get_state", {}).data
        assert state["running"] is False and state["rounds"] == 0 and state["usage"]["cost"] == 0.0
        gate.set()


# ---- issue 13: /require off, unknown /words as prompts, @ and ! in send, /init ---------------------
def test_require_off_clears() -> None:
    c = commands()
    c.slash("/require slow")
    pick = c.slash("/require")
    assert pick is not None and pick.pick is not None and pick.pick.options == ["read_result", "slow", "off"]
    off = c.slash("/require off")
    assert off is not None and off.ok and off.text == "requirement cleared"
    assert c.ctx.host.requirement.current is None
    assert c.rpc("require_tool", {"tool": "off"}).ok
    with_off = commands(tools=[SlowNamed("off")])
    assert with_off.slash("/require off").text == "requirement: the next turn must call `off`"  # type: ignore[union-attr]


class SlowNamed:
    """A tool with a chosen name (one called ``off`` is required, not a way to clear)."""

    description = "x"
    read_only = True

    def __init__(self, name: str) -> None:
        from pydantic import BaseModel

        self.name = name
        self.params = BaseModel

    async def run(self, args: object, ctx: object) -> object:
        raise NotImplementedError


def test_a_slash_line_is_a_command_only_if_it_names_one() -> None:
    c = commands()
    assert c.slash("/srv/app/notes.txt what is this") is None
    assert c.slash("/tmp is full, why?") is None
    assert c.slash("/etc/hosts") is None  # a path, even alone
    typo = c.slash("/hepl")
    assert typo is not None and not typo.ok
    assert typo.text == "unknown command /hepl (did you mean /help? //hepl sends it as a message)"
    near = c.slash("/requre slow")
    assert near is not None and near.text.startswith("unknown command /requre (did you mean /require?")
    lone = c.slash("/frobnicate")
    assert lone is not None and lone.text.startswith("unknown command /frobnicate (/help lists them")
    assert "Input:\n  @PATH" in c.help_text() and "!COMMAND" in c.help_text()


@pytest.mark.anyio
async def test_send_attaches_mentions_and_routes_bang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("buy milk\n")
    gate = anyio.Event()
    model = ScriptedModel([Step(text="one", gate=gate), Step(text="two")])
    rt = LocalRuntime(model)
    c = Commands(rt, Front())
    async with rt:
        first = c.send("what is in @notes.txt and @missing.txt?")
        assert first.ok and first.data == {"attached": ["notes.txt"]} and first.kind == "warning"
        assert first.text == "attached notes.txt; @missing.txt: no such file; left as text"
        queued = c.send("and @notes.txt again", "follow_up")
        assert queued.data == {"attached": ["notes.txt"], "queue_id": rt.inbox.items("follow_up")[0].id}
        bang = c.send("!echo from the shell")
        assert bang.then is not None  # a bare host has no task group of its own: the reply runs it
        done = await bang.then
        assert done.text == "`echo from the shell` exited 0"
        gate.set()
        await rt.agent.wait_idle()
    first_view = [getattr(m, "text", "") for m in model.views[0]]
    assert first_view == [
        'what is in @notes.txt and @missing.txt?\n\n<file path="notes.txt">\n     1\tbuy milk\n</file>'
    ]
    second_view = [getattr(m, "text", "") for m in model.views[1]]
    assert second_view[-2].startswith("The user ran a shell command:\n$ echo from the shell\nfrom the shell")
    assert second_view[-1].startswith('and @notes.txt again\n\n<file path="notes.txt">')


@pytest.mark.anyio
async def test_init_is_refused_while_a_run_goes_or_without_write() -> None:
    gate, rt, c = held_run()
    async with rt:
        c.send("go")
        busy = c.slash("/init")
        assert busy is not None and busy.text == "a run is going: wait or abort (Esc) before /init"
        gate.set()
        await rt.agent.wait_idle()
        nowrite = c.slash("/init")
        assert (
            nowrite is not None
            and nowrite.text == "/init needs the write tool, which this agent does not have"
        )
