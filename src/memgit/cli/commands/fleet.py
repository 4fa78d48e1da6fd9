"""memgit fleet: census, find, forget, dream, maintain, daemon and index over a root of
drives (docs/fleet.md)."""

from __future__ import annotations

import datetime as _dt
import json
import sys
from typing import Any

import click

from memgit.cli.common import ProgressBar
from memgit.errors import UsageError
from memgit.safe_text import printable

jobs_option = click.option("--jobs", "-j", type=click.IntRange(1, 256), default=1,
                           show_default=True, help="Worker processes.")
json_option = click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
root_argument = click.argument("root", type=click.Path(file_okay=False))


def _index(root: str):  # type: ignore[no-untyped-def]
    from memgit.fleet.index import FleetIndex

    return FleetIndex(root)


def _progress(as_json: bool, phase: str):  # type: ignore[no-untyped-def]
    bar = ProgressBar(quiet=as_json)

    def show(done: int, total: int) -> None:
        bar(phase, done, total)
    show.end = bar.end  # type: ignore[attr-defined]
    return show


def _warn(index: Any, as_json: bool) -> None:
    if index.warning and not as_json:
        click.echo(f"memgit: warning: {printable(index.warning)}", err=True)


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


@click.group("fleet")
def command() -> None:
    """Every drive under a root folder at once: census, find, forget, nightly dreams."""


@command.command("census")
@root_argument
@jobs_option
@click.option("--rebuild", is_flag=True, help="Describe every drive again (not only those "
              "that changed since the index was written).")
@json_option
def census_command(root: str, jobs: int, rebuild: bool, as_json: bool) -> int:
    """Every repository under ROOT: kind, entries, size and files against the limits, last
    push, pending writes, last dream, index health; drives near or over a limit."""
    from memgit.fleet.census import census

    index = _index(root)
    try:
        progress = _progress(as_json, "describing drives")
        data = census(index, jobs=jobs, rebuild=rebuild, progress=progress)
        progress.end()  # type: ignore[attr-defined]
        _warn(index, as_json)
    finally:
        index.close()
    if as_json:
        _echo_json(data)
        return 0
    for r in data["drives"]:
        click.echo(printable(_census_line(r)))
    s = data["summary"]
    click.echo(f"{s['drives']} drive(s), {s['entries']} entries; {s['near_limit']} near a "
               f"limit, {s['over_limit']} over; {s['pending_writes']} pending write(s); "
               f"{s['dreams_failed']} last dream(s) failed; {s['not_drives']} repositor"
               f"{'y' if s['not_drives'] == 1 else 'ies'} not a drive, {s['errors']} "
               f"unreadable")
    return 0


def _census_line(r: dict[str, Any]) -> str:
    if r["status"] != "drive":
        label = "not a drive" if r["status"] == "not_drive" else "UNREADABLE"
        return f"{r['name']}: {label}: {r['reason']} (skipped)"
    mark = " OVER " + ",".join(r["over"]) if r["over"] else \
        (" near " + ",".join(r["near"]) if r["near"] else "")
    dream = f"{r['last_dream_day']} {r['last_dream_status']}" if r["last_dream_day"] else "-"
    return (f"{r['name']}: {r['kind']} {r['entries']} entries, {r['drive_bytes']}/"
            f"{r['drive_bytes_limit']} bytes, {r['files']}/{r['files_limit']} files; last "
            f"push {r['last_push'] or '-'}; {r['pending_writes']} pending; dream {dream}; "
            f"index {r['index_health']}{mark}")


@command.command("find")
@root_argument
@click.argument("query")
@click.option("--regex", is_flag=True, help="QUERY is a regular expression (Python re, "
              "case-insensitive).")
@click.option("--history", is_flag=True, help="Also list drives whose history still holds "
              "a matching text that the head no longer has.")
@click.option("--scan", is_flag=True, help="Read every drive instead of the index (slow; "
              "for checking the index).")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="List at most this many entries (and as many history versions; "
              "default 1,000); the drives and the totals are always complete.")
