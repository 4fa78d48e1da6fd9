"""memgit mount: shared drives kept read-only next to this drive (add, list, remove, sync)."""

from __future__ import annotations

import datetime as _dt
import json

import click

from memgit.cli.common import ProgressBar, drive_from_ctx
from memgit.sync.mounts import add_mount, list_mounts, remove_mount, sync_mounts


@click.group("mount")
def command() -> None:
    """Mount shared drives: read-only clones inside this drive's git directory, each with
    its own recall index (memgit recall --mounts searches them all)."""


@command.command("add")
@click.argument("name")
@click.argument("url")
@click.option("--branch", default="main", show_default=True, help="The drive's branch.")
@click.option("--json", "as_json", is_flag=True, help="Print the mount as JSON.")
@click.pass_context
def add(ctx: click.Context, name: str, url: str, branch: str, as_json: bool) -> int:
    """Clone the shared drive at URL as mount NAME and index it."""
    bar = ProgressBar(quiet=as_json)
    mount = add_mount(drive_from_ctx(ctx), name, url, branch, progress=bar)
    bar.end()
    if as_json:
        click.echo(json.dumps(mount.as_dict(), indent=2))
    else:
        click.echo(f"Mounted {mount.name}: {mount.url} ({mount.branch} at "
                   f"{(mount.head or '')[:12]}), {mount.entries} entries indexed")
    return 0


@command.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the mounts as JSON.")
@click.pass_context
def list_(ctx: click.Context, as_json: bool) -> int:
    """List the mounts: name, URL (credentials masked), branch, head, entries, last sync."""
    mounts = list_mounts(drive_from_ctx(ctx))
    if as_json:
        click.echo(json.dumps([m.as_dict() for m in mounts], indent=2))
        return 0
    if not mounts:
        click.echo("no mounts (memgit mount add NAME URL)")
    for m in mounts:
        when = _dt.datetime.fromtimestamp(m.last_sync, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ") \
            if m.last_sync else "never"
        click.echo(f"{m.name}\t{m.url}\t{m.branch} at {(m.head or '-')[:12]}\t"
                   f"{m.entries} entries\tsynced {when}")
    return 0


@command.command("remove")
@click.argument("name")
@click.pass_context
def remove(ctx: click.Context, name: str) -> int:
    """Delete mount NAME (its clone and its recall index)."""
    path = remove_mount(drive_from_ctx(ctx), name)
    click.echo(f"Removed mount {name} ({path})")
    return 0


@command.command("sync")
@click.argument("names", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print what each sync did as JSON.")
@click.pass_context
def sync(ctx: click.Context, names: tuple[str, ...], as_json: bool) -> int:
    """Fetch each mount (or the NAMEs) from its server, never pushing; entries the server
    purged are deleted from the mount. Exit 1 when a mount could not sync."""
    bar = ProgressBar(quiet=as_json)
    reports = sync_mounts(drive_from_ctx(ctx), names, progress=bar)
    bar.end()
    if as_json:
        click.echo(json.dumps([r.as_dict() for r in reports], indent=2))
    else:
        if not reports:
            click.echo("no mounts (memgit mount add NAME URL)")
        for r in reports:
            if r.error:
                click.echo(f"{r.name}: not synced: {r.error}", err=True)
                continue
            moved = "unchanged" if r.old_head == r.head else \
                f"{(r.old_head or '-')[:12]} -> {(r.head or '-')[:12]}"
            extra = f"; history rewritten (a purge): {r.forgotten} entries deleted" \
                if r.rewritten else ""
            click.echo(f"{r.name}: {moved}, {r.entries} entries{extra}")
    return 1 if any(r.error for r in reports) else 0
