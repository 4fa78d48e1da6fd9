"""A commit the gate refused, and the way out the sync's hint names (docs/sync.md, "A
refused commit"; docs/forges.md, "Agents: memgit sync through the gate").

Like tests/sync/test_refusals.py, but on a forge without hooks: a plain bare repository
(anything may be pushed to it) whose main holds the team's policy at
``.memgit/policy.yaml``, agents' checkouts made by ``memgit clone`` syncing through
``memgit/incoming/<agent>``, and ``memgit gate`` run in a clone of the forge as the CI
runs it. Real repositories, the real command line; no mocks.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from tests.conftest import commit_all, git, head_entries, memgit, memgit_ok
from tests.githooks.test_receive import SECRET
from tests.sync.test_client import add
from tests.sync.test_refusals import SOURCE, TOKEN, remember


class TeamForge:
    """A hookless forge of a team drive (MG109: every entry names its agent) and one
    agent, whose own checkout lacks the team's policy (its writer lets an entry without
    --source through, as the agent of the sweep's report did)."""

    def __init__(self, root: Path, policy: str = "kind: team\n") -> None:
        self.root = root
        seed = root / "seed.git"
        memgit_ok("init", "--bare", str(seed))
        self.git_dir = root / "forge.git"
        git("clone", "-q", "--bare", seed, self.git_dir)
        admin = root / "admin"
        git("clone", "-q", self.git_dir, admin)
        (admin / ".memgit").mkdir()
        (admin / ".memgit" / "policy.yaml").write_text(policy)
        git("add", "-A", cwd=admin)
        git("commit", "-q", "-m", "the team's policy", cwd=admin)
        git("push", "-q", "origin", "main", cwd=admin)
        self.agent = root / "ana"
        memgit_ok("clone", str(self.git_dir), str(self.agent))
        for key, value in (("memgit.push", "incoming"), ("memgit.agent", "ana"),
                           ("user.name", "ana"), ("user.email", "ana@example.com")):
            git("config", key, value, cwd=self.agent)
        self.runs = 0

    def gate(self) -> subprocess.CompletedProcess:
        """``memgit gate`` in a fresh clone of main, as the gate's workflow runs it."""
        self.runs += 1
        ws = self.root / f"gate-{self.runs}"
        git("clone", "-q", "--branch", "main", self.git_dir, ws)
        git("config", "user.name", "memgit gate", cwd=ws)
        git("config", "user.email", "gate@example.com", cwd=ws)
        return memgit("gate", "--policy", ".memgit/policy.yaml", cwd=ws, text=True)

    def report(self) -> dict:
        return json.loads(git("show", "refs/memgit/gate/ana:report.json",
                              cwd=self.git_dir).stdout)

    def subjects(self) -> list[str]:
        return git("log", "--format=%s", "main", cwd=self.git_dir).stdout.decode().splitlines()

    def settled(self) -> None:
        """The agent's checkout is main, nothing waits, the drive lints clean."""
        out = json.loads(memgit_ok("sync", "--json", cwd=self.agent).stdout)
        assert out["sent"] == [] and out["held"] == []
        head = git("rev-parse", "HEAD", cwd=self.agent).stdout
        assert head == git("rev-parse", "main", cwd=self.git_dir).stdout
        assert git("status", "--porcelain", cwd=self.agent).stdout == b""
        assert memgit("lint", cwd=self.agent).returncode == 0


def refused_sync(work: Path) -> str:
    proc = memgit("sync", cwd=work)
    err = proc.stderr.decode()
    assert proc.returncode == 1, (proc.stdout, err)
    assert err.startswith("memgit: error MG007: the gate refused ")
    return err



def rebase_headless(work: Path, onto: str, todo_sed: str, message_editor: str) -> None:
    """``git rebase -i ONTO`` as the hint writes it, with sed editing the todo list and
    ``message_editor`` the messages (no terminal in a test)."""
    env = dict(os.environ, GIT_SEQUENCE_EDITOR=f"sed -i '{todo_sed}'",
               GIT_EDITOR=message_editor)
    subprocess.run(["git", "rebase", "-q", "-i", onto], cwd=work, env=env, check=True,
                   capture_output=True)


