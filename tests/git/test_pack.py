"""The pack writer (git.rewrite), its helper process (git.pack_process), tree id swaps."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from memgit.errors import RepoError
from memgit.git.pack_process import PackProcess
from memgit.git.raw import (
    ObjectReader,
    TreeCache,
    object_id,
    object_key,
    swap_tree_ids,
    topo_commit_contents,
    tree_entries,
)
from memgit.git.rewrite import (
    PackBuilder,
    _copy_ops,
    _deflate,
    install_pack,
    make_delta,
    whole_record,
    write_pack,
)
from tests.conftest import git


def bare(tmp_path: Path, name: str = "r.git") -> Path:
    path = tmp_path / name
    git("init", "-q", "--bare", str(path), cwd=tmp_path)
    return path


def tree(*entries: tuple[bytes, bytes, bytes]) -> bytes:
    return b"".join(m + b" " + n + b"\x00" + c for m, n, c in entries)


def versions() -> tuple[list[tuple[str, str, bytes]], dict[str, str]]:
    """Blob versions of one file, each the delta base of the next, and trees holding them."""
    base = b"".join(b"line %d of a long file\n" % i for i in range(300))
    objects: list[tuple[str, str, bytes]] = []
    bases: dict[str, str] = {}
    last_blob = last_tree = ""
    for i in range(0, 60, 3):
        data = base.replace(b"line %d " % i, b"LINE %d " % i)
        blob = object_key("blob", data)
        raw = tree((b"100644", b"a.md", blob), (b"100644", b"b.md", object_key("blob", b"b")))
        for kind, content, last in (("blob", data, last_blob), ("tree", raw, last_tree)):
            oid = object_id(kind, content)
            objects.append((kind, oid, content))
            if last:
                bases[oid] = last
        last_blob, last_tree = objects[-2][1], objects[-1][1]
    return objects, bases



def add_all(target: PackBuilder | PackProcess, objects: list[tuple[str, str, bytes]],
            bases: dict[str, str]) -> None:
    """Every object into a pack builder or the helper, with its delta base when it has one."""
    for kind, oid, raw in objects:
        base = bases.get(oid)
        target.add(kind, bytes.fromhex(oid), raw, bytes.fromhex(base) if base else None)


def assert_holds(repo: Path, objects: list[tuple[str, str, bytes]]) -> None:
    """git finds the repository whole and every object in it as it was written."""
    assert git("fsck", "--full", cwd=repo).returncode == 0
    for kind, oid, raw in objects:
        assert git("cat-file", kind, oid, cwd=repo).stdout == raw

def test_a_stored_stream_by_hand_is_zlibs() -> None:
    for size in range(64):
        payload = bytes(range(size))
        assert _deflate(payload, 1) == zlib.compress(payload, 0)


def test_copy_ops_keep_the_non_zero_bytes_in_order() -> None:
    # offset 0x00010200 and size 0x000300: bytes 1 and 2 of the offset, byte 1 of the size
    assert _copy_ops(0x10200, 0x300) == bytes((0x80 | 0b0100110,)) + b"\x02\x01\x03"
    assert _copy_ops(0, 0) == b""
    # past 16 MiB a copy is split: the second op starts where the first ended
    assert _copy_ops(0, 0x1000001) == b"\xf0\xff\xff\xff" + b"\x97\xff\xff\xff\x02"


def test_a_large_delta_applies_in_git(tmp_path: Path) -> None:
    repo = bare(tmp_path)
    base = bytes(range(256)) * (0x11000 // 256 * 256)  # over 16 MiB: two copy ops
    target = base[:0x10200] + b"inserted" * 40 + base[0x10200:]
    objects = [("blob", object_id("blob", base), base), ("blob", object_id("blob", target), target)]
    delta = make_delta(base, target)
    assert len(delta) < 400
    pack = write_pack(repo, objects, {objects[1][1]: objects[0][1]})
    assert b" 1 " in git("verify-pack", "-v", str(pack.with_suffix(".idx")), cwd=repo).stdout
    assert git("cat-file", "blob", objects[1][1], cwd=repo).stdout == target


def test_the_helper_writes_the_same_pack(tmp_path: Path) -> None:
    objects, bases = versions()
    here = write_pack(bare(tmp_path, "here.git"), objects, bases)
    there_repo = bare(tmp_path, "there.git")
    job = PackProcess()
    add_all(job, objects, bases)
    there = job.install(there_repo, len(objects))
    assert there is not None and there.name == here.name
    assert there.read_bytes() == here.read_bytes()
    assert there.with_suffix(".idx").read_bytes() == here.with_suffix(".idx").read_bytes()
    assert_holds(there_repo, objects)


def history_objects() -> tuple[list[tuple[str, str, bytes]], dict[str, str]]:
    """versions() with a commit over each tree (a chain, some messages long enough to
    compress) and an annotated tag on the last: what a purge's rewrite sends."""
    objects, bases = versions()
    out: list[tuple[str, str, bytes]] = []
    parent = ""
    for n, (kind, oid, raw) in enumerate(objects):
        out.append((kind, oid, raw))
        if kind != "tree":
            continue
        commit = (f"tree {oid}\n" + (f"parent {parent}\n" if parent else "")
                  + f"author A <a@example.com> {1700000000 + n} +0000\n"
                  f"committer A <a@example.com> {1700000000 + n} +0000\n\n"
                  + "Update memory\n" * (n % 7 * 40)).encode()
        parent = object_id("commit", commit)
        out.append(("commit", parent, commit))
    tag = (f"object {parent}\ntype commit\ntag v1\n"
           "tagger A <a@example.com> 1700000000 +0000\n\nv1\n").encode()
    out.append(("tag", object_id("tag", tag), tag))
    return out, bases


