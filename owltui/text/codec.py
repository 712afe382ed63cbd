"""Faithful text for the file tools: encodings, visible control characters, file names.

* ``sniff`` reads the head of a file and names its encoding: UTF-8 (a BOM is remembered and hidden),
  UTF-16 LE/BE with a BOM, or - for text that is not UTF-8 - Windows-1252 with the five bytes it leaves
  undefined read as Latin-1, a single-byte decoding that maps every byte to one character and back,
  so any file decodes and re-encodes byte for byte. A NUL byte in the head (without a UTF-16 BOM)
  means binary, as for ripgrep.
* ``visible`` shows the characters a terminal would hide or act on: C0 controls other than tab and
  newline as Unicode Control Pictures (``\\r`` -> ``␍``, form feed -> ``␌``, ESC -> ``␛``, DEL ->
  ``␡``), C1 controls, zero-width and bidirectional marks, line/paragraph separators and lone
  surrogates as ``\\uXXXX``, and bytes that are not UTF-8 as ``\\xNN``. Nothing is dropped.
* ``ViewMap`` lets ``edit`` find text given the way ``read`` showed it (``\\n`` for ``\\r\\n``, the
  visible forms above) and map the match back onto the file's own characters.
* ``show_name`` / ``name_candidates``: file names that are not UTF-8 (Python hands them over with
  surrogate escapes) are shown with ``\\xNN`` and accepted back in that form.
"""

from __future__ import annotations

import bisect
import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

HEAD_BYTES = 64 * 1024  # how much of a file decides its encoding (read and edit use the same head)

# --- a bijective single-byte decoding: cp1252, with its five undefined bytes as Latin-1 ----------------
_SINGLE_TABLE = "".join(bytes([b]).decode("cp1252", errors="ignore") or chr(b) for b in range(256))
_SINGLE_ENCODE = codecs.charmap_build(_SINGLE_TABLE)


class _SingleDecoder:
    def decode(self, data: bytes, final: bool = False) -> str:
        return codecs.charmap_decode(data, "strict", _SINGLE_TABLE)[0]


@dataclass(frozen=True)
class Encoding:
    """How a text file is stored. ``codec`` is the Python codec, ``errors`` the handler that makes
    decoding total and exact (surrogate escapes for stray bytes in UTF-8)."""

    codec: str
    bom: bytes = b""
    label: str = "UTF-8"

    @property
    def single_byte(self) -> bool:
        return self.codec == "cp1252+latin-1"

    @property
    def raw_bytes(self) -> bool:
        """Undecodable bytes are carried as surrogate escapes (shown as ``\\xNN``)."""
        return self.codec == "utf-8"

    @property
    def ascii_newlines(self) -> bool:
        """``b"\\n"`` in the bytes is exactly a newline (true for UTF-8 and single-byte text)."""
        return self.codec in ("utf-8", "cp1252+latin-1")

    @property
    def errors(self) -> str:
        return "surrogateescape" if self.codec == "utf-8" else "surrogatepass"

    def decoder(self) -> Any:
        if self.single_byte:
            return _SingleDecoder()
        return codecs.getincrementaldecoder(self.codec)(errors=self.errors)

    def decode(self, data: bytes) -> str:
        if self.single_byte:
            return codecs.charmap_decode(data, "strict", _SINGLE_TABLE)[0]
        return data.decode(self.codec, errors=self.errors)

    def encode(self, text: str) -> bytes:
        """Raises UnicodeEncodeError for text the encoding cannot hold."""
        if self.single_byte:
            return codecs.charmap_encode(text, "strict", _SINGLE_ENCODE)[0]
        return text.encode(self.codec, errors=self.errors)

    @property
    def plain(self) -> bool:
        return self.codec == "utf-8" and not self.bom


UTF8 = Encoding("utf-8")
UTF8_BOM = Encoding("utf-8", b"\xef\xbb\xbf", "UTF-8 with BOM")
UTF16_LE = Encoding("utf-16-le", b"\xff\xfe", "UTF-16 LE with BOM")
UTF16_BE = Encoding("utf-16-be", b"\xfe\xff", "UTF-16 BE with BOM")
SINGLE = Encoding("cp1252+latin-1", b"", "Windows-1252 (Latin-1)")


def _utf8_verdict(head: bytes, complete: bool) -> bool:
    """True when the head reads as UTF-8: valid (a character cut at the end of an incomplete head is
    fine), or valid multi-byte characters outnumber the stray bytes (UTF-8 with a few bad bytes)."""
    try:
        head.decode("utf-8")
        return True
    except UnicodeDecodeError as exc:
        if not complete and exc.start >= len(head) - 3 and exc.reason == "unexpected end of data":
            return True
    text = head.decode("utf-8", errors="surrogateescape")
    bad = sum(1 for ch in text if "\udc80" <= ch <= "\udcff")
    good = sum(1 for ch in text if ch > "\x7f" and not "\udc80" <= ch <= "\udcff")
    return good > bad


def sniff(head: bytes, complete: bool = False) -> Encoding | None:
    """The encoding of a file from its first bytes (``complete``: the whole file), None for binary."""
    if head.startswith(UTF8_BOM.bom):
        return UTF8_BOM
    if head.startswith(UTF16_LE.bom):
        return UTF16_LE
    if head.startswith(UTF16_BE.bom):
        return UTF16_BE
    if b"\0" in head:
        return None
    return UTF8 if _utf8_verdict(head, complete) else SINGLE