def test_a_refused_entry_lands_once_it_is_forgotten(tmp_path: Path) -> None:
    forge = TeamForge(tmp_path)
    work = forge.agent
    anonymous = remember(work, "Releases ship on Thursdays")
    named = remember(work, "Builds run on Fridays", SOURCE)
    memgit_ok("sync", cwd=work)
    gate = forge.gate()
    assert gate.returncode == 1 and "MG109" in gate.stdout, gate.stdout + gate.stderr
    # the report names the refused entry by its id (no value), for the agent's sync
    entries = {f.get("entry") for r in forge.report()["refused"] for f in r["findings"]}
    assert entries == {anonymous}

    err = refused_sync(work)
    lines = err.splitlines()
    assert any(line.strip() == "notes.md:3: MG109 source-required" for line in lines)
    assert lines[-1].startswith("  hint: ") and anonymous in lines[-1]
    assert "memgit forget ID, then memgit remember it again with --source" in lines[-1]
    assert "rewrite the commit" not in err

    # memgit edit keeps the (missing) source: the gate refuses the edit too, and says so
    memgit_ok("edit", anonymous, "Releases ship on Thursdays at noon", cwd=work)
    held = json.loads(memgit_ok("sync", "--json", cwd=work).stdout)
    assert [h["held"] for h in held["held"]] == [[anonymous]]
    assert forge.gate().returncode == 1
    assert named in head_entries(forge.git_dir)  # the rest of the refused commits landed
    assert anonymous not in head_entries(forge.git_dir)
    assert anonymous in refused_sync(work).splitlines()[-1]

    # the hint's way out: forget it, remember it again with a source, sync
    memgit_ok("forget", anonymous, cwd=work)
    fixed = remember(work, "Releases ship on Thursdays at noon", SOURCE)
    out = json.loads(memgit_ok("sync", "--json", cwd=work).stdout)
    assert [h["held"] for h in out["held"]] == [[anonymous]] and out["sent"]
    gate = forge.gate()
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert set(head_entries(forge.git_dir)) == {named, fixed}
    forge.settled()
    assert set(head_entries(work)) == {named, fixed}


def test_a_fix_made_before_the_gate_ran_lands_the_rest(tmp_path: Path) -> None:
    """One commit with an entry the gate refuses beside one it accepts, the fix made and
    sent before the gate judged either: nothing is lost, nothing refused lands."""
    forge = TeamForge(tmp_path)
    work = forge.agent
    good = add(work, "Deploys need two approvals", "notes.md")
    with (work / "notes.md").open("a") as notes:
        notes.write("- Nobody names this agent [added: 2026-01-02; id: m-anonymous]\n")
    commit_all(work, "two facts")
    memgit_ok("sync", cwd=work)
    memgit_ok("forget", "m-anonymous", cwd=work)
    later = remember(work, "Backups run hourly", SOURCE)
    memgit_ok("sync", cwd=work)  # the gate has not run: both commits wait for it
    assert forge.gate().returncode == 1  # "two facts" refused whole
    assert set(head_entries(forge.git_dir)) == {later}
    said = memgit_ok("sync", cwd=work).stdout.decode()
    assert "the gate had refused" in said and "which fixed them" in said  # the text says so
    out = json.loads(memgit_ok("sync", "--json", cwd=work).stdout)
    assert out["held"] == [] and len(out["sent"]) == 1  # held by the sync before
    assert forge.gate().returncode == 0
    assert set(head_entries(forge.git_dir)) == {good, later}
    assert "two facts" in forge.subjects()  # its own commit, its own message
    forge.settled()