@click.option("--all", "every", is_flag=True, help="List every matching entry.")
@click.option("--no-refresh", is_flag=True, help="Answer from the index as post-receive "
              "and the last census left it, without first looking for drives changed "
              "another way (a stat walk of the root).")
@json_option
def find_command(root: str, query: str, regex: bool, history: bool, scan: bool,
                 limit: int | None, every: bool, no_refresh: bool, as_json: bool) -> int:
    """Every entry in every drive under ROOT matching QUERY: words (all of them), a
    "phrase" (in double quotes) or --regex; every drive that holds one, and the first
    --limit entries in order of drive and topic. Exit 1 when nothing matches."""
    from memgit.fleet.find import DEFAULT_LIMIT, find
    from memgit.fleet.find import scan as scan_root
    from memgit.fleet.match import parse_query

    parsed = parse_query(query, regex=regex)
    shown = None if every else limit or DEFAULT_LIMIT
    index = _index(root)
    try:
        if scan:
            found = scan_root(index.root, parsed, history=history, origin=index.origin,
                              limit=shown)
        else:
            if not no_refresh:
                index.refresh()
            found = find(index, parsed, history=history, limit=shown)
        _warn(index, as_json)
    finally:
        index.close()
    if as_json:
        _echo_json(found.as_dict())
    else:
        for hit in found.hits:
            click.echo(printable(f"{hit.drive}: {hit.entry_id} {hit.path} "
                                 f"[{hit.source or '-'}; {hit.added or '-'}] {hit.text}"))
        for hit in found.history:
            click.echo(printable(f"{hit.drive}: {hit.entry_id} {hit.path} (history only) "
                                 f"[{hit.source or '-'}; {hit.added or '-'}] {hit.text}"))
        heads, past = found.totals
        click.echo(f"{heads} entr{'y' if heads == 1 else 'ies'} at the heads, {past} in "
                   f"history only, in {len(found.drives())} drive(s) (read from "
                   f"{found.index})", err=True)
        if found.cut():
            click.echo(f"listed the first {len(found.hits)} and {len(found.history)}: "
                       "--limit N or --all lists more", err=True)
    return 0 if found.hits or found.history else 1


@command.command("forget")
@root_argument
@click.argument("query")
@click.option("--regex", is_flag=True, help="QUERY is a regular expression.")
@click.option("--dry-run", is_flag=True, help="Show the plan; change nothing.")
@click.option("--purge", is_flag=True, help="Also delete the entries from every drive's "
              "history (memgit purge) and refuse their texts from then on.")
@click.option("--yes", is_flag=True, help="Do not ask (required without a terminal for "
              "--purge and for a query matching nearly everything).")
@click.option("--by", default="", metavar="NAME", help="Who asks, for the receipt "
              "(default: user@host).")
@jobs_option
@json_option
def forget_command(root: str, query: str, regex: bool, dry_run: bool, purge: bool, yes: bool,
                   by: str, jobs: int, as_json: bool) -> int:
    """Remove everything matching QUERY from every drive under ROOT (the right to be
    forgotten): the plan first, then forget in each drive, with --purge from history
    too; one receipt under ROOT. Exit 3 when a drive could not be processed (run the
    same command again to finish it)."""
    from memgit.fleet import forget
    from memgit.fleet.match import parse_query

    parsed = parse_query(query, regex=regex)
    index = _index(root)
    try:
        planned = forget.plan(index, parsed, purge=purge, jobs=jobs)
        _warn(index, as_json)
        if dry_run:
            if as_json:
                _echo_json({"dry_run": True, **planned.as_dict()})
            else:
                _print_plan(planned)
            return 0
        if not as_json:
            _print_plan(planned)
        _confirm(planned, yes)
        progress = _progress(as_json, "forgetting")
        receipt = forget.carry_out(index, planned, by=by, progress=progress)
        progress.end()  # type: ignore[attr-defined]
    finally:
        index.close()
    if as_json:
        _echo_json(receipt)
    else:
        for name, entry in sorted(receipt["drives"].items()):
            if entry["status"] != "done":
                click.echo(printable(f"{name}: {entry['status'].upper()}: {entry['reason']}"),
                           err=True)
        t = receipt["totals"]
        click.echo(f"request {receipt['request']}: {t['done']} drive(s) done, {t['pending']} "
                   f"not yet; {t['forgotten']} entries forgotten, {t['purged']} purged; "
                   f"receipt {receipt['path']}")
    return 0 if receipt["totals"]["pending"] == 0 else 3


