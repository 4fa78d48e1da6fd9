"""What pre-receive knows of the files a push leaves as they were (memgit.githooks.old_files):
the ids of their blobs, recorded by a child of the warm judge once a push has its answer,
read instead of the files by the next push. Real pushes to real bare drives.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from memgit import state
from memgit.githooks import old_files
from memgit.githooks.post_receive import wait_for_background
from memgit.state import blob_ids
from tests.receive_support import Drive, base_files, entry, memory, people_text, ulid_like
from tests.warm_support import only_the_judge_can_answer, runtime, sockets, wait_for

__all__ = ["runtime"]  # the fixture, used by name

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the warm judge checks its peer by SO_PEERCRED (Linux)")


def recorded(drive: Drive) -> dict[str, list[str]]:
    """Each recorded blob's ids (read with SQL: the module answers only questions)."""
    assert wait_for_background(drive.git_dir)  # the work after the answer holds its lock
    conn = state.connect(drive.git_dir)
    try:
        return {oid: ids.strip("\n").split("\n") if ids.strip("\n") else [] for oid, ids in
                conn.execute("SELECT oid, ids FROM blob_ids WHERE salt = ?",
                             (old_files.ids_salt(),)).fetchall()}
    finally:
        conn.close()


def blob(drive: Drive, path: str) -> str:
    from tests.conftest import git

    return git("rev-parse", f"main:{path}", cwd=drive.git_dir).stdout.decode().strip()


def push(drive: Drive, files: dict[str, str], message: str = "push") -> tuple[bool, set[str], str]:
    drive.build((files, message))
    result = drive.push("refs/heads/work")
    return result.returncode == 0, result.codes(), result.stderr


def warmed(tmp_path: Path, runtime: Path, name: str) -> Drive:
    """A drive whose first push started the warm judge, and whose hooks now judge only
    through it."""
    drive = Drive(tmp_path / name, files=base_files())
    ok, codes, err = push(drive, {"people.md": people_text(entry("first", ulid_like(50)))})
    assert ok, err
    wait_for(lambda: len(sockets(runtime)) == 1)
    only_the_judge_can_answer(drive.git_dir)
    return drive


def test_a_judged_push_records_the_ids_of_every_file_and_the_next_push_uses_them(
        tmp_path: Path, runtime: Path) -> None:
    drive = warmed(tmp_path, runtime, "a")
    ok, _codes, err = push(drive, {"people.md": people_text(entry("first", ulid_like(50)),
                                                            entry("second", ulid_like(51)))})
    assert ok, err
    ids = recorded(drive)
    payments = blob(drive, "projects/payments.md")
    assert ids[payments] == [ulid_like(3)]  # read (old), recorded after the answer
    assert ulid_like(51) in ids[blob(drive, "people.md")]  # judged (new)
    assert blob(drive, "MEMORY.md") not in ids  # parsed by its path, always read
    # the id of payments.md copied into people.md: refused
    copied = {"people.md": people_text(entry("copied", ulid_like(3)))}
    ok, codes, _err = push(drive, copied)
    assert not ok and "MG103" in codes
    # and the record is what was read: edited to say payments.md holds no id (the state
    # database is the server's own, 0600), the copy is no longer seen
    conn = state.connect(drive.git_dir)
    try:
        blob_ids.write(conn, old_files.ids_salt(), [(payments, [])])
    finally:
        conn.close()
    ok, codes, err = push(drive, copied)
    assert ok and "MG103" not in codes, err


def test_a_record_of_another_parser_is_not_used(tmp_path: Path, runtime: Path) -> None:
    """Rows under another salt (another version of the parser) say nothing: a wrong
    record there does not hide a collision."""
    drive = warmed(tmp_path, runtime, "b")
    payments = blob(drive, "projects/payments.md")
    conn = state.connect(drive.git_dir)
    try:
        blob_ids.write(conn, "another-parser", [(payments, ["m-nothing-here"])])
    finally:
        conn.close()
    ok, codes, _err = push(drive, {"people.md": people_text(entry("copied", ulid_like(3)))})
    assert not ok and "MG103" in codes


@pytest.mark.parametrize("server", ["0", "1"])
def test_an_old_file_is_judged_with_the_push_only_when_it_holds_one_of_its_new_ids(
        tmp_path: Path, runtime: Path, server: str) -> None:
    """An old file that names the new id in its text (not as an entry's id) and has a
    broken link is not judged with the push: no warning about it, with the judge or
    without. The same file holding the id as an entry's: MG103."""
    notes = "# Notes\n\n" + entry(f"see {ulid_like(60)} and [[nowhere]]", ulid_like(61)) + "\n"
    files = {**base_files(), "notes.md": notes,
             "MEMORY.md": memory(["notes.md", "people.md", "projects/payments.md"])}
    drive = Drive(tmp_path, files=files, env={"MEMGIT_HOOK_SERVER": server})
    ok, codes, err = push(drive, {"people.md": people_text(entry("new", ulid_like(60)))})
    assert ok, err
    assert "notes.md" not in err and "MG503" not in codes
    ok, codes, err = push(drive, {"people.md": people_text(entry("new", ulid_like(60)),
                                                           entry("again", ulid_like(61)))})
    assert not ok and "MG103" in codes and "notes.md" in err


def test_only_markdown_other_than_memory_md_is_recorded() -> None:
    assert old_files.recordable("a/b.md") and not old_files.recordable("MEMORY.md")
    assert not old_files.recordable("notes.txt")


def test_a_refused_blob_is_not_recorded(tmp_path: Path, runtime: Path) -> None:
    """A refused push left its blob's ids in state.sqlite, and an id is the pusher's text:
    ``id: ghp_...`` was refused (MG401) and stayed on the server (hostile sweep, branch
    hostile42). Blobs the policy refuses are not recorded."""
    drive = warmed(tmp_path, runtime, "r")
    token = "ghp_" + "OhbVrpoiVgRV5IfLBcbfnoGMbJmTPS2gjNut"
    line = f"- a fact [source: https://example.com/s/1; added: 2026-12-01; id: {token}]"
    ok, codes, err = push(drive, {"people.md": people_text(line)})
    assert not ok and "MG401" in codes, err
    assert not any(token in i for ids in recorded(drive).values() for i in ids)
    assert token.encode() not in (drive.git_dir / "memgit" / "state.sqlite").read_bytes()
    # an accepted push still records what it judged
    ok, _codes, err = push(drive, {"people.md": people_text(entry("second", ulid_like(52)))})
    assert ok, err
    assert ulid_like(52) in recorded(drive)[blob(drive, "people.md")]
