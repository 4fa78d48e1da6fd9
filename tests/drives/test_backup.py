"""memgit backup and restore: complete or absent, consistent while writers run, and a
changed backup refused."""

from __future__ import annotations

import hashlib
import io
import json
import multiprocessing
import os
import tarfile
import time
from pathlib import Path

import pytest

from memgit import state
from memgit.drives.backup import create_backup, restore_backup
from memgit.drives.create import create_drive
from memgit.errors import BackupError, UsageError
from memgit.git.repository import open_drive, ref_target
from memgit.index import reindex as recall_index
from memgit.policy.registry import PURGE_LOCK_FILE, REGISTRY_FILE
from memgit.state import facts
from memgit.write.ops import NewFact
from memgit.write.writer import commit_facts
from tests.conftest import (
    bare_drive,
    commit_all,
    git,
    memgit,
    memgit_ok,
    memgit_on_terminal,
    refused,
)

CTX = multiprocessing.get_context("fork")
WRITERS = 4


def rows(git_dir: Path) -> list[tuple]:
    """The recall index's present rows, without the times and counts a rebuild resets."""
    conn = state.connection(git_dir)
    return sorted(conn.execute(
        "SELECT fact_id, entry_id, path, line, text, source, added, digest, indexed "
        "FROM facts WHERE valid_until IS NULL"))


def fts_rows(git_dir: Path) -> list[tuple]:
    conn = state.connection(git_dir)
    return sorted(conn.execute("SELECT f.fact_id, t.text, t.topic FROM facts_fts t "
                               "JOIN facts f ON f.id = t.rowid"))


def fsck(git_dir: Path) -> None:
    proc = git("fsck", "--no-dangling", "--no-progress", cwd=git_dir, check=False)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr.decode()


def _writer(path: str, worker: int, stop: str, out: str) -> None:
    """Commit facts until told to stop (400 at most), a topic file of 100 a writer: every
    file stays far under the file-size limit (MG205, 64 KiB) however many they write (all
    four once shared one notes.md, which a run with many commits before the backup filled)."""
    drive = open_drive(path)
    done = 0
    while not os.path.exists(stop) and done < 400:
        fact = NewFact(f"Writer {worker} learned fact number {done}",
                       topic=f"writer-{worker}-{done // 100}")
        result = commit_facts(drive, [fact], message="backup under writers")
        assert result.status in ("committed", "queued")
        done += 1
    Path(out).write_text(str(done))


def test_a_backup_taken_while_four_writers_run_restores_consistently(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "drive.git")
    commit_facts(drive, ["A fact from before the writers"])
    start = ref_target(drive, "refs/heads/main")
    stop = tmp_path / "stop"
    procs = [CTX.Process(target=_writer, args=(str(drive.git_dir), w, str(stop),
                                               str(tmp_path / f"w{w}")))
             for w in range(WRITERS)]
    for p in procs:
        p.start()
    try:
        deadline = time.monotonic() + 60
        while int(git("rev-list", "--count", "main", cwd=drive.git_dir).stdout) < 20:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        backup = create_backup(open_drive(drive.git_dir), tmp_path / "b.tar")
        time.sleep(0.3)  # the writers go on after the snapshot
    finally:
        stop.touch()
        for p in procs:
            p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0] * WRITERS
    manifest = backup.manifest
    final = ref_target(open_drive(drive.git_dir), "refs/heads/main")
    assert manifest["head"] not in (start, final)  # taken in the middle of the writes
    assert manifest["indexed_revision"] == manifest["head"]  # the lock kept them together

    restored = restore_backup(tmp_path / "b.tar", tmp_path / "restored.git")
    assert restored.bare and restored.head == manifest["head"]
    assert not restored.index_repaired
    git_dir = tmp_path / "restored.git"
    fsck(git_dir)
    assert git("rev-parse", "main", cwd=git_dir).stdout.decode().strip() == manifest["head"]
    assert facts.stats(state.connection(git_dir)).indexed_rev == manifest["head"]
    before, before_fts = rows(git_dir), fts_rows(git_dir)
    assert len(before) == restored.entries
    recall_index.reindex(open_drive(git_dir), full=True)  # rebuilt from the restored head
    assert rows(git_dir) == before and fts_rows(git_dir) == before_fts
    with state.opened(git_dir) as conn:
        assert conn.execute("SELECT count(*) FROM pending").fetchone()[0] == 0


def notes_drive(path: Path, text: str, entry_id: str) -> Path:
    """A checkout whose notes.md holds one entry."""
    create_drive(path, bare=False)
    (path / "notes.md").write_text(f"# Notes\n\n- {text} [source: codex:session/1; "
                                   f"id: {entry_id}]\n")
    commit_all(path, "notes")
    return path


