"""The ``apply_patch`` tool: a V4A patch (Codex's format) applied with ``edit``'s guarantees.

Every path a patch touches (added, deleted, updated, a move's source and destination) is resolved
inside the workspace or the call is refused; the permission policy reviews each of them as a write
(``owltui.policy.permissions.patch``). The whole patch is worked out in memory first, hunk after
hunk (a later hunk sees what an earlier one did to the same file), and nothing is written unless
every hunk applies; then each file is written atomically (``put_file``, as ``edit`` writes). A file
keeps its encoding, BOM and line ends (``owltui.text.codec``, the way ``edit`` and ``write`` keep
them); an added file over an existing one is written as ``write`` would write it; new files are
UTF-8.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

import anyio
from pydantic import Field

from owltui.agent.tool import ToolContext, ToolError, ToolOutput, in_thread
from owltui.files.paths import is_inside
from owltui.text.codec import HEAD_BYTES, Encoding, follow_style, line_ending
from owltui.tools.base import Params, display_path, resolve_path
from owltui.tools.files.paging import open_text
from owltui.tools.files.put import put_file
from owltui.tools.files.tools import MAX_EDIT_BYTES, _encode, _existing_style, _git_watch, _planted
from owltui.tools.patch.apply import PatchApplyError, apply_chunks, where
from owltui.tools.patch.parser import Hunk, PatchParseError, parse_patch


class ApplyPatchParams(Params):
    input: str = Field(description="The entire patch, from '*** Begin Patch' to '*** End Patch'.")


@dataclass
class _Text:
    text: str
    enc: Encoding


@dataclass
class _Plan:
    """What the patch leaves: each touched path's new text, or None when it is removed."""

    workspace: Path
    files: dict[Path, _Text | None]
    added: list[str]
    modified: list[str]
    deleted: list[str]

    def shown(self, path: Path) -> str:
        return display_path(self.workspace, path)

    def exists(self, path: Path) -> bool:
        if path in self.files:
            return self.files[path] is not None
        return os.path.lexists(path) and os.path.exists(path)

    def current(self, path: Path, label: str) -> _Text:
        """The text of ``path`` as earlier hunks left it, else read from disk."""
        if path in self.files:
            got = self.files[path]
            if got is None:
                raise ToolError(f"{label}: {self.shown(path)} was deleted by an earlier hunk.")
            return got
        shown = self.shown(path)
        if os.path.isdir(path):
            raise ToolError(f"{label}: {shown} is a directory.")
        if not os.path.exists(path):
            raise ToolError(f"{label}: failed to read {shown}: the file does not exist.")
        fd, enc, _head, size = open_text(path, shown, "apply_patch changes text files only.")
        with os.fdopen(fd, "rb") as fh:
            if size > MAX_EDIT_BYTES:
                raise ToolError(f"{label}: {shown} is {size} bytes; apply_patch changes files up to 64 MB.")
            raw = fh.read()
        try:
            text = enc.decode(raw[len(enc.bom) :])
        except UnicodeDecodeError as exc:
            raise ToolError(
                f"{label}: {shown} is not valid {enc.label}; it cannot be changed safely."
            ) from exc
        return _Text(text, enc)

    def style_of(self, path: Path) -> tuple[Encoding | None, str | None]:
        """Encoding and line-ending style an added file takes over from the file it replaces."""
        if path in self.files:
            got = self.files[path]
            if got is None:
                return None, None
            return got.enc, (line_ending(got.text[:HEAD_BYTES]) if "\n" in got.text else None)
        return _existing_style(path, self.shown(path))


def _resolve(hunks: list[Hunk], workspace: Path) -> list[tuple[Hunk, Path, Path | None]]:
    out: list[tuple[Hunk, Path, Path | None]] = []
    for index, hunk in enumerate(hunks, 1):
        paths: list[Path] = []
        for given in hunk.touched():
            path = resolve_path(workspace, given)
            if not is_inside(workspace, path):
                raise ToolError(
                    f"{where(hunk, index)}: {display_path(workspace, path)} is outside the workspace; "
                    "apply_patch changes files inside it only. Nothing was changed."
                )
            paths.append(path)
        out.append((hunk, paths[0], paths[1] if len(paths) > 1 else None))
    return out


