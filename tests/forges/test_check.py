"""memgit check: the same verdict as pre-receive, in every format, from CI environments.

Each bad commit of test_receive's table is pushed to a real bare drive with memgit's
hooks and judged by ``memgit check`` on the client: the codes and report lines must be
the same. The formats are validated with the SARIF 2.1.0 schema and GitLab's own
codeclimate schema (check-jsonschema), and no format ever holds the secret.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memgit.forges.judge import judge_range
from memgit.githooks.verdict import report
from memgit.policy.registry import PurgeRegistry
from memgit.policy.settings import Policy
from tests.forges_support import (
    GITLAB_SCHEMA,
    SARIF_SCHEMA,
    check_jsonschema,
    github_env,
    gitlab_env,
    run_memgit,
)
from tests.githooks.test_receive import BAD_COMMITS, SECRET, people
from tests.receive_support import MAIN, Drive, base_files, entry, git, ulid_like

ZERO = "0" * 40


@pytest.fixture
def drive(tmp_path: Path) -> Drive:
    return Drive(tmp_path / "d", files=base_files())


def remote_lines(stderr: str) -> list[str]:
    return [line.removeprefix("remote:").removeprefix(" ").rstrip()
            for line in stderr.splitlines() if line.startswith("remote:")]


@pytest.mark.slow
def test_check_judges_every_bad_commit_as_pre_receive_does(drive: Drive) -> None:
    policy = Policy()
    for case in sorted(BAD_COMMITS):
        changes, code = BAD_COMMITS[case]
        main = drive.main()
        pushed = drive.build((changes, f"bad: {case}"))
        result = drive.push("refs/heads/work")
        assert result.refused_by_hook, case
        ours = judge_range(drive.client, main, pushed[-1], policy, PurgeRegistry())
        assert not ours.verdict.accepted, case
        found = {f.violation.code for f in ours.verdict.findings}
        assert code in found and found == result.codes(), case
        lines = [line.rstrip() for line in report(ours.verdict, policy)]
        assert lines == remote_lines(result.stderr), case  # the pusher's very lines


def test_a_good_range_passes_and_a_merge_base_is_used(drive: Drive) -> None:
    good = drive.build((people(entry("Ana moved to Lisbon", ulid_like(40))), "good"))
    proc = run_memgit("check", f"{MAIN}..{good[-1]}", "--format", "json", cwd=drive.client)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["accepted"] and out["commits"] == 1 and out["findings"] == []
    assert drive.push(good[-1]).returncode == 0  # the server agrees


def bad_range(drive: Drive) -> tuple[str, str]:
    """main and a tip two commits later: a secret (also in the subject) and a bad source."""
    main = drive.main()
    tip = drive.build((people(entry(f"the CI token is {SECRET}", ulid_like(41))),
                       f"add {SECRET}"),
                      (people(entry(f"the CI token is {SECRET}", ulid_like(41)),
                              entry("Clicked", ulid_like(42), source="javascript:alert(1)")),
                       "more"))[-1]
    return main, tip


@pytest.mark.parametrize("kind", ["text", "json", "sarif", "github", "gitlab"])
def test_no_format_holds_the_secret(drive: Drive, kind: str, tmp_path: Path) -> None:
    main, tip = bad_range(drive)
    proc = run_memgit("check", f"{main}..{tip}", "--format", kind, cwd=drive.client)
    assert proc.returncode == 1, proc.stderr
    assert SECRET not in proc.stdout and SECRET not in proc.stderr
    for code in ("MG401", "MG403", "MG101"):
        assert code in proc.stdout
    if kind in ("sarif", "gitlab"):
        report_file = tmp_path / f"report.{kind}.json"
        report_file.write_text(proc.stdout)
        schema = SARIF_SCHEMA if kind == "sarif" else GITLAB_SCHEMA
        checked = check_jsonschema("--schemafile", schema, report_file)
        assert checked.returncode == 0, checked.stdout + checked.stderr


def test_an_output_file_that_cannot_be_written_is_a_usage_error(drive: Drive,
                                                                tmp_path: Path) -> None:
    main, tip = bad_range(drive)
    for option in ("--output", "--sarif"):
        proc = run_memgit("check", f"{main}..{tip}", option, str(tmp_path / "no" / "r.json"),
                          cwd=drive.client)
        assert proc.returncode == 2, proc.stderr
        assert "MG001" in proc.stderr and f"give {option} a file" in proc.stderr
        assert SECRET not in proc.stdout + proc.stderr
    written = tmp_path / "r.sarif"
    proc = run_memgit("check", f"{main}..{tip}", "--sarif", str(written), cwd=drive.client)
    assert proc.returncode == 1 and json.loads(written.read_text())["version"] == "2.1.0"


def test_the_validators_are_not_vacuous(tmp_path: Path) -> None:
    """A report that breaks each schema fails it (so a pass above means something)."""
    bad_sarif = tmp_path / "bad.sarif"
    bad_sarif.write_text(json.dumps({"version": "2.1.0", "runs": [{"results": []}]}))
    bad_gitlab = tmp_path / "bad.json"
    bad_gitlab.write_text(json.dumps([{"description": "x", "severity": "major",
                                       "location": {"path": "a.md", "lines": {"begin": "one"}}}]))
    assert check_jsonschema("--schemafile", SARIF_SCHEMA, bad_sarif).returncode == 1
    assert check_jsonschema("--schemafile", GITLAB_SCHEMA, bad_gitlab).returncode == 1


def workspace(drive: Drive, tmp_path: Path, tip: str) -> Path:
    """A CI checkout: a full clone of the client with the tip checked out."""
    path = tmp_path / "workspace"
    git("clone", "-q", "--no-checkout", drive.client, path)
    git("fetch", "-q", "origin", f"{tip}:refs/heads/pushed", cwd=path)
    git("checkout", "-q", "pushed", cwd=path)
    return path


def test_github_push_event(drive: Drive, tmp_path: Path) -> None:
    main, tip = bad_range(drive)
    ws = workspace(drive, tmp_path, tip)
    env = github_env(tmp_path, "push", {"before": main, "after": tip, "ref": MAIN,
                                        "repository": {"default_branch": "main"}}, ws)
    proc = run_memgit("check", "--format", "github", cwd=ws, env=env)
    assert proc.returncode == 1, proc.stderr
    errors = [line for line in proc.stdout.splitlines() if line.startswith("::error ")]
    assert any(line.startswith("::error file=people.md,line=5,title=MG401 secret::")
               for line in errors), proc.stdout
    assert any("title=MG101 source-scheme" in line for line in errors)
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    assert summary.startswith("## memgit check: refused") and "MG401" in summary
    assert "2 commits" in summary and SECRET not in summary + proc.stdout


def test_github_pull_request_and_new_branch(drive: Drive, tmp_path: Path) -> None:
    main, tip = bad_range(drive)
    ws = workspace(drive, tmp_path, tip)
    pr = {"number": 7, "pull_request": {"number": 7, "base": {"sha": main},
                                        "head": {"sha": tip}}}
    env = github_env(tmp_path, "pull_request", pr, ws)
    proc = run_memgit("check", "--format", "json", cwd=ws, env=env)
    out = json.loads(proc.stdout)
    assert proc.returncode == 1 and out["range"] == {
        "base": main, "head": tip, "source": "GitHub pull request #7"}
    new_branch = {"before": ZERO, "after": tip, "ref": "refs/heads/topic",
                  "repository": {"default_branch": "main"}}
    env = github_env(tmp_path, "push", new_branch, ws)
    proc = run_memgit("check", "--format", "json", cwd=ws, env=env)
    assert json.loads(proc.stdout)["range"]["base"] == main  # merge base with origin/main
    env = github_env(tmp_path, "workflow_dispatch", {}, ws)
    proc = run_memgit("check", cwd=ws, env=env)
    assert proc.returncode == 2 and "names no range" in proc.stderr


def test_gitlab_push_and_merge_request(drive: Drive, tmp_path: Path) -> None:
    main, tip = bad_range(drive)
    ws = workspace(drive, tmp_path, tip)
    out_file = tmp_path / "gl-code-quality-report.json"
    env = gitlab_env(CI_PIPELINE_SOURCE="push", CI_COMMIT_BEFORE_SHA=main,
                     CI_COMMIT_SHA=tip, CI_COMMIT_REF_NAME="pushed")
    proc = run_memgit("check", "--format", "gitlab", "--output", str(out_file), cwd=ws,
                      env=env)
    assert proc.returncode == 1 and proc.stdout == ""
    issues = json.loads(out_file.read_text())
    assert {i["check_name"] for i in issues} == {"MG401", "MG403", "MG101"}
    assert check_jsonschema("--schemafile", GITLAB_SCHEMA, out_file).returncode == 0
    env = gitlab_env(CI_PIPELINE_SOURCE="merge_request_event", CI_COMMIT_SHA=tip,
                     CI_MERGE_REQUEST_DIFF_BASE_SHA=main, CI_MERGE_REQUEST_IID="3")
    proc = run_memgit("check", "--format", "json", cwd=ws, env=env)
    assert json.loads(proc.stdout)["range"]["source"] == "GitLab merge request !3"


def test_outside_ci_the_upstream_is_the_base(drive: Drive, tmp_path: Path) -> None:
    main, tip = bad_range(drive)
    ws = workspace(drive, tmp_path, tip)
    proc = run_memgit("check", cwd=ws)
    assert proc.returncode == 2 and "no upstream" in proc.stderr
    git("branch", "-q", "--set-upstream-to", "origin/main", cwd=ws)
    proc = run_memgit("check", cwd=ws)
    assert proc.returncode == 1 and f"memgit check: {main[:10]}..{tip[:10]}" in proc.stdout
    assert "2 commits judged" in proc.stdout and SECRET not in proc.stdout
    proc = run_memgit("check", "HEAD...main", cwd=ws)
    assert proc.returncode == 2 and "symmetric" in proc.stderr