def test_a_whole_record_is_what_the_builder_writes() -> None:
    objects, _bases = history_objects()
    for kind, oid, raw in objects:
        built = PackBuilder()
        built.add(kind, bytes.fromhex(oid), raw)
        assert bytes(built.body) == whole_record(kind, raw)


def test_the_helper_shares_the_commits_and_writes_the_same_pack(tmp_path: Path) -> None:
    # the parent compresses some commits and the tag itself (whole records), the helper
    # the rest; the index is made at the seal, before install; the pack and the index
    # are still write_pack's, byte for byte, and git reads every object back
    objects, bases = history_objects()
    assert sum(kind == "commit" for kind, _o, _r in objects) >= 6
    here = write_pack(bare(tmp_path, "here.git"), objects, bases)
    there_repo = bare(tmp_path, "there.git")
    job = PackProcess()
    add_all(job, objects, bases)
    job.seal()
    there = job.install(there_repo, len(objects))
    assert there is not None and there.name == here.name
    assert there.read_bytes() == here.read_bytes()
    assert there.with_suffix(".idx").read_bytes() == here.with_suffix(".idx").read_bytes()
    assert_holds(there_repo, objects)


def test_objects_sent_after_the_seal_still_go_in(tmp_path: Path) -> None:
    objects, bases = history_objects()
    here = write_pack(bare(tmp_path, "here.git"), objects, bases)
    there_repo = bare(tmp_path, "there.git")
    job = PackProcess()
    add_all(job, objects[:-3], bases)
    job.seal()
    add_all(job, objects[-3:], bases)
    there = job.install(there_repo, len(objects))
    assert there is not None and there.read_bytes() == here.read_bytes()
    assert there.with_suffix(".idx").read_bytes() == here.with_suffix(".idx").read_bytes()
    assert_holds(there_repo, objects)


def test_the_index_is_gits(tmp_path: Path) -> None:
    # git index-pack reads the pack alone and writes its own version-2 index: the
    # same bytes (sorted ids, fan-out, CRC-32s, offsets, checksums)
    objects, bases = history_objects()
    repo = bare(tmp_path)
    pack = write_pack(repo, objects, bases)
    theirs = tmp_path / "theirs.idx"
    git("index-pack", "-o", str(theirs), str(pack), cwd=tmp_path)
    assert theirs.read_bytes() == pack.with_suffix(".idx").read_bytes()


