"""memgit index: bring the recall index (and the vectors) up to the branch head, or rebuild it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import click

from .. import embedding, state
from ..embedders import config as embed_config
from ..errors import EmbedderError, PluginError, UsageError
from ..git.repository import Drive
from ..read_path import catch_up
from ..recall_index import reindex
from ..safe_text import printable
from ._common import ProgressBar, drive_from_ctx, policy_for, policy_option


@click.command("index")
@click.option("--rebuild", is_flag=True, help="Re-read every file instead of the changed ones "
              "(with --embeddings: embed every entry again too).")
@click.option("--embeddings", is_flag=True,
              help="Embed the entries that have no vector (an error when the embedder is "
                   "unavailable); with --rebuild, drop every vector first (a new model).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@policy_option
@click.pass_context
def command(ctx: click.Context, rebuild: bool, embeddings: bool, as_json: bool,
            policy_file: str | None) -> int:
    """Update the index (SQLite in the git directory) from the drive.

    With an embeddings: section in memgit.yaml, the entries that have no vector yet are
    embedded too (a progress bar on a terminal, nothing under --json)."""
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    config = embed_config.of(policy)
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
    if config is not None:
        # Shown progress costs calls: the embedding goes in chunks instead of one call
        # (embedding.fill), so only a terminal that draws the bar gets it.
        bar = ProgressBar(quiet=as_json)
        shown = bar.tty and not as_json
        try:
            vectors = _embed(drive, config, rebuild and embeddings, strict=embeddings,
                             progress=(lambda done, total: bar("embedding entries", done,
                                                               total)) if shown else None)
        finally:
            bar.end()
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
    if vectors is not None and "warning" not in vectors:
        click.echo(f"vectors: {vectors['embedded']} embedded in {vectors['seconds']:.1f} s, "
                   f"{vectors['vectors']} stored, {vectors['missing']} missing "
                   f"({vectors['model']})")
    return 0


def _embed(drive: Drive, config: embed_config.EmbedConfig, again: bool, *, strict: bool,
           progress: Callable[[int, int], None] | None) -> dict[str, Any]:
    """Embed what lacks a vector (everything, ``again``). An unavailable embedder is an
    error when ``strict`` (--embeddings), else a warning line: the index itself is done."""
    try:
        return embedding.update(state.connection(drive.git_dir), config, again=again,
                                progress=progress)
    except (EmbedderError, PluginError) as err:
        if strict:
            raise
        click.echo(f"memgit: warning: vectors not updated: {err.code} "
                   f"{printable(err.message, 300)}", err=True)
        return {"warning": f"{err.code} {err.message}"}

