"""The writing, recall and questions-board part of ``memgit demo``.

:func:`demo_writer` runs on the demo's drive checkout and returns True when every step did
what it shows.
"""

from __future__ import annotations

from pathlib import Path

import click

from memgit.git.repository import open_drive
from memgit.write.board import answer, ask, board, resolve
from memgit.write.ops import NewFact, result_lines
from memgit.write.writer import commit_facts

_TOKEN = "ghp_" + "Wm4Tq9Xv2Lp7Rk3Nb8Hs5Jd1Fz6Gc0Yt8Ue3Q7"  # a made-up, well-formed token


def _step(title: str) -> None:
    click.secho(f"\n== {title}", bold=True)


def _echo_result(lines: list[str]) -> None:
    for line in lines:
        click.echo(line)


def demo_writer(target: Path) -> bool:
    """Remember, skip, recall, edit, forget and use the questions board on ``target``."""
    from memgit import state
    from memgit.recall.read_path import recall
    from memgit.state import events, facts

    drive = open_drive(target)
    ok = True

    _step("Writer: memgit remember (one commit, compare-and-swap, Index regenerated)")
    click.echo("$ memgit remember --topic projects/search 'Search runs on OpenSearch ...' ...")
    result = commit_facts(drive, [
        NewFact("Search runs on OpenSearch 2.11 in eu-central-1",
                "claude-code:session/50", "projects/search"),
        NewFact("Marco is the tech lead for search ranking", "claude-code:session/50",
                "projects/search"),
        NewFact("joe LEADS the product   team"),  # a duplicate of an entry with other case
        NewFact(f"The CI deploy token is {_TOKEN}"),  # a credential: never written or echoed
        NewFact("   "),
    ], message="Demo: remember")
    _echo_result(result_lines(result))
    reasons = sorted(s.reason for s in result.skipped)
    ok &= result.status == "committed" and len(result.added) == 2
    ok &= {"credential", "empty"} <= set(reasons)
    ok &= _TOKEN not in "\n".join(result_lines(result))
    memory = (target / "MEMORY.md").read_text()
    click.echo("MEMORY.md Index now lists: " + ", ".join(
        line[2:] for line in memory.splitlines() if line.startswith("- [[")))
    ok &= "- [[projects/search]]" in memory

    _step("Recall: memgit recall (SQLite FTS5, BM25; retrievals counted)")
    for query in ("who leads search ranking", "which region does search run in"):
        click.echo(f"$ memgit recall '{query}'")
        hits = recall(drive, query, limit=3)
        for hit in hits:
            click.echo(f"  {hit.path}:{hit.line}: {hit.text}  [{hit.entry_id}; "
                       f"score {hit.score:.2f}]")
        ok &= bool(hits) and hits[0].path == "projects/search.md"

    _step("Edit and forget by id")
    marco, stack = result.added[1].id, result.added[0].id
    edited = commit_facts(drive, [], [stack], "Demo: edit and forget",
                          edits={marco: "Marco is the tech lead for search and ranking"})
    _echo_result(result_lines(edited))
    ok &= edited.retired == [stack] and edited.edited == [marco]
    ok &= not any(h.entry_id == stack for h in recall(drive, "OpenSearch", count=False))

    _step("Questions board: ask, answer, resolve (questions.md, never recalled)")
    question = ask(drive, "When does the search A/B test end?", source="claude-code:session/51")
    qid = question.added[0].id if question.added else ""
    reply = answer(drive, qid, "On 2026-05-20", source="claude-code:session/52")
    done = resolve(drive, qid)
    for q in board(drive):
        click.echo(f"  {q.id} [{q.status}] {q.text}")
        for answer_id, text in q.answers:
            click.echo(f"      {answer_id}: {text}")
    ok &= bool(qid) and reply.status == "committed" and done.updated == [qid]
    ok &= any(q.id == qid and q.status == "resolved" and q.answers for q in board(drive))

    _step("memgit info / memgit metrics")
    counts = events.counts(drive.git_dir)
    stats = facts.stats(state.connection(drive.git_dir))
    click.echo(f"  entries indexed: {stats.entries}; retrievals: {stats.retrievals}; "
               f"commits by the writer: {counts['commit']}")
    ok &= counts["commit"] >= 5 and stats.indexed_rev is not None
    return bool(ok)
