"""policy.registry_refs: both registry refs read with one ``git cat-file --batch``, and
written with compare-and-swap on the values read (tests/forges/test_replica.py has the
replication end to end)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgit.errors import RegistryError
from memgit.policy import registry_refs as refs
from memgit.policy.registry import REGISTRY_FILE, PurgeRegistry
from tests.conftest import bare_drive, git


def shown(git_dir: Path, spec: str) -> str:
    return git("rev-parse", "--verify", "--quiet", spec, cwd=git_dir,
               check=False).stdout.decode().strip()


def test_both_refs_are_read_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(refs.KEY_ENV, raising=False)
    git_dir = bare_drive(tmp_path / "d.git").git_dir
    assert refs._read(git_dir) == refs._Read(("", None), ("", None))
    PurgeRegistry.append(git_dir, [("m-01j0000000000000000aaaaa", "1" * 64)], "2026-12-05")
    assert refs.publish(git_dir, git_dir / REGISTRY_FILE) == 1
    read = refs._read(git_dir)
    assert read.key[0] == shown(git_dir, refs.KEY_REF)
    assert read.digests[0] == shown(git_dir, refs.DIGESTS_REF)
    key_text = git("cat-file", "blob", f"{refs.KEY_REF}:{refs.KEY_FILE}", cwd=git_dir).stdout
    assert read.key[1] == key_text.decode()
    assert read.digests[1] is not None and read.digests[1].startswith("m-01j0000000000000000aaaaa ")
    found = refs.keyed_rows(git_dir)
    assert found is not None and found[0] == bytes.fromhex(key_text.decode().strip())
    # a second purge's row: the digests ref moves, the key stays
    key_before = read.key[0]
    PurgeRegistry.append(git_dir, [("m-01j0000000000000000bbbbb", "2" * 64)], "2026-12-05")
    assert refs.publish(git_dir, git_dir / REGISTRY_FILE) == 2
    assert shown(git_dir, refs.KEY_REF) == key_before
    assert shown(git_dir, refs.DIGESTS_REF) != read.digests[0]
    assert {r[0] for r in refs.ref_rows(git_dir)} == {"m-01j0000000000000000aaaaa",
                                                      "m-01j0000000000000000bbbbb"}


def test_a_ref_that_moved_after_the_read_is_not_overwritten(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(refs.KEY_ENV, raising=False)
    git_dir = bare_drive(tmp_path / "d.git").git_dir
    PurgeRegistry.append(git_dir, [("m-01j0000000000000000aaaaa", "1" * 64)], "2026-12-05")
    refs.publish(git_dir, git_dir / REGISTRY_FILE)
    stale = refs._read(git_dir)
    PurgeRegistry.append(git_dir, [("m-01j0000000000000000bbbbb", "2" * 64)], "2026-12-05")
    refs.publish(git_dir, git_dir / REGISTRY_FILE)  # another publisher, meanwhile
    moved = shown(git_dir, refs.DIGESTS_REF)
    monkeypatch.setattr(refs, "_read", lambda _git_dir: stale)
    PurgeRegistry.append(git_dir, [("m-01j0000000000000000ccccc", "3" * 64)], "2026-12-05")
    with pytest.raises(RegistryError):
        refs.publish(git_dir, git_dir / REGISTRY_FILE)
    assert shown(git_dir, refs.DIGESTS_REF) == moved


def test_a_folder_where_the_file_should_be_reads_as_no_file(tmp_path: Path) -> None:
    git_dir = bare_drive(tmp_path / "d.git").git_dir
    tree = git("mktree", cwd=git_dir, input=b"").stdout.decode().strip()
    outer = git("mktree", cwd=git_dir, input=f"040000 tree {tree}\tkey\n".encode()
                ).stdout.decode().strip()
    commit = git("commit-tree", outer, "-m", "odd", cwd=git_dir).stdout.decode().strip()
    git("update-ref", refs.KEY_REF, commit, cwd=git_dir)
    assert refs._read(git_dir).key == (commit, None)
