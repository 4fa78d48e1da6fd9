"""The index and recall on real drives: fact ids, exclusions, soft retire and revive,
stale repair, incremental and full reindex, purge support, the labelled recall set."""

from __future__ import annotations

import json
from pathlib import Path

from memgit import state
from memgit.format import entries as fmt
from memgit.git.repository import Drive, init_bare, open_drive, ref_target
from memgit.index import reindex as recall_index
from memgit.index import search as recall_search
from memgit.recall.read_path import recall
from memgit.state import facts
from memgit.write.ops import NewFact
from memgit.write.writer import commit_facts
from tests.conftest import commit_all, committed_copy, git, memgit

RECALL_DATA = Path(__file__).parents[1] / "data" / "recall"


def checkout(new_drive, files: dict[str, str]) -> tuple[Path, Drive]:
    path = new_drive(files)
    return path, open_drive(path)


def ids(hits: list[recall_search.Hit]) -> list[str]:
    return [h.entry_id for h in hits]


PEOPLE = ("# People\n\n"
          "- Joe leads the product team [source: imported:unknown; added: 2026-01-02; id: p-joe]\n"
          "- Priya owns pricing and design [source: https://example.com/s/2; added: 2026-01-03; "
          "id: p-priya]\n"
          "- Sam is on call for the payments service [source: imported:unknown]\n")


def test_recall_returns_fields_and_counts_retrievals(new_drive) -> None:
    _path, drive = checkout(new_drive, {"people.md": PEOPLE})
    hits = recall(drive, "who owns pricing?")
    assert ids(hits)[0] == "p-priya"
    top = hits[0]
    assert (top.text, top.path, top.line, top.source, top.added) == (
        "Priya owns pricing and design", "people.md", 4, "https://example.com/s/2", "2026-01-03")
    assert top.score > 0 and top.retrievals == 1
    assert top.fact_id == recall_index.fact_id(recall_index.drive_id(drive), "p-priya")
    assert recall(drive, "pricing")[0].retrievals == 2
    assert recall(drive, "pricing", count=False)[0].retrievals == 2
    assert facts.stats(state.connection(drive.git_dir)).retrievals == 2
    # counting runs at synchronous=NORMAL; the connection goes back to FULL
    assert state.connection(drive.git_dir).execute("PRAGMA synchronous").fetchone()[0] == 2


def test_fact_ids_and_drive_id(new_drive) -> None:
    _path, drive = checkout(new_drive, {"people.md": PEOPLE})
    root = git("rev-list", "--max-parents=0", "main", cwd=drive.workdir).stdout.decode().strip()
    assert recall_index.drive_id(drive) == root
    assert git("config", "memgit.driveid", cwd=drive.workdir).stdout.decode().strip() == root
    import hashlib

    expected = "drive_" + hashlib.sha256(f"{root}\np-joe".encode()).hexdigest()
    assert recall_index.fact_id(root, "p-joe") == expected
    recall_index.reindex(drive)
    row = state.connection(drive.git_dir).execute(
        "SELECT fact_id FROM facts WHERE entry_id = 'p-joe'").fetchone()
    assert row[0] == expected


def test_query_syntax_is_never_interpreted(new_drive) -> None:
    _path, drive = checkout(new_drive, {"people.md": PEOPLE})
    for query in ['"unbalanced', "NEAR(joe sam)", "joe AND OR NOT", "*", "p-joe:", "(((", ""]:
        hits = recall(drive, query)
        assert all(h.path == "people.md" for h in hits)
    # a query of stop words only searches them as given
    assert ids(recall(drive, "and")) == ["p-priya"]
    assert ids(recall(drive, "joe AND OR NOT"))[0] == "p-joe"