def test_the_helper_writes_nothing_unless_told(tmp_path: Path) -> None:
    objects, bases = versions()
    repo = bare(tmp_path)
    before = sorted(p.name for p in (repo / "objects" / "pack").iterdir())
    job = PackProcess()
    for kind, oid, raw in objects:
        job.add(kind, bytes.fromhex(oid), raw)
    job.abort()
    # a count that is not what was sent: refused, nothing written (the caller writes it)
    other = PackProcess()
    other.add(*objects[0][:1], bytes.fromhex(objects[0][1]), objects[0][2])
    assert other.install(repo, 2) is None
    assert sorted(p.name for p in (repo / "objects" / "pack").iterdir()) == before


def test_a_dead_helper_is_reported_not_raised(tmp_path: Path) -> None:
    objects, _bases = versions()
    job = PackProcess()
    assert job._proc is not None
    job._proc.kill()
    job._proc.wait()
    for kind, oid, raw in objects * 40:  # more than a pipe holds: the write fails
        job.add(kind, bytes.fromhex(oid), raw)
    assert job.failed
    assert job.install(bare(tmp_path), len(objects) * 40) is None


@pytest.mark.parametrize("names", [(b"a.md", b"b.md"), (b"a.md", b"a.md.bak")])
def test_swapped_ids_are_the_rebuilt_tree(names: tuple[bytes, bytes]) -> None:
    one, two, new = object_key("blob", b"1"), object_key("blob", b"2"), object_key("blob", b"3")
    raw = tree((b"100644", names[0], one), (b"40000", b"dir", two), (b"100644", names[1], one))
    entries = tree_entries(raw)
    # one occurrence: replaced in place
    assert swap_tree_ids(raw, entries, [(1, new)]) == tree(
        (b"100644", names[0], one), (b"40000", b"dir", new), (b"100644", names[1], one))
    # an id held by two entries: only the one named changes (the tree is rebuilt)
    assert swap_tree_ids(raw, entries, [(2, new)]) == tree(
        (b"100644", names[0], one), (b"40000", b"dir", two), (b"100644", names[1], new))


def test_an_id_inside_a_name_is_not_swapped() -> None:
    blob = next(k for k in (object_key("blob", b"%d" % i) for i in range(100))
                if b"\x00" not in k and b"/" not in k)  # its bytes can be in a name
    new, clash = object_key("blob", b"y"), b"x" + blob
    raw = tree((b"100644", clash, object_key("blob", b"z")), (b"100644", b"zz", blob))
    entries = tree_entries(raw)
    got = swap_tree_ids(raw, entries, [(1, new)])
    assert tree_entries(got) == [entries[0], (b"100644", b"zz", new)]


def test_a_base_no_longer_kept_is_not_used(tmp_path: Path) -> None:
    objects, bases = versions()
    repo = bare(tmp_path)
    built = PackBuilder(keep_bytes=1)  # only the last object's content is kept
    add_all(built, objects, bases)
    # each version's base (the previous blob or tree) was two objects back: all whole
    assert all(depth == 0 for _offset, depth in built.written.values())
    install_pack(repo, built)
    assert_holds(repo, objects)


def test_the_helper_stops_past_its_byte_limit(tmp_path: Path) -> None:
    objects, _bases = versions()
    repo = bare(tmp_path)
    before = sorted(p.name for p in (repo / "objects" / "pack").iterdir())
    job = PackProcess(max_bytes=len(objects[0][2]) * 3)
    for kind, oid, raw in objects:
        job.add(kind, bytes.fromhex(oid), raw)
    assert job.failed and job._proc is None  # stopped, not waiting for more
    assert job.install(repo, len(objects)) is None
    assert sorted(p.name for p in (repo / "objects" / "pack").iterdir()) == before


