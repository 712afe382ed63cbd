"""Project instructions: ``AGENTS.md`` (else ``CLAUDE.md``) at the workspace root and the user's own
``AGENTS.md`` in the config directory go into the system prompt; an ``AGENTS.md`` in a subdirectory
is added to the conversation the first time the agent reads a file below it.

The system-prompt part is read once per session, so its bytes stay stable and the cached prefix
holds. Each file is capped (``MAX_CHARS``); a longer file is cut with a line saying so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from owltui.agent.hooks import Directive, ResultsHook
from owltui.agent.messages import ToolResult, UserMessage

if TYPE_CHECKING:
    from owltui.agent.state import RunState

ROOT_NAMES = ("AGENTS.md", "CLAUDE.md")  # the first that exists at the root is used
SUBDIR_NAME = "AGENTS.md"
MAX_CHARS = 32_000


def read_start(path: Path, max_chars: int = MAX_CHARS) -> str | None:
    """The start of a text file, enough for ``max_chars`` characters (its first ``max_chars * 4``
    bytes, decoded; the rest is never read); None when it is not a readable file."""
    try:
        if not path.is_file():
            return None
        with path.open("rb") as fh:
            return fh.read(max_chars * 4).decode("utf-8", errors="replace")
    except OSError:
        return None


def _read(path: Path) -> str | None:
    text = read_start(path)
    if text is None:
        return None
    text = text.strip()
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS] + f"\n[… cut at {MAX_CHARS} characters]"
    return text or None


def root_instructions(workspace: Path) -> tuple[Path, str] | None:
    for name in ROOT_NAMES:
        text = _read(workspace / name)
        if text is not None:
            return workspace / name, text
    return None


def instructions_text(workspace: Path, user_dir: Path | None) -> str:
    """The system-prompt section: the user's instructions, then the project's (later wins)."""
    parts: list[str] = []
    if user_dir is not None:
        text = _read(user_dir / SUBDIR_NAME)
        if text is not None:
            parts.append(f"## The user's instructions ({user_dir / SUBDIR_NAME})\n\n{text}")
    found = root_instructions(workspace)
    if found is not None:
        parts.append(f"## Project instructions ({found[0].name} at the repository root)\n\n{found[1]}")
    return "\n\n".join(parts)


@dataclass
class SubdirInstructions:
    """After a successful ``read``, add the ``AGENTS.md`` files between the read file and the root
    that the conversation has not seen yet (nearest last, so it reads as the most specific)."""

    workspace: Path
    seen: set[Path] = field(default_factory=set)

    def found_for(self, file: Path) -> list[Path]:
        try:
            file = (self.workspace / file).resolve() if not file.is_absolute() else file.resolve()
            rel = file.parent.relative_to(self.workspace)
        except (OSError, ValueError):
            return []
        out: list[Path] = []
        here = self.workspace
        for part in rel.parts:
            here = here / part
            candidate = here / SUBDIR_NAME
            if candidate not in self.seen and candidate.is_file():
                out.append(candidate)
        return out

    def messages(self, paths: Sequence[str]) -> list[UserMessage]:
        out: list[UserMessage] = []
        for raw in paths:
            for found in self.found_for(Path(raw)):
                self.seen.add(found)
                text = _read(found)
                if text is None:
                    continue
                rel = found.relative_to(self.workspace).as_posix()
                out.append(
                    UserMessage(
                        text=f"[instructions for {found.parent.relative_to(self.workspace)}/ "
                        f"from {rel}]\n{text}",
                        lane="notice",
                        source="instructions",
                    )
                )
        return out

    def hook(self, then: ResultsHook | None = None) -> ResultsHook:
        async def after_tools(state: RunState, results: list[ToolResult]) -> Directive | None:
            ok = {r.call_id for r in results if r.name == "read" and not r.is_error}
            calls = state.last_message.tool_calls if state.last_message is not None else []
            paths = [
                c.arguments["path"] for c in calls if c.id in ok and isinstance(c.arguments.get("path"), str)
            ]
            extra = self.messages(paths) if paths else []
            directive = await then(state, results) if then is not None else None
            if not extra:
                return directive
            directive = directive or Directive()
            directive.append = [*directive.append, *extra]
            return directive

        return after_tools