def test_not_memory_is_never_recalled(new_drive) -> None:
    src = "source: imported:unknown"
    files = {
        "notes.md": "# Notes\n\n"
        f"- Zebra fact proposed [{src}; status: proposed]\n"
        f"- Zebra fact rejected [{src}; status: rejected]\n"
        f"- Zebra fact twin scope [{src}; scope: twin-joe]\n"
        f"- Zebra fact not memory [{src}; memory_type: not_memory]\n"
        f"- Zebra fact question [{src}; kind: question; status: open]\n"
        f"- Zebra fact active [{src}; status: active]\n"
        "```\n- Zebra fact in a code fence\n```\n",
        "twin/joe.md": f"# Twin\n\n- Zebra fact under twin [{src}]\n",
    }
    _path, drive = checkout(new_drive, files)
    hits = recall(drive, "zebra fact", limit=50)
    assert [h.text for h in hits] == ["Zebra fact active"]
    stats = facts.stats(state.connection(drive.git_dir))
    assert (stats.entries, stats.rows) == (1, 7)  # excluded entries are rows, not searchable


def test_soft_retire_and_revive_keep_fact_id_and_counts(new_drive) -> None:
    path, drive = checkout(new_drive, {"people.md": PEOPLE})
    sam = fmt.deterministic_id("Sam is on call for the payments service", "imported:unknown")
    assert ids(recall(drive, "on call payments"))[0] == sam
    recall(drive, "Joe product team")
    original = (path / "people.md").read_text()
    (path / "people.md").write_text(original.replace(PEOPLE.splitlines()[2] + "\n", ""))
    commit_all(path, "remove joe")
    assert "p-joe" not in ids(recall(drive, "Joe product team", count=False))
    row = state.connection(drive.git_dir).execute(
        "SELECT valid_until, retrievals FROM facts WHERE entry_id = 'p-joe'").fetchone()
    assert row[0] is not None and row[1] == 1
    (path / "people.md").write_text(original.replace("Joe leads", "Joe now leads"))
    commit_all(path, "joe is back, edited")
    hit = recall(drive, "Joe product team")[0]
    assert (hit.entry_id, hit.text, hit.retrievals) == ("p-joe", "Joe now leads the product team",
                                                        2)
    row = state.connection(drive.git_dir).execute(
        "SELECT valid_until FROM facts WHERE entry_id = 'p-joe'").fetchone()
    assert row[0] is None


def test_incremental_after_a_commit_full_after_a_rewrite(new_drive) -> None:
    path, drive = checkout(new_drive, {"people.md": PEOPLE, "other.md": "# Other\n"})
    assert recall_index.reindex(drive).mode == "full"
    assert recall_index.reindex(drive).mode == "current"
    with open(path / "other.md", "a") as fh:
        fh.write("\n- Walrus facts are rare [source: imported:unknown]\n")
    commit_all(path)
    result = recall_index.reindex(drive)
    assert (result.mode, result.changed_paths, result.inserted) == ("incremental",
                                                                    ["other.md"], 1)
    git("commit", "-q", "--amend", "-m", "rewritten", cwd=path)  # the indexed commit is gone
    with open(path / "other.md", "a") as fh:
        fh.write("- Narwhal facts too [source: imported:unknown]\n")
    commit_all(path)
    result = recall_index.reindex(drive)
    assert result.mode == "full" and result.inserted == 1 and result.retired == 0
    assert recall_index.reindex(drive, full=True).mode == "full"


def test_a_stale_index_is_repaired_on_the_next_read(tmp_path: Path) -> None:
    init_bare(tmp_path / "d.git", {"MEMORY.md": fmt.initial_memory().encode()}, "Create")
    drive = open_drive(tmp_path / "d.git")
    commit_facts(drive, ["Otters hold hands while sleeping"])
    clone = tmp_path / "clone"
    git("clone", "-q", str(drive.git_dir), str(clone), cwd=tmp_path)
    with open(clone / "notes.md", "a") as fh:
        fh.write("- Beavers build dams [source: imported:unknown]\n")
    git("commit", "-qam", "by hand", cwd=clone)
    git("push", "-q", "origin", "main", cwd=clone)  # no hooks installed: the index is stale
    conn = state.connection(drive.git_dir)
    assert facts.stats(conn).indexed_rev != ref_target(drive, "refs/heads/main")
    assert [h.text for h in recall(drive, "beavers")] == ["Beavers build dams"]
    assert facts.stats(conn).indexed_rev == ref_target(drive, "refs/heads/main")


