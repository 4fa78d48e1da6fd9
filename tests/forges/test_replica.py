"""Server state that survives replication: a mirror judges like its primary.

A drive with a purge is mirrored with ``git clone --mirror`` (what a failover replica
receives: refs and objects, no registry file, no git config, no hooks); memgit's hooks
are installed on the mirror; the same pushes, every purged text among them, get the
same answer from both. Fetching clients never get the registry's refs, and the digests
those refs hold are keyed: without the drive's key they match no text.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memgit.policy.registry import REGISTRY_FILE, purge_digest
from memgit.policy.registry_refs import DIGESTS_REF, KEY_REF
from tests.conftest import git
from tests.forges_support import run_memgit
from tests.githooks.test_receive import SECRET
from tests.receive_support import MAIN, Drive, PushResult, base_files, entry, ulid_like

PURGED_ID = ulid_like(2)
PURGED_TEXT = "Ana owns the billing service"  # base_files' entry with id ulid_like(2)
UNHIDE = "git -c uploadpack.hideRefs=!refs/memgit/registry upload-pack"


def mirror(primary: Path, to: Path) -> Path:
    """The replica: a mirror clone taken by the (trusted) replication, which un-hides the
    registry refs for itself, then memgit's hooks installed there."""
    git("clone", "-q", "--mirror", "--upload-pack", UNHIDE, primary.as_uri(), to)
    proc = run_memgit("install-hooks", "--server", str(to), cwd=to.parent)
    assert proc.returncode == 0, proc.stderr
    return to


def people_now(drive: Drive, *lines: str) -> dict[str, str]:
    """people.md as the primary's main has it (after the purge), lines appended."""
    text = git("show", f"{MAIN}:people.md", cwd=drive.git_dir).stdout.decode()
    return {"people.md": text + "".join(line + "\n" for line in lines)}


def codes(result: PushResult) -> tuple[int, frozenset[str]]:
    return result.returncode, frozenset(result.codes())


def remote_lines(result: PushResult) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("remote:")]


