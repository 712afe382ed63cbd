"""Every command, declared once: the slash commands of the TUI and plain mode and the commands of RPC
mode. ``/help``, completion after ``/``, the TUI's command palette and docs/rpc.md's command table
are all made from ``COMMANDS``, in its order, followed by the workspace's custom commands the front
end's ``Commands`` carries (``Context.custom``, ``owltui.session.custom_commands``); front ends only
parse input into a call and show the ``Reply``. The commands' functions live with their kind
(``messages``, ``controls``, ``queue``, ``models``, ``switching``, ``upkeep``, ``rewind``, ``mcp``);
the front end's own (``/theme``, ``/help``, ``/quit``, RPC ``get_commands``) are here, ``/help`` and
``get_commands`` because they read the table.

To add a command: write its function (``Context``, arguments) -> ``Reply`` in the module of its kind,
add one ``Command`` to ``COMMANDS`` (a slash name, an RPC name, or both), and regenerate the RPC table
if it has an RPC name (``python -m owltui.session.commands --rpc-table``).
"""

from __future__ import annotations

from owltui.agent.requirement import MAX_ESCALATIONS
from owltui.policy.permissions.model import MODES
from owltui.session.commands.controls import (
    STEERING,
    approve,
    clear_requirement,
    get_state,
    pause,
    permission_mode,
    pick_mode,
    pick_steering,
    pick_tool,
    require,
    resume,
    steering,
)
from owltui.session.commands.mcp import MCP_ACTIONS, NAME, mcp, mcp_status
from owltui.session.commands.messages import STEER_OR_FOLLOW_UP, abort, lane_push, prompt, shell, steer_now
from owltui.session.commands.models import model, pick_model
from owltui.session.commands.queue import queue_edit, queue_list, queue_move, queue_remove
from owltui.session.commands.rewind import WHAT, checkpoints, pick_checkpoint, rewind, rewind_slash, undo
from owltui.session.commands.spec import (
    Arg,
    Args,
    Command,
    CommandError,
    Context,
    Pick,
    Reply,
    Unavailable,
    help_lines,
)
from owltui.session.commands.switching import QUEUE_CHOICES, new, pick_new, pick_session, sessions
from owltui.session.commands.upkeep import compact, init
from owltui.session.custom_commands.mcp_prompts import McpPromptCommand, mcp_commands, prompts_help
from owltui.session.hook_commands import hooks
from owltui.session.mcp_elicit_commands import MCP_ELICIT_COMMANDS
from owltui.session.plan_commands import PLAN_COMMANDS
from owltui.session.skill_commands import pick_skill, skill, skills_list


# ---- the front end -------------------------------------------------------------------------------
def theme(ctx: Context, a: Args) -> Reply:
    themes = ctx.front.themes
    if themes is None:
        raise Unavailable(f"themes are not available in {ctx.front.label}")
    names = sorted(themes.names())
    if a["name"] not in names:
        raise CommandError(f"unknown theme '{a['name']}'; themes: {', '.join(names)}")
    themes.use(a["name"])
    return Reply(f"theme: {a['name']}")


def pick_theme(ctx: Context) -> Reply:
    themes = ctx.front.themes
    if themes is None:
        raise Unavailable(f"themes are not available in {ctx.front.label}")
    return Reply(pick=Pick("Theme", sorted(themes.names()), "theme", highlight=themes.current))


def help_(ctx: Context, _a: Args) -> Reply:
    return Reply(help_text(ctx) + ("\n\n" + ctx.front.keys_help if ctx.front.keys_help else ""))


def get_commands(ctx: Context, _a: Args) -> Reply:
    """Every slash command offered here, built-in ones first, with where each comes from."""
    return Reply(data={"commands": [c.listing() for c in slash_commands(ctx)]})


def quit_(ctx: Context, _a: Args) -> Reply:
    ctx.host.agent.abort()
    ctx.front.quit()
    return Reply()


