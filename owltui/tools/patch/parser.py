"""V4A patch text -> hunks, as Codex's ``apply-patch`` parser reads it (lenient mode).

The grammar::

    start: begin_patch hunk+ end_patch
    begin_patch: "*** Begin Patch" LF
    end_patch: "*** End Patch" LF?
    hunk: add_hunk | delete_hunk | update_hunk
    add_hunk: "*** Add File: " filename LF add_line+
    delete_hunk: "*** Delete File: " filename LF
    update_hunk: "*** Update File: " filename LF change_move? change?
    change_move: "*** Move to: " filename LF
    change: (change_context | change_line)+ eof_line?
    change_context: ("@@" | "@@ " /(.+)/) LF
    change_line: ("+" | "-" | " ") /(.+)/ LF
    eof_line: "*** End of File" LF

Like Codex: markers may carry surrounding whitespace, a patch wrapped in a heredoc (``<<'EOF'`` ...
``EOF``) is unwrapped, the first chunk of an update may omit its ``@@`` line, an empty line in a
chunk is an empty context line, and blank lines between chunks are skipped. Errors name the line of
the patch they are on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE = "*** Move to: "
EOF_MARK = "*** End of File"
CONTEXT = "@@ "
EMPTY_CONTEXT = "@@"
HEREDOCS = ("<<EOF", "<<'EOF'", '<<"EOF"')


class PatchParseError(ValueError):
    """A patch that cannot be read; ``str()`` is the sentence the model reads."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.message = message
        self.line = line
        text = (
            f"Invalid patch: {message}" if line is None else f"Invalid patch hunk on line {line}: {message}"
        )
        super().__init__(text)


@dataclass(frozen=True)
class Chunk:
    """One ``@@`` section: ``old_lines`` (context and removed) become ``new_lines`` (context and
    added), after the ``context`` line if given; ``end_of_file``: they end the file."""

    context: str | None
    old_lines: tuple[str, ...]
    new_lines: tuple[str, ...]
    end_of_file: bool = False
    line: int = 0  # the chunk's first line in the patch


@dataclass(frozen=True)
class Hunk:
    """One file operation: ``kind`` is ``add``, ``delete`` or ``update``; ``line`` its header's line."""

    kind: str
    path: str
    line: int
    contents: str = ""  # add: the new file's text (lines end in "\n")
    move_to: str | None = None  # update: the new name
    chunks: tuple[Chunk, ...] = field(default_factory=tuple)

    @property
    def header(self) -> str:
        return {"add": ADD, "delete": DELETE, "update": UPDATE}[self.kind] + self.path

    def touched(self) -> list[str]:
        """The paths this hunk writes or removes, as written in the patch."""
        return [self.path, *([self.move_to] if self.move_to is not None else [])]


def patch_lines(text: str) -> list[str]:
    """The patch's lines as Codex splits them (the text trimmed, ``\\r\\n`` or ``\\n`` ends)."""
    lines = text.strip().split("\n")
    return [line.removesuffix("\r") for line in lines] if lines != [""] else []


def _check_bounds(lines: list[str]) -> None:
    first = lines[0].strip() if lines else None
    last = lines[-1].strip() if lines else None
    if first == BEGIN and last == END and len(lines) >= 2:
        return
    if first is not None and first != BEGIN:
        raise PatchParseError("The first line of the patch must be '*** Begin Patch'")
    raise PatchParseError("The last line of the patch must be '*** End Patch'")


def _body(lines: list[str]) -> list[str]:
    """The lines between the markers; a heredoc wrapper is taken off first if the markers need it."""
    try:
        _check_bounds(lines)
        return lines[1:-1]
    except PatchParseError as strict:
        if len(lines) >= 4 and lines[0] in HEREDOCS and lines[-1].endswith("EOF"):
            inner = lines[1:-1]
            _check_bounds(inner)
            return inner[1:-1]
        raise strict from None


def parse_patch(text: str) -> list[Hunk]:
    """The hunks of ``text``, in order; PatchParseError when it is not a patch."""
    body = _body(patch_lines(text))
    hunks: list[Hunk] = []
    pos = 0
    while pos < len(body):
        hunk, used = _hunk(body, pos, pos + 2)
        hunks.append(hunk)
        pos += used
    return hunks


def _hunk(lines: list[str], start: int, number: int) -> tuple[Hunk, int]:
    first = lines[start].strip()
    if first.startswith(ADD):
        contents: list[str] = []
        used = 1
        for line in lines[start + 1 :]:
            if not line.startswith("+"):
                break
            contents.append(line[1:] + "\n")
            used += 1
        return Hunk("add", first[len(ADD) :], number, contents="".join(contents)), used
    if first.startswith(DELETE):
        return Hunk("delete", first[len(DELETE) :], number), 1
    if first.startswith(UPDATE):
        path = first[len(UPDATE) :]
        used = 1
        move_to: str | None = None
        if start + 1 < len(lines) and lines[start + 1].startswith(MOVE):
            move_to = lines[start + 1][len(MOVE) :]
            used += 1
        chunks: list[Chunk] = []
        while start + used < len(lines):
            line = lines[start + used]
            if not line.strip():
                used += 1
                continue
            if line.startswith("*"):
                break
            chunk, n = _chunk(lines, start + used, number + used, not chunks)
            chunks.append(chunk)
            used += n
        if not chunks:
            raise PatchParseError(f"Update file hunk for path '{path}' is empty", number)
        return Hunk("update", path, number, move_to=move_to, chunks=tuple(chunks)), used
    raise PatchParseError(
        f"'{first}' is not a valid hunk header. Valid hunk headers: '*** Add File: {{path}}', "
        "'*** Delete File: {path}', '*** Update File: {path}'",
        number,
    )


def _chunk(lines: list[str], start: int, number: int, first: bool) -> tuple[Chunk, int]:
    head = lines[start]
    context: str | None = None
    skip = 1
    if head == EMPTY_CONTEXT:
        pass
    elif head.startswith(CONTEXT):
        context = head[len(CONTEXT) :]
    elif first:
        skip = 0
    else:
        raise PatchParseError(
            f"Expected update hunk to start with a @@ context marker, got: '{head}'", number
        )
    if start + skip >= len(lines):
        raise PatchParseError("Update hunk does not contain any lines", number + 1)
    old: list[str] = []
    new: list[str] = []
    eof = False
    parsed = 0
    for line in lines[start + skip :]:
        if line == EOF_MARK:
            if parsed == 0:
                raise PatchParseError("Update hunk does not contain any lines", number + 1)
            eof = True
            parsed += 1
            break
        mark = line[:1]
        if mark == "":
            old.append("")
            new.append("")
        elif mark == " ":
            old.append(line[1:])
            new.append(line[1:])
        elif mark == "+":
            new.append(line[1:])
        elif mark == "-":
            old.append(line[1:])
        else:
            if parsed == 0:
                raise PatchParseError(
                    f"Unexpected line found in update hunk: '{line}'. Every line should start with ' ' "
                    "(context line), '+' (added line), or '-' (removed line)",
                    number + 1,
                )
            break
        parsed += 1
    return Chunk(context, tuple(old), tuple(new), eof, number), parsed + skip
