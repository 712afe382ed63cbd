from owltui.text.sanitize import StreamSanitizer, sanitize


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


def test_progress_frames_reduce_to_the_last_frame_at_any_size() -> None:
    """tqdm-style output: thousands of frames on one line (far more than the hold) come out as
    the last frame only, however the bytes are chunked."""
    frames = b"".join(b"\r%06d/300000 |#####     | %3d%%" % (i, i % 100) for i in range(20_000))
    data = b"start\n" + frames + b"\r\nnext line\n" + b"x" * 50 + b"\r" + b"y" * 10 + b"\n"
    for size in (1, 7, 4096, 65536, len(data)):
        s = StreamSanitizer(hold=8192)
        out = "".join(s.feed(data[i : i + size]) for i in range(0, len(data), size)) + s.close()
        assert out == "start\n019999/300000 |#####     |  99%\nnext line\n" + "y" * 10 + "\n"


def test_last_frame_keeps_what_sanitize_keeps() -> None:
    import random

    from owltui.text.sanitize import last_frame

    rng = random.Random(7)
    for _ in range(5000):
        line = "".join(rng.choice("ab\r") for _ in range(rng.randint(0, 10)))
        for rest in ("", "\n", "zz", "\r\nq", "\rq"):
            assert sanitize(last_frame(line) + rest) == sanitize(line + rest), (line, rest)
    assert last_frame("a\rbb\r") == "bb\r"  # the \r may be half of \r\n
    assert len(last_frame("x" * 100 + "\r" * 3)) == 101
