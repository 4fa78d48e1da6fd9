"""memgit remember: add entries through the writer (one commit, compare-and-swap)."""

from __future__ import annotations

import sys

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option, report_write
from memgit.errors import UsageError
from memgit.format.entries import split_lines
from memgit.write.ops import NewFact
from memgit.write.propose import Actor
from memgit.write.writer import commit_facts


@click.command("remember")
@click.argument("texts", nargs=-1, required=True, metavar="TEXT...")
@click.option("--topic", metavar="PATH", default=None,
              help="Topic file to write to (default notes.md; .md may be omitted; "
                   "MEMORY.md writes to the entry point).")
@click.option("--source", metavar="SRC", default=None,
              help="Where the fact comes from (https://..., TOOL:session/ID, ...); "
                   "default memgit:observation/<id>.")
@click.option("--agent", metavar="NAME", default="",
              help="Who writes, for the drive's autonomy rules (default: the source's tool).")
@click.option("--why", metavar="TEXT", default="",
              help="Why, kept with the entry when the drive's rules make it a proposal.")
@click.option("-m", "--message", default="", help="Commit subject (never put entry text here).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@policy_option
@click.pass_context
def command(ctx: click.Context, texts: tuple[str, ...], topic: str | None, source: str | None,
            agent: str, why: str, message: str, as_json: bool, policy_file: str | None) -> int:
    """Remember each TEXT as one entry (TEXT - reads one entry per line from stdin)."""
    items: list[str] = []
    for text in texts:
        if text == "-":
            items.extend(line for line, _eol in split_lines(sys.stdin.read()) if line.strip())
        else:
            items.append(text)
    if not items:
        raise UsageError("nothing to remember", "pass TEXT, or - with lines on stdin")
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    facts = [NewFact(t, source, topic) for t in items]
    result = commit_facts(drive, facts, (), message or f"Remember {len(items)} "
                          f"entr{'y' if len(items) == 1 else 'ies'}", policy=policy,
                          actor=Actor(agent=agent, why=why))
    return report_write(result, as_json)
