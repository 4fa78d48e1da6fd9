"""The replay-and-sync part of ``memgit demo``: two agents offline, both write, both sync.

:func:`demo_sync` makes a bare server drive with memgit's pre-receive hook and two clones
in a new or empty folder; both agents write offline (one edit conflicting), then both
sync. It returns True when both checkouts and the server end with the same entries, all
of them. :func:`demo_mount` shows recall across a mount of that server drive.
"""

from __future__ import annotations

from pathlib import Path

import click

from memgit.git.repository import commit_tree_id, open_drive, ref_target, tree_texts
from memgit.sync.replay import entry_map


def _step(title: str) -> None:
    click.secho(f"\n== {title}", bold=True)


def _entries(path: Path) -> dict[str, tuple[str, str]]:
    drive = open_drive(path)
    head = ref_target(drive, "refs/heads/main")
    assert head is not None
    return entry_map(tree_texts(drive, commit_tree_id(drive, head)))


def demo_sync(base: Path) -> bool:
    from memgit.drives.create import clone_drive, create_drive
    from memgit.sync.client import sync
    from memgit.write.ops import NewFact
    from memgit.write.writer import commit_facts

    _step("Sync: two agents work offline, then memgit sync (replay, never force)")
    server = base / "server.git"
    create_drive(server, bare=True, title="Memory: team")
    a = clone_drive(server.as_uri(), base / "agent-a")
    b = clone_drive(server.as_uri(), base / "agent-b")
    click.echo(f"$ memgit init --bare {server.name}; memgit clone ... agent-a; "
               "memgit clone ... agent-b")
    shared = commit_facts(open_drive(a), [NewFact("The team ships on Fridays",
                                                  "claude-code:session/7")],
                          message="Demo: a shared entry")
    sync(open_drive(a))
    sync(open_drive(b))
    shared_id = shared.added[0].id if shared.added else ""
    click.echo("both agents start with the entry 'The team ships on Fridays'")

    click.echo("offline, agent-a remembers two facts and edits the shared entry;")
    click.echo("offline, agent-b remembers one fact and edits the same entry too")
    commit_facts(open_drive(a), [NewFact("Release notes go to #eng", "claude-code:session/8"),
                                 NewFact("Staging resets nightly", "claude-code:session/8",
                                         "ops")], message="Demo: agent a")
    commit_facts(open_drive(a), [], edits={shared_id: "The team ships on Thursdays"},
                 message="Demo: agent a edits")
    commit_facts(open_drive(b), [NewFact("On-call rotates weekly", "claude-code:session/9",
                                         "ops")], message="Demo: agent b")
    commit_facts(open_drive(b), [], edits={shared_id: "The team ships on Wednesdays"},
                 message="Demo: agent b edits")

    click.echo("$ memgit -C agent-a sync")
    report_a = sync(open_drive(a))
    click.echo(f"  pushed {len(report_a.pushed)} commits as they are (the server had not moved)")
    click.echo("$ memgit -C agent-b sync            # --on-conflict local is the default")
    report_b = sync(open_drive(b))
    replayed = sum(1 for local, server_commit in report_b.pushed if local != server_commit)
    click.echo(f"  replayed {replayed} commits on the server's new head, same authors and "
               "messages")
    for conflict in report_b.conflicts:
        click.echo(f"  conflict on {conflict.key} ({conflict.kind}): kept the "
                   f"{conflict.winner} version, no conflict markers")
    click.echo("$ memgit -C agent-a sync")
    sync(open_drive(a))

    final_a, final_b = _entries(a), _entries(b)
    on_server = _entries(server)
    click.echo(f"agent-a, agent-b and the server each hold {len(on_server)} entries:")
    for _id, (path, line) in sorted(on_server.items(), key=lambda kv: kv[1]):
        click.echo(f"  {path}: {line}")
    return final_a == final_b == on_server and len(on_server) == 4 and \
        all(len(r.pushed) == 2 for r in (report_a, report_b))


def demo_mount(personal: Path, server: Path) -> bool:
    """The personal drive mounts the team's server drive (read-only, its own recall index)
    and one recall searches both, each hit labelled with its drive."""
    from memgit.sync.mounts import add_mount, recall_with_mounts

    _step("Shared drive: mount the team's drive next to the personal one, recall across both")
    drive = open_drive(personal)
    mount = add_mount(drive, "team", server.as_uri())
    click.echo(f"$ memgit mount add team {server.name}   # {mount.entries} entries, "
               "read-only, never in the personal index")
    click.echo("$ memgit recall --mounts team")
    found = recall_with_mounts(drive, "team", 5, count=False)
    for hit in found.hits:
        click.echo(f"  [{hit.drive}] {hit.hit.path}:{hit.hit.line}: {hit.hit.text}")
    return {h.drive for h in found.hits} == {"self", "team"}
