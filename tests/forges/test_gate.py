"""The gate, end to end, on a forge without hooks.

A plain bare repository without memgit's hooks stands in for GitHub: anything may be
pushed to it. Three agents sync through incoming branches (git config memgit.push
incoming), some of their commits bad (a credential in a file, one in a commit message,
a file that is not Markdown, a change to the CI workflow); the gate runs as the
example workflow runs it: a fresh checkout of main in a temporary folder, the step's
script under the runner's environment. No bad commit may reach main, every good one
must, main only moves forward, and each agent's next sync says what happened.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, git
from tests.forges_support import github_env, run_memgit
from tests.githooks.test_receive import SECRET

GATE_WORKFLOW = ROOT / "plugins" / "github" / "memgit-gate.yml"
ZERO = "0" * 40


def rev(repo: Path, name: str) -> str | None:
    proc = git("rev-parse", "--verify", "-q", name, cwd=repo, check=False)
    return proc.stdout.decode().strip() or None


class Forge:
    """The stand-in forge, its admin and its agents."""

    def __init__(self, root: Path) -> None:
        self.root = root
        seed = root / "seed.git"
        assert run_memgit("init", "--bare", str(seed), cwd=root).returncode == 0
        self.git_dir = root / "forge.git"
        git("clone", "-q", "--bare", seed, self.git_dir)
        assert not (self.git_dir / "hooks" / "pre-receive").exists()  # no memgit here
        admin = root / "admin"
        git("clone", "-q", self.git_dir, admin)
        (admin / ".github" / "workflows").mkdir(parents=True)
        (admin / ".github" / "workflows" / "memgit-gate.yml").write_bytes(
            GATE_WORKFLOW.read_bytes())
        (admin / ".memgit").mkdir()
        (admin / ".memgit" / "policy.yaml").write_text("near_limit: 0.9\n")
        git("add", "-A", cwd=admin)
        git("commit", "-q", "-m", "CI files", cwd=admin)
        git("push", "-q", "origin", "main", cwd=admin)

    def agent(self, name: str) -> Path:
        path = self.root / name
        proc = run_memgit("clone", str(self.git_dir), str(path), cwd=self.root)
        assert proc.returncode == 0, proc.stderr
        for key, value in (("memgit.push", "incoming"), ("memgit.agents.operations", name),
                           ("user.name", name), ("user.email", f"{name}@example.com")):
            git("config", key, value, cwd=path)
        return path

    def main(self) -> str:
        found = rev(self.git_dir, "refs/heads/main")
        assert found is not None
        return found

    def refs(self) -> list[str]:
        out = git("for-each-ref", "--format=%(refname)", cwd=self.git_dir).stdout.decode()
        return out.split()


def remember(agent: Path, text: str, topic: str) -> None:
    proc = run_memgit("remember", text, "--topic", topic, cwd=agent)
    assert proc.returncode == 0, proc.stderr


def bad_commit(agent: Path, path: str, line: str, message: str) -> str:
    """A commit the agent's pre-commit hook would refuse, made without it."""
    target = agent / path
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")
    git("add", "-A", cwd=agent)
    git("commit", "-q", "--no-verify", "-m", message, cwd=agent)
    found = rev(agent, "HEAD")
    assert found is not None
    return found


def sync(agent: Path) -> subprocess.CompletedProcess:
    return run_memgit("sync", "--json", cwd=agent)