def test_a_refused_file_lands_once_it_is_removed(tmp_path: Path) -> None:
    forge = TeamForge(tmp_path)
    work = forge.agent
    kept = add(work, "The office opens at eight", "notes.md")
    (work / "notes.txt").write_text("plain text\n")
    commit_all(work, "a fact and a text file")
    memgit_ok("sync", cwd=work)
    assert forge.gate().returncode == 1
    err = refused_sync(work)
    assert "MG201" in err and "git rm PATH" in err and "(notes.txt)" in err
    git("rm", "-q", "notes.txt", cwd=work)
    git("commit", "-q", "-m", "remove the text file", cwd=work)
    memgit_ok("sync", cwd=work)
    assert forge.gate().returncode == 0
    assert set(head_entries(forge.git_dir)) == {kept}
    assert "a fact and a text file" in forge.subjects()
    assert git("cat-file", "-e", "main:notes.txt", cwd=forge.git_dir,
               check=False).returncode != 0
    forge.settled()


def test_a_refused_message_names_a_rebase_that_works(tmp_path: Path) -> None:
    forge = TeamForge(tmp_path)
    work = forge.agent
    entry = add(work, "The office closes at six", "notes.md")
    bad = commit_all(work, f"notes, token {TOKEN}")
    memgit_ok("sync", cwd=work)
    gate = forge.gate()
    assert gate.returncode == 1 and TOKEN not in gate.stdout + gate.stderr
    after = remember(work, "Lunch is at noon", SOURCE)
    err = refused_sync(work)
    assert "MG403" in err and TOKEN not in err
    assert f"git rebase -i {bad[:10]}~1" in err and "memgit edit and forget cannot" in err
    memgit_ok("forget", entry, cwd=work)  # cannot help: the message was refused
    refused_sync(work)
    rebase_headless(work, f"{bad[:10]}~1", "1s/^pick/reword/", "sed -i '1s/.*/notes/'")
    memgit_ok("sync", cwd=work)
    assert forge.gate().returncode == 0
    assert set(head_entries(forge.git_dir)) == {after}
    assert not any(TOKEN in s for s in forge.subjects())
    forge.settled()


def test_a_credential_on_a_line_without_an_id_is_forgotten_by_the_id_the_hint_names(
        tmp_path: Path) -> None:
    forge = TeamForge(tmp_path)
    work = forge.agent
    good = remember(work, "Bo owns the payments service", SOURCE, "--topic",
                    "projects/payments")
    with (work / "projects" / "payments.md").open("a") as notes:
        notes.write(f"- the deploy token is {SECRET}\n")  # plain git: no hook ran
    git("add", "-A", cwd=work)
    git("commit", "-q", "--no-verify", "-m", "payments notes", cwd=work)
    memgit_ok("sync", cwd=work)
    gate = forge.gate()
    assert gate.returncode == 1 and "MG401" in gate.stdout
    err = refused_sync(work)
    assert "MG401 secret" in err and SECRET not in err
    found = re.search(r"refused entries \((entry-[0-9a-f]+)\)", err.splitlines()[-1])
    assert found, err
    memgit_ok("forget", found[1], cwd=work)
    out = json.loads(memgit_ok("sync", "--json", cwd=work).stdout)
    assert [h["held"] for h in out["held"]] == [[found[1]]] and out["sent"] == []
    assert forge.gate().returncode == 0
    assert set(head_entries(forge.git_dir)) == {good}
    assert SECRET not in git("log", "-p", "main", cwd=forge.git_dir).stdout.decode()
    forge.settled()


def test_a_refusal_of_the_whole_branch_names_a_squash_that_works(tmp_path: Path) -> None:
    """Too many commits for one push (MG605, a finding on the whole branch, no commit):
    no later commit can fix it and none is held; the hint's squash does."""
    forge = TeamForge(tmp_path, "kind: team\nlimits: {push_commits: 2}\n")
    work = forge.agent
    facts = [remember(work, f"Fact {n}", SOURCE) for n in range(3)]
    memgit_ok("sync", cwd=work)
    gate = forge.gate()
    assert gate.returncode == 1 and "MG605" in gate.stdout, gate.stdout + gate.stderr
    err = refused_sync(work)
    first = git("rev-parse", "HEAD~2", cwd=work).stdout.decode().strip()
    assert "the gate refused the whole branch: 3 commits" in err
    assert err.count("MG605 too-many-commits") == 1
    assert f"git rebase -i {first[:10]}~1" in err.splitlines()[-1]
    rebase_headless(work, f"{first[:10]}~1", "2,$s/^pick/squash/", "true")
    memgit_ok("sync", cwd=work)
    assert forge.gate().returncode == 0
    assert set(head_entries(forge.git_dir)) == set(facts)
    forge.settled()


