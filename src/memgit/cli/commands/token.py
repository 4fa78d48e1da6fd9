"""memgit token: drive-scoped access tokens for memgit serve (add, list, revoke)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from memgit.cli.common import ctx_directory
from memgit.errors import UsageError
from memgit.safe_text import printable
from memgit.serve import tokens
from memgit.serve.paths import check_root, drive_dir, list_drives, require_name

root_option = click.option("--root", "root", metavar="ROOT", default=None,
                           help="The served root (default: -C PATH, else the current folder).")


def _root(ctx: click.Context, root: str | None) -> Path:
    base = Path(ctx_directory(ctx) or ".")
    return check_root((base / root) if root else base)


@click.group("token")
def command() -> None:
    """Access tokens for memgit serve: each grants one drive, to read or to write."""


@command.command("add")
@click.argument("drive", required=False, metavar="OWNER/DRIVE")
@click.option("--read", "access", flag_value="read", help="Clone, fetch and the dashboard.")
@click.option("--write", "access", flag_value="write", help="Also push.")
@click.option("--metrics", "access", flag_value="metrics",
              help="/metrics only (for a scraper; no drive).")
@click.option("--expires", type=int, default=None, metavar="DAYS",
              help="Valid for DAYS days (default: until revoked).")
@click.option("--name", default="", help="A label shown by memgit token list.")
@click.option("--json", "as_json", is_flag=True, help="Print the token as JSON.")
@root_option
@click.pass_context
def add_command(ctx: click.Context, drive: str | None, access: str | None,
                expires: int | None, name: str, as_json: bool, root: str | None) -> int:
    """Make a token for OWNER/DRIVE and print it (once: only its salted hash is kept)."""
    folder = _root(ctx, root)
    if access is None:
        raise UsageError("say what the token may do", "add --read, --write or --metrics")
    name_of = None
    if access != "metrics":
        if drive is None:
            raise UsageError("a read or write token names its drive",
                             "memgit token add OWNER/DRIVE --read|--write")
        name_of = require_name(drive)
        if drive_dir(folder, name_of) is None:
            raise UsageError(f"there is no drive {name_of} under {folder}",
                             f"create it: memgit serve {folder} --create {name_of}")
    elif drive is not None:
        raise UsageError("a metrics token names no drive", "memgit token add --metrics")
    made = tokens.add(folder, name_of, access, name=name, expires_days=expires)
    if as_json:
        click.echo(json.dumps({"id": made.id, "drive": made.drive or None,
                               "access": made.access, "name": made.name,
                               "expires": made.expires, "token": made.text}))
        return 0
    scope = f"{made.access} access to {made.drive}" if made.drive else "/metrics"
    click.echo(f"Token {made.id} ({scope}"
               f"{', expires ' + made.expires if made.expires else ''}):", err=True)
    click.echo(made.text)
    click.echo("Shown once: only its salted hash is kept. Give it to git as the password "
               "(any user name), or as 'Authorization: Bearer TOKEN'.", err=True)
    return 0


@command.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@root_option
@click.pass_context
def list_command(ctx: click.Context, as_json: bool, root: str | None) -> int:
    """List the tokens of the root (never their secrets)."""
    found = tokens.listing(_root(ctx, root))
    if as_json:
        click.echo(json.dumps(found, indent=2))
        return 0
    if not found:
        folder = _root(ctx, root)
        served = list_drives(folder)
        where = "" if served else (f" in {folder}, which holds no OWNER/DRIVE.git drive: is "
                                   "it the root memgit serve serves? (--root ROOT)")
        click.echo(f"no tokens{where} (memgit token add OWNER/DRIVE --read|--write makes "
                   "one)")
    for t in found:
        click.echo(printable(
            f"{t['id']}  {t['state']:<8} {t['access']:<7} {t['drive'] or '(metrics)':<30} "
            f"created {t['created']}  expires {t['expires'] or 'never'}  "
            f"last used {t['last_used'] or 'never'}  {t['name']}".rstrip()))
    return 0


@command.command("revoke")
@click.argument("token_id", metavar="ID")
@root_option
@click.pass_context
def revoke_command(ctx: click.Context, token_id: str, root: str | None) -> int:
    """Revoke a token by its id (memgit token list shows them); at once, server running."""
    tokens.revoke(_root(ctx, root), token_id)
    click.echo(f"Revoked token {printable(token_id, 40)}")
    return 0