def test_deleting_the_database_rebuilds_same_ids_counts_reset(tmp_path: Path) -> None:
    init_bare(tmp_path / "d.git", {"MEMORY.md": fmt.initial_memory().encode()}, "Create")
    drive = open_drive(tmp_path / "d.git")
    commit_facts(drive, ["Otters hold hands", NewFact("Beavers build dams", topic="animals")])
    before = {h.entry_id: h.fact_id for h in recall(drive, "otters beavers", limit=10)}
    assert len(before) == 2
    for suffix in ("", "-wal", "-shm"):
        Path(str(state.state_path(drive.git_dir)) + suffix).unlink(missing_ok=True)
    # a new process reads first: the CLI recall rebuilds the index
    proc = memgit("-C", str(drive.git_dir), "recall", "--json", "otters", "beavers")
    assert proc.returncode == 0, proc.stderr
    after = json.loads(proc.stdout)
    assert {h["id"] for h in after} == set(before)
    # the fact ids are derived from the drive and entry ids, so they survive the rebuild
    assert {h.entry_id: h.fact_id for h in recall(drive, "otters beavers", limit=10,
                                                  count=False)} == before
    assert all(h["retrievals"] == 1 for h in after)
    # and in this process too (the cached connection notices the new file)
    for suffix in ("", "-wal", "-shm"):
        Path(str(state.state_path(drive.git_dir)) + suffix).unlink(missing_ok=True)
    hits = recall(drive, "otters beavers", limit=10)
    assert {h.entry_id: h.fact_id for h in hits} == before
    assert {h.retrievals for h in hits} == {1}


def test_forget_entries_and_remap_revisions(tmp_path: Path) -> None:
    init_bare(tmp_path / "d.git", {"MEMORY.md": fmt.initial_memory().encode()}, "Create")
    drive = open_drive(tmp_path / "d.git")
    added = commit_facts(drive, ["Otters hold hands", "Beavers build dams"]).added
    conn = state.connection(drive.git_dir)
    assert recall_index.forget_entries(drive, [added[0].id, "m-unknown"]) == 1
    assert conn.execute("SELECT count(*) FROM facts WHERE entry_id = ?",
                        (added[0].id,)).fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM facts_fts WHERE facts_fts MATCH 'otters'"
                        ).fetchone()[0] == 0
    head = facts.stats(conn).indexed_rev
    assert head is not None
    recall_index.remap_revisions(drive, {head: "f" * 40})
    assert facts.stats(conn).indexed_rev == "f" * 40
    recall_index.remap_revisions(drive, {"0" * 40: "1" * 40})  # not the indexed one: dropped
    assert facts.stats(conn).indexed_rev is None
    assert recall_index.reindex(drive).mode == "full"


