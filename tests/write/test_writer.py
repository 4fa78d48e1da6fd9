"""The writer on real repositories: commit_facts, skips, retire/edit, checkouts, the
pending queue and the CLI write commands."""

from __future__ import annotations

import fcntl
import json
import os
import re
from pathlib import Path

import pytest

from memgit import state
from memgit.errors import RefusedError, UsageError
from memgit.format import entries as fmt
from memgit.git.repository import Drive, cas_ref, open_drive, ref_target
from memgit.policy.judge import text_digest
from memgit.policy.lint import lint_rev
from memgit.policy.registry import PurgeRegistry
from memgit.policy.settings import Policy
from memgit.recall.read_path import recall
from memgit.state import events, facts, pending
from memgit.write.ops import NewFact, WriteOp, WriteResult, prepare_add, today
from memgit.write.writer import apply_write_ops, commit_facts, retry_pending
from tests.conftest import bare_drive, entry_ids_at, git, memgit, refused

GITHUB_TOKEN = "ghp_Wm4Tq9Xv2Lp7Rk3Nb8Hs5Jd1Fz6Gc0Yt8Ue3Q7"


def show(drive: Drive, path: str, rev: str = "main") -> str:
    return git("show", f"{rev}:{path}", cwd=drive.git_dir).stdout.decode()


# --- adding -----------------------------------------------------------------------------


def test_adds_default_topic_with_id_date_and_source(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "drive.git", "Memory: Joe")
    result = commit_facts(drive, ["Joe leads the product team"], message="Remember")
    assert result.status == "committed"
    (added,) = result.added
    assert fmt.is_memgit_id(added.id)
    assert added.path == "notes.md"
    assert added.source == f"memgit:observation/{added.id}"
    assert added.added == today(Policy())
    notes = show(drive, "notes.md")
    assert notes == ("# Notes\n\n" + fmt.format_entry("Joe leads the product team",
                                                      added.source, added.added, added.id)
                     + "\n")
    assert "- [[notes]]" in show(drive, "MEMORY.md")
    assert ref_target(drive, "refs/heads/main") == result.commit
    assert lint_rev(drive, "main", Policy()) == []


def test_topic_source_and_memory_entry_point(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "drive.git", "Memory: Joe")
    result = commit_facts(drive, [
        NewFact("Payments launch on 2026-10-15", "https://example.com/s/1", "projects/payments"),
        NewFact("Joe prefers short answers", "claude-code:session/42", "MEMORY.md"),
    ])
    assert [a.path for a in result.added] == ["projects/payments.md", "MEMORY.md"]
    payments = show(drive, "projects/payments.md")
    assert payments.startswith("# Payments\n\n- Payments launch on 2026-10-15 "
                               "[source: https://example.com/s/1; ")
    memory = show(drive, "MEMORY.md")
    # entries go above the ## Index, the Index lists the new topic
    assert memory.index("Joe prefers short answers") < memory.index("## Index")
    assert memory.endswith("## Index\n- [[projects/payments]]\n")
    assert lint_rev(drive, "main", Policy()) == []


def test_commit_message_names_counts_and_ids_never_text(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "drive.git", "Memory: Joe")
    first = commit_facts(drive, ["The staging database is called orca"], message="Remember")
    second = commit_facts(drive, ["The prod database is called whale"],
                          retire=[first.added[0].id])
    log = git("log", "--format=%B", cwd=drive.git_dir).stdout.decode()
    assert "orca" not in log and "whale" not in log
    assert f"Added: {first.added[0].id}" in log
    assert f"Retired: {first.added[0].id}" in log
    assert "memgit: +1 -1 ~0" in log
    assert second.retired == [first.added[0].id]


def test_skips_empty_credentials_duplicates_and_bad_sources(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "drive.git", "Memory: Joe")
    commit_facts(drive, ["Joe leads the product team"])
    result = commit_facts(drive, [
        "   ",
        f"the deploy token is {GITHUB_TOKEN}",
        "JOE leads   the product\tteam",
        NewFact("A fact from a bad place", "javascript:alert(1)"),
        "A new fact",
        "a NEW fact",
    ])
    reasons = {s.ref: s.reason for s in result.skipped}
    assert reasons == {0: "empty", 1: "credential", 2: "duplicate", 3: "source", 5: "duplicate"}
    credential = next(s for s in result.skipped if s.reason == "credential")
    assert "GitHub token" in credential.detail and GITHUB_TOKEN not in credential.detail
    assert [a.text for a in result.added] == ["A new fact"]
    assert GITHUB_TOKEN not in show(drive, "notes.md")