TEXT = Arg("text")
IMMEDIATE = Arg("immediate", "bool", required=False)
QID = Arg("id", metavar="ID")
COMMANDS: tuple[Command, ...] = (
    Command(
        "start a run; while one is going, queue the text in the lane named by `as`",
        prompt,
        rpc="prompt",
        args=(TEXT, Arg("as", "str", required=False, choices=STEER_OR_FOLLOW_UP), IMMEDIATE),
        doc='Start a run. While a run is going: `ok: false` unless `"as": "steer"` or `"as": '
        '"follow_up"`, which queue the text in that lane (response carries `"queued": LANE` and '
        '`"queue_id"`; `"immediate": true` with `"as": "steer"`: see `steer`). '
        "A `@PATH` in the text attaches that file or directory listing to the message "
        '(response carries `"attached": [paths]`; see "Mentions" below).',
    ),
    Command(
        "steering: delivered at the next poll point of the running run",
        lane_push("steer"),
        rpc="steer",
        args=(TEXT, IMMEDIATE),
        doc="Steering lane: delivered at the next poll point of the running run (after the current "
        'tool batch); starts a run when idle. `"immediate": true`: this message skips the '
        "batch's calls not yet started (they get a `skipped` result saying a message arrived), "
        "whatever config `steering` says. Response carries `queue_id`. `@PATH` mentions are "
        "attached as for `prompt`.",
    ),
    Command(
        "delivered only when the agent would otherwise stop",
        lane_push("follow_up"),
        slash="followup",
        rpc="follow_up",
        args=(TEXT,),
        doc="Follow-up lane: delivered only when the agent would otherwise stop, one per stop, each "
        'its own turn (config `follow_up_mode = "all"` merges them); starts a run when idle. '
        "Response carries `queue_id`. `@PATH` mentions are attached as for `prompt`.",
    ),
    Command(
        "a background notice",
        lane_push("aside", mentions=False),
        rpc="aside",
        args=(TEXT,),
        doc="Aside lane: a background notice; never interrupts tools, never forces an extra model "
        "call mid-batch. Response carries `queue_id`.",
    ),
    Command(
        "run a shell command for the user; the model sees it with its next request",
        shell,
        rpc="shell",
        args=(Arg("command"),),
        doc="Run `command` as the `bash` tool would (sandbox, scrubbed environment, 90 s cap; killed "
        "at the cap), for the user: `tool_start`/`tool_update`/`tool_end` events named `bash` "
        'with a `call_id` starting `shell-` and `details.source: "user"` show it. Command and '
        "output go to the model as user-provided context with its next request (idle: added to "
        "the history, no run starts; running: queued as an aside). Response (at once) carries "
        "`call_id`. What typing `!command` does in the TUI and plain mode.",
    ),
    Command(
        "cancel the run",
        abort,
        rpc="abort",
        args=(Arg("clear_queue", "bool", required=False),),
        doc="Cancel the run: the stream stops, running tools' processes are killed, every tool call "
        "still gets a result. Queued messages stay queued unless `clear_queue`. Background jobs "
        "keep running until OwlTUI exits; `shell` commands and `/init` still going are stopped. "
        'Response carries `"aborted": true\\|false` (false: nothing was running).',
    ),
    Command(
        "edit a queued message",
        queue_edit,
        rpc="queue_edit",
        args=(QID, TEXT),
        doc="Replace the text of queued message `id` (same id, lane and place). `ok: false` with "
        "the reason if it was delivered or removed meanwhile (or is a background notice). "
        "Response carries `item` `{id, text, source}` and `lane`.",
    ),
    Command(
        "withdraw a queued message",
        queue_remove,
        rpc="queue_remove",
        args=(QID,),
        doc="Withdraw queued message `id`; it is never delivered. `ok: false` as for `queue_edit`. "
        "Response carries `item`.",
    ),
    Command(
        "move a queued message to another lane or place",
        queue_move,
        rpc="queue_move",
        args=(
            QID,
            Arg("lane", "str", required=False, choices=STEER_OR_FOLLOW_UP),
            Arg("before", "str", required=False),
        ),
        doc="Move queued message `id` to `lane` (default: its own) and there before message "
        "`before` (default: at the end). `ok: false` as for `queue_edit`, or when `before` is "
        "not in that lane. Response carries `item` and `lane`.",
    ),
    Command(
        "pause every agent before its next model call or tool start; freeze running commands",
        pause,
        slash="pause",
        rpc="pause",
        args=(Arg("freeze", "bool", required=False, default=None),),
        doc="Close the process-wide pause gate: runs park before their next model call or tool "
        "start, and running tool commands and jobs are stopped (SIGSTOP; their time caps and the "
        "provider's idle timeout are suspended) unless `freeze` is false or config "
        "`pause_freeze = false`. Nothing is killed; a model stream in flight is read to its end. "
        'The paused state is saved with the session. Response carries `"changed"` and '
        '`"frozen"`.',
    ),
    Command(
        "open the pause gate and say how long it was closed",
        resume,
        slash="resume",
        rpc="resume",
        doc="Open the gate; frozen processes continue (SIGCONT) with the time they had left. "
        'Response carries `"changed"`.',
    ),
    Command("the queued messages with their ids", queue_list, slash="queue"),
    Command(
        "steer now: skip the calls of the running batch not yet started", steer_now, slash="now", args=(TEXT,)
    ),
    Command(
        "the next turn must call TOOL (no argument: pick one; off: drop it)",
        require,
        slash="require",
        rpc="require_tool",
        pick=pick_tool,
        args=(Arg("tool", metavar="TOOL"), Arg("reason", "str", required=False, metavar="reason")),
        doc="Soft requirement: the next turn must call `tool` (a reminder first, then up to "
        f'{MAX_ESCALATIONS} forced calls). `ok: false` for an unknown tool; `"tool": "off"` '
        "drops the requirement.",
    ),
    Command(
        "drop the tool requirement", clear_requirement, rpc="clear_requirement", doc="Drop the requirement."
    ),
    Command(
        "answer an approval request",
        approve,
        rpc="approve",
        args=(Arg("call_id"), Arg("decision", choices=("allow", "deny", "always"))),
        doc="Answer an `approval_request` event. `always` also saves an allow rule in "
        "`.owltui/permissions.toml`. `ok: false` if no such request is waiting.",
    ),
    *PLAN_COMMANDS,
    *MCP_ELICIT_COMMANDS,
    Command(
        "running, paused, queue, session, model, requirement, approvals, jobs, usage",
        get_state,
        rpc="get_state",
        doc="Response carries `running`, `paused`, `queue` `{steer: [...], follow_up: [...], "
        "aside: [...]}` (each item `{id, text, source}`, in delivery order), `session_id` (null "
        "with `--no-session`), `model`, and also `requirement` (tool or null), `approvals` "
        "(waiting call ids), `jobs` (running background job ids), `usage` (the session's "
        "`input_tokens`, `output_tokens`, `cache_read_tokens`, `cache_write_tokens`, `cost`) and "
        "`rounds` (model calls), `permission_mode` and `plans` (waiting plan call ids).",
    ),
    Command(
        "list the checkpoints",
        checkpoints,
        rpc="checkpoints",
        doc="Response carries `checkpoints`: `[{id, prompt, at, files}]`, one per user turn (the "
        "first prompt and each delivered follow-up), oldest first; `at` is ISO 8601 UTC, `files` "
        "how many paths changed between it and the next checkpoint (the newest: until now).",
    ),
    Command(
        "restore files and/or conversation to before a turn",
        rewind,
        rpc="rewind",
        args=(
            QID,
            Arg("files", "bool", required=False, default=True),
            Arg("conversation", "bool", required=False, default=True),
        ),
        doc="Restore the workspace's files (`files`, default true) and/or the conversation "
        "(`conversation`, default true) to just before checkpoint `id`'s turn; refused while a "
        "run is going. Response carries `restored` (the paths rewritten, recreated or deleted), "
        "`conversation`, and `unrestored` when some paths could not be put back (recorded by hash "
        'only). See "Checkpoints and rewind" below.',
    ),
    Command(
        "MCP servers: state and tools",
        mcp_status,
        rpc="mcp_status",
        doc="Carries `servers`: `[{name, state, tools, joining?, error?, file?, approve?}]`, or `[]`.",
    ),
    Command(
        "show or switch the model (no argument: pick one)",
        model,
        slash="model",
        pick=pick_model,
        args=(Arg("spec", metavar="PROVIDER:MODEL"),),
    ),
    Command(
        "set the permission mode: ask, edits, yolo or read-only (no argument: pick one)",
        permission_mode,
        slash="mode",
        rpc="set_permission_mode",
        pick=pick_mode,
        args=(Arg("mode", choices=MODES, metavar="MODE"),),
        doc="Set the permission mode from the next tool call on (a `permission_mode` event follows).",
    ),
    Command(
        "steering waits for the running batch, or skips its calls not yet started (no argument: pick)",
        steering,
        slash="steering",
        pick=pick_steering,
        args=(Arg("mode", choices=STEERING, metavar="batch|immediate"),),
    ),
    Command(
        "the saved sessions of this directory; ID: switch to one (no argument: pick one)",
        sessions,
        slash="sessions",
        pick=pick_session,
        args=(Arg("id", metavar="ID"),),
    ),
    Command(
        "start a fresh session (queued messages: keep or drop; asked when any are queued)",
        new,
        slash="new",
        pick=pick_new,
        args=(Arg("queue", choices=QUEUE_CHOICES, metavar="keep|drop"),),
    ),
    Command("summarize the conversation to free context", compact, slash="compact"),
    Command("write or update AGENTS.md from a look at the repository", init, slash="init"),
    Command("rewind the last turn's file changes", undo, slash="undo"),
    Command(
        "go back to before a prompt: files, conversation or both (no argument: pick one)",
        rewind_slash,
        slash="rewind",
        pick=pick_checkpoint,
        args=(
            Arg("id", metavar="ID"),
            Arg("what", required=False, choices=WHAT, metavar="files|conversation"),
        ),
    ),
    Command(
        "MCP servers, their state and tools; approve or decline this workspace's .mcp.json; log in or out",
        mcp,
        slash="mcp",
        args=(Arg("action", required=False, choices=MCP_ACTIONS, metavar="|".join(MCP_ACTIONS)), NAME),
    ),
    Command(
        "the hooks configured (file, event, matcher, command); approve or decline the project's hooks",
        hooks,
        slash="hooks",
        args=(Arg("action", required=False, choices=("approve", "decline"), metavar="approve|decline"),),
    ),
    Command("the skills found (SKILL.md folders), and which the model may use", skills_list, slash="skills"),
    Command(
        "use a skill: its instructions and ARGS become your message",
        skill,
        slash="skill",
        pick=pick_skill,
        args=(Arg("name", metavar="NAME"), Arg("args", "str", required=False, metavar="ARGS")),
    ),
    Command(
        "pick or set the theme (remembered)",
        theme,
        slash="theme",
        needs="themes",
        pick=pick_theme,
        args=(Arg("name", metavar="NAME"),),
    ),
    Command("keys and commands", help_, slash="help"),
    Command(
        "the slash commands offered here, custom ones included",
        get_commands,
        rpc="get_commands",
        doc="Response carries `commands`: `[{name, description, argument_hint?, source}]`, the slash "
        "commands in `/help`'s order; `source` is `builtin`, `project`, `user` (a custom command file: see "
        '"Custom commands" below) or `mcp` (an MCP prompt); these run as `prompt`, `"text": "/NAME args"`.',
    ),
    Command(
        "leave OwlTUI",
        quit_,
        slash="quit",
        rpc="quit",
        doc="Abort the current run, answer, and exit with status 0.",
    ),
)


def slash_commands(ctx: Context) -> list[Command]:
    """The slash commands this front end offers, in order."""
    offered = (*COMMANDS, *ctx.custom, *mcp_commands(ctx.host.mcp))  # MCP prompts once listed
    return [c for c in offered if c.slash is not None and c.offered_by(ctx.front)]


def rpc_commands() -> list[Command]:
    return [c for c in COMMANDS if c.rpc is not None]


INPUT_HELP = """\
Input:
  @PATH                           attach a file or a directory listing (@"name with spaces")
  @SERVER:URI                     attach a resource of a connected MCP server
  !COMMAND                        run a shell command; the model sees it with your next message
  //text, !!text                  send text starting with / or ! as a message"""


def help_text(ctx: Context) -> str:
    offered = slash_commands(ctx)
    mine = {id(c) for c in ctx.custom}
    custom = [c for c in offered if id(c) in mine]
    listed = help_lines([c for c in offered if id(c) not in mine and not isinstance(c, McpPromptCommand)])
    if custom:
        listed += "\n\n" + help_lines(custom, "Custom commands (.owltui/commands/, config dir commands/):")
    return listed + prompts_help(offered) + "\n\n" + INPUT_HELP
