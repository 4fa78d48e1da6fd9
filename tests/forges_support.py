"""What the forge tests share: the memgit and validator command lines, and the
environment GitHub Actions and GitLab CI give a job."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from tests.conftest import ROOT

DATA = ROOT / "tests" / "data" / "forges"
SARIF_SCHEMA = DATA / "sarif-schema-2.1.0.json"
GITLAB_SCHEMA = DATA / "gitlab-codequality-report.json"
BIN = Path(sys.executable).parent


def run_memgit(*args: str, cwd: Path, env: Mapping[str, str] | None = None
               ) -> subprocess.CompletedProcess:
    """The real memgit command line, with CI variables added to the environment."""
    full = {k: v for k, v in os.environ.items()
            if not k.startswith(("GITHUB_", "GITLAB_", "CI_", "RUNNER_"))}
    full.update(PYTHONPATH=str(ROOT / "src"), **(env or {}))
    return subprocess.run([sys.executable, "-m", "memgit", *args], cwd=cwd,
                          capture_output=True, text=True, env=full)


def validator(name: str) -> str:
    """A validator installed with the test extra (check-jsonschema, actionlint)."""
    found = shutil.which(name, path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    assert found, f"{name} is missing: pip install -e '.[test]'"
    return found


def check_jsonschema(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([validator("check-jsonschema"), *map(str, args)],
                          capture_output=True, text=True)


def github_env(tmp: Path, event_name: str, payload: Mapping[str, object],
               workspace: Path) -> dict[str, str]:
    """What the GitHub Actions runner sets for a job step (the parts memgit reads)."""
    event = tmp / f"event-{event_name}.json"
    event.write_text(json.dumps(payload))
    summary, output = tmp / "step-summary.md", tmp / "github-output"
    for path in (summary, output):
        path.write_text("")
    return {"GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_EVENT_NAME": event_name,
            "GITHUB_EVENT_PATH": str(event), "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_OUTPUT": str(output), "GITHUB_WORKSPACE": str(workspace),
            "RUNNER_TEMP": str(tmp), "GITHUB_REPOSITORY": "acme/drive",
            "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}


def gitlab_env(**values: str) -> dict[str, str]:
    """What a GitLab runner sets (the parts memgit reads), plus ``values``."""
    return {"GITLAB_CI": "true", "CI": "true", "CI_DEFAULT_BRANCH": "main",
            "CI_PROJECT_PATH": "acme/drive", "CI_SERVER_HOST": "gitlab.example.com",
            "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", **values}
