from owltui.tools.sanitize import StreamSanitizer, sanitize


def test_osc_title_removed() -> None:
    assert sanitize("a\x1b]0;x\x07b") == "ab"
    assert sanitize("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\") == "alink"


def test_csi_clear_screen_removed() -> None:
    assert sanitize("\x1b[2J\x1b[Hhello \x1b[1;31mred\x1b[0m") == "hello red"


def test_eight_bit_csi_and_c1_removed() -> None:
    assert sanitize("\x9b31mred\x9b0m") == "red"
    assert sanitize("x\x9dtitle\x07y\x85z") == "xyz"


def test_dcs_and_other_escapes_removed() -> None:
    assert sanitize("\x1bP1$r0m\x1b\\ok\x1b(B\x1b7\x1b=") == "ok"


def test_controls_removed_newline_and_tab_kept() -> None:
    assert sanitize("a\tb\nc\x07\x08\x00\x7fd") == "a\tb\ncd"


def test_carriage_returns_collapse_to_last_segment() -> None:
    assert sanitize("10%\r50%\r100%\ndone\n") == "100%\ndone\n"
    assert sanitize("line\r\nnext\r\n") == "line\nnext\n"
    assert sanitize("tail\r") == "tail"


def test_unterminated_sequence_dropped() -> None:
    assert sanitize("ok\x1b]0;never ends") == "ok"
    assert sanitize("ok\x1b[") == "ok"


def test_stream_sanitizer_handles_split_sequences_and_utf8() -> None:
    s = StreamSanitizer()
    data = "é \x1b]0;title\x07x\x1b[31mred\n".encode()
    out = "".join(s.feed(data[i : i + 1]) for i in range(len(data))) + s.close()
    assert out == "é xred\n"


def test_stream_sanitizer_flushes_long_lines() -> None:
    s = StreamSanitizer(hold=100)
    assert len(s.feed(b"x" * 500)) == 500
    assert s.close() == ""
