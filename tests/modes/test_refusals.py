"""The rule print mode's exit 3 follows: which refusals stand at the end of a run, which are made
good, and that skipped calls get a line without counting."""

from __future__ import annotations

from typing import Any

from owltui.agent.events import MessageEnd, ToolEnd, WireToolCall
from owltui.modes.refusals import RefusalLog, refusal_line, refusal_summary


class _Run:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.log = RefusalLog(self.lines.append)
        self._n = 0

    def call(
        self, name: str, args: dict[str, Any], status: str, output: str = "", agent: str | None = None
    ) -> None:
        self._n += 1
        cid = f"c{self._n}"
        self.log(
            MessageEnd(
                text="",
                thinking="",
                tool_calls=[WireToolCall(id=cid, name=name, arguments=args)],
                stop_reason="tool_use",
                usage={},
                agent=agent,
            )
        )
        self.log(
            ToolEnd(
                call_id=cid, name=name, is_error=status != "ok", output=output, status=status, agent=agent
            )
        )


def test_a_later_success_on_the_same_target_makes_a_refusal_good() -> None:
    run = _Run()
    run.call("bash", {"command": "make test"}, "refused", "Refused: bash needs approval.")
    run.call("edit", {"path": "a.py", "old_text": "1", "new_text": "2"}, "refused", "Refused: no.")
    assert run.log.standing == 2
    run.call("bash", {"command": "make test"}, "ok", "passed")
    assert run.log.standing == 1  # the edit still stands: a different tool and target
    run.call("edit", {"path": "a.py", "old_text": "x", "new_text": "y"}, "ok")
    assert run.log.standing == 0
    assert len(run.lines) == 2


def test_an_earlier_success_makes_good_only_the_same_call() -> None:
    run = _Run()
    run.call("edit", {"path": "a.py", "old_text": "1", "new_text": "2"}, "ok")
    run.call("edit", {"path": "a.py", "old_text": "1", "new_text": "2"}, "refused", "Refused: a repeat.")
    assert run.log.standing == 0  # the very same call had run
    run.call("edit", {"path": "a.py", "old_text": "2", "new_text": "3"}, "refused", "Refused: no.")
    assert run.log.standing == 1  # a different change to the same file: not done


def test_skipped_calls_are_said_but_do_not_count_and_subagents_are_named() -> None:
    run = _Run()
    run.call("read", {"path": "b.txt"}, "skipped", "Not executed: the run ended.")
    run.call("bash", {"command": "ls"}, "refused", "Refused: read-only mode.", agent="explorer")
    run.call("bash", {"command": "ls"}, "error", "exit 1")
    assert run.lines == [
        "owltui: skipped read (b.txt): the run ended.",
        "owltui: refused bash (ls) [subagent explorer]: read-only mode.",
    ]
    assert run.log.standing == 1


def test_a_line_is_one_line_and_sanitized() -> None:
    line = refusal_line(
        "refused", "bash", {"command": "rm -rf /\n\x1b[2Jx" + "y" * 200}, "Refused:\nbad\x07", None
    )
    assert "\n" not in line and "\x1b" not in line and "\x07" not in line
    assert line.startswith("owltui: refused bash (rm -rf / x") and line.endswith(": bad")
    assert (
        refusal_summary(2) == "owltui: 2 calls were refused; the answer may describe work that was not done"
    )