def test_policy_errors_on_own_lines_skip_only_that_entry(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "drive.git", "Memory: Joe")
    result = commit_facts(drive, ["Use <b>bold</b> here", "Plain fact"])
    assert [s.reason for s in result.skipped] == ["policy"]
    assert result.skipped[0].detail.startswith("MG303 raw-html")
    assert [a.text for a in result.added] == ["Plain fact"]
    assert "<b>" not in show(drive, "notes.md")


def test_refuses_a_write_the_policy_refuses_as_a_whole(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "drive.git", "Memory: Joe")
    (drive.git_dir / "memgit.yaml").write_text("limits: {drive_bytes: 200}\n")
    head = ref_target(drive, "refs/heads/main")
    with pytest.raises(RefusedError) as caught:
        commit_facts(drive, ["x" * 300])
    assert [v.code for v in caught.value.violations] == ["MG206"]
    assert ref_target(drive, "refs/heads/main") == head


def test_purged_text_is_skipped(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "drive.git", "Memory: Joe")
    PurgeRegistry.append(drive.git_dir, [("m-0000000000000000000000000x",
                                          text_digest("The old wifi password is gone"))],
                         "2026-01-01")
    result = commit_facts(drive, ["the OLD wifi password is gone", "Fine"])
    assert [s.reason for s in result.skipped] == ["purged"]
    assert [a.text for a in result.added] == ["Fine"]


# --- retire, edit -----------------------------------------------------------------------


def test_retire_and_edit_by_id(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "drive.git", "Memory: Joe")
    added = commit_facts(drive, ["One", "Two", "Three"]).added
    result = commit_facts(drive, [], retire=[added[0].id, "m-doesnotexist"],
                          edits={added[1].id: "Two, edited"})
    assert result.retired == [added[0].id]
    assert result.edited == [added[1].id]
    assert [(s.id, s.reason) for s in result.skipped] == [("m-doesnotexist", "not-found")]
    notes = show(drive, "notes.md")
    assert "- One " not in notes
    edited = next(e for _l, e in fmt.parse_document("notes.md", notes).entries()
                  if e.id == added[1].id)
    assert edited.text == "Two, edited"
    assert edited.meta["source"] == added[1].source and edited.meta["added"] == added[1].added


def test_edit_of_an_idless_entry_stamps_its_id(new_drive) -> None:
    line = "- Legacy fact [source: imported:unknown; added: 2025-01-02]"
    path = new_drive({"legacy.md": f"# Legacy\n\n{line}\n"})
    drive = open_drive(path)
    old_id = fmt.parse_entry(line).id  # type: ignore[union-attr]
    assert old_id.startswith("entry-")
    result = commit_facts(drive, [], edits={old_id: "Legacy fact, corrected"})
    assert result.edited == [old_id]
    entry = fmt.parse_entry((path / "legacy.md").read_text().splitlines()[2])
    assert entry is not None and entry.id == old_id and entry.has_explicit_id
    assert entry.text == "Legacy fact, corrected"
    assert entry.meta["added"] == "2025-01-02"


def test_nothing_to_do_makes_no_commit(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "drive.git", "Memory: Joe")
    head = ref_target(drive, "refs/heads/main")
    result = commit_facts(drive, ["", "  "])
    assert result.status == "unchanged" and len(result.skipped) == 2
    assert ref_target(drive, "refs/heads/main") == head


# --- compare-and-swap ------------------------------------------------------------------------


def test_cas_ref_refuses_a_stale_old_value(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "drive.git", "Memory: Joe")
    head = ref_target(drive, "refs/heads/main")
    assert head is not None
    commit_facts(drive, ["moves the branch"])
    moved = ref_target(drive, "refs/heads/main")
    assert moved != head
    assert cas_ref(drive, "refs/heads/main", head, head, "stale") is False
    assert ref_target(drive, "refs/heads/main") == moved