def plan_patch(hunks: list[Hunk], workspace: Path) -> _Plan:
    """The patch worked out in memory, hunk after hunk; ToolError naming the hunk when one fails."""
    plan = _Plan(workspace, {}, [], [], [])
    for index, (hunk, path, dest) in enumerate(_resolve(hunks, workspace), 1):
        label = where(hunk, index)
        shown = plan.shown(path)
        if hunk.kind == "add":
            if os.path.isdir(path) and path not in plan.files:
                raise ToolError(f"{label}: {shown} is a directory.")
            enc, newline = plan.style_of(path)
            content = follow_style(hunk.contents, newline) if newline is not None else hunk.contents
            plan.files[path] = _Text(content, enc or Encoding("utf-8"))
            plan.added.append(shown)
        elif hunk.kind == "delete":
            if path not in plan.files and os.path.isdir(path):
                raise ToolError(f"{label}: failed to delete {shown}: it is a directory.")
            if not plan.exists(path):
                raise ToolError(f"{label}: failed to delete {shown}: the file does not exist.")
            plan.files[path] = None
            plan.deleted.append(shown)
        else:
            old = plan.current(path, label)
            newline = line_ending(old.text[:HEAD_BYTES])
            try:
                text = apply_chunks(
                    old.text,
                    hunk.chunks,
                    newline=newline,
                    where=label,
                    name=shown,
                    raw_bytes=old.enc.raw_bytes,
                )
            except PatchApplyError as exc:
                raise ToolError(str(exc)) from None
            target = dest if dest is not None else path
            if dest is not None and dest != path:
                if os.path.isdir(dest) and dest not in plan.files:
                    raise ToolError(f"{label}: cannot move to {plan.shown(dest)}: it is a directory.")
                plan.files[path] = None
            plan.files[target] = _Text(text, old.enc)
            plan.modified.append(plan.shown(target))
    return plan


def encode_plan(plan: _Plan) -> dict[Path, bytes | None]:
    """Every new text encoded (None: the file goes); an encoding that cannot hold a character is a
    ToolError before anything is written."""
    data: dict[Path, bytes | None] = {}
    for path, got in plan.files.items():
        data[path] = None if got is None else got.enc.bom + _encode(got.text, got.enc, plan.shown(path))
    return data


def _remove(path: Path) -> None:
    if os.path.lexists(path):
        os.unlink(path)


async def write_plan(ctx: ToolContext, plan: _Plan, data: dict[Path, bytes | None]) -> None:
    """Each file written atomically (``put_file``: through the session's editor when it has one),
    each deleted one removed."""
    for path, raw in data.items():
        try:
            if raw is not None:
                await put_file(ctx, path, raw)
            else:
                await anyio.to_thread.run_sync(_remove, path)
        except OSError as exc:
            raise ToolError(f"Cannot write {plan.shown(path)}: {exc.strerror}") from exc


class ApplyPatchTool:
    name = "apply_patch"
    description = (
        "Change files with a patch: '*** Begin Patch', then per file '*** Add File: PATH' (lines with +), "
        "'*** Delete File: PATH' or '*** Update File: PATH' (optionally '*** Move to: NEW'), each change "
        "as '@@ [a line above it, e.g. def f():]' and lines prefixed ' ' (context, 3 above and below), "
        "'-' (remove) or '+' (add); '*** End of File' after a change that ends the file; then "
        "'*** End Patch'. Paths are relative to the workspace. All hunks apply or nothing changes. Files "
        "keep their encoding and line ends."
    )
    params = ApplyPatchParams
    read_only = False

    async def run(self, args: ApplyPatchParams, ctx: ToolContext) -> ToolOutput:
        try:
            hunks = parse_patch(args.input)
        except PatchParseError as exc:
            raise ToolError(f"{exc}. Nothing was changed.") from None
        if not hunks:
            raise ToolError("No files were modified: the patch has no hunks.")
        workspace = ctx.workspace
        _resolve(hunks, workspace)  # outside the workspace: refused before any file is read
        git = await anyio.to_thread.run_sync(_git_watch, ctx)

        def work(stop: threading.Event) -> tuple[_Plan, dict[Path, bytes | None]]:
            try:
                plan = plan_patch(hunks, workspace)
                return plan, encode_plan(plan)
            except ToolError as exc:
                raise ToolError(f"{exc}\nNothing was changed.") from None

        plan, data = await in_thread(work, ctx)
        await write_plan(ctx, plan, data)
        planted = await anyio.to_thread.run_sync(_planted, git)
        rows = (
            [f"A {p}" for p in plan.added]
            + [f"M {p}" for p in plan.modified]
            + [f"D {p}" for p in plan.deleted]
        )
        return ToolOutput(
            "Success. Updated the following files:\n" + "\n".join(rows) + planted,
            details={"added": plan.added, "modified": plan.modified, "deleted": plan.deleted},
        )