def test_streamed_reads_say_which_objects_are_missing(tmp_path: Path) -> None:
    repo = bare(tmp_path)
    blob = git("hash-object", "-w", "--stdin", cwd=repo, input=b"a\n").stdout.strip().decode()
    raw = tree((b"100644", b"a.md", bytes.fromhex(blob)))
    one = git("hash-object", "-t", "tree", "-w", "--stdin", cwd=repo,
              input=raw).stdout.strip().decode()
    gone = "0" * 39 + "1"
    with ObjectReader(repo) as reader:
        assert list(reader.stream_found([one, gone, blob])) == [
            (b"tree", raw), None, (b"blob", b"a\n")]
        with pytest.raises(RepoError, match="missing"):
            list(reader.stream([one, gone]))
        # a whole history's trees are read so: the missing tree is skipped, reported
        # when it is needed, as without streaming
        seen: list[bytes] = []
        cache = TreeCache(reader)
        cache.prefetch([bytes.fromhex(gone), bytes.fromhex(one)], streamed=True,
                       visit=lambda oid, _entries: seen.append(oid))
        assert seen == [bytes.fromhex(one)]
        assert cache.raw == {bytes.fromhex(one): raw}
        with pytest.raises(RepoError, match="not in"):
            cache.entries(bytes.fromhex(gone))


def test_a_malformed_tree_is_refused_every_time(tmp_path: Path) -> None:
    repo = bare(tmp_path)
    bad = git("hash-object", "-t", "tree", "--literally", "-w", "--stdin", cwd=repo,
              input=b"100644 a.md\x00short").stdout.strip().decode()
    good_raw = tree((b"100644", b"a.md", object_key("blob", b"a")))
    good = git("hash-object", "-t", "tree", "--literally", "-w", "--stdin", cwd=repo,
               input=good_raw).stdout.strip().decode()
    with ObjectReader(repo) as reader:
        cache = TreeCache(reader)
        for _attempt in range(2):  # not cached as parsed after the first refusal
            with pytest.raises(RepoError, match="malformed"):
                cache.entries(bytes.fromhex(bad))
        assert cache.entries(bytes.fromhex(good)) == tree_entries(good_raw)
        assert cache.entries(bytes.fromhex(good)) == tree_entries(good_raw)  # from the cache
        with pytest.raises(RepoError, match="malformed"):
            cache.prefetch([bytes.fromhex(bad)])
        with pytest.raises(RepoError, match="malformed"):
            cache.prefetch([bytes.fromhex(bad)], streamed=True)
        with pytest.raises(RepoError, match="malformed"):
            cache.entries(bytes.fromhex(bad))


def test_a_history_is_listed_and_read_in_one_stream(tmp_path: Path) -> None:
    """topo_commit_contents gives what rev-list and cat-file give one after the other:
    the same commits in the same order, with their parents and their exact bytes (a
    merge, a root, a Latin-1 message), from a tag and a branch as tips."""
    from tests.history_support import generate_history

    repo = tmp_path / "h.git"
    generate_history(repo, 60, files=3, file_bytes=300, odd=True)
    tips = git("for-each-ref", "--format=%(objectname)", "refs/heads", "refs/tags",
               cwd=repo).stdout.decode().split()
    listed = git("rev-list", "--topo-order", "--reverse", "--parents", "--stdin", cwd=repo,
                 input="".join(t + "\n" for t in tips).encode()).stdout.decode().splitlines()
    got = list(topo_commit_contents(repo, tips))
    assert [(c, p) for c, p, _raw in got] == [(ln.split()[0], ln.split()[1:]) for ln in listed]
    assert any(len(p) == 2 for _c, p, _raw in got) and got[0][1] == []
    for oid, _parents, raw in got:
        assert object_id("commit", raw) == oid
        assert git("cat-file", "commit", oid, cwd=repo).stdout == raw
    assert list(topo_commit_contents(repo, [])) == []


def test_a_broken_history_is_refused_not_cut_short(tmp_path: Path) -> None:
    """A commit whose parent is missing makes rev-list fail: the stream raises once it
    ends, after giving nothing (rev-list writes only after its whole walk)."""
    repo = bare(tmp_path)
    empty = git("hash-object", "-t", "tree", "-w", "--stdin", cwd=repo,
                input=b"").stdout.strip().decode()
    orphan = git("hash-object", "-t", "commit", "-w", "--stdin", cwd=repo,
                 input=f"tree {empty}\nparent {'1' * 40}\nauthor a <a@b> 1 +0000\n"
                       f"committer a <a@b> 1 +0000\n\nx\n".encode()).stdout.strip().decode()
    got: list[str] = []
    with pytest.raises(RepoError, match="rev-list failed"):
        for oid, _parents, _raw in topo_commit_contents(repo, [orphan]):
            got.append(oid)
    assert got == []
