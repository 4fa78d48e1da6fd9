"""The one terminal sanitiser and the one list of invisible characters."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from memgit.format import entries as fmt
from memgit.safe_text import INVISIBLE_RANGES, is_invisible, printable


def test_printable_escapes_terminal_controls_and_invisible_characters() -> None:
    assert printable("a\x1b[31mb\x07c\x9bd") == "a\\x1b[31mb\\x07c\\x9bd"
    assert printable("x\u202ey\u200bz\u2028") == "x\\u202ey\\u200bz\\u2028"
    assert printable("caf\udce9") == "caf\\xe9"
    assert printable("Zoë naïve 日本") == "Zoë naïve 日本"
    assert printable("x" * 10, 6) == "xxx..."
    assert printable("tag \U000e0041 end") == "tag \\U000e0041 end"


def test_is_invisible_agrees_with_the_format_class() -> None:
    """safe_text's ranges (no regex: the post-receive hook prints through it) and
    format.INVISIBLE_RE (built from them) name the same characters."""
    assert list(INVISIBLE_RANGES) == sorted(INVISIBLE_RANGES)
    for first, last in INVISIBLE_RANGES:
        for code in (first - 1, first, last, last + 1):
            assert is_invisible(code) == bool(fmt.INVISIBLE_RE.match(chr(code))), hex(code)
    assert is_invisible(0x200B) and unicodedata.category("\u200b") == "Cf"
    assert not is_invisible(ord("a")) and not is_invisible(0xA0)


def test_a_log_line_is_printable_private_and_never_written_through_a_symlink(
        tmp_path: Path) -> None:
    from memgit.safe_text import append_log_line

    log = tmp_path / "work.log"
    append_log_line(str(log), "failed\x1b[31m: line one\nline two")
    append_log_line(str(log), "x" * 2000)
    lines = log.read_text().splitlines()
    assert len(lines) == 2 and "\x1b" not in lines[0] and "\\x1b" in lines[0]
    assert lines[0].endswith("line two") and len(lines[1]) < 560
    assert log.stat().st_mode & 0o777 == 0o600
    target = tmp_path / "elsewhere"
    target.write_text("kept\n")
    link = tmp_path / "link.log"
    link.symlink_to(target)
    append_log_line(str(link), "must not land")  # skipped, not raised
    assert target.read_text() == "kept\n"
