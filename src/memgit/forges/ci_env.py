"""Which revision range a CI run is about, read from the CI's own environment.

* GitHub Actions (``GITHUB_ACTIONS=true``): the event payload at ``GITHUB_EVENT_PATH``.
  ``push``: ``before`` .. ``after`` (``before`` is all zeros for a new branch: then the
  base is the merge base with the default branch, ``repository.default_branch``);
  ``pull_request``/``pull_request_target``: ``pull_request.base.sha`` ..
  ``pull_request.head.sha``; other events (``workflow_dispatch``, ``schedule``): none.
* GitLab CI (``GITLAB_CI=true``): merge request pipelines give
  ``CI_MERGE_REQUEST_DIFF_BASE_SHA`` (GitLab's merge base) .. ``CI_COMMIT_SHA``;
  branch pipelines ``CI_COMMIT_BEFORE_SHA`` .. ``CI_COMMIT_SHA`` (zeros for a new
  branch: the merge base with ``CI_DEFAULT_BRANCH``).
* Elsewhere: what the checked-out branch has that its upstream lacks
  (``@{upstream}..HEAD``).

The base of a range is always replaced by the merge base of base and head, so the
range is judged as the fast-forward push that would bring exactly its commits.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memgit.errors import UsageError
from memgit.forges.judge import merge_base, resolve_commit
from memgit.git.plumbing import git_plumbing


@dataclass(frozen=True)
class CiRange:
    """A range to judge: ``base`` (None: from the first commit) .. ``head``, and where
    it came from (shown in reports)."""

    base: str | None
    head: str
    source: str


def _zero(sha: str | None) -> bool:
    return not sha or set(sha) == {"0"}


def github_range(env: Mapping[str, str]) -> tuple[str | None, str, str, str] | None:
    """(before, after, default branch, what) of a GitHub Actions event, or None."""
    path = env.get("GITHUB_EVENT_PATH")
    event = env.get("GITHUB_EVENT_NAME", "")
    if not path:
        raise UsageError("GITHUB_ACTIONS is set but GITHUB_EVENT_PATH is not",
                         "run memgit check inside a GitHub Actions job, or give a RANGE")
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the GitHub event payload {path}: {exc}",
                         "give a RANGE instead") from exc
    default = str((payload.get("repository") or {}).get("default_branch") or "")
    if event in ("pull_request", "pull_request_target") and "pull_request" in payload:
        pr = payload["pull_request"]
        return (str(pr["base"]["sha"]), str(pr["head"]["sha"]), default,
                f"GitHub pull request #{pr.get('number', '?')}")
    if event == "push" and "after" in payload:
        return (str(payload.get("before") or ""), str(payload["after"]), default,
                f"GitHub push to {payload.get('ref', '?')}")
    return None


def gitlab_range(env: Mapping[str, str]) -> tuple[str | None, str, str, str] | None:
    """(before, after, default branch, what) of a GitLab CI pipeline, or None."""
    head = env.get("CI_COMMIT_SHA")
    if not head:
        return None
    default = env.get("CI_DEFAULT_BRANCH", "")
    if env.get("CI_MERGE_REQUEST_DIFF_BASE_SHA"):
        return (env["CI_MERGE_REQUEST_DIFF_BASE_SHA"], head, default,
                f"GitLab merge request !{env.get('CI_MERGE_REQUEST_IID', '?')}")
    return (env.get("CI_COMMIT_BEFORE_SHA", ""), head, default,
            f"GitLab pipeline for {env.get('CI_COMMIT_REF_NAME', '?')}")


def _default_base(git_dir: Path, head: str, default: str) -> str | None:
    """The merge base of ``head`` with the default branch as fetched (a new branch)."""
    for ref in (f"refs/remotes/origin/{default}", f"refs/heads/{default}") if default else ():
        if git_plumbing(git_dir, "rev-parse", "--verify", "--quiet", ref).returncode == 0:
            return merge_base(git_dir, ref, head)
    return None


def ci_range(git_dir: Path, env: Mapping[str, str] | None = None) -> CiRange | None:
    """The range of the CI run described by ``env`` (default: this process's), or None
    outside CI or for an event without one."""
    env = os.environ if env is None else env
    if env.get("GITHUB_ACTIONS") == "true":
        found = github_range(env)
    elif env.get("GITLAB_CI") == "true":
        found = gitlab_range(env)
    else:
        return None
    if found is None:
        return None
    before, after, default, what = found
    head = resolve_commit(git_dir, after)
    if _zero(before):
        base = _default_base(git_dir, head, default)
    else:
        base = merge_base(git_dir, resolve_commit(git_dir, str(before)), head)
    return CiRange(base, head, what)


def upstream_range(git_dir: Path, head_rev: str = "HEAD") -> CiRange:
    """What ``head_rev`` has that its branch's upstream lacks (``@{upstream}..HEAD``)."""
    proc = git_plumbing(git_dir, "rev-parse", "--verify", "--quiet",
                        f"{head_rev}@{{upstream}}")
    if proc.returncode != 0:
        raise UsageError("the current branch has no upstream to compare with",
                         "give a range (memgit check origin/main..HEAD) or set one "
                         "(git branch --set-upstream-to origin/main)")
    head = resolve_commit(git_dir, head_rev)
    return CiRange(merge_base(git_dir, proc.stdout.decode().strip(), head), head,
                   f"{head_rev} against its upstream")


def explicit_range(git_dir: Path, spec: str) -> CiRange:
    """``A..B`` (what B has that A lacks), or one revision ``B`` (B against its upstream;
    ``B`` alone with no upstream: every commit of ``B``, judged as a first push)."""
    if "..." in spec:
        raise UsageError(f"{spec!r}: a symmetric range (A...B) is not a push",
                         "write A..B: the commits of B that A lacks")
    if ".." in spec:
        left, right = spec.split("..", 1)
        head = resolve_commit(git_dir, right or "HEAD")
        base = merge_base(git_dir, resolve_commit(git_dir, left or "HEAD"), head)
        return CiRange(base, head, spec)
    upstream = git_plumbing(git_dir, "rev-parse", "--verify", "--quiet", f"{spec}@{{upstream}}")
    if upstream.returncode == 0:
        return upstream_range(git_dir, spec)
    return CiRange(None, resolve_commit(git_dir, spec), f"{spec} (all of its history)")