def _print_plan(planned: Any) -> None:
    click.echo(f"request {planned.request}: {planned.summary()}")
    for part in planned.drives:
        click.echo(printable(f"  {part.name}: forget {len(part.forget)}"
                             + (f", purge {len(part.purge)}" if planned.purge else "")))
    for origin, count in sorted(planned.elsewhere.items()):
        click.echo(printable(f"  elsewhere: {count} matching entries on {origin} "
                             "(run memgit fleet forget there)"))


def _confirm(planned: Any, yes: bool) -> None:
    """Ask on a terminal; without one, --yes is required for a purge or a broad query."""
    if yes or not planned.drives:
        return
    if not (planned.purge or planned.broad):
        return
    why = (f"the query matches nearly everything: {planned.summary()}" if planned.broad
           else "a purge rewrites the history of every drive it touches")
    if not sys.stdin.isatty():
        raise UsageError(f"{why}; nothing was changed",
                         "check it with --dry-run, then pass --yes")
    click.confirm(f"{why}. Go on?", abort=True, err=True)


def _now(value: str | None) -> _dt.datetime:
    if not value:
        return _dt.datetime.now(_dt.UTC)
    try:
        parsed = _dt.datetime.fromisoformat(value)
    except ValueError as exc:
        raise UsageError(f"--now {value!r} is not an ISO time",
                         "e.g. 2026-05-01T02:30:00+02:00") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=_dt.UTC)


def _run_task(task: str, root: str, jobs: int, as_json: bool, now: str | None,
              no_model: bool = False) -> int:
    from memgit.fleet.schedule import run

    index = _index(root)
    try:
        progress = _progress(as_json, f"{task} runs")
        done = run(index, task, _now(now), jobs=jobs, no_model=no_model, progress=progress)
        progress.end()  # type: ignore[attr-defined]
        _warn(index, as_json)
    finally:
        index.close()
    _report(done, as_json)
    return 1 if any(j.status in ("failed", "gave_up") for j in done) else 0


def _report(done: list[Any], as_json: bool) -> None:
    if as_json:
        _echo_json({"runs": [j.as_dict() for j in done]})
        return
    for job in done:
        click.echo(printable(f"{job.drive}: {job.task} {job.day}: {job.status}"
                             + (f": {job.reason}" if job.reason else "")))
    if not done:
        click.echo("no drive is in its night now", err=True)


now_option = click.option("--now", default=None, metavar="ISO", hidden=True,
                          help="Run as if it were this time (for testing a schedule).")


@command.command("dream")
@root_argument
@jobs_option
@click.option("--no-model", is_flag=True, help="Use the rule-based proposer.")
@now_option
@json_option
def dream_command(root: str, jobs: int, no_model: bool, now: str | None, as_json: bool) -> int:
    """Dream every drive whose night it is (dream.window in its time zone), once a day
    each, retrying a failed or stuck night up to 3 times. For cron, every 15 minutes."""
    return _run_task("dream", root, jobs, as_json, now, no_model)


@command.command("maintain")
@root_argument
@jobs_option
@now_option
@json_option
def maintain_command(root: str, jobs: int, now: str | None, as_json: bool) -> int:
    """Run memgit maintain in every drive whose night it is, once a day each."""
    return _run_task("maintain", root, jobs, as_json, now)