def checkout_with_everything(tmp_path: Path) -> Path:
    """A forked checkout with a policy, a purge registry, a remote and a mount."""
    parent = notes_drive(tmp_path / "parent", "Keep the door locked", "m-n1")
    work = tmp_path / "work"
    assert memgit("fork", str(parent), str(work)).returncode == 0
    (work / ".git" / "memgit.yaml").write_text("kind: bot\n")
    (work / ".git" / REGISTRY_FILE).write_text("m-gone " + "ab" * 32 + " 2026-01-01\n")
    git("remote", "add", "origin", "https://agent:s3cret-token@git.example.com/work.git",
        cwd=work)
    assert memgit("mount", "add", "parent", str(parent), cwd=work).returncode == 0
    assert memgit("remember", "--source", "codex:session/2", "The fork's own fact",
                  cwd=work).returncode == 0
    return work


def test_a_checkout_round_trip_keeps_what_makes_the_drive(tmp_path: Path) -> None:
    work = checkout_with_everything(tmp_path)
    proc = memgit("backup", "--json", str(tmp_path / "w.tar"), cwd=work)
    assert proc.returncode == 0, proc.stderr.decode()
    assert (tmp_path / "w.tar").stat().st_mode & 0o777 == 0o600
    tar = (tmp_path / "w.tar").read_bytes()  # a plain tar: the manifest is readable in it
    assert b"s3cret-token" not in tar
    assert b"https://agent:***@git.example.com/work.git" in tar  # the remote, redacted
    assert memgit("restore", "--check", str(tmp_path / "w.tar")).returncode == 0
    out = memgit("restore", str(tmp_path / "w.tar"), str(tmp_path / "r"))
    assert out.returncode == 0, out.stderr.decode()
    assert "mount add parent" in out.stdout.decode()
    r = tmp_path / "r"
    fsck(r / ".git")
    assert git("status", "--porcelain", cwd=r).stdout == b""
    for name in ("notes.md", "MEMORY.md"):
        assert (r / name).read_bytes() == (work / name).read_bytes()
    for name in ("memgit.yaml", REGISTRY_FILE):
        assert (r / ".git" / name).read_bytes() == (work / ".git" / name).read_bytes()
    for key in ("memgit.driveid", "memgit.parentdrive", "memgit.parentcommit"):
        assert git("config", key, cwd=r).stdout == git("config", key, cwd=work).stdout
    assert git("remote", "get-url", "origin", cwd=r).stdout.decode().strip() == \
        "https://agent:***@git.example.com/work.git"
    assert git("for-each-ref", cwd=r).stdout == git("for-each-ref", cwd=work).stdout
    assert (r / ".git" / "hooks" / "pre-commit").is_file()
    info = json.loads(memgit_ok("info", "--json", cwd=r).stdout)
    assert (info["kind"], info["entries"], info["parent"]["drive_id"]) == (
        "bot", 2, git("config", "memgit.parentdrive", cwd=work).stdout.decode().strip())
    assert rows(r / ".git") == rows(work / ".git")


def test_a_bare_restore_is_a_server_drive_with_its_hooks(tmp_path: Path) -> None:
    bare = create_drive(tmp_path / "server.git", bare=True)
    assert memgit("backup", "--folder", str(tmp_path / "b"), cwd=bare).returncode == 0
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == [
        "drive.bundle", "manifest.json", "state.sqlite"]
    as_checkout = memgit("restore", "--checkout", str(tmp_path / "b"), str(tmp_path / "c"))
    assert as_checkout.returncode == 0 and (tmp_path / "c" / "MEMORY.md").is_file()
    assert memgit("restore", str(tmp_path / "b"), str(tmp_path / "r.git")).returncode == 0
    r = tmp_path / "r.git"
    assert git("config", "receive.denyNonFastForwards", cwd=r).stdout.strip() == b"true"
    work = tmp_path / "work"
    git("clone", "-q", str(r), str(work))
    (work / "bad.md").write_text("- Click [source: javascript:alert(1)]\n")
    commit_all(work, "bad")
    push = git("push", "origin", "main", cwd=work, check=False)
    assert push.returncode != 0 and b"MG101" in push.stderr  # its pre-receive judges


def test_complete_or_absent(tmp_path: Path) -> None:
    drive = open_drive(create_drive(tmp_path / "d.git", bare=True))
    (tmp_path / "out").mkdir()
    existing = tmp_path / "out" / "exists.tar"
    existing.write_text("keep me")
    with pytest.raises(UsageError, match="exists"):
        create_backup(drive, existing)
    assert existing.read_text() == "keep me"
    (drive.git_dir / PURGE_LOCK_FILE).write_text("1 now\n")
    with pytest.raises(BackupError, match="purge"):
        create_backup(drive, tmp_path / "out" / "b.tar")
    (drive.git_dir / PURGE_LOCK_FILE).unlink()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["exists.tar"]
    create_backup(drive, tmp_path / "out" / "b.tar")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["b.tar", "exists.tar"]
    target = tmp_path / "taken"
    target.mkdir()
    (target / "MEMORY.md").write_text("# Mine\n")
    proc = memgit("restore", str(tmp_path / "out" / "b.tar"), str(target))
    assert proc.returncode == 2 and b"exists" in proc.stderr
    refused(proc, "MG001")
    assert sorted(p.name for p in target.iterdir()) == ["MEMORY.md"]


