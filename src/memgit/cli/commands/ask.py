"""memgit ask: post a question on the drive's board (questions.md), or list the board."""

from __future__ import annotations

import json
from dataclasses import asdict

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option, report_write
from memgit.errors import UsageError
from memgit.safe_text import printable
from memgit.write.board import ask, board


@click.command("ask")
@click.argument("text", required=False)
@click.option("--source", metavar="SRC", default=None, help="Where the question comes from.")
@click.option("--list", "list_board", is_flag=True, help="List the board's questions.")
@click.option("--all", "show_all", is_flag=True, help="With --list: resolved ones too.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@policy_option
@click.pass_context
def command(ctx: click.Context, text: str | None, source: str | None, list_board: bool,
            show_all: bool, as_json: bool, policy_file: str | None) -> int:
    """Post TEXT as an open question (or --list the open questions)."""
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    if list_board:
        questions = [q for q in board(drive, policy) if show_all or q.status == "open"]
        if as_json:
            click.echo(json.dumps([asdict(q) for q in questions], indent=2, ensure_ascii=False))
            return 0
        for q in questions:
            click.echo(printable(f"{q.id} [{q.status}] {q.text}"))
            for answer_id, answer_text in q.answers:
                click.echo(printable(f"    {answer_id}: {answer_text}"))
        return 0
    if not text:
        raise UsageError("no question given", "memgit ask 'TEXT', or memgit ask --list")
    result = ask(drive, text, source=source, policy=policy)
    return report_write(result, as_json)
