"""memgit index: bring the recall index (and the vectors) up to the branch head, or rebuild it."""

from __future__ import annotations

import json
import sys
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
from ._common import drive_from_ctx, policy_for, policy_option


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
    embedded too (progress on a terminal)."""
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
        vectors = _embed(drive, config, rebuild and embeddings, strict=embeddings,
                         progress=None if as_json else _progress())
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
        click.echo(f"the drive has no branch {policy.branch}; index emptied")
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
    finally:
        if progress is not None:
            progress(-1, -1)


def _progress() -> Callable[[int, int], None] | None:
    """A counter on a terminal (stderr) while a drive is embedded; nothing otherwise.
    Called with (-1, -1) at the end to finish the line."""
    if not sys.stderr.isatty():
        return None
    shown = [False]

    def show(done: int, total: int) -> None:
        if done < 0:
            if shown[0]:
                click.echo("", err=True)
            return
        shown[0] = True
        click.echo(f"\rembedding entries: {done}/{total} ({done * 100 // max(total, 1)}%)",
                   err=True, nl=False)
    return show