def members(path: Path) -> dict[str, bytes]:
    with tarfile.open(path) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar}  # type: ignore[union-attr]


def write_tar(path: Path, files: dict[str, bytes]) -> None:
    with tarfile.open(path, "w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def reseal(files: dict[str, bytes]) -> dict[str, bytes]:
    """What an attacker who also rewrites the manifest's checksums makes."""
    manifest = json.loads(files["manifest.json"])
    for name in manifest["files"]:
        manifest["files"][name] = {"sha256": hashlib.sha256(files[name]).hexdigest(),
                                   "bytes": len(files[name])}
    return {**files, "manifest.json": json.dumps(manifest).encode()}


def flipped(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x20]) + data[at + 1:]


@pytest.mark.slow
def test_a_changed_backup_is_refused(tmp_path: Path) -> None:
    work = notes_drive(tmp_path / "w", "The spare key is under the mat", "m-k")
    good = tmp_path / "good.tar"
    assert memgit("backup", str(good), cwd=work).returncode == 0
    files = members(good)
    manifest = json.loads(files["manifest.json"])
    other_head = git("rev-parse", "main~1", cwd=work).stdout.decode().strip()
    cases = {
        "bundle": ({**files, "drive.bundle": flipped(files["drive.bundle"], 200)},
                   "drive.bundle does not match its checksum"),
        "state": ({**files, "state.sqlite": flipped(files["state.sqlite"], 5000)},
                  "state.sqlite does not match its checksum"),
        "extra": ({**files, "run.sh": b"#!/bin/sh\n"}, "unexpected member 'run.sh'"),
        "missing": ({k: v for k, v in files.items() if k != "state.sqlite"},
                    "the manifest lists"),
        "manifest": ({**files, "manifest.json": b"{not json"}, "no readable manifest.json"),
        "resealed state": (reseal({**files, "state.sqlite": b"SQLite format 3\x00" + b"x" * 99}),
                           "the state database"),
        "resealed head": ({**files, "manifest.json": json.dumps(
            {**manifest, "head": other_head}).encode()}, "not the manifest's head"),
        "config": ({**files, "manifest.json": json.dumps(
            {**manifest, "config": {"core.hooksPath": "/tmp"}}).encode()},
            "config values memgit does not write"),
        "remote": ({**files, "manifest.json": json.dumps(
            {**manifest, "remotes": {"--upload-pack=touch /tmp/x": "u"}}).encode()},
            "remotes memgit does not write"),
    }
    for case, (changed, why) in cases.items():
        path = tmp_path / f"{case.replace(' ', '-')}.tar"
        write_tar(path, changed)
        proc = memgit("restore", str(path), str(tmp_path / "r"))
        assert proc.returncode == 2, case
        err = proc.stderr.decode()
        assert "MG041" in err and why in err, (case, err)
        assert not (tmp_path / "r").exists(), case
    truncated = tmp_path / "truncated.tar"
    truncated.write_bytes(good.read_bytes()[:3000])
    proc = memgit("restore", str(truncated), str(tmp_path / "r"))
    assert proc.returncode == 2 and b"MG041" in proc.stderr
    folder = tmp_path / "folder"
    assert memgit("backup", "--folder", str(folder), cwd=work).returncode == 0
    (folder / "memgit.yaml").symlink_to("/etc/passwd")
    proc = memgit("restore", str(folder), str(tmp_path / "r"))
    assert proc.returncode == 2 and b"MG041" in proc.stderr
    assert not (tmp_path / "r").exists()
    assert not [p for p in tmp_path.iterdir() if ".restore-" in p.name]
    assert memgit("restore", str(good), str(tmp_path / "r")).returncode == 0  # the original


def test_progress_shows_on_a_terminal_only(tmp_path: Path) -> None:
    """Long work draws a bar on a terminal (stderr a pty here), and says nothing without
    one or with --json."""
    work = notes_drive(tmp_path / "w", "The boiler is serviced in May", "m-b")

    def run(*args: str, tty: bool) -> tuple[int, bytes]:
        if not tty:
            proc = memgit(*args, cwd=work)
            return proc.returncode, proc.stderr
        status, _out, shown = memgit_on_terminal(*args, cwd=work)
        return status, shown

    status, shown = run("backup", str(tmp_path / "a.tar"), tty=True)
    assert status == 0 and b"state database" in shown and b"[####" in shown
    assert run("backup", str(tmp_path / "b.tar"), tty=False) == (0, b"")
    assert run("backup", "--json", str(tmp_path / "c.tar"), tty=True) == (0, b"")
    status, shown = run("restore", str(tmp_path / "a.tar"), str(tmp_path / "r"), tty=True)
    assert status == 0 and b"verifying" in shown
