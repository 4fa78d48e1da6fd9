"""pre-receive on bad input and broken setups: refused with MG609 (or MG608), never
accepted by accident; and the hook never writes a ref or an object."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memgit.format import entries as fmt
from memgit.githooks import receive
from tests.receive_support import MAIN, Drive, base_files, entry, git, people_text, ulid_like


@pytest.fixture
def drive(tmp_path: Path) -> Drive:
    return Drive(tmp_path, files=base_files())


def run_hook(drive: Drive, stdin: bytes, env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess[bytes]:
    """Run the installed pre-receive script the way git does: in the git directory."""
    return subprocess.run([str(drive.git_dir / "hooks" / "pre-receive")], input=stdin,
                          cwd=drive.git_dir, capture_output=True, env=env or {})


@pytest.mark.parametrize("stdin", [
    b"garbage\n",
    b"",
    b"\xff\xfe not text\n",
    b"1234 5678 refs/heads/main\n",
    ("a" * 40 + " " + "b" * 40 + " main\n").encode(),
    ("a" * 40 + " " + "b" * 64 + " refs/heads/main\n").encode(),
    ("a" * 40 + " " + "b" * 40 + " refs/heads/ma in\n").encode(),
])
def test_garbage_on_stdin_is_refused(drive: Drive, stdin: bytes) -> None:
    proc = run_hook(drive, stdin)
    err = proc.stderr.decode()
    assert proc.returncode == 1
    assert "memgit: push refused: the server cannot check it" in err
    assert "MG609 server-error" in err
    assert "Traceback" not in err


def test_missing_quarantine_is_refused(drive: Drive) -> None:
    main = drive.main()
    line = f"{main} {main} {MAIN}\n".encode()
    proc = run_hook(drive, line)
    assert proc.returncode == 1
    assert "MG609 server-error: no quarantine: GIT_QUARANTINE_PATH is not set" in \
        proc.stderr.decode()
    proc = run_hook(drive, line, {"GIT_QUARANTINE_PATH": str(drive.git_dir / "nowhere"),
                                  "GIT_OBJECT_DIRECTORY": str(drive.git_dir / "nowhere")})
    assert proc.returncode == 1
    assert "quarantine directory GIT_QUARANTINE_PATH does not exist" in proc.stderr.decode()
    assert "MG609 server-error" in proc.stderr.decode()


def test_objects_missing_from_push_and_repository_are_refused_cleanly(drive: Drive) -> None:
    """A tree naming a blob that is nowhere: MG608, no crash (git's own connectivity
    check stops such pushes earlier; the hook must not rely on it)."""
    quarantine = drive.git_dir / "objects" / "tmp_objdir-incoming-test"
    quarantine.mkdir()
    env = {"GIT_OBJECT_DIRECTORY": str(quarantine), "GIT_QUARANTINE_PATH": str(quarantine),
           "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(drive.git_dir / "objects")}
    ghost = "1" * 40
    memory_blob = git("rev-parse", f"{MAIN}:MEMORY.md", cwd=drive.git_dir).stdout.decode().strip()
    tree = git("mktree", "--missing", cwd=drive.git_dir, env=env,
               input=f"100644 blob {memory_blob}\tMEMORY.md\n100644 blob {ghost}\tghost.md\n"
               .encode()).stdout.decode().strip()
    commit = git("commit-tree", tree, "-p", drive.main(), "-m", "ghost", cwd=drive.git_dir,
                 env=env).stdout.decode().strip()
    assert not drive.has_object(commit)  # only in the quarantine
    proc = run_hook(drive, f"{drive.main()} {commit} {MAIN}\n".encode(), env)
    err = proc.stderr.decode()
    assert proc.returncode == 1
    assert "ghost.md: MG608 object-missing" in err
    assert "Traceback" not in err
    # a tip that is nowhere at all
    proc = run_hook(drive, f"{drive.main()} {'2' * 40} {MAIN}\n".encode(), env)
    assert proc.returncode == 1
    assert "MG608 object-missing" in proc.stderr.decode()


def test_bad_policy_file_refuses_the_push(drive: Drive) -> None:
    before = drive.main()
    pushed = drive.build(({"people.md": people_text(entry("fine", ulid_like(1)))}, "fine"))
    (drive.git_dir / "memgit.yaml").write_text("limits: [not, a, mapping\n")
    result = drive.push("refs/heads/work")
    assert result.refused_by_hook
    assert "MG609 server-error: the drive's policy cannot be used" in result.stderr
    assert "not valid YAML" in result.stderr
    (drive.git_dir / "memgit.yaml").write_text("colour: blue\n")
    result = drive.push("refs/heads/work")
    assert result.refused_by_hook and "MG609" in result.codes(), result.stderr
    assert "unknown key(s): colour" in result.stderr
    (drive.git_dir / "memgit.yaml").unlink()
    git("config", "memgit.policy", str(drive.git_dir / "missing.yaml"), cwd=drive.git_dir)
    result = drive.push("refs/heads/work")
    assert result.refused_by_hook and "MG609" in result.codes(), result.stderr
    assert "cannot read policy file" in result.stderr
    assert drive.main() == before
    assert not drive.has_object(pushed[0])


@pytest.mark.parametrize("registry", [b"this is not a registry line\n", b"\xff\xfe\n",
                                      b"m-1 not-a-digest 2026-01-01\n"])
def test_corrupt_purge_registry_refuses_the_push(drive: Drive, registry: bytes) -> None:
    before = drive.main()
    (drive.git_dir / "memgit-purged").write_bytes(registry)
    drive.build(({"people.md": people_text(entry("fine", ulid_like(1)))}, "fine"))
    result = drive.push("refs/heads/work")
    assert result.refused_by_hook
    assert "MG609 server-error: the purge registry cannot be read" in result.stderr
    assert drive.main() == before


def test_a_crash_inside_the_hook_refuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    def boom(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("unexpected")

    monkeypatch.setattr(receive, "judge_push", boom)
    quarantine = tmp_path / "q"
    quarantine.mkdir()
    monkeypatch.setenv("GIT_QUARANTINE_PATH", str(quarantine))
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(quarantine))
    git_dir = tmp_path / "x.git"
    git("init", "-q", "--bare", git_dir)
    status, lines = receive.run_pre_receive(git_dir, f"{'0' * 40} {'1' * 40} {MAIN}\n".encode())
    assert status == 1
    assert any("MG609 server-error: the hook failed: RuntimeError: unexpected" in line
               for line in lines)


def test_the_hook_writes_no_ref_and_no_object(drive: Drive) -> None:
    def snapshot() -> set[tuple[str, int]]:
        out: set[tuple[str, int]] = set()
        for sub in ("objects", "refs"):
            for root, _dirs, files in os.walk(drive.git_dir / sub):
                for name in files:
                    path = Path(root) / name
                    out.add((str(path.relative_to(drive.git_dir)), path.stat().st_size))
        packed = drive.git_dir / "packed-refs"
        if packed.exists():
            out.add(("packed-refs", packed.stat().st_size))
        return out

    before = snapshot()
    drive.build(({"people.md": people_text(entry("key AKIAIOSFODNN7EXAMPLQ", ulid_like(5)))},
                 "bad"), *[({"people.md": people_text(entry(f"n{i}", ulid_like(9 + i)))},
                            f"c{i}") for i in range(120)])  # a pack, not loose objects
    result = drive.push("refs/heads/work")
    assert result.refused_by_hook and "MG401" in result.codes(), result.stderr
    assert snapshot() == before


def test_memgit_hook_command_matches_the_script(drive: Drive) -> None:
    proc = subprocess.run([sys.executable, "-m", "memgit", "-C", str(drive.git_dir), "hook",
                           "pre-receive"], input=b"garbage\n", capture_output=True)
    assert proc.returncode == 1
    assert "MG609 server-error: line 1 of the hook's input is not 'OLD NEW REF'" in \
        proc.stderr.decode()
    proc = subprocess.run([sys.executable, "-m", "memgit", "hook", "post-receive"],
                          input=b"", capture_output=True, cwd=drive.git_dir)
    assert proc.returncode == 0  # post-receive cannot refuse; it warns
    assert "post-receive failed" in proc.stderr.decode()


def test_parse_updates_accepts_what_git_sends() -> None:
    old, new = "a" * 40, "b" * 40
    updates = receive.parse_updates(f"{old} {new} {MAIN}\n{new} {'0' * 40} refs/heads/x\n"
                                    .encode())
    assert [u.ref for u in updates] == [MAIN, "refs/heads/x"]
    assert not updates[0].is_delete and updates[1].is_delete
    sha256 = receive.parse_updates(f"{'0' * 64} {'c' * 64} {MAIN}\n".encode())
    assert sha256[0].is_create


def test_a_copy_of_an_old_id_less_entry_warns_and_an_explicit_clash_is_refused(
        tmp_path: Path) -> None:
    files = dict(base_files())
    files["people.md"] = people_text("- Standup is at ten [source: imported:unknown]")
    drive = Drive(tmp_path, files=files)
    before = drive.main()
    # an explicit entry- id equal to the computed id of that old line: an id clash
    computed = fmt.deterministic_id("Standup is at ten", "imported:unknown", "")
    pushed = drive.build(({"projects/payments.md": str(files["projects/payments.md"])
                           + entry("Other words", computed) + "\n"}, "explicit"))
    result = drive.push("refs/heads/work")
    assert result.refused_by_hook
    assert "MG103" in result.codes()
    assert drive.main() == before and not drive.has_object(pushed[0])
    # the same id-less line again, in another file: one line written twice (issue 12)
    pushed = drive.build(({"projects/payments.md": str(files["projects/payments.md"])
                           + "- Standup is at ten [source: imported:unknown]\n"}, "copy"))
    result = drive.push("refs/heads/work")
    assert result.returncode == 0 and drive.main() == pushed[-1], result.stderr
    assert "projects/payments.md:4: MG108 line-repeated (warning): the same line is also " \
        "at people.md:5" in result.stderr