@pytest.fixture
def purged(tmp_path: Path) -> Drive:
    drive = Drive(tmp_path / "primary", files=base_files())
    proc = run_memgit("purge", PURGED_ID, "--repo", str(drive.git_dir), "--yes", "--json",
                      cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["ids"] == [PURGED_ID]
    return drive


PUSHES: dict[str, tuple[list[str], str]] = {  # name -> (people.md lines, commit message)
    "good": ([entry("Joe moved to Porto", ulid_like(50))], "good"),
    "purged-id": ([entry("Someone else's text", PURGED_ID)], "re-add"),
    "purged-text": ([entry(PURGED_TEXT, ulid_like(51))], "re-add text"),
    "purged-text-variant": ([entry("ANA  owns the\u200b billing SERVICE", ulid_like(52))],
                            "variant"),
    "purged-text-in-message": ([entry("Harmless", ulid_like(53))],
                               f"note: '{PURGED_TEXT}'"),
    "secret": ([entry(f"token {SECRET}", ulid_like(54))], "token"),
    "good-again": ([entry("Joe likes rain", ulid_like(55))], "good again"),
}


@pytest.mark.slow
def test_a_mirror_judges_like_its_primary(purged: Drive, tmp_path: Path) -> None:
    primary = purged.git_dir
    replica = mirror(primary, tmp_path / "replica.git")
    assert (primary / REGISTRY_FILE).exists() and not (replica / REGISTRY_FILE).exists()
    assert git("rev-parse", DIGESTS_REF, cwd=replica).stdout == \
        git("rev-parse", DIGESTS_REF, cwd=primary).stdout
    seen: dict[str, tuple[int, frozenset[str]]] = {}
    for name, (lines, message) in PUSHES.items():
        tip = purged.build((people_now(purged, *lines), message))[-1]
        on_primary = purged.push(tip)
        on_replica = purged.push(tip, url=replica.as_uri())
        assert codes(on_primary) == codes(on_replica), name
        assert remote_lines(on_primary) == remote_lines(on_replica), name
        seen[name] = codes(on_primary)
        assert git("rev-parse", MAIN, cwd=primary).stdout == \
            git("rev-parse", MAIN, cwd=replica).stdout
    assert seen["good"] == (0, frozenset()) and seen["good-again"] == (0, frozenset())
    assert seen["purged-id"][0] == 1 and "MG606" in seen["purged-id"][1]
    for name in ("purged-text", "purged-text-variant", "purged-text-in-message"):
        assert seen[name][0] == 1 and "MG607" in seen[name][1], name
    assert seen["secret"] == (1, frozenset({"MG401"}))


def test_a_mirror_without_the_key_refuses_rather_than_accepts(purged: Drive,
                                                              tmp_path: Path) -> None:
    replica = mirror(purged.git_dir, tmp_path / "replica.git")
    git("update-ref", "-d", KEY_REF, cwd=replica)
    tip = purged.build((people_now(purged, entry(PURGED_TEXT, ulid_like(51))),
                        "re-add text"))[-1]
    result = purged.push(tip, url=replica.as_uri())
    assert result.returncode == 1 and "MG609" in result.stderr
    assert "key" in result.stderr


def test_clients_cannot_read_the_registry(purged: Drive, tmp_path: Path) -> None:
    primary = purged.git_dir
    replica = mirror(primary, tmp_path / "replica.git")
    for server in (primary, replica):
        listed = git("ls-remote", server.as_uri(), cwd=tmp_path).stdout.decode()
        assert "refs/memgit/registry" not in listed and "refs/heads/main" in listed
        copy = tmp_path / f"copy-of-{server.name}"
        git("clone", "-q", "--mirror", server.as_uri(), copy)
        refs = git("for-each-ref", cwd=copy).stdout.decode()
        assert "refs/memgit/registry" not in refs and "refs/memgit/purged" in refs
        asked = git("fetch", server.as_uri(), f"{DIGESTS_REF}:refs/x", cwd=copy, check=False)
        assert asked.returncode != 0
        shutil.rmtree(copy)
    # git's protocol v2 serves any object whose id a client names, hidden or not; the
    # digests commit's id is not advertised, and even its bytes match nothing unkeyed
    digests = git("rev-parse", DIGESTS_REF, cwd=primary).stdout.decode().strip()
    client = tmp_path / "client"
    git("init", "-q", client)
    got = git("-c", "protocol.version=2", "fetch", "-q", primary.as_uri(), digests,
              cwd=client, check=False)
    leaked = client if got.returncode == 0 else primary  # what a leak would expose
    rows = git("show", f"{digests}:purged", cwd=leaked).stdout.decode()
    assert PURGED_ID in rows  # the ids are published anyway (refs/memgit/purged)
    assert purge_digest(PURGED_TEXT) not in rows
    if got.returncode == 0:  # the key came with nothing the client fetched
        key = git("rev-parse", KEY_REF, cwd=primary).stdout.decode().strip()
        assert key not in git("cat-file", "--batch-all-objects", "--batch-check",
                              cwd=client).stdout.decode()
    # the primary's own file holds the plain digest: it never leaves the git directory
    assert purge_digest(PURGED_TEXT) in (primary / REGISTRY_FILE).read_text()


def test_check_reports_a_registry_left_visible(purged: Drive, tmp_path: Path) -> None:
    copy = tmp_path / "plain-copy.git"
    git("clone", "-q", "--mirror", "--upload-pack", UNHIDE, purged.git_dir.as_uri(), copy)
    hooks = copy / "hooks"
    shutil.rmtree(hooks)
    hooks.mkdir()
    proc = run_memgit("install-hooks", "--check", str(copy), cwd=tmp_path)
    assert proc.returncode == 1 and "does not hide refs/memgit/registry" in proc.stdout
    assert run_memgit("install-hooks", "--server", str(copy), cwd=tmp_path).returncode == 0
    assert run_memgit("install-hooks", "--check", str(copy), cwd=tmp_path).returncode == 0
