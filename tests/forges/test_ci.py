"""The CI files memgit ships, validated by real validators and run as their CI runs them.

* action.yml: check-jsonschema's github-action schema; its check step run with the
  environment the Actions runner gives a composite step (inputs evaluated into the
  step's ``env``, GITHUB_* variables, GITHUB_OUTPUT);
* plugins/github/*.yml: check-jsonschema's github-workflows schema and actionlint;
* plugins/gitlab/memgit.gitlab-ci.yml: check-jsonschema's gitlab-ci schema; its
  memgit-check script run with the variables a GitLab runner sets.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tests.forges_support import (
    GITLAB_SCHEMA,
    SARIF_SCHEMA,
    check_jsonschema,
    github_env,
    gitlab_env,
    validator,
)
from tests.githooks.test_receive import SECRET, people
from tests.receive_support import MAIN, Drive, base_files, entry, git, ulid_like

ACTION = ROOT / "action.yml"
WORKFLOWS = sorted((ROOT / "plugins" / "github").glob("*.yml"))
TEMPLATE = ROOT / "plugins" / "gitlab" / "memgit.gitlab-ci.yml"


def test_action_is_valid() -> None:
    proc = check_jsonschema("--builtin-schema", "vendor.github-actions", ACTION)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    action = yaml.safe_load(ACTION.read_text())
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    install = next(s for s in steps if s.get("name", "").startswith("Install memgit"))
    # the action's own checkout is installed: the action and its memgit are one version
    assert install["env"]["MEMGIT_ACTION_PATH"] == "${{ github.action_path }}"
    assert '"$MEMGIT_ACTION_PATH"' in install["run"]
    upload = next(s for s in steps if s.get("uses", "").startswith(
        "github/codeql-action/upload-sarif"))
    assert "inputs.sarif == 'true'" in upload["if"]


def test_workflows_are_valid() -> None:
    assert {p.name for p in WORKFLOWS} == {"memgit-check.yml", "memgit-gate.yml",
                                          "memgit-incoming.yml"}
    proc = check_jsonschema("--builtin-schema", "vendor.github-workflows", *WORKFLOWS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lint = subprocess.run([validator("actionlint"), "-no-color", *map(str, WORKFLOWS)],
                          capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_template_is_valid() -> None:
    proc = check_jsonschema("--builtin-schema", "vendor.gitlab-ci", TEMPLATE)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_validators_catch_mistakes(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                      "      - run: echo ${{ github.nonsense.value }}\n        shell: bashh\n")
    lint = subprocess.run([validator("actionlint"), "-no-color", str(broken)],
                          capture_output=True, text=True)
    assert lint.returncode == 1 and "shell" in lint.stdout
    bad_ci = tmp_path / ".gitlab-ci.yml"
    bad_ci.write_text("job:\n  script: 3\n  when: sometimes\n")
    assert check_jsonschema("--builtin-schema", "vendor.gitlab-ci", bad_ci).returncode == 1


# --- running the commands as the CIs run them -----------------------------------------

_EXPR = re.compile(r"\$\{\{\s*inputs\.([a-z-]+)\s*\}\}")


def step_env(step: dict, inputs: dict[str, str]) -> dict[str, str]:
    """A composite step's ``env`` as the runner evaluates it: ``${{ inputs.X }}``
    replaced by the input's value (the only expressions the step's env uses)."""
    out = {}
    for key, value in (step.get("env") or {}).items():
        assert set(re.findall(r"\$\{\{(.*?)\}\}", value)) <= {f" inputs.{m} " for m in
                                                             _EXPR.findall(value)}, value
        out[key] = _EXPR.sub(lambda m: inputs[m.group(1)], value)
    return out


@pytest.fixture
def pushed(tmp_path: Path) -> tuple[Drive, str, str, Path]:
    """A drive, a push of a secret and a bad source, and the CI checkout of the push."""
    drive = Drive(tmp_path / "d", files=base_files())
    main = drive.main()
    tip = drive.build((people(entry(f"the CI token is {SECRET}", ulid_like(41)),
                              entry("Clicked", ulid_like(42), source="javascript:alert(1)")),
                       "notes"))[-1]
    ws = tmp_path / "workspace"
    git("clone", "-q", drive.client, ws)
    git("fetch", "-q", "origin", f"{tip}:refs/heads/pushed", cwd=ws)
    git("checkout", "-q", "pushed", cwd=ws)
    return drive, main, tip, ws


def test_the_action_check_step_runs_as_on_github(pushed, tmp_path: Path) -> None:
    _drive, main, tip, ws = pushed
    action = yaml.safe_load(ACTION.read_text())
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "check")
    env = {**github_env(tmp_path, "push", {"before": main, "after": tip, "ref": MAIN,
                                           "repository": {"default_branch": "main"}}, ws),
           **step_env(step, inputs)}
    script = tmp_path / "step.sh"
    script.write_text(step["run"])
    # the runner runs `shell: bash` steps as: bash --noprofile --norc -eo pipefail FILE
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                          cwd=ws, env=env, capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert "::error file=people.md,line=5,title=MG401 secret::" in proc.stdout
    assert SECRET not in proc.stdout + proc.stderr
    outputs = dict(line.split("=", 1) for line in
                   Path(env["GITHUB_OUTPUT"]).read_text().splitlines())
    sarif = Path(outputs["sarif-file"])
    assert sarif.parent == tmp_path and SECRET not in sarif.read_text()
    assert check_jsonschema("--schemafile", SARIF_SCHEMA, sarif).returncode == 0
    assert "MG101" in Path(env["GITHUB_STEP_SUMMARY"]).read_text()


def test_the_gitlab_check_job_runs_as_on_gitlab(pushed, tmp_path: Path) -> None:
    _drive, main, tip, ws = pushed
    template = yaml.safe_load(TEMPLATE.read_text())
    job = template["memgit-check"]
    variables = {**template["variables"], **job.get("variables", {})}
    policy = ws / variables["MEMGIT_POLICY"]
    policy.parent.mkdir(parents=True, exist_ok=True)
    policy.write_text("kind: team\n")
    env = gitlab_env(**variables, CI_PIPELINE_SOURCE="push", CI_COMMIT_BEFORE_SHA=main,
                     CI_COMMIT_SHA=tip, CI_COMMIT_REF_NAME="pushed")
    # a GitLab runner runs the script lines in one shell that stops at the first failure
    script = "set -eo pipefail\n" + "\n".join(job["script"]) + "\n"
    proc = subprocess.run(["bash", "-c", script], cwd=ws, env=env, capture_output=True,
                          text=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "MG401 secret" in proc.stdout and SECRET not in proc.stdout + proc.stderr
    artifact = ws / job["artifacts"]["reports"]["codequality"]
    assert check_jsonschema("--schemafile", GITLAB_SCHEMA, artifact).returncode == 0
    assert SECRET not in artifact.read_text()
