"""memgit check: judge a revision range as the server's pre-receive would judge its push."""

from __future__ import annotations

import os
from pathlib import Path

import click

from memgit.cli.common import drive_from_ctx, policy_for, policy_option, write_output
from memgit.errors import UsageError
from memgit.forges.ci_env import CiRange, ci_range, explicit_range, upstream_range
from memgit.forges.formats import FORMATS, github_summary, render
from memgit.forges.judge import judge_range
from memgit.policy.registry import PurgeRegistry


@click.command("check")
@click.argument("range_", metavar="[RANGE]", required=False)
@click.option("--format", "kind", type=click.Choice(FORMATS), default="text",
              show_default=True, help="text, json, sarif (2.1.0), github (workflow "
              "commands) or gitlab (code quality report).")
@click.option("--output", "output", type=click.Path(dir_okay=False), default=None,
              help="Write the report to FILE instead of standard output.")
@click.option("--sarif", "sarif_file", type=click.Path(dir_okay=False), default=None,
              help="Also write a SARIF 2.1.0 report to FILE (for code scanning).")
@policy_option
@click.pass_context
def command(ctx: click.Context, range_: str | None, kind: str, output: str | None,
            sarif_file: str | None, policy_file: str | None) -> int:
    """Judge the commits of RANGE exactly as pre-receive would (exit 1 on a violation).

    RANGE is A..B (the commits of B that A lacks) or one revision (against its
    upstream). Without RANGE: in GitHub Actions or GitLab CI the pushed range or
    the pull/merge request's, read from the CI's environment; elsewhere what the
    current branch has that its upstream lacks.
    """
    drive = drive_from_ctx(ctx)
    policy = policy_for(drive, policy_file)
    git_dir = drive.git_dir
    if range_:
        chosen = explicit_range(git_dir, range_)
    else:
        found = ci_range(git_dir)
        chosen = found if found is not None else _local_or_ci_error(git_dir)
    verdict = judge_range(git_dir, chosen.base, chosen.head, policy,
                          PurgeRegistry.load(git_dir))
    text = render(kind, verdict, policy, chosen.source)
    if output:
        write_output(output, text, "--output")
    else:
        click.echo(text, nl=False)
    if sarif_file:
        write_output(sarif_file, render("sarif", verdict, policy, chosen.source), "--sarif")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if kind == "github" and summary:
        with open(summary, "a", encoding="utf-8") as fh:
            fh.write(github_summary(verdict, policy, chosen.source))
    return 0 if verdict.verdict.accepted else 1


def _local_or_ci_error(git_dir: Path) -> CiRange:
    if os.environ.get("GITHUB_ACTIONS") == "true" or os.environ.get("GITLAB_CI") == "true":
        raise UsageError("this CI event names no range to check",
                         "give one: memgit check BASE..HEAD")
    return upstream_range(git_dir)
