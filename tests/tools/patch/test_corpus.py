"""The apply_patch corpus: each case is files before, a patch, and files after byte for byte (or the
refusal's words with every file untouched). Each cites the Codex ``apply-patch`` test or scenario it
mirrors (``codex-rs/apply-patch/src/lib.rs`` tests, ``tests/fixtures/scenarios/NNN_*``); where
OwlTUI deliberately differs (all-or-nothing, kept line ends and context bytes) the case says so."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from owltui.agent.cancel import CancelToken
from owltui.agent.tool import ToolContext, ToolError
from owltui.tools.patch.tool import ApplyPatchParams, ApplyPatchTool

pytestmark = pytest.mark.anyio


@dataclass
class Case:
    id: str
    before: dict[str, bytes]
    patch: str
    after: dict[str, bytes | None] = field(default_factory=dict)  # None: the file is gone
    error: tuple[str, ...] = ()  # words the refusal holds (then nothing changes)


def wrap(body: str) -> str:
    return f"*** Begin Patch\n{body}\n*** End Patch"


CASES = [
    # --- what Codex applies, applied the same way ----------------------------------------------
    Case(
        "codex_001_add_file",
        {},
        wrap("*** Add File: bar.md\n+This is a new file"),
        {"bar.md": b"This is a new file\n"},
    ),
    Case(
        "codex_002_multiple_operations",
        {"delete.txt": b"obsolete\n", "modify.txt": b"line1\nline2\n"},
        wrap(
            "*** Add File: nested/new.txt\n+created\n*** Delete File: delete.txt\n"
            "*** Update File: modify.txt\n@@\n-line2\n+changed"
        ),
        {"nested/new.txt": b"created\n", "delete.txt": None, "modify.txt": b"line1\nchanged\n"},
    ),
    Case(
        "codex_test_multiple_update_chunks_apply_to_single_file",
        {"multi.txt": b"foo\nbar\nbaz\nqux\n"},
        wrap("*** Update File: multi.txt\n@@\n foo\n-bar\n+BAR\n@@\n baz\n-qux\n+QUX"),
        {"multi.txt": b"foo\nBAR\nbaz\nQUX\n"},
    ),
    Case(
        "codex_test_update_file_hunk_interleaved_changes",
        {"interleaved.txt": b"a\nb\nc\nd\ne\nf\n"},
        wrap(
            "*** Update File: interleaved.txt\n@@\n a\n-b\n+B\n@@\n c\n d\n-e\n+E\n@@\n f\n+g\n*** End of File"
        ),
        {"interleaved.txt": b"a\nB\nc\nd\nE\nf\ng\n"},
    ),
    Case(
        "codex_004_move_to_new_directory",
        {"old/name.txt": b"old content\n", "old/other.txt": b"unrelated\n"},
        wrap(
            "*** Update File: old/name.txt\n*** Move to: renamed/dir/name.txt\n@@\n-old content\n+new content"
        ),
        {"old/name.txt": None, "renamed/dir/name.txt": b"new content\n", "old/other.txt": b"unrelated\n"},
    ),
    Case(
        "codex_010_move_overwrites_existing_destination",
        {"old/name.txt": b"from\n", "renamed/dir/name.txt": b"existing\n"},
        wrap("*** Update File: old/name.txt\n*** Move to: renamed/dir/name.txt\n@@\n-from\n+new"),
        {"old/name.txt": None, "renamed/dir/name.txt": b"new\n"},
    ),
    Case(
        "codex_011_add_overwrites_existing_file",
        {"duplicate.txt": b"old content\n"},
        wrap("*** Add File: duplicate.txt\n+new content"),
        {"duplicate.txt": b"new content\n"},
    ),
    Case(
        "codex_014_update_file_appends_trailing_newline",
        {"no_newline.txt": b"no newline at end"},
        wrap("*** Update File: no_newline.txt\n@@\n-no newline at end\n+first line\n+second line"),
        {"no_newline.txt": b"first line\nsecond line\n"},
    ),
    Case(
        "codex_test_pure_addition_chunk_followed_by_removal",
        {"panic.txt": b"line1\nline2\nline3\n"},
        wrap(
            "*** Update File: panic.txt\n@@\n+after-context\n+second-line\n@@\n line1\n-line2\n-line3\n+line2-replacement"
        ),
        {"panic.txt": b"line1\nline2-replacement\nafter-context\nsecond-line\n"},
    ),
    Case(
        "codex_018_whitespace_padded_patch_markers",
        {"file.txt": b"one\n"},
        " *** Begin Patch \n*** Update File: file.txt \n@@\n-one\n+two\n*** End Patch  ",
        {"file.txt": b"two\n"},
    ),
    Case(
        "codex_021_update_file_deletion_only",
        {"lines.txt": b"line1\nline2\nline3\n"},
        wrap("*** Update File: lines.txt\n@@\n line1\n-line2\n line3"),
        {"lines.txt": b"line1\nline3\n"},
    ),
    Case(
        "codex_022_update_file_end_of_file_marker",
        {"tail.txt": b"first\nsecond\n"},
        wrap("*** Update File: tail.txt\n@@\n-second\n+second updated\n*** End of File"),
        {"tail.txt": b"first\nsecond updated\n"},
    ),
    Case(
        "codex_change_context_picks_the_line_after_the_anchor",
        {"f.py": b"def a():\n    pass\ndef b():\n    pass\n"},
        wrap("*** Update File: f.py\n@@ def b():\n-    pass\n+    return 1"),
        {"f.py": b"def a():\n    pass\ndef b():\n    return 1\n"},
    ),
    Case(
        "codex_lenient_heredoc_wrapper",
        {"a.txt": b"x\n"},
        "<<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** End Patch\nEOF\n",
        {"a.txt": b"y\n"},
    ),
    # --- fuzzy context: seek_sequence's fallbacks ----------------------------------------------
    Case(
        "codex_test_update_line_with_unicode_dash",
        {"unicode.py": "import asyncio  # local import \u2013 avoids top\u2011level dep\n".encode()},
        wrap(
            "*** Update File: unicode.py\n@@\n-import asyncio  # local import - avoids top-level dep\n+import asyncio  # HELLO"
        ),
        {"unicode.py": b"import asyncio  # HELLO\n"},
    ),
    Case(
        # seek_sequence test_rstrip_match_ignores_trailing_whitespace; OwlTUI keeps the context
        # line's own bytes ("bar\t\t"), where Codex writes the patch's "bar"
        "codex_test_rstrip_match_ignores_trailing_whitespace",
        {"ws.txt": b"foo   \nbar\t\t\n"},
        wrap("*** Update File: ws.txt\n@@\n-foo\n+FOO\n bar"),
        {"ws.txt": b"FOO\nbar\t\t\n"},
    ),
    Case(
        "codex_test_trim_match_ignores_leading_and_trailing_whitespace",
        {"t.txt": b"    foo   \n   bar\t\n"},
        wrap("*** Update File: t.txt\n@@\n-foo\n-bar\n+baz"),
        {"t.txt": b"baz\n"},
    ),
    # --- encodings and line ends kept (OwlTUI's guarantees, beyond Codex's UTF-8-only reader) --
    Case(
        "crlf_file_keeps_crlf",
        {"win.txt": b"a\r\nb\r\nc\r\n"},
        wrap("*** Update File: win.txt\n@@\n a\n-b\n+B\n+B2\n c"),
        {"win.txt": b"a\r\nB\r\nB2\r\nc\r\n"},
    ),
    Case(
        "crlf_patch_text_on_lf_file",  # the model's patch arrives with CRLF line ends
        {"lf.txt": b"a\nb\n"},
        wrap("*** Update File: lf.txt\n@@\n-b\n+B").replace("\n", "\r\n"),
        {"lf.txt": b"a\nB\n"},
    ),
    Case(
        "mixed_line_ends_untouched_lines_keep_theirs",
        {"mix.txt": b"a\r\nb\nc\r\n"},
        wrap("*** Update File: mix.txt\n@@\n a\n b\n-c\n+C"),
        {"mix.txt": b"a\r\nb\nC\r\n"},
    ),
    Case(
        "utf8_bom_kept",
        {"bom.txt": b"\xef\xbb\xbfone\ntwo\n"},
        wrap("*** Update File: bom.txt\n@@\n one\n-two\n+zwei"),
        {"bom.txt": b"\xef\xbb\xbfone\nzwei\n"},
    ),
    Case(
        "utf16_bom_crlf_kept",
        {"u16.txt": "\ufeffalpha\r\nbeta\r\n".encode("utf-16-le")},
        wrap("*** Update File: u16.txt\n@@\n-beta\n+gamma"),
        {"u16.txt": "\ufeffalpha\r\ngamma\r\n".encode("utf-16-le")},
    ),
    Case(
        "latin1_file_stays_latin1",
        {"l1.txt": b"caf\xe9\nna\xefve\n"},
        wrap("*** Update File: l1.txt\n@@\n caf\u00e9\n-na\u00efve\n+ni\u00f1o"),
        {"l1.txt": b"caf\xe9\nni\xf1o\n"},
    ),
    Case(
        "stray_bytes_in_utf8_file_kept",
        {"raw.txt": "\u00e9\u00e9\n".encode() + b"bad \xff byte\nlast\n"},
        wrap("*** Update File: raw.txt\n@@\n-last\n+LAST"),
        {"raw.txt": "\u00e9\u00e9\n".encode() + b"bad \xff byte\nLAST\n"},
    ),
    Case(
        "context_as_read_shows_it_escape_and_stray_byte",  # as edit accepts: ␛ and \xNN
        {"v.txt": "caf\u00e9 na\u00efve\n".encode() + b"esc \x1b[31m red\nbad \xff byte\nnext\n"},
        wrap("*** Update File: v.txt\n@@\n esc \u241b[31m red\n-bad \\xff byte\n+good \\xff byte\n next"),
        {"v.txt": "caf\u00e9 na\u00efve\n".encode() + b"esc \x1b[31m red\ngood \xff byte\nnext\n"},
    ),
    Case(
        "visible_forms_the_file_lacks_stay_text",
        {"v.txt": b"tab\there\nx\n"},
        wrap("*** Update File: v.txt\n@@\n-x\n+literal \\x41 and \u241b"),
        {"v.txt": b"tab\there\nliteral \\x41 and \xe2\x90\x9b\n"},
    ),
    Case(
        "add_over_crlf_file_takes_its_style",  # as write does; Codex writes "\n" ends
        {"w.txt": b"old\r\n"},
        wrap("*** Add File: w.txt\n+new\n+lines"),
        {"w.txt": b"new\r\nlines\r\n"},
    ),
    Case(
        "blank_last_line_not_dropped",  # Codex's join drops one blank line at the end here
        {"b.txt": b"a\nb\n\n"},
        wrap("*** Update File: b.txt\n@@\n-a\n+A"),
        {"b.txt": b"A\nb\n\n"},
    ),
    # --- refused, nothing changed -------------------------------------------------------------
    Case(
        "codex_005_rejects_empty_patch",
        {"foo.txt": b"x\n"},
        "*** Begin Patch\n*** End Patch",
        error=("No files were modified",),
    ),
    Case(
        "codex_006_rejects_missing_context",
        {"modify.txt": b"line1\nline2\n"},
        wrap("*** Update File: modify.txt\n@@\n-missing\n+changed"),
        error=(
            "hunk 1 (*** Update File: modify.txt",
            "chunk 1",
            "failed to find the expected lines",
            "missing",
        ),
    ),
    Case(
        "codex_context_line_not_found",
        {"f.py": b"def a():\n    pass\n"},
        wrap("*** Update File: f.py\n@@ def nowhere():\n-    pass\n+    return"),
        error=("failed to find the context line '@@ def nowhere():'",),
    ),
    Case(
        "codex_007_rejects_missing_file_delete",
        {"foo.txt": b"stay\n"},
        wrap("*** Delete File: missing.txt"),
        error=("failed to delete missing.txt", "does not exist"),
    ),
    Case(
        "codex_008_rejects_empty_update_hunk",
        {"foo.txt": b"stay\n"},
        wrap("*** Update File: foo.txt"),
        error=("line 2", "Update file hunk for path 'foo.txt' is empty"),
    ),
    Case(
        "codex_009_requires_existing_file_for_update",
        {"foo.txt": b"stay\n"},
        wrap("*** Update File: missing.txt\n@@\n-old\n+new"),
        error=("missing.txt", "does not exist"),
    ),
    Case(
        "codex_012_delete_directory_fails",
        {"dir/foo.txt": b"stay\n"},
        wrap("*** Delete File: dir"),
        error=("dir", "is a directory"),
    ),
    Case(
        "codex_013_rejects_invalid_hunk_header",
        {"foo.txt": b"stay\n"},
        wrap("*** Frobnicate File: foo.txt"),
        error=("line 2", "is not a valid hunk header"),
    ),
    Case(
        "codex_missing_begin_marker",
        {"foo.txt": b"stay\n"},
        "*** Update File: foo.txt\n@@\n-stay\n+go\n*** End Patch",
        error=("The first line of the patch must be '*** Begin Patch'",),
    ),
    Case(
        # Codex's 015 leaves created.txt behind; OwlTUI applies all hunks or none
        "codex_015_failure_after_partial_success_changes_nothing",
        {"keep.txt": b"keep\n"},
        wrap("*** Add File: created.txt\n+hello\n*** Update File: missing.txt\n@@\n-old\n+new"),
        error=("hunk 2", "missing.txt"),
    ),
    Case(
        "second_file_fails_first_file_untouched",
        {"a.txt": b"a\n", "b.txt": b"b\n"},
        wrap("*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-zzz\n+B"),
        error=("hunk 2 (*** Update File: b.txt", "zzz"),
    ),
    Case(
        "eof_marker_requires_the_end",
        {"e.txt": b"x\ny\n"},
        wrap("*** Update File: e.txt\n@@\n-x\n+X\n*** End of File"),
        error=("at the end of the file",),
    ),
    Case(
        "latin1_cannot_hold_an_emoji",
        {"l1.txt": b"caf\xe9\n"},
        wrap("*** Update File: l1.txt\n@@\n-caf\u00e9\n+\U0001f600"),
        error=("cannot hold",),
    ),
    Case(
        "path_outside_workspace",
        {},
        wrap("*** Add File: ../escape.txt\n+x"),
        error=("outside the workspace",),
    ),
    Case(
        "move_outside_workspace",
        {"a.txt": b"a\n"},
        wrap("*** Update File: a.txt\n*** Move to: /tmp/owltui-escape.txt\n@@\n-a\n+b"),
        error=("outside the workspace",),
    ),
    Case(
        "binary_file_refused",
        {"bin.dat": b"\x00\x01\x02\n"},
        wrap("*** Update File: bin.dat\n@@\n-x\n+y"),
        error=("binary",),
    ),
]


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def escaped() -> bool:
    return os.path.exists("/tmp/owltui-escape.txt")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_corpus(case: Case, ws: Path) -> None:
    for name, data in case.before.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_bytes(data)
    before = snapshot(ws)
    ctx = ToolContext(workspace=ws, cancel=CancelToken())
    args = ApplyPatchParams(input=case.patch)
    if case.error:
        with pytest.raises(ToolError) as err:
            await ApplyPatchTool().run(args, ctx)
        for words in case.error:
            assert words in str(err.value), str(err.value)
        assert any(w in str(err.value) for w in ("Nothing was changed", "No files were modified"))
        assert "\n" not in str(err.value).split("\n")[0]
        assert snapshot(ws) == before, "a refused patch changed files"
        assert not escaped()
        return
    out = await ApplyPatchTool().run(args, ctx)
    assert out.content.startswith("Success. Updated the following files:")
    expected = {**before, **{k: v for k, v in case.after.items() if v is not None}}
    for gone in (k for k, v in case.after.items() if v is None):
        expected.pop(gone, None)
    assert snapshot(ws) == expected
