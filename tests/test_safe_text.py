"""The one terminal sanitiser and the one list of invisible characters."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from memgit.format import entries as fmt
from memgit.safe_text import (
    INVISIBLE_RANGES,
    display_url,
    is_invisible,
    printable,
    scrub_url,
)


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


@pytest.mark.parametrize(("url", "shown"), [
    ("http://writer:s3cretT0ken@127.0.0.1:8765/acme/team.git",
     "http://writer:***@127.0.0.1:8765/acme/team.git"),
    ("https://x-access-token:ghs_abc@github.com/o/r.git?sig=zzz",
     "https://x-access-token:***@github.com/o/r.git?***"),
    ("https://joe@example.com/drive.git", "https://joe@example.com/drive.git"),
    ("git@example.com:team/drive.git", "git@example.com:team/drive.git"),
    ("/srv/git/drive.git", "/srv/git/drive.git"),
    ("http://[::1", "<unprintable URL>"),
])
def test_display_url_masks_what_carries_a_secret(url: str, shown: str) -> None:
    assert display_url(url) == shown


def test_scrub_url_masks_the_url_and_its_secrets_wherever_they_appear() -> None:
    url = "https://joe:hunter2pw@git.example.com/d.git?token=abc123"
    said = f"fatal: unable to access '{url}': 403; retry with hunter2pw, token=abc123"
    out = scrub_url(said, url)
    assert "hunter2pw" not in out and "abc123" not in out
    assert "https://joe:***@git.example.com/d.git?***" in out
    assert scrub_url("nothing to hide", "") == "nothing to hide"