def run_gate_as_ci(forge: Forge, tmp: Path, secrets: dict[str, str] | None = None
                   ) -> subprocess.CompletedProcess:
    """What GitHub does for memgit-gate.yml: actions/checkout of main (fetch-depth 0)
    into a fresh workspace, then the gate step's script with the runner's variables."""
    workflow = yaml.safe_load(GATE_WORKFLOW.read_text())
    steps = workflow["jobs"]["gate"]["steps"]
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout"))
    assert checkout["with"]["ref"] == "main" and checkout["with"]["fetch-depth"] == 0
    step = next(s for s in steps if s.get("name") == "memgit gate")
    run_dir = Path(subprocess.check_output(["mktemp", "-d", "-p", str(tmp)], text=True).strip())
    ws = run_dir / "workspace"
    git("clone", "-q", "--branch", "main", forge.git_dir, ws)
    env = github_env(run_dir, "workflow_run", {"workflow_run": {"conclusion": "success"}}, ws)
    env.update(GITHUB_REF="refs/heads/main", GITHUB_REF_NAME="main")
    # secrets the repository does not define evaluate to "" (no registry key here)
    env.update({k: (secrets or {}).get(k, "") for k in step.get("env", {})})
    script = run_dir / "gate.sh"
    script.write_text(step["run"])
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                          cwd=ws, env=env, capture_output=True, text=True)


def main_text(forge: Forge) -> str:
    """Every file of every commit on main, and every commit message."""
    return git("log", "-p", "--format=%B", "main", cwd=forge.git_dir).stdout.decode()