def test_writes_on_top_of_a_plain_git_push(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "drive.git", "Memory: Joe")
    first = commit_facts(drive, ["First"]).added[0]
    clone = tmp_path / "clone"
    git("clone", "-q", str(drive.git_dir), str(clone), cwd=tmp_path)
    with open(clone / "notes.md", "a") as fh:
        fh.write("- Pushed with git [source: imported:unknown; added: 2026-01-01]\n")
    git("commit", "-qam", "by hand", cwd=clone)
    git("push", "-q", "origin", "main", cwd=clone)
    result = commit_facts(drive, ["After the push"], retire=[first.id])
    assert result.status == "committed"
    notes = show(drive, "notes.md")
    assert "Pushed with git" in notes and "After the push" in notes and "First" not in notes


# --- checkouts --------------------------------------------------------------------------------


def test_checkout_gets_files_and_index_updated(new_drive) -> None:
    path = new_drive({"people.md": "# People\n"})
    drive = open_drive(path)
    result = commit_facts(drive, [NewFact("Priya owns pricing", topic="people"),
                                  NewFact("A note")])
    assert result.status == "committed"
    assert git("status", "--porcelain", cwd=path).stdout == b""
    assert "Priya owns pricing" in (path / "people.md").read_text()
    assert "- [[notes]]" in (path / "MEMORY.md").read_text()
    assert git("rev-parse", "HEAD", cwd=path).stdout.decode().strip() == result.commit


def test_checkout_refuses_uncommitted_edits_of_touched_files(new_drive) -> None:
    path = new_drive({"people.md": "# People\n", "other.md": "# Other\n"})
    drive = open_drive(path)
    (path / "other.md").write_text("# Other\n\nmy draft\n")  # not touched by the write
    commit_facts(drive, [NewFact("Fine", topic="people")])
    (path / "people.md").write_text("# People\n\nhalf-written\n")
    head = ref_target(drive, "refs/heads/main")
    with pytest.raises(UsageError, match="uncommitted edits in people.md"):
        commit_facts(drive, [NewFact("Refused", topic="people")])
    assert ref_target(drive, "refs/heads/main") == head
    assert (path / "people.md").read_text() == "# People\n\nhalf-written\n"
    assert (path / "other.md").read_text() == "# Other\n\nmy draft\n"


# --- the pending queue ---------------------------------------------------------------------------


