"""memgit purge: real repositories, git-filter-repo as the reference, real pre-receive.

The drive histories come from tests/history_support.py's generator (git fast-import,
shared with bench/bench_purge.py):
merges, an annotated and a lightweight tag, refs/memgit/, odd time zones, a Latin-1
message, a message quoting the purged text, an empty commit, a commit that only
edits the purged entry, an id-less entry, and a fenced bullet carrying the id.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memgit.errors import ConflictError, NotADriveError, RepoError, UsageError
from memgit.format import entries as fmt
from memgit.git.repository import open_drive
from memgit.git.rewrite import write_pack
from memgit.policy.registry import PurgeRegistry, lock_line, purge_digest
from memgit.purge import rewrite as purge_rewrite
from memgit.purge.rewrite import apply_purge, plan_purge, purge
from memgit.purge.text import remove_entry_lines, scrub_message
from tests import history_support
from tests.conftest import git, memgit, memgit_ok, memgit_on_terminal, refused

TARGET = history_support.TARGET_ID
SOURCE = "https://example.com/sessions/1"


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory):
    """One generated history per module; tests purge fresh copies of it."""
    path = tmp_path_factory.mktemp("history") / "source.git"
    env_before = dict(os.environ)
    os.environ.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    try:
        made = history_support.generate_history(path, 150, files=6, file_bytes=1500, odd=True,
                                      target_edits=8)
    finally:
        os.environ.clear()
        os.environ.update(env_before)
    return made


def fresh_copy(history, tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copytree(history.path, target, symlinks=True)
    return target


def refs(path: Path) -> dict[str, str]:
    out = git("for-each-ref", "--format=%(refname) %(objectname)", cwd=path).stdout.decode()
    return dict(line.split(" ") for line in out.splitlines()
                if not line.startswith(("refs/replace/", "refs/memgit/purged ",
                                         "refs/memgit/registry/")))


def all_objects(path: Path) -> list[tuple[str, str, bytes]]:
    proc = git("cat-file", "--batch-all-objects", "--batch", "--unordered", cwd=path)
    out, data, pos = [], proc.stdout, 0
    while pos < len(data):
        nl = data.index(b"\n", pos)
        oid, kind, size = data[pos:nl].split()
        body = data[nl + 1:nl + 1 + int(size)]
        out.append((oid.decode(), kind.decode(), body))
        pos = nl + 2 + int(size)
    return out


def cli_purge(path: Path, *ids: str, extra: tuple[str, ...] = ("--yes", "--json")):
    return memgit("purge", *ids, "--repo", str(path), *extra)


# --- the same result as git-filter-repo --------------------------------------------------


def test_same_commits_as_filter_repo(history, tmp_path: Path) -> None:
    ids = [TARGET, history.deterministic_id]
    texts = history.target_texts + [history.deterministic_text]
    ours, theirs, again = (fresh_copy(history, tmp_path, n) for n in ("ours", "fr", "fr2"))
    assert refs(ours) == refs(theirs)
    proc = cli_purge(ours, *ids)
    assert proc.returncode == 0, proc.stderr.decode()
    summary = json.loads(proc.stdout)
    history_support.run_filter_repo(theirs, ids, texts)
    history_support.run_filter_repo(again, ids, texts)
    assert refs(theirs) == refs(again), "filter-repo is reproducible run to run"
    assert refs(ours) == refs(theirs)
    ours_list = git("rev-list", "--exclude=refs/memgit/purged",
                    "--exclude=refs/memgit/registry/*", "--all", "--topo-order",
                    cwd=ours).stdout.split()
    theirs_list = git("rev-list", "--all", "--topo-order", cwd=theirs).stdout.split()
    assert len(ours_list) == len(theirs_list) == summary["commits_total"]
    for mine, reference in zip(ours_list, theirs_list, strict=True):  # commit by commit
        assert mine == reference
        assert git("cat-file", "commit", mine.decode(), cwd=ours).stdout == \
            git("cat-file", "commit", reference.decode(), cwd=theirs).stdout
    # the history had what the comparison is meant to cover
    raw = [git("cat-file", "commit", c.decode(), cwd=ours).stdout for c in ours_list]
    assert sum(r.count(b"\nparent ") > 1 for r in raw) >= 2  # merges
    assert any(b"\nencoding iso-8859-1\n" in r and b"Caf\xe9" in r for r in raw)
    assert {r.split(b"\nauthor ")[1].split(b"\n")[0][-5:] for r in raw} >= {b"+1245", b"-0330"}
    assert any(b"Quoted by mistake: [purged]" in r for r in raw)
    assert git("cat-file", "-t", "refs/tags/v1", cwd=ours).stdout.strip() == b"tag"
    assert summary["messages_scrubbed"] == 1
    assert summary["commits_rewritten"] == summary["commits_total"]  # first commit has it


def test_nothing_survives(history, tmp_path: Path) -> None:
    path = fresh_copy(history, tmp_path, "drive.git")
    before = len(all_objects(path))
    result = purge(open_drive(path), [TARGET, history.deterministic_id], today="2026-05-01")
    objects = all_objects(path)
    texts = [t.encode() for t in history.target_texts + [history.deterministic_text]]
    for oid, kind, data in objects:
        assert not any(t in data for t in texts), f"{kind} {oid} holds a purged text"
        if kind == "blob":
            doc = fmt.parse_document("x.md", data.decode())
            assert not [e for _l, e in doc.entries()
                        if e.id in (TARGET, history.deterministic_id)]
    # the fenced example and the answer naming the id as parent stay
    assert any(kind == "blob" and f"- fenced example [id: {TARGET}]".encode() in data
               for _o, kind, data in objects)
    assert any(kind == "blob" and f"parent: {TARGET}".encode() in data
               for _o, kind, data in objects)
    fsck = git("fsck", "--full", "--strict", "--no-dangling", cwd=path)
    assert fsck.stdout == b"" and fsck.stderr == b""
    assert git("reflog", "show", "--all", cwd=path, check=False).stdout == b""
    assert len(objects) == result.verified_objects
    assert result.objects_pruned == before + result.objects_written - len(objects)
    registry = PurgeRegistry.load(path)
    assert registry.ids == {TARGET, history.deterministic_id}
    assert all(registry.holds_text(t) for t in history.target_texts)
    lines = (path / "memgit-purged").read_text().splitlines()
    assert len(lines) == len(history.target_texts) + 1
    assert all(line.split(" ")[2] == "2026-05-01" for line in lines)
    assert len(list((path / "objects" / "pack").glob("*.pack"))) == 1


def test_untouched_history_keeps_its_ids(new_drive) -> None:
    work = new_drive({"notes.md": "# Notes\n\n- Keep this one [source: imported:unknown; "
                                  "added: 2026-01-01; id: m-01keep0000000000000000000]\n"})
    before = git("rev-list", "--reverse", "HEAD", cwd=work).stdout.decode().split()
    notes = work / "notes.md"
    secret = "Erin's badge number is 4471"
    notes.write_text(notes.read_text() + fmt.format_entry(secret, SOURCE, "2026-01-02",
                                                          "m-01secret00000000000000000") + "\n")
    git("commit", "-qam", "Remember 1 entry: m-01secret00000000000000000", cwd=work)
    notes.write_text(notes.read_text().replace("4471", "4472"))
    git("commit", "-qam", "Edit m-01secret00000000000000000", cwd=work)
    notes.write_text(notes.read_text() + "- Later fact [source: imported:unknown; "
                     "added: 2026-01-03; id: m-01later000000000000000000]\n")
    git("commit", "-qam", "Remember 1 entry", cwd=work)
    old = git("rev-list", "--reverse", "HEAD", cwd=work).stdout.decode().split()
    git("reset", "-q", "--hard", "HEAD~1", cwd=work)
    git("reset", "-q", "--hard", "ORIG_HEAD", cwd=work)  # ORIG_HEAD names an old commit
    result = purge(open_drive(work), ["m-01secret00000000000000000"])
    assert not (work / ".git" / "ORIG_HEAD").exists()
    new = git("rev-list", "--reverse", "HEAD", cwd=work).stdout.decode().split()
    assert new[:len(before)] == old[:len(before)] == before
    assert all(a != b for a, b in zip(old[len(before):], new[len(before):], strict=True))
    assert result.plan.commits_rewritten == 3
    # the checkout moved with its branch: clean status, file without the line
    assert git("status", "--porcelain", cwd=work).stdout == b""
    assert "Erin" not in notes.read_text() and "Later fact" in notes.read_text()
    for _oid, _kind, data in all_objects(work):
        assert b"badge number" not in data
    # messages, authors and dates are kept byte for byte (only tree and parents change)
    for o, n in zip(old, new, strict=True):
        old_raw = git("cat-file", "commit", o, cwd=work, check=False).stdout
        new_raw = git("cat-file", "commit", n, cwd=work).stdout
        if old_raw:
            assert old_raw == new_raw
        else:
            assert new_raw.split(b"\nauthor ", 1)[1] and b"Erin" not in new_raw


# --- refusing, and changing nothing -----------------------------------------------------


def snapshot(path: Path) -> tuple[dict[str, str], list[str], bool]:
    packs = sorted(p.name for p in (path / "objects" / "pack").iterdir())
    return refs(path), packs, (path / "memgit-purged").exists()


@pytest.mark.parametrize("ids, message", [
    (["m-01nosuchid000000000000000"], "no entry has the id m-01nosuchid"),
    (["entry-0123456789abcdef"], "no entry has the id entry-0123456789abcdef"),
    ([TARGET, "m-01nosuchid000000000000000"], "no entry has the id m-01nosuchid"),
    (["m-01j0000000000000000answer", "bad id!"], "not an entry id: 'bad id!'"),
    ([], "no entry ids given"),
])
def test_bad_ids_change_nothing(history, tmp_path: Path, ids: list[str], message: str) -> None:
    path = fresh_copy(history, tmp_path, "drive.git")
    before = snapshot(path)
    with pytest.raises(UsageError) as info:
        purge(open_drive(path), ids)
    assert message in info.value.message
    assert snapshot(path) == before


def test_an_id_named_only_in_a_fence_or_as_parent_is_not_an_entry(new_drive) -> None:
    work = new_drive({"a.md": "# A\n\n```\n- example [id: m-01fenced00000000000000000]\n```\n"
                              "- Reply [kind: answer; parent: m-01fenced00000000000000000; "
                              "id: m-01reply000000000000000000]\n"})
    before = snapshot(work / ".git")
    proc = cli_purge(work, "m-01fenced00000000000000000")
    assert proc.returncode == 2
    refused(proc, "MG001")
    assert b"no entry has the id m-01fenced00000000000000000 in any commit" in proc.stderr
    assert b"code block" in proc.stderr
    assert snapshot(work / ".git") == before


def test_not_a_drive(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    git("init", "-q", str(plain), cwd=tmp_path)
    (plain / "README").write_text("- not memory [id: m-01x]\n")
    git("add", "README", cwd=plain)
    git("commit", "-qm", "x", cwd=plain)
    with pytest.raises(NotADriveError):
        purge(open_drive(plain), ["m-01x"])
    proc = cli_purge(tmp_path / "nowhere", "m-01x")
    assert proc.returncode == 2 and b"does not exist" in proc.stderr
    refused(proc, "MG002")


def test_already_purged_is_said_so(history, tmp_path: Path) -> None:
    path = fresh_copy(history, tmp_path, "drive.git")
    purge(open_drive(path), [TARGET])
    before = snapshot(path)
    with pytest.raises(UsageError, match="already purged"):
        purge(open_drive(path), [TARGET])
    assert snapshot(path) == before


def test_a_kept_entry_with_the_same_text_is_refused(new_drive) -> None:
    same = "Frank's phone is 555 0100"
    work = new_drive({"a.md": "# A\n\n" + fmt.format_entry(same, SOURCE, "2026-01-01",
                                                          "m-01first00000000000000000") + "\n"
                      + fmt.format_entry(same.upper(), SOURCE, "2026-01-02",
                                         "m-01second0000000000000000") + "\n"})
    before = snapshot(work / ".git")
    with pytest.raises(UsageError, match="m-01second0000000000000000 in a.md"):
        purge(open_drive(work), ["m-01first00000000000000000"])
    assert snapshot(work / ".git") == before
    purge(open_drive(work), ["m-01first00000000000000000", "m-01second0000000000000000"])
    assert "Frank" not in (work / "a.md").read_text()


def test_dirty_checkout_is_refused(new_drive) -> None:
    work = new_drive({"a.md": "# A\n\n" + fmt.format_entry("Gone soon", SOURCE, "2026-01-01",
                                                          "m-01gone000000000000000000") + "\n"})
    (work / "a.md").write_text((work / "a.md").read_text() + "- draft\n")
    before = snapshot(work / ".git")
    with pytest.raises(UsageError, match="uncommitted changes in files the purge rewrites: a.md"):
        purge(open_drive(work), ["m-01gone000000000000000000"])
    assert snapshot(work / ".git") == before


def test_a_push_during_the_purge_aborts_cleanly(history, tmp_path: Path) -> None:
    path = fresh_copy(history, tmp_path, "drive.git")
    drive = open_drive(path)
    plan = plan_purge(drive, [TARGET])
    # a push lands between reading and moving the refs
    tree = git("rev-parse", "main^{tree}", cwd=path).stdout.decode().strip()
    pushed = git("commit-tree", tree, "-p", "main", "-m", "pushed meanwhile",
                 cwd=path).stdout.decode().strip()
    git("update-ref", "refs/heads/main", pushed, cwd=path)
    before = snapshot(path)
    with pytest.raises(ConflictError, match="nothing was changed"):
        apply_purge(drive, plan)
    assert snapshot(path) == before
    assert git("rev-parse", "main", cwd=path).stdout.decode().strip() == pushed
    # and it can simply be run again
    proc = cli_purge(path, TARGET)
    assert proc.returncode == 0, proc.stderr.decode()
    assert git("log", "-1", "--format=%s", "main", cwd=path).stdout == b"pushed meanwhile\n"
    assert git("rev-parse", "main", cwd=path).stdout.decode().strip() != pushed


def test_the_pack_built_ahead_is_the_pack_written_after(history, tmp_path: Path) -> None:
    packs = []
    for ahead in (False, True):
        path = fresh_copy(history, tmp_path, f"drive-{ahead}.git")
        before = {p.name for p in (path / "objects" / "pack").iterdir()}
        plan = plan_purge(open_drive(path), [TARGET], pack_ahead=ahead)
        assert (plan.pack_job is not None) == ahead
        assert {p.name for p in (path / "objects" / "pack").iterdir()} == before  # not yet
        written: list[Path] = []

        def counted(*args, written=written, real=purge_rewrite.write_pack, **kwargs) -> Path:
            written.append(real(*args, **kwargs))
            return written[-1]

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(purge_rewrite, "expire_reflogs_and_prune", lambda _git_dir: None)
            mp.setattr(purge_rewrite, "write_pack", counted)
            mp.setattr(purge_rewrite, "verify_purged", lambda *a, **k: 0)
            apply_purge(open_drive(path), plan)
        assert bool(written) != ahead  # the helper's pack, not one written after
        new = sorted((path / "objects" / "pack").glob("pack-*.pack"))
        packs.append({p.name: p.read_bytes() for p in new if p.name[:-5] + ".idx" not in before})
    assert packs[0] == packs[1] and len(packs[0]) == 1


def test_a_refused_plan_built_ahead_leaves_no_file(history, tmp_path: Path) -> None:
    path = fresh_copy(history, tmp_path, "drive.git")
    drive = open_drive(path)
    plan = plan_purge(drive, [TARGET], pack_ahead=True)
    git("update-ref", "refs/heads/main", "main~1", cwd=path)  # a ref moves meanwhile
    before = snapshot(path)
    with pytest.raises(ConflictError, match="nothing was changed"):
        apply_purge(drive, plan)
    assert snapshot(path) == before


def test_confirmation_is_required_without_a_terminal(history, tmp_path: Path) -> None:
    path = fresh_copy(history, tmp_path, "drive.git")
    before = snapshot(path)
    proc = cli_purge(path, TARGET, extra=())
    assert proc.returncode == 2 and b"--yes" in proc.stderr
    refused(proc, "MG001")
    assert snapshot(path) == before


def test_dry_run_lists_and_changes_nothing(history, tmp_path: Path) -> None:
    path = fresh_copy(history, tmp_path, "drive.git")
    before = snapshot(path)
    proc = cli_purge(path, TARGET, extra=("--dry-run", "--json"))
    assert proc.returncode == 0, proc.stderr.decode()
    out = json.loads(proc.stdout)
    assert out["dry_run"] and snapshot(path) == before
    assert out["digests"][TARGET] == [purge_digest(t) for t in history.target_texts]
    first = git("rev-list", "--max-parents=0", "main", cwd=path).stdout.decode().strip()
    changes = [(c["commit"], c["path"]) for c in out["changes"] if c["id"] == TARGET]
    assert changes[0] == (first, "area0/topic00.md")
    edits = git("log", "--format=%H", "--grep=^Edit m-", "main", cwd=path).stdout.decode()
    assert set(edits.split()) <= {c for c, _p in changes}
    text = cli_purge(path, TARGET, extra=("--dry-run",))
    assert text.returncode == 0, text.stderr.decode()
    assert f"text digest {purge_digest(history.target_texts[0])}".encode() in text.stdout
    assert f"changes {first[:12]} area0/topic00.md".encode() in text.stdout
    assert snapshot(path) == before


def test_cli_summary_and_quiet_without_a_terminal(history, tmp_path: Path) -> None:
    path = fresh_copy(history, tmp_path, "drive.git")
    old = git("rev-parse", "main", cwd=path).stdout.decode().strip()
    proc = cli_purge(path, TARGET, extra=("--yes",))
    assert proc.returncode == 0, proc.stderr.decode()
    new = git("rev-parse", "main", cwd=path).stdout.decode().strip()
    assert f"old head {old}".encode() in proc.stdout and f"new head {new}".encode() in proc.stdout
    count = len(git("rev-list", "--exclude=refs/memgit/purged",
                    "--exclude=refs/memgit/registry/*", "--all", cwd=path).stdout.split())
    assert f"{count} of {count} commits rewritten".encode() in proc.stdout
    assert b"pruned" in proc.stdout
    # long work is quiet without a terminal: stderr holds no progress (issue: quiet or a tty)
    assert b"reading files" not in proc.stderr and b"rewriting" not in proc.stderr
    from memgit.state import events

    assert events.counts(path)["purge"] == 1


def test_ids_are_checked_before_confirmation_and_resume_asks_nothing(history,
                                                                    tmp_path: Path) -> None:
    path = fresh_copy(history, tmp_path, "drive.git")
    before = snapshot(path)
    none = memgit("purge", "--repo", str(path))  # no ids, no terminal
    assert none.returncode == 2 and b"no entry ids given" in none.stderr
    bad = memgit("purge", "not an id", "--repo", str(path))
    assert bad.returncode == 2 and b"not an entry id" in bad.stderr
    resumed = memgit("purge", "--resume", "--repo", str(path))  # nothing to finish
    assert resumed.returncode == 0, resumed.stderr
    assert snapshot(path) == before


def test_progress_on_a_terminal_only_and_never_with_json(history, tmp_path: Path) -> None:
    def purge_on_terminal(name: str, *extra: str) -> tuple[bytes, bytes]:
        path = fresh_copy(history, tmp_path, name)
        status, out, shown = memgit_on_terminal("purge", TARGET, "--repo", str(path), "--yes",
                                                *extra)
        assert status == 0, shown
        return out, shown

    out, shown = purge_on_terminal("tty.git")
    assert b"rewriting commits" in shown and b"] " in shown and b"commits rewritten" in out
    out, shown = purge_on_terminal("json.git", "--json")
    assert json.loads(out)["commits_rewritten"] > 0
    assert b"rewriting" not in shown and b"reading" not in shown


# --- signatures, messages, tags ---------------------------------------------------------


def test_signatures_are_dropped_and_said(new_drive) -> None:
    work = new_drive({"a.md": "# A\n\n" + fmt.format_entry("Signed away", SOURCE, "2026-01-01",
                                                          "m-01signed0000000000000000") + "\n"})
    head = git("cat-file", "commit", "HEAD", cwd=work).stdout
    signature = (b"gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n"
                 b" -----END PGP SIGNATURE-----\n")
    headers, _, message = head.partition(b"\n\n")
    signed = headers + b"\n" + signature.rstrip(b"\n") + b"\n\n" + message
    oid = git("hash-object", "-t", "commit", "-w", "--stdin", cwd=work,
              input=signed).stdout.decode().strip()
    git("update-ref", "refs/heads/main", oid, cwd=work)
    tag = (b"object " + oid.encode() + b"\ntype commit\ntag v1\ntagger A <a@b> 1700000000 +0000"
           b"\n\nRelease\n-----BEGIN PGP SIGNATURE-----\n\nabc\n-----END PGP SIGNATURE-----\n")
    tag_oid = git("hash-object", "-t", "tag", "-w", "--stdin", cwd=work,
                  input=tag).stdout.decode().strip()
    git("update-ref", "refs/tags/v1", tag_oid, cwd=work)
    result = purge(open_drive(work), ["m-01signed0000000000000000"])
    assert result.plan.signatures_dropped == 2
    new = git("cat-file", "commit", "main", cwd=work).stdout
    assert b"gpgsig" not in new
    assert new.split(b"\n", 2)[2] == head.split(b"\n", 2)[2]  # all but the tree line
    new_tag = git("cat-file", "tag", "v1", cwd=work).stdout
    assert new_tag.endswith(b"\n\nRelease\n") and b"SIGNATURE" not in new_tag
    proc = git("fsck", "--full", "--strict", cwd=work)
    assert proc.returncode == 0


def test_scrub_message_longest_first() -> None:
    texts = sorted([b"Dana lives at 1 Elm", b"Dana lives"], key=lambda t: (-len(t), t))
    assert scrub_message(b"note: Dana lives at 1 Elm; Dana lives", texts) == \
        b"note: [purged]; [purged]"
    assert scrub_message(b"nothing here", texts) == b"nothing here"


# --- the line filter against its plain definition ----------------------------------------


def reference(data: bytes, ids: set[str]) -> bytes:
    doc = fmt.parse_document("", data.decode("utf-8", "surrogateescape"))
    return "".join(line.content + line.eol for line in doc.lines
                   if line.entry is None or line.entry.id not in ids
                   ).encode("utf-8", "surrogateescape")


PIECES = [
    "- Purge me [source: imported:unknown; added: 2026-01-01; id: m-01p]",
    "  * Purge me too [id: m-01p]",
    "- Keep me [id: m-01k]",
    "- Reply [kind: answer; parent: m-01p; id: m-01r]",
    "- An id-less one [source: imported:unknown; added: 2026-01-01]",
    "- m-01p is only mentioned here",
    "```", "~~~~", "# Heading m-01p", "", "---", "- [id: m-01p]", "\xe9t\xe9 m-01p",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(["\n", "\r\n", ""])),
                max_size=12), st.booleans())
def test_fast_filter_equals_the_definition(lines, invalid: bool) -> None:
    data = "".join(c + e for c, e in lines).encode()
    if invalid:
        data += b"\xff\xfe- trailing [id: m-01p]"
    det = fmt.parse_entry(PIECES[4])
    assert det is not None
    ids = {"m-01p", det.id}
    needles = ["m-01p", det.id, det.text]
    got = remove_entry_lines(data, frozenset(ids), needles)
    expected = reference(data, ids)
    assert (got[0] if got is not None else data) == expected


def test_line_filter_keeps_terminators_and_bytes() -> None:
    data = b"# T\r\n- a [id: m-01p]\r\n- b [id: m-01k]\r\n- c [id: m-01p]"
    got = remove_entry_lines(data, frozenset({"m-01p"}), ["m-01p"])
    assert got is not None
    assert got[0] == b"# T\r\n- b [id: m-01k]\r\n"
    assert [r.text for r in got[1]] == ["a", "c"]


# --- plumbing -------------------------------------------------------------------------


def test_written_pack_is_valid_git(tmp_path: Path) -> None:
    repo = tmp_path / "r.git"
    git("init", "-q", "--bare", str(repo), cwd=tmp_path)
    base = b"".join(b"line %d of a long file\n" % i for i in range(400))
    versions = [base.replace(b"line %d " % i, b"LINE %d " % i) for i in range(0, 120, 2)]
    from memgit.git.raw import object_id

    objects = [("blob", object_id("blob", v), v) for v in versions]
    objects.append(("blob", object_id("blob", b""), b""))
    bases = {objects[i][1]: objects[i - 1][1] for i in range(1, len(versions))}
    pack = write_pack(repo, objects, bases, max_depth=5)
    verify = git("verify-pack", "-v", str(pack.with_suffix(".idx")), cwd=repo).stdout.decode()
    assert "chain length = 5:" in verify and "chain length = 6" not in verify
    for _kind, oid, data in objects:
        assert git("cat-file", "blob", oid, cwd=repo).stdout == data
    assert git("fsck", "--full", cwd=repo).returncode == 0


def test_verification_fails_loudly_when_old_objects_are_kept(history, tmp_path: Path) -> None:
    path = fresh_copy(history, tmp_path, "drive.git")
    for pack in (path / "objects" / "pack").glob("*.pack"):
        pack.with_suffix(".keep").write_text("kept by the admin\n")
    with pytest.raises(RepoError, match="VERIFICATION FAILED") as info:
        purge(open_drive(path), [TARGET])
    assert "an old object that held purged data survived" in info.value.message
    # each named with its type, which the listing of every object no longer carries
    import re

    assert re.search(r"(blob|commit) [0-9a-f]{40} \(an old object", info.value.message)


def test_verification_reads_objects_it_does_not_know(history, tmp_path: Path) -> None:
    path = fresh_copy(history, tmp_path, "drive.git")
    stray = f"- Stray copy {history.target_texts[0]} [id: {TARGET}]\n".encode()
    oid = git("hash-object", "-w", "--stdin", cwd=path, input=stray).stdout.strip()
    # a kept pack holding an object no ref reaches: pruning leaves it, nothing read it
    git("pack-objects", "-q", str(path / "objects" / "pack" / "pack"), cwd=path,
        input=oid + b"\n")
    for keep in (path / "objects" / "pack").glob("pack-*.pack"):
        if git("show-index", cwd=path, input=keep.with_suffix(".idx").read_bytes()
               ).stdout.count(b"\n") == 1:
            keep.with_suffix(".keep").write_text("kept\n")
    with pytest.raises(RepoError, match="VERIFICATION FAILED") as info:
        purge(open_drive(path), [TARGET])
    assert f"blob {oid.decode()} (an entry with a purged id)" in info.value.message


def test_verification_finds_the_text_under_another_id_in_history(new_drive) -> None:
    text = "Ivan's locker code is 9911"
    work = new_drive({"a.md": "# A\n\n" + fmt.format_entry(text, SOURCE, "2026-01-01",
                                                          "m-01older0000000000000000") + "\n"})
    (work / "a.md").write_text("# A\n\n")  # the older entry leaves the head
    git("commit", "-qam", "Forget 1 entry", cwd=work)
    (work / "a.md").write_text("# A\n\n" + fmt.format_entry(text, SOURCE, "2026-01-02",
                                                           "m-01newer0000000000000000") + "\n")
    git("commit", "-qam", "Remember 1 entry", cwd=work)
    with pytest.raises(RepoError, match="entry m-01older0000000000000000 holds a purged text"):
        purge(open_drive(work), ["m-01newer0000000000000000"])
    purge(open_drive(work), ["m-01older0000000000000000"])  # naming it too finishes the job
    for _oid, _kind, data in all_objects(work):
        assert b"locker code" not in data


def test_verification_finds_a_later_copy_under_another_id(new_drive) -> None:
    text = "Judy's safe combination is 12 34 56"
    work = new_drive({"a.md": "# A\n\n" + fmt.format_entry(text, SOURCE, "2026-01-01",
                                                          "m-01judy00000000000000000") + "\n"})
    (work / "b.md").write_text("# B\n\n" + fmt.format_entry(text, SOURCE, "2026-01-02",
                                                           "m-01copy00000000000000000") + "\n")
    memory = (work / "MEMORY.md").read_text()
    paths = ["MEMORY.md", "a.md", "b.md"]
    (work / "MEMORY.md").write_text(fmt.regenerate_index_section(memory, paths))
    git("add", "-A", cwd=work)
    git("commit", "-qm", "Remember 1 entry", cwd=work)
    (work / "b.md").write_text("# B\n\n")
    git("commit", "-qam", "Forget 1 entry", cwd=work)
    with pytest.raises(RepoError, match="entry m-01copy00000000000000000 holds a purged text"):
        purge(open_drive(work), ["m-01judy00000000000000000"])


# --- the server refuses the purged entry afterwards --------------------------------------


def test_pre_receive_refuses_the_purged_entry_afterwards(tmp_path: Path) -> None:
    from memgit.drives.create import create_drive

    server = tmp_path / "server.git"
    create_drive(server, bare=True)
    work = tmp_path / "work"
    git("clone", "-q", str(server), str(work), cwd=tmp_path)
    secret = "Hana's passport expires in May"
    line = fmt.format_entry(secret, SOURCE, "2026-01-01", "m-01hana000000000000000000")
    memory = (work / "MEMORY.md").read_text()
    (work / "MEMORY.md").write_text(memory.replace("## Index", line + "\n\n## Index"))
    git("commit", "-qam", "Remember 1 entry: m-01hana000000000000000000", cwd=work)
    git("push", "-q", "origin", "main", cwd=work)
    proc = cli_purge(server, "m-01hana000000000000000000")
    assert proc.returncode == 0, proc.stderr.decode()
    again = tmp_path / "again"
    git("clone", "-q", str(server), str(again), cwd=tmp_path)
    assert secret not in (again / "MEMORY.md").read_text()
    memory = (again / "MEMORY.md").read_text()
    # the same id back
    (again / "MEMORY.md").write_text(memory.replace("## Index", line + "\n\n## Index"))
    git("commit", "-qam", "Remember 1 entry", cwd=again)
    push = git("push", "origin", "main", cwd=again, check=False)
    assert push.returncode != 0 and b"MG606" in push.stderr
    # the same text under a new id
    git("reset", "-q", "--hard", "origin/main", cwd=again)
    other = fmt.format_entry(secret, SOURCE, "2026-01-02", "m-01new0000000000000000000")
    (again / "MEMORY.md").write_text(memory.replace("## Index", other + "\n\n## Index"))
    git("commit", "-qam", "Remember 1 entry", cwd=again)
    push = git("push", "origin", "main", cwd=again, check=False)
    assert push.returncode != 0 and b"MG607" in push.stderr
    assert secret.encode() not in push.stderr  # the refusal does not echo the text


# --- repository shapes -----------------------------------------------------------------


def test_commit_graph_and_multi_pack_index_stay_valid(history, tmp_path: Path) -> None:
    path = fresh_copy(history, tmp_path, "drive.git")
    git("commit-graph", "write", "--reachable", cwd=path)
    git("multi-pack-index", "write", cwd=path)
    purge(open_drive(path), [TARGET])
    for args in (("fsck", "--full"), ("commit-graph", "verify"), ("multi-pack-index", "verify")):
        proc = git(*args, cwd=path)
        assert proc.returncode == 0 and b"error" not in proc.stderr
    graph = git("log", "--format=%H", "main", cwd=path).stdout.split()
    assert len(graph) == len(git("rev-list", "main", cwd=path).stdout.split())


def test_a_merge_in_progress_is_refused(new_drive) -> None:
    work = new_drive({"a.md": "# A\n\n" + fmt.format_entry("Merging", SOURCE, "2026-01-01",
                                                          "m-01merge0000000000000000") + "\n"})
    head = git("rev-parse", "HEAD", cwd=work).stdout
    (work / ".git" / "MERGE_HEAD").write_bytes(head)
    with pytest.raises(RepoError, match="merge, rebase, cherry-pick or bisect is in progress"):
        purge(open_drive(work), ["m-01merge0000000000000000"])


def test_a_clone_sharing_objects_is_refused(history, tmp_path: Path) -> None:
    source = fresh_copy(history, tmp_path, "drive.git")
    shared = tmp_path / "shared.git"
    git("clone", "-q", "--bare", "--shared", str(source), str(shared), cwd=tmp_path)
    before = snapshot(shared)
    with pytest.raises(RepoError, match="borrows objects from another repository"):
        purge(open_drive(shared), [TARGET])
    assert snapshot(shared) == before


def test_a_running_purge_holds_the_drive(history, tmp_path: Path) -> None:
    from memgit.purge.rewrite import LOCK_FILE

    path = fresh_copy(history, tmp_path, "drive.git")
    plan = plan_purge(open_drive(path), [TARGET])
    (path / LOCK_FILE).write_text(lock_line())  # this process, this host, now: it holds
    before = snapshot(path)
    with pytest.raises(ConflictError, match="another purge is running"):
        apply_purge(open_drive(path), plan)
    with pytest.raises(ConflictError, match="another purge is running"):
        plan_purge(open_drive(path), [TARGET])
    assert snapshot(path) == before
    (path / LOCK_FILE).unlink()
    apply_purge(open_drive(path), plan)
    assert not (path / LOCK_FILE).exists()


@pytest.mark.parametrize("lock", ["dead-process", "past-lease"])
def test_a_stale_purge_lock_is_taken_over_with_a_warning(history, tmp_path: Path,
                                                         lock: str) -> None:
    """A purge killed mid-way leaves its lock: the next purge takes it over (issue 10)."""
    import socket
    import subprocess

    from memgit.purge.rewrite import LOCK_FILE

    path = fresh_copy(history, tmp_path, "drive.git")
    if lock == "dead-process":
        gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True).stdout.strip()
        (path / LOCK_FILE).write_text(f"{gone} {socket.gethostname()} 2026-11-30T00:00:00Z\n")
    else:
        (path / LOCK_FILE).write_text("1 another-host 2026-01-01T00:00:00+00:00\n")
        git("config", "memgit.purgeLease", "60", cwd=path)
    proc = cli_purge(path, TARGET)
    assert proc.returncode == 0, proc.stderr.decode()
    notes = json.loads(proc.stdout)["notes"]
    assert any("took over a stale purge lock" in n for n in notes), notes
    assert not (path / LOCK_FILE).exists()
    assert not list(path.glob(LOCK_FILE + ".stale-*"))


def test_purge_publishes_the_purged_ids_for_sync_clients(history, tmp_path: Path) -> None:
    from memgit.policy.registry import PURGED_IDS_FILE, PURGED_REF

    path = fresh_copy(history, tmp_path, "drive.git")
    assert cli_purge(path, TARGET).returncode == 0
    listed = git("show", f"{PURGED_REF}:{PURGED_IDS_FILE}", cwd=path).stdout.decode()
    assert listed == f"{TARGET}\n"
    assert cli_purge(path, history.deterministic_id).returncode == 0
    listed = git("show", f"{PURGED_REF}:{PURGED_IDS_FILE}", cwd=path).stdout.decode()
    assert listed.split() == sorted([TARGET, history.deterministic_id])
    assert b"tea" not in git("show", f"{PURGED_REF}:{PURGED_IDS_FILE}", cwd=path).stdout
    # the registry refs are written side by side with it: both there, whole after the prune
    from memgit.policy.registry_refs import DIGESTS_FILE, DIGESTS_REF

    rows = git("show", f"{DIGESTS_REF}:{DIGESTS_FILE}", cwd=path).stdout.decode()
    assert {row.split()[0] for row in rows.splitlines()} == {TARGET, history.deterministic_id}
    assert git("fsck", "--full", "--no-dangling", cwd=path).stdout == b""


def test_the_recall_index_keeps_no_purged_text(new_drive) -> None:
    work = new_drive()
    for text in ("Zebediah keeps the spare key under the blue flowerpot",
                 "Lunch is at noon on Fridays"):
        proc = memgit("remember", text, "--source", "imported:unknown", cwd=work)
        assert proc.returncode == 0, proc.stderr.decode()
    hits = json.loads(memgit_ok("recall", "flowerpot", "--json", cwd=work).stdout)
    entry_id = hits[0]["id"]
    assert cli_purge(work, entry_id).returncode == 0
    gone = memgit("recall", "flowerpot", "--json", cwd=work)
    assert gone.returncode == 1 and json.loads(gone.stdout) == []  # ran, found nothing
    kept = json.loads(memgit_ok("recall", "Lunch", "--json", cwd=work).stdout)
    assert [h["text"] for h in kept] == ["Lunch is at noon on Fridays"]  # the index is there
    scanned = [p for p in (work / ".git").rglob("*") if p.is_file() and "objects" not in p.parts]
    assert work / ".git" / "memgit" / "state.sqlite" in scanned
    for path in scanned:
        assert b"flowerpot" not in path.read_bytes(), path


def test_the_collector_pauses_and_then_leaves_the_purges_objects_alone() -> None:
    # paused during a plan or an apply; enabled again, the objects made meanwhile are
    # in the oldest generation (a young collection does not walk them all again), and
    # still collected there: nothing is kept out of the collector for good
    import gc

    was = gc.isenabled()
    gc.enable()
    try:
        with purge_rewrite.gc_paused():
            assert not gc.isenabled()
            made = [[n] for n in range(5000)]
            cycle: list[object] = []
            cycle.append(cycle)
        assert gc.isenabled()
        assert gc.get_freeze_count() == 0
        young = {id(o) for o in gc.get_objects(generation=0)}
        assert not any(id(m) in young for m in made)
        oldest = {id(o) for o in gc.get_objects(generation=2)}
        assert all(id(m) in oldest for m in made) and id(cycle) in oldest
        import weakref

        class Node:
            pass

        with purge_rewrite.gc_paused():
            node = Node()
            node.me = node  # type: ignore[attr-defined]
            gone = weakref.ref(node)
            del node
        gc.collect()
        assert gone() is None
    finally:
        if not was:
            gc.disable()
