"""Permission modes and rules: which tool calls run freely, which ask the user, which are refused.

Modes: ``ask`` (default; reading is free, write/edit/bash ask), ``edits`` (writes and edits inside
the workspace are free too), ``yolo`` (``--yes``: everything runs, except what always asks, below)
``read-only`` (write, edit, bash refused; ``--yes`` cannot widen it) and ``plan`` (read-only until the
user accepts a plan the model presents with ``exit_plan``; every ``bash`` command is refused, since
nothing here proves a command reads only; ``owltui.session.plans``). Rules live in
``<workspace>/.owltui/permissions.toml``::

    [allow]
    bash = ["git status *", "pytest*"]
    write = ["src/**"]
    [deny]
    bash = ["rm -rf*"]
    read = [".env", "secrets/**"]

They are read once, when the policy is made, and again only when the user saves one ("always"):
a file a tool writes never changes the running policy.

**bash rules** are shell globs matched against each simple command of the parsed command line
(``owltui.policy.shell.parse``): its words after quote removal joined by spaces, NAME=value prefixes
and wrappers (``env``, ``command``, ``timeout``, ``xargs``, ``bash -c '…'``, ...) removed, e.g.
``FOO=1 \\git "status" -s`` is matched as ``git status -s``. A pattern ending in `` *`` also matches
the command with no further words (``"git status *"`` matches ``git status``). A command is allowed
by the rules only when every simple command in it is, and nothing in it runs code the text does
not show (command substitution, ``eval``, ``source``, a shell reading a pipe, ...) and no
redirection writes outside the workspace. Allow rules match a program given by a path only by that
path (``./ls`` is not ``ls``), except for the system directories.

**deny rules** win over everything, ``--yes`` included. A bash deny rule matches a simple command
anywhere in the tree by program name or path (``/usr/bin/touch``, ``\\touch``, ``"touch"``). When a
command could run a denied command without the text showing it (an expansion as the program, a
shell reading its input, a program that runs its arguments such as ``strace touch``), it asks,
even with ``--yes``; with nobody to ask it is refused. ``[deny] read`` patterns also apply to
``grep`` and ``find`` (denied files are left out of their results); they follow symlinks and hard
links, and a pattern without ``/`` matches that name at any depth.

**Protected configuration**: writing or editing ``.owltui/``, ``.git/config``, ``.git/hooks/`` or
the user config directory always asks, in every mode; with nobody to ask it is refused unless an
allow rule names the path exactly. A bash redirection into them asks in every mode too.

**The sandbox's writable roots** (``writable_roots``: the workspace, the temp dir,
``sandbox_writable``... as ``SandboxPolicy`` has them) bind the file tools as they bind commands: a
write or edit whose target (symlinks followed) lies outside them asks in every mode, ``--yes``
included, and with nobody to ask is refused unless an allow rule names the target exactly (a
read-only sandbox has no writable roots: every write asks). Without ``writable_roots`` (the sandbox
off) only the workspace matters, as below.

**A redirection is a write**: each file a command writes by redirection (``>``, ``>>``, ``2>``,
``&>``, ``>|``, ``N>``) or ``tee FILE`` is judged like a ``write`` of it: a write deny rule refuses,
protected configuration and targets outside the writable roots ask in every mode, a target inside
the workspace asks in ``ask`` mode unless an ``[allow] write`` rule covers it (an allow rule for the
command does not), and one elsewhere asks unless the mode is ``yolo``. ``/dev/null``,
``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N`` and the temp dir are always fine; ``2>&1`` and
input redirections write nothing.

**"always"** saves the rules ``proposed_rules(call)`` returns (shown by the approval before it is
answered): program + subcommand for bash (``git status *``, ``npm run test *``, ``pytest *``), the exact
command for destructive programs (``rm``, ``find``, ``git push``...), one rule per simple command, or
none when some part cannot be vouched for; the exact path for write/edit.

**apply_patch** is reviewed as a write of each path its patch names (added, deleted, updated, a
move's source and destination; ``permission_patch``): its own ``[allow]``/``[deny] apply_patch``
rules, protected configuration and the writable roots apply to each, and the strictest verdict wins.

Without a working sandbox (``sandbox_enforced`` False) every bash command asks, unless the sandbox
was set off explicitly (``sandbox_off``).

This module owns ``PermissionPolicy`` (a call's verdict, asking, saving "always" rules) and
re-exports the rest: ``permission_model`` (modes, answers, ``Review``), ``permission_rules`` (the
rules file, glob matching), ``permission_paths`` (protected configuration, ``[deny] read``),
``permission_bash`` (a command line against the rules), ``always_rules`` (what "always" saves) and
``permission_web`` (the hosts ``fetch`` may reach: ``[allow] fetch = ["docs.python.org"]``).
"""

