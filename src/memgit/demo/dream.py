"""The dream part of ``memgit demo``: observe, a dry run, the night's commit, an undo.

:func:`demo_dream` uses the rule-based proposer (no model, no network) and returns True
when every step did what it shows.
"""

from __future__ import annotations

from pathlib import Path

import click

from memgit.dream.observations import observe
from memgit.dream.run import dream
from memgit.dream.undo import undo
from memgit.git.plumbing import git
from memgit.git.repository import commit_tree_id, open_drive, ref_target
from memgit.policy.dream_settings import DreamConfig
from memgit.policy.settings import Policy
from memgit.write.ops import NewFact
from memgit.write.writer import commit_facts


def _step(title: str) -> None:
    click.secho(f"\n== {title}", bold=True)


def demo_dream(target: Path) -> bool:
    drive = open_drive(target)
    policy = Policy()
    ok = True

    _step("Dream: observe turns, then consolidate (memgit observe, memgit dream --dry-run)")
    click.echo("$ memgit observe --session demo-7 'Joe said the product team now owns pricing'")
    turn = observe(drive, "Joe said the product team now owns pricing", session="demo-7")
    click.echo(f"  {turn.id} (kept in the git directory, never in the tree)")
    # A near copy of people.md's first entry, as an agent in a hurry would write it.
    added = commit_facts(drive, [NewFact("Joe leads the product team.", topic="people")],
                         message="Demo: a near duplicate")
    ok &= added.status == "committed"
    head = ref_target(drive, policy.branch_ref)
    click.echo("$ memgit dream --dry-run")
    preview = dream(drive, policy, DreamConfig(), dry_run=True)
    click.echo(preview.diff.rstrip())
    click.echo(f"  report: {len(preview.report['applied'])} applied, "
               f"{len(preview.report['rejected'])} rejected; nothing changed")
    ok &= preview.status == "dry_run" and ref_target(drive, policy.branch_ref) == head
    ok &= "-- Joe leads the product team." in preview.diff

    _step("Dream: the night's commit, then memgit dream undo")
    before = commit_tree_id(drive, head) if head else ""
    click.echo("$ memgit dream")
    night = dream(drive, policy, DreamConfig())
    subject = git("log", "-1", "--format=%s", cwd=target).stdout.decode().strip()
    click.echo(f"  {night.status}: commit {night.commit[:12]} '{subject}'")
    ok &= night.status == "applied" and subject == f"Dream {night.day}"
    click.echo(f"$ memgit dream undo {night.day}")
    done = undo(drive, policy, night.day)
    after = ref_target(drive, policy.branch_ref)
    restored = after is not None and commit_tree_id(drive, after) == before
    click.echo(f"  commit {done.commit[:12]} restores {', '.join(done.files)}: the tree is "
               f"{'exactly' if restored else 'NOT'} the one before the dream")
    return bool(ok and restored)