def test_a_sync_killed_after_sending_held_changes_loses_nothing(tmp_path: Path) -> None:
    """Killed after its push to the incoming branch, before the checkout moved (the
    checkout's branch and sync refs put back as they were): the gate lands what was
    sent; the old refused commit goes once more, is refused once more, and is held by
    the sync after that. A round longer; nothing lost, nothing refused on main."""
    forge = TeamForge(tmp_path)
    work = forge.agent
    anonymous = remember(work, "Releases ship on Thursdays")
    named = remember(work, "Builds run on Fridays", SOURCE)
    memgit_ok("sync", cwd=work)
    assert forge.gate().returncode == 1
    memgit_ok("forget", anonymous, cwd=work)
    fixed = remember(work, "Releases ship on Thursdays at noon", SOURCE)
    refs = ("refs/heads/main", "refs/memgit/last-synced", "refs/remotes/origin/main",
            "refs/memgit/remotes/origin")
    before = {ref: git("rev-parse", ref, cwd=work).stdout.decode().strip() for ref in refs}
    assert json.loads(memgit_ok("sync", "--json", cwd=work).stdout)["held"]
    for ref, value in before.items():  # as if killed before the checkout moved
        git("update-ref", ref, value, cwd=work)
    git("reset", "-q", "--hard", before["refs/heads/main"], cwd=work)
    assert forge.gate().returncode == 0
    assert set(head_entries(forge.git_dir)) == {named, fixed}
    memgit_ok("sync", cwd=work)  # the old refused commit once more
    assert forge.gate().returncode == 1  # ... refused once more
    out = json.loads(memgit_ok("sync", "--json", cwd=work).stdout)
    assert [h["held"] for h in out["held"]] == [[anonymous]] and out["sent"] == []
    assert forge.gate().returncode == 0
    assert set(head_entries(forge.git_dir)) == {named, fixed}
    forge.settled()
    assert set(head_entries(work)) == {named, fixed}


def test_a_protected_file_is_put_back_with_the_command_the_hint_names(
        tmp_path: Path) -> None:
    """A change to the forge's CI files (MG601): removing the file would change it too;
    the hint's git restore puts it back and the rest lands."""
    forge = TeamForge(tmp_path)
    work = forge.agent
    good = remember(work, "Fact one", SOURCE)
    with (work / ".memgit" / "policy.yaml").open("a") as policy:
        policy.write("require_source: false\n")
    git("commit", "-q", "-a", "--no-verify", "-m", "loosen the policy", cwd=work)
    bad = git("rev-parse", "HEAD", cwd=work).stdout.decode().strip()
    memgit_ok("sync", cwd=work)
    assert forge.gate().returncode == 1
    err = refused_sync(work)
    assert "MG601" in err and "(.memgit/policy.yaml)" in err
    command = f"git restore --source={bad[:10]}~1 PATH"
    assert command in err.splitlines()[-1]
    git(*command.split()[1:-1], "--", ".memgit/policy.yaml", cwd=work)
    git("commit", "-q", "-a", "-m", "put the policy back", cwd=work)
    out = json.loads(memgit_ok("sync", "--json", cwd=work).stdout)
    assert [h["held"] for h in out["held"]] == [[".memgit/policy.yaml"]]
    assert forge.gate().returncode == 0
    assert set(head_entries(forge.git_dir)) == {good}
    assert git("show", "main:.memgit/policy.yaml", cwd=forge.git_dir).stdout == b"kind: team\n"
    forge.settled()