def test_post_receive_reindexes_after_a_push(tmp_path: Path) -> None:
    from memgit.drives.create import create_drive
    from memgit.githooks.post_receive import wait_for_background
    from memgit.state import events

    create_drive(tmp_path / "d.git", bare=True)
    drive = open_drive(tmp_path / "d.git")
    clone = tmp_path / "clone"
    git("clone", "-q", str(drive.git_dir), str(clone), cwd=tmp_path)
    (clone / "notes.md").write_text("# Notes\n\n- Pelicans fish in groups "
                                    "[source: imported:unknown; added: 2026-01-01]\n")
    commit_all(clone, "pelicans")
    proc = git("push", "origin", "main", cwd=clone, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    # post-receive reindexes in a process of its own, after the pusher has its answer
    assert wait_for_background(drive.git_dir)
    conn = state.connect(drive.git_dir)
    try:
        assert state.get_meta(conn, "indexed_rev") == ref_target(drive, "refs/heads/main")
        assert conn.execute("SELECT text FROM facts").fetchall() == [("Pelicans fish in groups",)]
    finally:
        conn.close()
    assert events.counts(drive.git_dir)["push_accepted"] == 1


def test_cli_index_and_info(tmp_path: Path) -> None:
    init_bare(tmp_path / "d.git", {"MEMORY.md": fmt.initial_memory().encode()}, "Create")
    drive = open_drive(tmp_path / "d.git")
    commit_facts(drive, ["Otters hold hands"])
    proc = memgit("-C", str(drive.git_dir), "index", "--rebuild", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["mode"] == "full"
    proc = memgit("-C", str(drive.git_dir), "info", "--json")
    info = json.loads(proc.stdout)
    assert info["head"] == info["indexed_revision"] == ref_target(drive, "refs/heads/main")
    assert (info["entries"], info["files"], info["pending_writes"]) == (1, 2, 0)
    assert info["events"]["commit"] == 1 and info["drive_bytes"] > 0
    proc = memgit("-C", str(drive.git_dir), "info")
    assert b"pending_writes:   0" in proc.stdout


# --- recall quality on the labelled set ----------------------------------------------------


# Queries whose relevant entries are not all in the top 5 today (measured 2026-11-30:
# recall@5 70/76 = 0.921, MRR 0.8168; with the heading-trail context column, 2026-12-01:
# the same misses, MRR 0.8233; docs/index.md). A miss that starts to hit fails
# the test until it leaves this list: the floors only go up.
KNOWN_MISSES = frozenset({
    "billing go-live date",
    "how much does the Team plan cost",
    "which cloud region is production in",
    "dietary restrictions for dinner reservations",
    "can I message Joe on Saturday",
    "what language should I reply in",
})
MRR_FLOOR = 0.8232


def evaluate(drive: Drive) -> tuple[set[str], float]:
    """The queries with a relevant entry outside the top 5, and the MRR over all queries."""
    queries = json.loads((RECALL_DATA / "queries.json").read_text())
    assert len(queries) == 76
    misses: set[str] = set()
    total_rr = 0.0
    for item in queries:
        ranked = [h.entry_id for h in recall(drive, item["query"], 10, count=False)]
        relevant = set(item["relevant"])
        if not relevant <= set(ranked[:5]):
            misses.add(item["query"])
        rank = next((i for i, e in enumerate(ranked, start=1) if e in relevant), None)
        total_rr += 1 / rank if rank else 0.0
    return misses, total_rr / len(queries)


def test_recall_quality_on_the_labelled_set(tmp_path: Path) -> None:
    drive = open_drive(committed_copy(RECALL_DATA / "drive", tmp_path / "drive"))
    labelled = {i for q in json.loads((RECALL_DATA / "queries.json").read_text())
                for i in q["relevant"]}
    present = {e.id for p in (tmp_path / "drive").rglob("*.md")
               for _l, e in fmt.parse_document(p.name, p.read_text()).entries()}
    assert labelled <= present  # every label names a real entry
    misses, mrr = evaluate(drive)
    assert misses == KNOWN_MISSES
    assert mrr >= MRR_FLOOR


def test_very_common_terms_are_dropped_on_large_drives(tmp_path: Path) -> None:
    lines = ["# Big\n\n"] + [f"- Shared word and item number {i} [source: imported:unknown; "
                                f"id: big-{i}]\n" for i in range(1200)]
    lines.append("- Shared word with the unicorn [source: imported:unknown; id: big-rare]\n")
    memory = fmt.regenerate_index_section(fmt.initial_memory(), ["MEMORY.md", "big.md"])
    init_bare(tmp_path / "d.git", {"MEMORY.md": memory.encode(),
                                   "big.md": "".join(lines).encode()}, "Create")
    drive = open_drive(tmp_path / "d.git")
    # "shared" matches every entry: it is dropped when the query has a rarer word
    assert ids(recall(drive, "shared unicorn", count=False)) == ["big-rare"]
    assert len(recall(drive, "shared", count=False)) == 5  # alone, it is kept
    assert ids(recall(drive, "shared item 7", count=False))[0] == "big-7"


def test_one_word_in_most_entries_returns_the_newest_matches(tmp_path) -> None:
    """A query of one very common word takes the newest matches, not a full BM25 sort."""
    from memgit.format import entries as fmt
    from memgit.git.repository import init_bare, open_drive

    lines = [f"- The fact number {i} about the team [source: imported:unknown; id: m-t{i:05}]\n"
             for i in range(1200)]
    memory = fmt.regenerate_index_section("# M\n\n## Index\n", ["MEMORY.md", "a.md"])
    files = {"MEMORY.md": memory.encode(),
             "a.md": ("# A\n\n" + "".join(lines)).encode()}
    drive = open_drive(init_bare(tmp_path / "d.git", files, "many").git_dir)
    hits = recall(drive, "team", limit=3, count=False)
    assert {h.entry_id for h in hits} == {"m-t01199", "m-t01198", "m-t01197"}
    rare = recall(drive, "number 7 team", limit=1, count=False)
    assert rare and "team" in rare[0].text


# --- a branch that is not there (issue 12) --------------------------------------------------

REALWORLD = Path(__file__).parents[1] / "data" / "realworld"


def on_master(tmp_path: Path) -> Path:
    """A real Letta memory repository committed on master (no memgit policy)."""
    path = tmp_path / "launchmate"
    committed_copy(REALWORLD / "letta" / "launchmate", path)
    git("branch", "-m", "main", "master", cwd=path)
    return path


def test_a_missing_branch_never_empties_the_index(tmp_path: Path) -> None:
    path = tmp_path / "launchmate"
    committed_copy(REALWORLD / "letta" / "launchmate", path)
    drive = open_drive(path)
    indexed = recall_index.ensure_current(drive)
    rows = facts.stats(state.connection(drive.git_dir)).rows
    assert indexed.mode == "full" and rows > 30
    git("branch", "-m", "main", "master", cwd=path)
    proc = memgit("-C", str(path), "recall", "launch")
    assert proc.returncode == 2
    assert "MG002" in proc.stderr.decode() and "no branch main (HEAD is master)" in \
        proc.stderr.decode()
    stats = facts.stats(state.connection(drive.git_dir))
    assert (stats.rows, stats.retired) == (rows, 0)  # nothing retired
    # following the branch, as the hint says, reads it again
    (drive.git_dir / "memgit.yaml").write_text("branch: master\n")
    proc = memgit("-C", str(path), "recall", "launch", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)


def test_every_command_that_reads_the_branch_names_it_and_the_fix(tmp_path: Path) -> None:
    path = on_master(tmp_path)
    before = git("rev-parse", "master", cwd=path).stdout
    for args in (["index"], ["recall", "launch"], ["info"], ["remember", "a new fact"],
                 ["forget", "m-x"], ["edit", "m-x", "new text"], ["ask", "--list"],
                 ["status"], ["metrics"], ["purge", "m-x", "--dry-run"],
                 ["sync"]):
        proc = memgit("-C", str(path), *args)
        err = proc.stderr.decode()
        assert proc.returncode == 2, (args, err)
        assert "no branch main (HEAD is master)" in err, (args, err)
        assert "branch: master" in err and "git branch -m master main" in err, (args, err)
    assert git("rev-parse", "master", cwd=path).stdout == before  # nothing written
    assert git("branch", "--list", cwd=path).stdout.decode().split() == ["*", "master"]


def test_an_empty_repository_is_an_empty_drive_but_not_a_readable_one(tmp_path: Path) -> None:
    path = tmp_path / "empty"
    git("init", "-q", "-b", "main", str(path))
    drive = open_drive(path)
    assert recall_index.ensure_current(drive).mode == "empty"
    proc = memgit("-C", str(path), "remember", "a fact")
    assert proc.returncode == 2
    assert "no branch main (the repository has no commit yet)" in proc.stderr.decode()
    assert "memgit init --adopt" in proc.stderr.decode()


def test_the_index_keeps_a_row_while_any_copy_of_the_line_exists(tmp_path: Path) -> None:
    """Two files of a real Cline memory bank hold the same id-less line (one derived id,
    one row); removing one copy keeps the row, on the other copy; removing both retires."""
    path = committed_copy(REALWORLD / "cline" / "csv-date-expander", tmp_path / "bank")
    drive = open_drive(path)
    line = "Web UIとCLIツールの機能同期（必要であれば、特に列指定方法など）。"
    entry = fmt.parse_entry(f"- {line}")
    assert entry is not None
    recall_index.ensure_current(drive)
    conn = state.connection(drive.git_dir)
    row = facts.present_rows_in(conn, ["memory-bank/activeContext.md"])
    fid = recall_index.fact_id(recall_index.drive_id(drive), entry.id)
    assert row[fid].row.line == 52  # the first copy, by path

    def drop(name: str) -> None:
        file = path / "memory-bank" / name
        file.write_text("".join(ln for ln in file.read_text(encoding="utf-8")
                                .splitlines(keepends=True) if line not in ln), encoding="utf-8")
        git("commit", "-qam", f"drop from {name}", cwd=path)

    drop("activeContext.md")
    assert recall_index.ensure_current(drive).mode == "incremental"
    stored = facts.stored_rows(conn)[fid]
    assert (stored.valid_until, stored.row.path, stored.row.line) == \
        (None, "memory-bank/progress.md", 66)
    assert facts.locate(conn, [entry.id]) == {entry.id: "memory-bank/progress.md"}
    drop("progress.md")
    recall_index.ensure_current(drive)
    assert facts.stored_rows(conn)[fid].valid_until is not None
    assert facts.locate(conn, [entry.id]) == {}


# --- the heading trail as context (issue 12) --------------------------------------------------


def test_recall_finds_entries_by_the_heading_they_sit_under(tmp_path: Path) -> None:
    """A real Letta block lists variables under "## Environment Variables"; the bullets
    never say "environment"."""
    path = committed_copy(REALWORLD / "letta" / "launchmate", tmp_path / "launchmate")
    hits = recall(open_drive(path), "which environment variables are needed", 10, count=False)
    expected = {"`LETTA_API_KEY`", "`LETTA_SERVER_URL`", "`NEXT_PUBLIC_SUPABASE_KEY`"}
    assert expected <= {h.text for h in hits[:7]}
    assert all("environment" not in h.text.lower() for h in hits[:7])
    # the text still outweighs the heading: an entry that says it comes first
    hits = recall(open_drive(path), "Playwright testing", 3, count=False)
    assert hits[0].text == "Playwright is installed (`@playwright/test`)"


def test_recall_uses_the_context_an_import_keeps(tmp_path: Path) -> None:
    from memgit.drives.create import create_drive
    from memgit.importing.apply import apply_plan
    from memgit.importing.plan import build_plan

    plan = build_plan(REALWORLD / "claude-code" / "portfolio")
    drive = open_drive(create_drive(tmp_path / "drive", bare=False))
    assert apply_plan(drive, plan).status == "committed"
    # the five issues sit under "## Open Issues (5)" and never say "open" or "issue";
    # the prose line "~100 commits. 36+ issues closed. 5 open" says both
    hits = recall(drive, "open issues", 6, count=False)
    assert all(h.path == "project_ci_next_level.md" for h in hits)
    assert {h.text.split(" ")[0] for h in hits} == {"#52", "#21", "#53", "#16", "#17", "~100"}