from __future__ import annotations

import fnmatch
import logging
import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from owltui.agent.messages import ToolCall
from owltui.files.paths import is_inside
from owltui.policy.permissions.bash import WriteJudgement, review_bash
from owltui.policy.permissions.model import (
    EDIT_TOOLS,
    FREE_TOOLS,
    MODES,
    PLAN_REFUSAL,
    READ_TOOLS,
    Ask,
    Mode,
    Review,
)
from owltui.policy.permissions.patch import first_protected, review_patch
from owltui.policy.permissions.paths import PathGuard, default_config_dir
from owltui.policy.permissions.rules import (
    RULES_FILE,
    Rules,
    add_allow_rules,
    escape_glob,
    read_rules,
)
from owltui.policy.permissions.web import review_fetch

__all__ = ["PermissionPolicy"]

log = logging.getLogger(__name__)


class PermissionPolicy:
    """Decides each tool call: ``await check(call, read_only)`` is None to run it, else the refusal.

    ``review(call)`` gives the verdict without asking (what an approval should show), and
    ``proposed_rules(call)`` what an "always" answer would save."""

    def __init__(
        self,
        workspace: Path,
        mode: Mode | str = "ask",
        ask: Ask | None = None,
        *,
        sandbox_enforced: bool | Callable[[], bool] = True,
        sandbox_off: bool = False,
        config_dir: Path | None = None,
        writable_roots: Callable[[], Sequence[Path]] | None = None,
        protected: Sequence[Path] = (),
        network: bool = True,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown permission mode {mode!r}; expected one of {', '.join(MODES)}")
        self.workspace = workspace
        self.mode: str = mode
        self.before_plan: str = "ask" if mode == "plan" else mode  # what accepting a plan returns to
        self.ask = ask
        self.sandbox_enforced = sandbox_enforced
        self.sandbox_off = sandbox_off
        self.config_dir = config_dir if config_dir is not None else default_config_dir()
        self.paths = PathGuard(workspace, self.config_dir, protected)
        self.writable_roots = writable_roots
        self.network = network  # False: the sandbox keeps commands off the network, and fetch too
        self.temp_dir = Path(os.path.realpath(tempfile.gettempdir()))
        self.rules = self.load_rules()
        self.must_ask: dict[str, str] = {}  # call id -> why a question is wanted (a user's hook said so)

    # ---- rules ---------------------------------------------------------------------------
    @property
    def rules_path(self) -> Path:
        return self.workspace / RULES_FILE

    def load_rules(self) -> Rules:
        """Read the rules file (the policy calls this at start and after saving a rule only)."""
        return read_rules(self.rules_path)

    def save_rule(self, tool: str, pattern: str) -> None:
        self.save_rules(tool, [pattern])

    def save_rules(self, tool: str, patterns: Iterable[str]) -> None:
        """Add ``patterns`` to ``[allow] tool`` in the file (keeping whatever else it holds) and to
        the running policy."""
        patterns = list(patterns)
        if not add_allow_rules(self.rules_path, tool, patterns):
            return
        # The running policy gains exactly what the user approved: the file is not re-read, so
        # whatever a tool may have put into it meanwhile takes effect only at the next start.
        mine = self.rules.allow.setdefault(tool, [])
        mine.extend(p for p in patterns if p not in mine)

    # ---- sandbox ---------------------------------------------------------------------------
    def _sandboxed(self) -> bool:
        enforced = self.sandbox_enforced
        return bool(enforced() if callable(enforced) else enforced)

    # ---- paths -----------------------------------------------------------------------------
    def protected_reason(self, path: Path) -> str | None:
        """Why writing ``path`` needs an explicit approval (protected configuration), or None."""
        return self.paths.protected_reason(path)

    def outside_roots(self, path: Path) -> str | None:
        """Where writing ``path`` lands (symlinks followed) when that is outside the sandbox's
        writable roots; None when it is inside them or no roots are given."""
        if self.writable_roots is None:
            return None
        if any(is_inside(root, path) for root in self.writable_roots()):
            return None
        return os.path.realpath(path)

    def _names_exactly(self, allow: list[str], subject: str | None, path: Path, real: str) -> bool:
        """An allow rule names ``path`` exactly: the target itself (``real``), or the path as given
        when no symlink is on the way."""
        names = {real}
        if real == os.path.normpath(path):
            names |= {str(path)} | ({subject} if subject is not None else set())
        return any(p in names or p in {escape_glob(n) for n in names} for p in allow)

    def judge_redirect(self, place: Path) -> WriteJudgement | None:
        """A file a command writes (by redirection or ``tee``) judged like a ``write`` of it in the
        current mode; None when it may be written without asking."""
        shown = str(place)
        prot = self.protected_reason(place)
        if prot is not None:
            return WriteJudgement("force", f"writes {shown}: {prot}")
        forms = self.paths.path_forms(place)
        for pattern in self.rules.deny.get("write", []):
            if pattern == "*" or any(fnmatch.fnmatchcase(f, pattern) for f in forms):
                return WriteJudgement(
                    "refuse",
                    f"Refused: the deny rule write = {pattern!r} in {RULES_FILE} blocks writing {shown}.",
                )
        if is_inside(self.workspace, place):
            allow = self.rules.allow.get("write", [])
            if self.mode in ("yolo", "edits") or "*" in allow:
                return None
            if any(fnmatch.fnmatchcase(f, p) for f in forms for p in allow):
                return None
            return WriteJudgement(
                "write", f"writes {forms[0]}: a redirection is a write, and writes ask in {self.mode} mode"
            )
        if is_inside(self.temp_dir, place):
            return None
        real = self.outside_roots(place)
        if real is not None:
            return WriteJudgement("force", f"writes outside the sandbox's writable roots: {real}")
        if self.mode == "yolo":
            return None
        return WriteJudgement("ask", f"writes outside the workspace: {shown}")

    def read_denied(self, path: Path | str) -> str | None:
        """The refusal when ``[deny] read`` covers ``path`` (by name, through symlinks, or as a hard
        link of a denied file); None when it may be read. Also the ``read_filter`` service."""
        return self.paths.read_denied(path, self.rules.deny.get("read", []))

    # ---- the verdict -----------------------------------------------------------------------
    def proposed_rules(self, call: ToolCall) -> list[str]:
        """The allow rules (for ``call.name``) an "always" answer would save; empty when none."""
        return self.review(call).rules

    def review(self, call: ToolCall, read_only: bool | None = None) -> Review:
        """The verdict on ``call`` before asking anyone (see ``Review``); a call in ``must_ask`` (a
        user's PreToolUse hook answered ``ask``) that the rules would allow asks, in every mode."""
        verdict = self._review(call, read_only)
        why = self.must_ask.get(call.id)
        if why is not None and verdict.decision == "allow":
            return Review("ask", why, forced=True, notes=[why])
        return verdict

    def _review(self, call: ToolCall, read_only: bool | None) -> Review:
        name = call.name
        if name == "fetch":  # read-only, yet what it reaches is the user's choice (permission_web)
            return review_fetch(call.arguments.get("url"), self.rules, self.mode, network=self.network)
        free = (name in FREE_TOOLS) if read_only is None else (read_only or name in FREE_TOOLS)
        if self.mode in ("read-only", "plan") and (not free or name == "bash"):
            if self.mode == "plan":
                return Review("refuse", PLAN_REFUSAL.format(name=name))
            return Review("refuse", f"Refused: OwlTUI is in read-only mode, so {name} cannot run.")
        if name.startswith("mcp__"):
            return self._review_mcp(name, free)
        if name == "bash":
            command = call.arguments.get("command")
            if not isinstance(command, str):
                return Review("ask", "run bash", notes=["no command given"])
            return review_bash(
                command,
                workspace=self.workspace,
                rules=self.rules,
                mode=self.mode,
                judge_write=self.judge_redirect,
                unconfined=lambda: not self._sandboxed() and not self.sandbox_off,
            )
        if name == "apply_patch":  # one review per path the patch names
            return review_patch(call, lambda one: self._review_path(one, free))
        return self._review_path(call, free)

    def _protected_in_patch(self, call: ToolCall) -> str | None:
        return first_protected(call, lambda one: self._review_path(one, False))

    def _review_path(self, call: ToolCall, free: bool) -> Review:
        """The verdict on a call that names (at most) one path, ``call.arguments["path"]``."""
        name = call.name
        subject, outside, path = self.paths.target(call)
        forms = [subject] if subject is not None else []
        if path is not None:  # through symlinks too
            forms += [f for f in self.paths.path_forms(path) if f != subject]
        for pattern in self.rules.deny.get(name, []):
            if pattern == "*" or any(fnmatch.fnmatchcase(f, pattern) for f in forms):
                return Review(
                    "refuse", f"Refused: the deny rule {name} = {pattern!r} in {RULES_FILE} blocks this call."
                )
        if name in READ_TOOLS and path is not None:
            why = self.read_denied(path)
            if why is not None:
                return Review("refuse", why)
        allow = self.rules.allow.get(name, [])
        if name in EDIT_TOOLS and path is not None:
            prot = self.protected_reason(path)
            if prot is not None:
                exact = any(p == subject or p in (str(path), os.path.realpath(path)) for p in allow)
                if exact:
                    return Review("allow")
                return Review(
                    "ask",
                    f"{name} {subject}: {prot}",
                    forced=True,
                    protected=prot,
                    notes=[f"protected: {prot}"],
                )
        if name in EDIT_TOOLS and path is not None:
            real = self.outside_roots(path)
            if real is not None:
                if self._names_exactly(allow, subject, path, real):
                    return Review("allow")
                return Review(
                    "ask",
                    f"{name} {subject}: outside the sandbox's writable roots",
                    forced=True,
                    notes=[f"outside the sandbox's writable roots: {real}"],
                    rules=[escape_glob(real)],
                    outside_roots=real,
                )
        if free or self.mode == "yolo":
            return Review("allow")
        if outside:
            return Review("ask", f"{name} outside the workspace: {subject}", notes=["outside the workspace"])
        if "*" in allow or (subject is not None and any(fnmatch.fnmatchcase(subject, p) for p in allow)):
            return Review("allow")
        if self.mode == "edits" and name in EDIT_TOOLS:
            return Review("allow")
        rules = [escape_glob(subject)] if subject is not None and path is not None else ["*"]
        return Review("ask", f"{name} {subject}" if subject else f"run {name}", rules=rules)

    def _review_mcp(self, name: str, free: bool) -> Review:
        """MCP tools ask by default; ``[allow] mcp = ["SERVER/*", "SERVER/TOOL"]``, deny likewise."""
        from owltui.policy.permissions.mcp_names import proposed_rule, rule_subject, rule_verdict

        verdict = rule_verdict(name, self.rules.allow.get("mcp", []), self.rules.deny.get("mcp", []))
        if verdict == "deny":
            return Review(
                "refuse", f"Refused: a [deny] mcp rule in {RULES_FILE} blocks {rule_subject(name)}."
            )
        if verdict == "allow" or free or self.mode == "yolo":
            return Review("allow")
        return Review("ask", f"run {name}", rules=[proposed_rule(name) or "*"])

    async def check(self, call: ToolCall, read_only: bool) -> str | None:
        verdict = self.review(call, read_only)
        self.must_ask.pop(call.id, None)
        if verdict.decision == "allow":
            return None
        if verdict.decision == "refuse":
            return verdict.reason
        reason = verdict.reason
        if self.ask is None:
            return self._nobody_to_ask(call, verdict)
        answer = await self.ask(call, reason)
        if answer == "deny":
            return f"Refused: the user denied this call ({reason})."
        if answer == "always" and verdict.rules:
            try:
                self.save_rules("mcp" if call.name.startswith("mcp__") else call.name, verdict.rules)
            except OSError as exc:
                log.warning("could not save the permission rule: %s", exc)
        return None

    def _nobody_to_ask(self, call: ToolCall, verdict: Review) -> str:
        why = f" ({'; '.join(verdict.notes)})" if verdict.notes else ""
        if verdict.protected is not None:
            return (
                f"Refused: {verdict.reason} needs an explicit approval and nobody can approve it "
                f"here. To allow it anyway, name the path exactly in {RULES_FILE}, e.g. "
                f'[allow] {call.name} = ["{call.arguments.get("path") or self._protected_in_patch(call)}"].'
            )
        if verdict.outside_roots is not None:
            return (
                f"Refused: {verdict.reason} (it would write {verdict.outside_roots}, where commands "
                f"cannot write either) needs an explicit approval and nobody can approve it here. To "
                f"allow it anyway, name the path exactly in {RULES_FILE}, e.g. [allow] {call.name} = "
                f'["{verdict.rules[0] if verdict.rules else verdict.outside_roots}"].'
            )
        if verdict.forced:
            return (
                f"Refused: {call.name} needs approval even with --yes{why}, and nobody can approve it here."
            )
        example = verdict.rules[0] if verdict.rules else "*"
        return (
            f"Refused: {call.name} needs approval ({verdict.reason}){why} and nobody can approve "
            f"it here. Run with --yes, or allow it with a rule in {RULES_FILE}, e.g. "
            f'[allow] {call.name} = ["{example}"].'
        )
