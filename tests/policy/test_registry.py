"""The purge registry's file, its one normalisation, and the purge lock (memgit.policy.registry)."""

from __future__ import annotations

import os
import socket
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memgit.errors import RegistryError
from memgit.policy.judge import text_digest
from memgit.policy.registry import (
    PURGE_LOCK_FILE,
    PurgeLock,
    PurgeRegistry,
    lease_seconds,
    lock_line,
    purge_key,
    registry_key,
    take_over,
)

TEXT = "Zoë's café door code is 4471"


@pytest.mark.parametrize("variant", [
    TEXT, TEXT.upper(), unicodedata.normalize("NFD", TEXT), f"  {TEXT}\t",
    TEXT.replace("door", "do\u200bor"), TEXT.replace(" ", "\u00a0"), "\u202e" + TEXT,
    TEXT.replace("4471", "\uff14\uff14\uff17\uff11"), TEXT.replace("code", "co\u00adde"),
    TEXT.replace("is", "i\ufe0fs")])
def test_variants_share_one_key(variant: str) -> None:
    assert purge_key(variant) == "zoë's café door code is 4471"


@given(st.text())
def test_the_key_is_idempotent(text: str) -> None:
    key = purge_key(text)
    assert purge_key(key) == key
    assert key == " ".join(key.split())


def test_the_file_round_trips_both_versions(tmp_path: Path) -> None:
    PurgeRegistry.append(tmp_path, [("m-old", text_digest("Old Text")),
                                    ("m-new", registry_key(TEXT))], "2026-01-05")
    lines = (tmp_path / "memgit-purged").read_text().splitlines()
    assert lines[0] == f"m-old {text_digest('Old Text')} 2026-01-05"
    key = registry_key(TEXT)
    assert lines[1] == f"m-new {key.digest} 2026-01-05 2 6 {len(purge_key(TEXT))}"
    reg = PurgeRegistry.load(tmp_path)
    assert reg.ids == {"m-old", "m-new"} and reg.size == 4
    assert reg.holds_text("old   TEXT") and reg.holds_text(TEXT.upper())
    assert not reg.holds_text("Old Text, newer")


@pytest.mark.parametrize("line", ["m-1 " + "a" * 64 + " 2026-01-01 3 1 1",
                                  "m-1 " + "a" * 64 + " 2026-01-01 2 x 4",
                                  "m-1 " + "a" * 64 + " 2026-01-01 2 9 4",
                                  "m-1 " + "a" * 64 + " 2026-01-01 2 1"])
def test_malformed_version_fields_are_an_error(tmp_path: Path, line: str) -> None:
    (tmp_path / "memgit-purged").write_text(line + "\n")
    with pytest.raises(RegistryError, match="malformed"):
        PurgeRegistry.load(tmp_path)


@pytest.mark.parametrize("message, found", [
    (TEXT, [TEXT]),
    (f"Add: {TEXT}. Done", [TEXT]),
    (f'He said "{TEXT.upper()}" twice', [TEXT.upper()]),
    (f"line one\n\n({TEXT})\n", [TEXT]),
    (f"{TEXT} and {TEXT}", [TEXT, TEXT]),
    ("Zoë's café door code is 4472", []),
    ("Zoë's café door", []),
])
def test_quoted_finds_each_stretch(tmp_path: Path, message: str, found: list[str]) -> None:
    reg = PurgeRegistry()
    reg.add("m-1", registry_key(TEXT))
    assert [message[a:b] for a, b in reg.quoted(message)] == found


def test_version_1_digests_are_found_in_lines_and_sentences() -> None:
    reg = PurgeRegistry(legacy={text_digest(TEXT)})
    message = f"Subject\n\nFirst sentence. {TEXT}. Last one\nNote: {TEXT}\n"
    assert [message[a:b] for a, b in reg.quoted(message)] == [TEXT, TEXT]


# --- the lock ----------------------------------------------------------------------------


def test_lock_line_and_staleness(tmp_path: Path) -> None:
    (tmp_path / PURGE_LOCK_FILE).write_text(lock_line())
    lock = PurgeLock.read(tmp_path)
    assert lock is not None and lock.pid == os.getpid() and lock.host == socket.gethostname()
    assert lock.stale(3600) == ""
    assert "beyond the lease" in lock.stale(3600, now=lock.started + 7200)
    (tmp_path / PURGE_LOCK_FILE).write_text(f"999999999 {socket.gethostname()} "
                                            "2026-01-01T00:00:00+00:00\n")
    gone = PurgeLock.read(tmp_path)
    assert gone is not None and "is gone" in gone.stale(1e12)
    (tmp_path / PURGE_LOCK_FILE).write_text("purge in progress\n")  # unreadable: its mtime
    odd = PurgeLock.read(tmp_path)
    assert odd is not None and odd.pid is None and odd.stale(3600) == ""
    assert PurgeLock.read(tmp_path / "nowhere") is None


def test_take_over_leaves_a_fresh_lock_alone(tmp_path: Path) -> None:
    path = tmp_path / PURGE_LOCK_FILE
    path.write_text("1 other-host 2026-01-01T00:00:00+00:00\n")
    stale = PurgeLock.read(tmp_path)
    assert stale is not None
    theirs = lock_line()
    path.write_text(theirs)  # another purge took it meanwhile
    assert take_over(tmp_path, stale) is False
    assert path.read_text() == theirs  # left as the other purge wrote it
    fresh = PurgeLock.read(tmp_path)
    assert fresh is not None and take_over(tmp_path, fresh) is True
    assert not path.exists() and not list(tmp_path.glob("*.stale-*"))


@pytest.mark.parametrize("value, lease", [(None, 3600.0), ("120", 120.0), ("x", 3600.0),
                                          ("-5", 3600.0)])
def test_lease_from_config(value: str | None, lease: float) -> None:
    assert lease_seconds(value) == lease
