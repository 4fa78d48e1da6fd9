"""memgit info: the drive at a glance (head, index, use against the limits, queue, events)."""

from __future__ import annotations

import json

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option
from memgit.drives.info import drive_info
from memgit.safe_text import printable


def _pct(used: int, limit: int) -> str:
    return f"{used} of {limit} ({100 * used / limit:.0f}%)" if limit else str(used)


@click.command("info")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@policy_option
@click.pass_context
def command(ctx: click.Context, as_json: bool, policy_file: str | None) -> int:
    """Show which drive was chosen and why (docs/agents.md, "Which drive"), its id, head,
    index, size and file use against the limits, pending writes and event counts."""
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    info = drive_info(drive, policy)
    chosen = (ctx.find_root().obj or {})["chosen"]
    info["chosen"] = chosen.as_dict()
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return 0
    rows = [
        ("drive", f"{info['drive']} ({'bare' if info['bare'] else 'checkout'})"),
        ("chosen", printable(chosen.why, 400)),
        ("kind", info["kind"]),
        ("drive id", info["drive_id"] or "-"),
        ("head", f"{info['branch']} at {info['head'] or '(none)'}"),
        ("indexed revision", (info["indexed_revision"] or "-")
         + (" (repaired now)" if info["index_repaired"] else "")),
        ("entries", f"{info['entries']} indexed ({info['rows']} present, "
                    f"{info['retired']} retired, {info['retrievals']} retrievals)"),
        ("size", _pct(info["drive_bytes"], info["drive_bytes_limit"]) + " bytes"),
        ("files", _pct(info["files"], info["files_limit"])),
        ("pending_writes", str(info["pending_writes"])),
        ("events", ", ".join(f"{k}={v}" for k, v in info["events"].items())),
        ("state db", info["state_db"]),
    ]
    if info["parent"]:
        parent = info["parent"]
        rows.insert(3, ("parent", f"{parent['drive_id']} at {parent['commit'][:12]} (fork of "
                                  f"{parent['path'] or '?'})"))
    caps = info["caps"]
    if caps["max_entries"] or caps["max_age_days"]:
        rows.insert(-3, ("caps", f"{caps['entries']} entries (max {caps['max_entries'] or '-'}),"
                                 f" oldest {caps['oldest_added'] or '-'} (max "
                                 f"{caps['max_age_days'] or '-'} days)"))
    if info["mounts"]:
        rows.insert(-1, ("mounts", ", ".join(info["mounts"])))
    vectors = info["embeddings"]
    if vectors:
        rows.insert(-1, ("embeddings", f"{vectors['plugin']}: {vectors['vectors']} vectors "
                                       f"({vectors['model'] or 'none yet'}), "
                                       f"{vectors['missing']} entries without"))
        if vectors["fill_failed"]:
            rows.insert(-1, ("embedding failed", printable(vectors["fill_failed"], 300)))
    width = max(len(k) for k, _v in rows)
    for key, value in rows:
        click.echo(f"{key + ':':<{width + 1}} {value}")
    for warning in caps["warnings"]:
        click.echo(f"  {warning}")
    for item in info["pending"]:
        click.echo(f"  pending #{item['seq']} since {item['created']}, "
                   f"{item['attempts']} retries: {item['last_error']}")
    return 0