@pytest.mark.slow
def test_the_gate_alone_protects_main(tmp_path: Path) -> None:
    forge = Forge(tmp_path)
    ana, bo, cy = (forge.agent(n) for n in ("ana", "bo", "cy"))
    remember(ana, "Ana prefers green tea", "people")
    remember(ana, "Ana reviews billing on Mondays", "projects/billing")
    remember(bo, "Bo owns the payments service", "projects/payments")
    secret_commit = bad_commit(bo, "projects/payments.md", f"- the deploy token is {SECRET}",
                               "payments notes")
    remember(bo, "Bo is on call this week", "people")  # good, after a bad one
    subject_commit = bad_commit(cy, "notes.md", "# Notes", f"notes {SECRET}")
    txt_commit = bad_commit(cy, "todo.txt", "plain text", "todo")
    ci_commit = bad_commit(cy, ".github/workflows/memgit-gate.yml", "# disabled", "skip gate")
    remember(cy, "Cy joined the data team", "people")
    bad = {secret_commit: "MG401", subject_commit: "MG403", txt_commit: "MG201",
           ci_commit: "MG601"}
    good_texts = ["Ana prefers green tea", "Ana reviews billing on Mondays",
                  "Bo owns the payments service", "Bo is on call this week",
                  "Cy joined the data team"]

    before = forge.main()
    for agent in (ana, bo, cy):
        proc = sync(agent)
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert out["mode"] == "incoming" and out["sent"] and out["reached_main"] == []
    assert forge.main() == before  # nothing reaches main without the gate
    assert {r for r in forge.refs() if r.startswith("refs/heads/memgit/incoming/")} == {
        "refs/heads/memgit/incoming/ana", "refs/heads/memgit/incoming/bo",
        "refs/heads/memgit/incoming/cy"}

    gate = run_gate_as_ci(forge, tmp_path)
    assert gate.returncode == 1, gate.stdout + gate.stderr  # some commits were refused
    assert SECRET not in gate.stdout + gate.stderr
    for commit, code in bad.items():
        refused = [line for line in gate.stdout.splitlines()
                   if line.strip().startswith(f"refused {commit[:10]}")]
        assert refused and code in refused[0], (commit, code, gate.stdout)
    assert gate.stdout.count("::error title=memgit gate::") == len(bad)
    after = forge.main()
    assert git("merge-base", "--is-ancestor", before, after, cwd=forge.git_dir,
               check=False).returncode == 0  # main only moved forward
    text = main_text(forge)
    for good in good_texts:
        assert good in text, good
    assert SECRET not in text
    files = git("ls-tree", "-r", "--name-only", "main", cwd=forge.git_dir).stdout.decode()
    assert "todo.txt" not in files and "notes.md" not in files
    workflow = git("show", "main:.github/workflows/memgit-gate.yml", cwd=forge.git_dir)
    assert workflow.stdout == GATE_WORKFLOW.read_bytes()
    assert not [r for r in forge.refs() if r.startswith("refs/heads/memgit/incoming/")]
    report = json.loads(git("show", "refs/memgit/gate/cy:report.json",
                            cwd=forge.git_dir).stdout)
    assert {r["commit"] for r in report["refused"]} == {subject_commit, txt_commit, ci_commit}
    assert SECRET not in json.dumps(report)

    # the agents learn it on their next sync
    out = json.loads(sync(ana).stdout)
    assert len(out["reached_main"]) == 2 and out["sent"] == []
    assert rev(ana, "HEAD") == forge.main()
    refused = sync(bo)
    assert refused.returncode == 1 and "MG401" in refused.stderr
    assert secret_commit[:10] in refused.stderr and SECRET not in refused.stderr
    refused = sync(cy)
    assert refused.returncode == 1
    assert all(code in refused.stderr for code in ("MG403", "MG201", "MG601"))
    assert SECRET not in refused.stderr

    # a second round: a late agent's work replays onto the main the first round made
    remember(ana, "Ana moved to Lisbon", "people")
    assert sync(ana).returncode == 0
    second = run_gate_as_ci(forge, tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "Ana moved to Lisbon" in main_text(forge)
    out = json.loads(sync(ana).stdout)
    assert len(out["reached_main"]) == 1 and rev(ana, "HEAD") == forge.main()
    empty = run_gate_as_ci(forge, tmp_path)
    assert empty.returncode == 0 and "no incoming branch" in empty.stdout


@pytest.mark.slow
def test_a_purge_on_a_forge_and_the_gate_with_the_registry_key(tmp_path: Path) -> None:
    """docs/forges.md's purge procedure on a hookless forge: purge a mirror clone, push
    back with a lease (the digests ref, not the key); the gate, given the key as a CI
    secret, refuses the purged text; without the key it stops rather than accept."""
    forge = Forge(tmp_path)
    ana = forge.agent("ana")
    remember(ana, "Ana's phone is 555 0199", "people")
    assert sync(ana).returncode == 0
    assert run_gate_as_ci(forge, tmp_path).returncode == 0
    purged_id = re.search(r"id: (m-[0-9a-z]+)\]", git("show", "main:people.md",
                          cwd=forge.git_dir).stdout.decode()).group(1)
    admin = tmp_path / "admin.git"
    git("clone", "-q", "--mirror", forge.git_dir, admin)
    old = forge.main()
    proc = run_memgit("purge", purged_id, "--repo", str(admin), "--yes", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    # a mirror clone's origin refuses refspecs: push to the URL, main leased on its old head
    git("push", "-q", f"--force-with-lease=refs/heads/main:{old}", str(forge.git_dir),
        "refs/heads/main", "+refs/memgit/purged", "+refs/memgit/registry/digests", cwd=admin)
    key = git("cat-file", "blob", "refs/memgit/registry/key:key", cwd=admin).stdout.decode()
    assert "refs/memgit/registry/key" not in forge.refs()
    assert "555 0199" not in main_text(forge)
    taken = sync(ana)
    assert taken.returncode == 0, taken.stderr  # the rewritten main is taken
    assert json.loads(taken.stdout)["sent"] == []  # the purged entry is not sent again
    assert "555 0199" not in (ana / "people.md").read_text()
    remember(ana, "Ana's phone is 555 0199", "people")  # the same text, a new id
    assert json.loads(sync(ana).stdout)["sent"]
    blind = run_gate_as_ci(forge, tmp_path)
    assert blind.returncode == 2 and "MEMGIT_REGISTRY_KEY" in blind.stderr
    gate = run_gate_as_ci(forge, tmp_path, {"MEMGIT_REGISTRY_KEY": key.strip()})
    assert gate.returncode == 1 and "MG607" in gate.stdout, gate.stdout + gate.stderr
    assert "555 0199" not in main_text(forge) + gate.stdout + gate.stderr