def line_ending(text: str) -> str:
    """The file's line-ending style: CRLF when most line ends are CRLF, else LF."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf >= text.count("\n") - crlf else "\n"


def follow_style(text: str, newline: str) -> str:
    """``text`` with its line ends (``\\n`` or ``\\r\\n``) in the given style."""
    text = text.replace("\r\n", "\n")
    return text.replace("\n", newline) if newline != "\n" else text


# --- visible characters ----------------------------------------------------------------------------
_FORMAT = "\u0080-\u009f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb"
_HIDDEN = re.compile(f"[\x00-\x08\x0b-\x1f\x7f{_FORMAT}\ud800-\udfff]")
_HIDDEN_NAME = re.compile(f"[\x00-\x1f\x7f{_FORMAT}\ud800-\udfff]")  # names: tab and newline too


def _show_char(ch: str, raw_bytes: bool) -> str:
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    if raw_bytes and 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


def visible(text: str, raw_bytes: bool = True) -> str:
    """Text with hidden and terminal-active characters in visible form (see the module doc).
    ``raw_bytes``: lone surrogates are escaped bytes (``\\xNN``), as from UTF-8 with surrogateescape."""
    if not _HIDDEN.search(text):
        return text
    return _HIDDEN.sub(lambda m: _show_char(m.group(), raw_bytes), text)


def show_name(name: str) -> str:
    """A file name or path for display: bytes that are not UTF-8 as ``\\xNN``, controls (tab and
    newline included) as Control Pictures. Never contains a surrogate."""
    if not _HIDDEN_NAME.search(name):
        return name
    return _HIDDEN_NAME.sub(lambda m: _show_char(m.group(), True), name)


_TOKEN = re.compile(r"\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|[\u2400-\u241f\u2421]")


def _token_char(token: str, raw_bytes: bool) -> str | None:
    if token.startswith("\\x"):
        return chr(0xDC00 + int(token[2:], 16)) if raw_bytes and int(token[2:], 16) >= 0x80 else None
    if token.startswith("\\u"):
        return chr(int(token[2:], 16))
    code = ord(token)
    return "\x7f" if code == 0x2421 else chr(code - 0x2400)


def unvisible(text: str, tokens: set[str] | None = None, raw_bytes: bool = True) -> str:
    """Undo ``visible``: visible forms back to the characters they stand for (only those in
    ``tokens`` when given)."""

    def back(m: re.Match[str]) -> str:
        token = m.group()
        if tokens is not None and token not in tokens:
            return token
        return _restore(token, _HIDDEN, raw_bytes)

    return _TOKEN.sub(back, text)


def _restore(token: str, hidden: re.Pattern[str], raw_bytes: bool) -> str:
    """The character a visible form stands for, or the token itself when it is not one."""
    ch = _token_char(token, raw_bytes)
    if ch is None or not hidden.fullmatch(ch) or _show_char(ch, raw_bytes) != token:
        return token
    return ch


def name_candidates(path: str) -> Iterator[str]:
    """``path`` as given, then with visible forms (``\\xNN``, Control Pictures) turned back into the
    bytes and characters ``show_name`` made them from."""
    yield path
    back = _TOKEN.sub(lambda m: _restore(m.group(), _HIDDEN_NAME, True), path)
    if back != path:
        yield back


class ViewMap:
    """The file text as ``read`` shows it (``\\r\\n`` as ``\\n``; with ``controls``, hidden characters
    in visible form) and a map from positions in that view back to positions in the text."""

    def __init__(self, text: str, controls: bool, raw_bytes: bool) -> None:
        pattern = re.compile(f"\r\n|{_HIDDEN.pattern}") if controls else re.compile("\r\n")
        parts: list[str] = []
        self._vstart: list[int] = []
        self._spans: list[tuple[int, int, int]] = []  # (orig start, view len, orig len)
        self.tokens: list[str] = []
        pos = vpos = 0
        for m in pattern.finditer(text):
            start, end = m.span()
            parts.append(text[pos:start])
            vpos += start - pos
            shown = "\n" if m.group() == "\r\n" else _show_char(m.group(), raw_bytes)
            self._vstart.append(vpos)
            self._spans.append((start, len(shown), end - start))
            self.tokens.append(shown)
            parts.append(shown)
            vpos += len(shown)
            pos = end
        parts.append(text[pos:])
        self.view = "".join(parts)

    def orig(self, v: int) -> int | None:
        """Position in the text for view position ``v``; None inside a multi-character form."""
        i = bisect.bisect_right(self._vstart, v) - 1
        if i < 0:
            return v
        vstart = self._vstart[i]
        ostart, vlen, olen = self._spans[i]
        if v == vstart:
            return ostart
        if v < vstart + vlen:
            return None
        return ostart + olen + (v - vstart - vlen)

    def tokens_in(self, vs: int, ve: int) -> set[str]:
        lo = bisect.bisect_left(self._vstart, vs)
        hi = bisect.bisect_left(self._vstart, ve)
        return {self.tokens[i] for i in range(lo, hi) if self.tokens[i] != "\n"}


def head_text(head: bytes, enc: Encoding) -> str:
    """The decodable part of a file's head (BOM left out, a cut UTF-16 unit dropped)."""
    body = head[len(enc.bom) :]
    if enc.codec.startswith("utf-16"):
        body = body[: len(body) // 2 * 2]
    return enc.decode(body)


def read_head(fh: BinaryIO, size: int = HEAD_BYTES) -> bytes:
    chunks: list[bytes] = []
    left = size
    while left > 0:
        data = fh.read(left)
        if not data:
            break
        chunks.append(data)
        left -= len(data)
    return b"".join(chunks)
