"""memgit index: bring the recall index (and the vectors) up to the branch head, or rebuild it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import click

from memgit import state
from memgit.cli.common import ProgressBar, drive_from_ctx, policy_for, policy_option
from memgit.embeddings import embed as embedding
from memgit.embeddings import fill as vector_fill
from memgit.errors import UsageError
from memgit.git.repository import Drive
from memgit.index.reindex import reindex
from memgit.policy.embedding_settings import EmbedConfig
from memgit.recall.read_path import catch_up
from memgit.safe_text import printable


@click.command("index")
@click.option("--rebuild", is_flag=True, help="Re-read every file instead of the changed ones "
              "(with --embeddings: embed every entry again too).")
@click.option("--embeddings", is_flag=True,
              help="Embed the entries that have no vector now, not in the background (an "
                   "error when the embedder is unavailable); with --rebuild, drop every "
                   "vector first (a new model).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@policy_option
@click.pass_context
def command(ctx: click.Context, rebuild: bool, embeddings: bool, as_json: bool,
            policy_file: str | None) -> int:
    """Update the index (SQLite in the git directory) from the drive.

    With an embeddings: section in memgit.yaml, the entries that have no vector yet are
    embedded in the background; with --embeddings, now (a progress bar on a terminal,
    nothing under --json)."""
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    config = policy.embeddings()
    if embeddings and config is None:
        raise UsageError("--embeddings needs an embedder, and the drive's policy has no "
                         "embeddings: section", "add embeddings: {plugin: local} to memgit.yaml")
    started = time.perf_counter()
    # a read like any other: retries pending writes and repairs first
    result = catch_up(drive, policy=policy)
    if rebuild:
        result = reindex(drive, full=True, policy=policy)
    elapsed = time.perf_counter() - started
    vectors = None
    if config is not None and embeddings:
        # Shown progress costs calls: the embedding goes in chunks instead of one call
        # (embedding.fill), so only a terminal that draws the bar gets it.
        bar = ProgressBar(quiet=as_json)
        shown = not bar.quiet
        try:
            vectors = _embed(drive, config, rebuild,
                             progress=(lambda done, total: bar("embedding entries", done,
                                                               total)) if shown else None)
        finally:
            bar.end()
    elif config is not None:
        vectors = _in_background(drive, config)
    if as_json:
        data = asdict(result)
        data["seconds"] = round(elapsed, 4)
        if vectors is not None:
            data["embeddings"] = vectors
        click.echo(json.dumps(data, indent=2))
        return 0
    if result.mode == "current":
        click.echo(f"index is current at {(result.head or '')[:12]}")
    elif result.mode == "empty":
        click.echo(f"the drive has no commit yet (branch {policy.branch}); nothing to index")
    else:
        click.echo(f"{result.mode} reindex to {(result.head or '')[:12]} in "
                   f"{elapsed * 1000:.0f} ms: {result.files} files read, {result.inserted} "
                   f"new, {result.updated} updated, {result.retired} retired")
    if vectors is not None and "background" in vectors:
        if vectors["fill_failed"]:
            when, _sp, said = vectors["fill_failed"].partition(" ")
            click.echo(f"memgit: warning: the last background embedding failed: "
                       f"{printable(said, 300)} (at {when})", err=True)
        later = "being embedded in the background" if vectors["background"] else "none"
        click.echo(f"vectors: {vectors['vectors']} stored, {vectors['missing']} missing "
                   f"({later if vectors['missing'] else 'complete'}; memgit index "
                   "--embeddings embeds at once)")
    elif vectors is not None:
        click.echo(f"vectors: {vectors['embedded']} embedded in {vectors['seconds']:.1f} s, "
                   f"{vectors['vectors']} stored, {vectors['missing']} missing "
                   f"({vectors['model']})")
    return 0


def _embed(drive: Drive, config: EmbedConfig, again: bool, *,
           progress: Callable[[int, int], None] | None) -> dict[str, Any]:
    """Embed what lacks a vector (everything, ``again``) now, a background filler giving
    way (vector_fill.foreground); an unavailable embedder is an error."""
    with vector_fill.foreground(drive.git_dir):
        done = embedding.update(state.connection(drive.git_dir), config, again=again,
                                progress=progress)
    vector_fill.schedule(drive.git_dir, config)  # what was written meanwhile
    return done


def _in_background(drive: Drive, config: EmbedConfig) -> dict[str, Any]:
    """Start the background filler when vectors are missing; what is stored and missing,
    and what the last background fill that failed said."""
    conn = state.connection(drive.git_dir)
    started = vector_fill.schedule(drive.git_dir, config, conn)
    summary = embedding.summary(conn)
    return {"embedded": 0, "vectors": summary["vectors"], "missing": summary["missing"],
            "model": summary["model"], "background": started,
            "fill_failed": vector_fill.last_failure(conn)}
