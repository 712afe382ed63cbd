"""The bash half of the permission policy: a command line reviewed against the rules.

``review_bash`` parses the command (``shell_parse.analyze``) and decides: a matching deny rule
refuses; a possible denied command, a write into protected configuration or a missing sandbox
asks whatever the mode; otherwise every simple command must match an allow rule and nothing may
hide code. Each file the command writes (a redirection or ``tee FILE``; ``cd`` followed statically)
is judged like a ``write`` of it by the policy's ``judge_write`` (``WriteJudgement``), so an allow
rule for the command never approves a write it does not name.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from owltui.files.paths import is_inside
from owltui.policy.permissions.always import proposed_bash
from owltui.policy.permissions.model import Review
from owltui.policy.permissions.rules import (
    RULES_FILE,
    Rules,
    could_match,
    rule_matches,
    static_prefix,
    subjects,
)
from owltui.policy.shell.model import Analysis, Command, Word
from owltui.policy.shell.parse import analyze

SAFE_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero"})
TEE_FLAGS = frozenset({"-a", "--append", "-i", "--ignore-interrupts", "-p"})


@dataclass(frozen=True)
class WriteJudgement:
    """A written file judged like a ``write`` of it: ``refuse`` (``note`` is the refusal), ``force``
    (asks in every mode), ``ask`` (asks; "always" saves no rule for the command) or ``write`` (asks;
    an "always" rule for the command may still be saved, the write asks again next time)."""

    kind: Literal["refuse", "force", "ask", "write"]
    note: str


def _first_match(patterns: list[str], cmd: Command, for_deny: bool) -> str | None:
    """The first of ``patterns`` that matches ``cmd`` (its ``subjects`` for allow or deny rules)."""
    forms = subjects(cmd, for_deny)
    return next((p for p in patterns if any(rule_matches(p, s) for s in forms)), None)


def allowed(rules: Rules, cmd: Command) -> str | None:
    """The allow rule that matches ``cmd``, if any."""
    return _first_match(rules.allow.get("bash", []), cmd, for_deny=False)


def _cwds(workspace: Path, a: Analysis) -> set[Path] | None:
    """The directories the commands may run in (``cd`` followed statically); None: unknown."""
    cwds: set[Path] = {workspace}
    for target in a.cwds:
        if target is None or not target.static:
            return None
        dest = os.path.expanduser(target.value)
        cwds |= {Path(os.path.normpath(c / dest)) for c in cwds}
    return cwds


def tee_files(cmd: Command) -> Iterator[Word]:
    """The files ``tee`` writes (its operands; no option of tee takes a separate argument)."""
    if cmd.program != "tee":
        return
    options = True
    for word in cmd.words[1:]:
        if options and word.static and word.value == "--":
            options = False
        elif options and word.static and (word.value in TEE_FLAGS or word.value.startswith("--output-error")):
            continue
        else:
            yield word


@dataclass
class WriteProblems:
    """What the files a command writes need: ``refusal`` (a write deny rule), ``forced`` (ask in
    every mode), ``outside`` (ask; no "always" rule), ``writes`` (ask in this mode)."""

    refusal: str | None = None
    forced: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)


def redirect_problems(
    workspace: Path, a: Analysis, judge_write: Callable[[Path], WriteJudgement | None]
) -> WriteProblems:
    """The files ``a`` writes by redirection or ``tee``, each judged like a ``write`` of it."""
    outside: list[str] = []
    protected: list[str] = []
    writes: list[str] = []
    refusal: str | None = None
    cwds = _cwds(workspace, a)
    moved = cwds is None or any(not is_inside(workspace, c) for c in cwds)
    for cmd in a.commands:
        prog = cmd.words[0].value if cmd.words else ""
        if moved and cmd.needs_allow and "/" in prog and not os.path.isabs(os.path.expanduser(prog)):
            outside.append(f"runs {prog} after changing to a directory outside the workspace")
    written = list(a.writes) + [w for cmd in a.commands for w in tee_files(cmd)]
    for w in written:
        if not w.static:
            outside.append(f"writes to a file named by an expansion ({w.value})")
            continue
        value = os.path.expanduser(w.value)
        if value in SAFE_DEVICES or value.startswith("/dev/fd/"):
            continue
        if os.path.isabs(value):
            places = [Path(os.path.normpath(value))]
        elif cwds is None:
            outside.append(f"writes {w.value} after changing to a directory not known in advance")
            continue
        else:
            places = [Path(os.path.normpath(c / value)) for c in cwds]
        for place in places:
            judged = judge_write(place)
            if judged is None:
                continue
            if judged.kind == "refuse":
                refusal = refusal or judged.note
            else:
                {"force": protected, "ask": outside, "write": writes}[judged.kind].append(judged.note)
            break
    return WriteProblems(refusal, protected, outside, writes)


def deny_bash(rules: Rules, a: Analysis) -> tuple[str | None, list[str]]:
    """(the refusal from a matching deny rule, reasons a deny rule might match unseen)."""
    patterns = rules.deny.get("bash", [])
    if not patterns:
        return None, []
    if "*" in patterns:
        return f"Refused: the deny rule bash = '*' in {RULES_FILE} blocks this call.", []
    for cmd in a.commands:
        pattern = _first_match(patterns, cmd, for_deny=True)
        if pattern is not None:
            return f"Refused: the deny rule bash = {pattern!r} in {RULES_FILE} blocks `{cmd.text}`.", []
    doubts = list(a.opaque)
    if a.error and a.error not in doubts:
        doubts.append(a.error)
    for cmd in a.commands:
        prefixes = static_prefix(cmd)
        if prefixes is None:
            continue
        hit = next((p for p in patterns for pre in prefixes if could_match(p, pre)), None)
        if hit is not None:
            doubts.append(f"`{cmd.text}` may expand to a command the deny rule {hit!r} blocks")
    for cmd in a.possible:
        pattern = _first_match(patterns, cmd, for_deny=True)
        if pattern is not None:
            doubts.append(f"may run `{cmd.text}`, which the deny rule {pattern!r} blocks")
    return None, list(dict.fromkeys(doubts))


def review_bash(
    command: str,
    *,
    workspace: Path,
    rules: Rules,
    mode: str,
    judge_write: Callable[[Path], WriteJudgement | None],
    unconfined: Callable[[], bool],
) -> Review:
    """The verdict on running ``command``. ``unconfined()``: the command would run without a
    sandbox although the user did not turn it off (then it always asks)."""
    a = analyze(command)
    refusal, doubts = deny_bash(rules, a)
    if refusal is not None:
        return Review("refuse", refusal)
    problems = redirect_problems(workspace, a, judge_write)
    if problems.refusal is not None:
        return Review("refuse", problems.refusal)
    outside, protected = problems.outside, problems.forced
    forced = doubts + protected
    if unconfined():
        forced.append("the sandbox is not available here, so the command would run unconfined")
    proposal = proposed_bash(a, outside + protected, lambda c: allowed(rules, c))
    reason = f"run `{command}`"
    if forced:
        notes = list(dict.fromkeys(forced + outside + a.unsafe))
        return Review("ask", reason, forced=True, notes=notes, rules=proposal)
    if mode == "yolo":
        return Review("allow")
    notes = list(outside) + [n for n in problems.writes if n not in outside]
    if a.error:
        notes.append(a.error)
    notes += [u for u in a.unsafe if u not in notes]
    must = [c for c in a.commands if c.needs_allow]
    unmatched = [c for c in must if allowed(rules, c) is None]
    if not notes and must and not unmatched:
        return Review("allow")
    if not must and not notes:
        notes.append("nothing in it is covered by an allow rule")
    notes += [f"no allow rule matches `{c.text}`" for c in unmatched]
    return Review("ask", reason, notes=notes, rules=proposal)