@command.command("daemon")
@root_argument
@jobs_option
@click.option("--interval", type=click.FloatRange(1), default=900.0, show_default=True,
              help="Seconds between rounds.")
@click.option("--no-model", is_flag=True, help="Use the rule-based proposer.")
def daemon_command(root: str, jobs: int, interval: float, no_model: bool) -> int:
    """Run fleet dream and fleet maintain every --interval seconds until stopped."""
    from memgit.fleet.schedule import daemon

    index = _index(root)
    try:
        daemon(index, jobs=jobs, interval=interval, no_model=no_model,
               report=lambda done: _report(done, False) if done else None)
    finally:
        index.close()
    return 0


@command.command("index")
@click.argument("root", type=click.Path(file_okay=False), required=False)
@click.option("--url", default=None, metavar="URL", help="Keep the index in PostgreSQL too "
              "(postgresql://USER:PASSWORD@HOST:PORT/DB), shared by several hosts.")
@click.option("--embedded", is_flag=True, help="Stop using PostgreSQL (the embedded index "
              "is always kept).")
@click.option("--drive", "drive", default=None, metavar="GIT_DIR", type=click.Path(
              file_okay=False), help="Describe this one drive again in the index of the "
              "fleet it belongs to (post-receive runs this after each push); no ROOT.")
@json_option
def index_command(root: str | None, url: str | None, embedded: bool, drive: str | None,
                  as_json: bool) -> int:
    """Show or set where the fleet index of ROOT lives; --url copies this root's rows
    there. With --drive GIT_DIR: update that drive's row (exit 1 outside any fleet)."""
    if drive is not None:
        if root or url or embedded:
            raise UsageError("--drive names the drive alone: no ROOT, --url or --embedded",
                             "memgit fleet index --drive /srv/git/alice.git")
        return _index_drive(drive, as_json)
    if root is None:
        raise UsageError("name the ROOT folder of the fleet (or --drive GIT_DIR)",
                         "memgit fleet index /srv/git")
    if url and embedded:
        raise UsageError("give --url or --embedded, not both", "")
    from memgit.fleet.index import open_postgres, shown_url

    index = _index(root)
    try:
        if url:
            open_postgres(url).close()  # unreachable: a clear error, nothing changed
            index.settings.url = url
            index.settings.save(index.root)
        elif embedded:
            index.settings.url = ""
            index.settings.save(index.root)
        refreshed = index.refresh()
        drives, entries = index.embedded.totals(index.origin)
        data = {"root": str(index.root), "origin": index.origin,
                "embedded": index.embedded.label, "drives": drives, "entries": entries,
                "postgresql": shown_url(index.settings.url) if index.settings.url else "",
                "copied": refreshed.shared_synced, "warning": index.warning}
        _warn(index, as_json)
    finally:
        index.close()
    if as_json:
        _echo_json(data)
    else:
        click.echo(printable(f"embedded index {data['embedded']}: {drives} drive(s), "
                             f"{entries} entries"))
        if data["postgresql"]:
            click.echo(printable(f"PostgreSQL index {data['postgresql']}"
                                 + (f": {data['copied']} drive(s) copied"
                                    if not data["warning"] else ": unreachable")))
    return 2 if data["warning"] else 0


def _index_drive(drive: str, as_json: bool) -> int:
    """``--drive``: the drive's row in its fleet's index (post-receive's part)."""
    from memgit.fleet.index import update_after_push
    from memgit.git.roots import root_of

    root = root_of(drive)
    updated = update_after_push(drive)
    if as_json:
        _echo_json({"drive": drive, "root": str(root or ""), "updated": updated})
    elif updated:
        click.echo(printable(f"{drive}: its row of the fleet index under {root} is current"))
    else:
        click.echo(printable(f"{drive} is under no fleet root (no folder above it holds "
                             ".memgit-fleet)"), err=True)
    return 0 if updated else 1