def hold_write_lock(drive: Drive) -> int:
    """Take the drive's write lock as another writer would (flock on a separate open)."""
    folder = state.state_dir(drive.git_dir)
    folder.mkdir(exist_ok=True)
    fd = os.open(folder / "write.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_a_failed_commit_is_queued_and_lands_on_the_next_read(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "drive.git", "Memory: Joe")
    git("config", "memgit.writeLockTimeout", "0.2", cwd=drive.git_dir)
    drive = open_drive(drive.git_dir)
    fd = hold_write_lock(drive)
    try:
        result = commit_facts(drive, ["Written while the lock was held"])
    finally:
        os.close(fd)
    assert result.status == "queued" and result.pending
    queued_id = result.added[0].id
    assert queued_id not in entry_ids_at(drive.git_dir)
    with state.opened(drive.git_dir) as conn:
        assert pending.count(conn) == 1
    assert events.counts(drive.git_dir)["commit_failed"] == 1
    hits = recall(drive, "lock held")  # a read retries the queue first
    assert [h.entry_id for h in hits] == [queued_id]
    assert queued_id in entry_ids_at(drive.git_dir)
    with state.opened(drive.git_dir) as conn:
        assert pending.count(conn) == 0


def test_queued_writes_keep_their_order_and_a_refused_retry_is_counted(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "drive.git", "Memory: Joe")
    git("config", "memgit.writeLockTimeout", "0.2", cwd=drive.git_dir)
    drive = open_drive(drive.git_dir)
    fd = hold_write_lock(drive)
    try:
        first = commit_facts(drive, ["x" * 400])
        second = commit_facts(drive, ["small"])
    finally:
        os.close(fd)
    assert (first.status, second.status) == ("queued", "queued")
    (drive.git_dir / "memgit.yaml").write_text("limits: {drive_bytes: 300}\n")
    assert retry_pending(drive) == 1  # the big one is refused now, the small one lands
    assert entry_ids_at(drive.git_dir) == [second.added[0].id]
    assert events.counts(drive.git_dir)["pending_retry_failed"] == 1
    (drive.git_dir / "memgit.yaml").unlink()
    result = commit_facts(drive, ["next write"])  # drains the queue before writing
    assert result.status == "committed"
    assert set(entry_ids_at(drive.git_dir)) == {first.added[0].id, second.added[0].id,
                                                result.added[0].id}


# --- the CLI ------------------------------------------------------------------------------


def test_cli_remember_forget_edit(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "drive.git", "Memory: Joe")
    proc = memgit("-C", str(drive.git_dir), "remember", "--json", "--topic", "people",
                  "--source", "claude-code:session/7", "Joe leads the product team")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    entry_id = data["added"][0]["id"]
    assert data["status"] == "committed" and data["added"][0]["path"] == "people.md"
    proc = memgit("-C", str(drive.git_dir), "remember", "joe leads the PRODUCT team")
    assert proc.returncode == 1 and b"duplicate" in proc.stdout
    proc = memgit("-C", str(drive.git_dir), "edit", entry_id, "Joe leads the platform team")
    assert proc.returncode == 0 and b"edited 1" in proc.stdout
    assert "platform" in show(drive, "people.md")
    proc = memgit("-C", str(drive.git_dir), "forget", entry_id)
    assert proc.returncode == 0 and re.search(rb"- " + entry_id.encode(), proc.stdout)
    assert entry_id not in entry_ids_at(drive.git_dir)
    proc = memgit("-C", str(drive.git_dir), "remember", f"key {GITHUB_TOKEN}")
    assert proc.returncode == 1 and GITHUB_TOKEN.encode() not in proc.stdout + proc.stderr
    assert b"credential" in proc.stdout


def test_demo_writer_steps(new_drive) -> None:
    from memgit.demo.writing import demo_writer

    people = ("# People\n\n- Joe leads the product team [source: imported:unknown; "
              "added: 2026-01-01; id: m-01jd3xk8q7c9v2n4r6t8w0y1z3]\n")
    path = new_drive({"people.md": people})
    assert demo_writer(path) is True
    assert git("status", "--porcelain", cwd=path).stdout == b""
    assert "kind: question; status: resolved" in (path / "questions.md").read_text()


def test_topics_that_would_clobber_a_file_or_folder_are_skipped(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "drive.git", "Memory: Joe")
    commit_facts(drive, [NewFact("In a folder", topic="archive.md/old"), NewFact("Plain")])
    result = commit_facts(drive, [NewFact("Under a file", topic="notes.md/deeper"),
                                  NewFact("Over a folder", topic="archive.md"),
                                  NewFact("Fine", topic="projects/search")])
    assert [(s.ref, s.reason) for s in result.skipped] == [(0, "topic-invalid"),
                                                           (1, "topic-invalid")]
    assert [a.path for a in result.added] == ["projects/search.md"]
    assert show(drive, "notes.md").count("- ") == 1
    assert "In a folder" in show(drive, "archive.md/old.md")


def test_reserved_topics_are_skipped_and_the_board_still_writes(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "drive.git", "Memory: Joe")
    result = commit_facts(drive, [NewFact("Twin text", topic="twin/me"),
                                  NewFact("A receipt", topic="imports/r1"),
                                  NewFact("Not a question", topic="questions"),
                                  NewFact("Fine", topic="people")])
    assert [(s.ref, s.reason) for s in result.skipped] == [
        (0, "topic-reserved"), (1, "topic-reserved"), (2, "topic-reserved")]
    assert all("MG213" in s.detail for s in result.skipped)
    assert [a.path for a in result.added] == ["people.md"]
    from memgit.write.board import ask

    asked = ask(drive, "Who owns billing?")
    assert asked.added and asked.added[0].path == "questions.md"


def test_a_new_error_elsewhere_refuses_but_old_errors_do_not(new_drive) -> None:
    html = "# Old\n\n- Legacy <b>html</b> entry [source: imported:unknown]\n"
    path = new_drive({"old.md": html, "notes.md": "# Notes\n"})
    drive = open_drive(path)
    assert [v.code for v in lint_rev(drive, "main", Policy())] == ["MG303"]
    # the head already breaks a rule in a file the write does not touch: not the writer's
    assert commit_facts(drive, ["A fine fact"]).status == "committed"
    # ... nor in a file it touches
    assert commit_facts(drive, [NewFact("Another", topic="old")]).status == "committed"
    head = ref_target(drive, "refs/heads/main")
    with pytest.raises(RefusedError) as caught:  # Notes.md next to notes.md: MG210
        commit_facts(drive, [NewFact("Case twin", topic="Notes")])
    assert [v.code for v in caught.value.violations] == ["MG210"]
    assert ref_target(drive, "refs/heads/main") == head


# --- an id-less line written twice (issue 12) -----------------------------------------------

CLINE = Path(__file__).parents[1] / "data" / "realworld" / "cline" / "csv-date-expander"
# the same line, in two files of a real Cline memory bank (one nested, one not)
REPEATED = "Web UIとCLIツールの機能同期（必要であれば、特に列指定方法など）。"


def cline_drive(new_drive) -> tuple[Path, Drive, str]:
    files = {f"memory-bank/{name}": (CLINE / "memory-bank" / name).read_text(encoding="utf-8")
             for name in ("activeContext.md", "progress.md")}
    path = new_drive(files)
    entry = fmt.parse_entry(f"- {REPEATED}")
    assert entry is not None
    assert entry_ids_at(path / ".git").count(entry.id) == 2
    return path, open_drive(path), entry.id


def test_forget_of_a_derived_id_removes_every_copy(new_drive) -> None:
    path, drive, entry_id = cline_drive(new_drive)
    result = commit_facts(drive, (), [entry_id])
    assert result.status == "committed" and result.retired == [entry_id]
    assert result.warnings[0] == (f"{entry_id}: removed every copy of the line "
                                  "(memory-bank/activeContext.md:52, "
                                  "memory-bank/progress.md:66)")
    # the bank repeats another line too, now at those line numbers: a warning, kept
    assert result.warnings[1:] == ["memory-bank/progress.md:66: MG108 line-repeated: the same "
                                   "line is also at memory-bank/activeContext.md:52"]
    assert entry_id not in entry_ids_at(path / ".git")
    for name in ("activeContext.md", "progress.md"):  # the checkout follows, nothing else moved
        text = (path / "memory-bank" / name).read_text(encoding="utf-8")
        original = (CLINE / "memory-bank" / name).read_text(encoding="utf-8")
        assert REPEATED not in text
        assert len(text.splitlines()) == len(original.splitlines()) - 1
    conn = state.connection(drive.git_dir)
    assert facts.locate(conn, [entry_id]) == {}  # the index row is retired


def test_an_edit_of_a_line_written_twice_is_refused_with_the_copies(new_drive) -> None:
    path, drive, entry_id = cline_drive(new_drive)
    head = ref_target(drive, "refs/heads/main")
    result = commit_facts(drive, (), edits={entry_id: "Keep the CLI and the web UI in step"})
    assert result.status == "unchanged" and ref_target(drive, "refs/heads/main") == head
    assert [(s.reason, s.detail) for s in result.skipped] == [(
        "ambiguous", "the same line is at memory-bank/activeContext.md:52, "
        f"memory-bank/progress.md:66: edit one copy by hand, or forget them all "
        f"(memgit forget {entry_id})")]


# --- what memgit import needs of the writer (issue 12) ----------------------------------------


def test_a_fact_keeps_its_own_added_date(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "d.git")
    result = commit_facts(drive, [NewFact("Dated in the source", topic="notes",
                                          added="2024-02-29"),
                                  NewFact("A bad date", added="2024-02-30"), "Dated today"])
    assert [s.reason for s in result.skipped] == ["invalid"]
    lines = git("show", "main:notes.md", cwd=drive.git_dir).stdout.decode()
    assert "- Dated in the source [source: memgit:observation/" in lines
    assert "; added: 2024-02-29; id: " in lines
    assert f"- Dated today [source: memgit:observation/{result.added[1].id}; added: " \
        f"{today(Policy())};" in lines


def receipt_finish(calls: list[list[str]]):
    """A finish step like memgit import's: a file naming the ids really added."""
    def finish(result: WriteResult, oid_at) -> list[WriteOp]:
        ids = [a.id for a in result.added]
        calls.append(ids)
        path = "imports/receipt.md"
        return [WriteOp("file", "file:" + path, path=path, value=oid_at(path),
                        text="# Receipt\n\n" + ", ".join(ids) + "\n")] if ids else []
    return finish


def test_the_finish_step_sees_what_the_write_really_does(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "d.git")
    first = commit_facts(drive, ["Otters hold hands"])
    purged = "Badgers dig setts"
    PurgeRegistry.append(drive.git_dir, [("m-gone", text_digest(purged))], "2026-01-01")
    policy = Policy()
    ops = [prepare_add(text, n, policy, "2026-01-02") for n, text in
           enumerate(["Otters hold hands", purged, "Herons stand still", "Herons stand still"])]
    calls: list[list[str]] = []
    result = apply_write_ops(drive, ops, "import", finish=receipt_finish(calls))  # type: ignore[arg-type]
    assert result.status == "committed"
    assert [s.reason for s in result.skipped] == ["duplicate", "purged", "duplicate"]
    herons = ops[2].id  # type: ignore[union-attr]
    assert [a.id for a in result.added] == [herons] and calls[-1] == [herons]
    receipt = git("show", "main:imports/receipt.md", cwd=drive.git_dir).stdout.decode()
    assert receipt == f"# Receipt\n\n{herons}\n"
    assert first.added[0].id not in receipt
    # nothing to add: no receipt, no commit
    again = apply_write_ops(drive, ops[2:3], "import", finish=receipt_finish(calls))  # type: ignore[arg-type]
    assert again.status == "unchanged" and calls[-1] == []


def test_a_queued_write_keeps_its_finish_operations(tmp_path: Path) -> None:
    drive = bare_drive(tmp_path / "d.git")
    git("config", "memgit.writeLockTimeout", "0.2", cwd=drive.git_dir)
    drive = open_drive(drive.git_dir)
    op = prepare_add("Written while the lock was held", 0, Policy(), "2026-01-02")
    fd = hold_write_lock(drive)
    try:
        result = apply_write_ops(drive, [op], "import", finish=receipt_finish([]))  # type: ignore[list-item]
    finally:
        os.close(fd)
    assert result.status == "queued"
    assert retry_pending(drive) == 0
    receipt = git("show", "main:imports/receipt.md", cwd=drive.git_dir).stdout.decode()
    assert op.id in receipt  # type: ignore[union-attr]


# --- only drives are written (issue 10, class 10) -------------------------------------------


@pytest.mark.parametrize("command", [("remember", "A fact"),
                                     ("forget", "m-01jd3xk8q7c9v2n4r6t0000001"),
                                     ("edit", "m-01jd3xk8q7c9v2n4r6t0000001", "new"),
                                     ("ask", "Who owns billing?")])
@pytest.mark.parametrize("bare_repo", [False, True])
def test_a_repository_that_is_not_a_drive_is_not_written(tmp_path: Path, command: tuple,
                                                         bare_repo: bool) -> None:
    """A code repository with a main branch and no MEMORY.md stays as it was."""
    code = tmp_path / "code"
    git("init", "-q", "-b", "main", str(code), cwd=tmp_path)
    (code / "README.md").write_text("# A code project\n")
    git("add", "README.md", cwd=code)
    git("commit", "-q", "-m", "code", cwd=code)
    target = code
    if bare_repo:
        target = tmp_path / "code.git"
        git("clone", "-q", "--bare", str(code), str(target), cwd=tmp_path)
    head = git("rev-parse", "main", cwd=target).stdout
    proc = memgit(*command, cwd=target)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert b"MG002" in proc.stderr and b"git repository that is not a drive" in proc.stderr
    refused(proc, "MG002")
    assert b"memgit init" in proc.stderr  # the hint: make it a drive first
    assert git("rev-parse", "main", cwd=target).stdout == head
    assert git("ls-tree", "-r", "--name-only", "main", cwd=target).stdout == b"README.md\n"
    if not bare_repo:
        assert not (code / "MEMORY.md").exists() and not (code / "notes.md").exists()
    state = (code / ".git" if not bare_repo else target) / "memgit" / "state.sqlite"
    assert command[0] == "ask" or not state.exists()  # nothing made on the side either
