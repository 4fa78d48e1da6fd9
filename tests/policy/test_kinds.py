"""Drive kinds: the defaults each kind sets, explicit keys overriding them, and a team
drive's server and writer asking every entry to name its agent (MG109)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memgit.drives.create import create_drive
from memgit.errors import PolicyFileError
from memgit.policy.judge import source_names_agent
from memgit.policy.kinds import KINDS
from memgit.policy.settings import Policy, policy_from_mapping
from tests.conftest import commit_all, git, memgit, memgit_ok

DOCS = Path(__file__).resolve().parents[2] / "docs" / "shared.md"


def test_each_kind_sets_the_documented_defaults_and_nothing_else() -> None:
    doc = DOCS.read_text()
    for kind, defaults in KINDS.items():
        policy = policy_from_mapping({"kind": kind})
        assert policy.kind == kind
        changed = {name: getattr(policy, name) for name in Policy.__dataclass_fields__
                   if name != "kind" and getattr(policy, name) != getattr(Policy(), name)}
        assert changed == dict(defaults), kind
        row = re.search(rf"^\| `{kind}` \|([^\n]*)$", doc, re.M)
        assert row is not None, kind
        for name, value in defaults.items():
            shown = str(value).lower() if isinstance(value, bool) else str(value)
            assert f"`{name}: {shown}`" in row.group(1), (kind, name)
    assert Policy().kind == "personal" and not Policy().require_source


def test_an_explicit_key_overrides_the_kinds_default() -> None:
    swarm = policy_from_mapping({"kind": "swarm"})
    assert (swarm.require_source, swarm.max_entries, swarm.max_age_days) == (True, 5000, 90)
    relaxed = policy_from_mapping({"kind": "swarm", "require_source": False,
                                   "limits": {"max_entries": 0, "max_age_days": 30}})
    assert (relaxed.require_source, relaxed.max_entries, relaxed.max_age_days) == (False, 0, 30)
    # the order of the keys in the file does not matter: kind is applied first
    assert policy_from_mapping({"limits": {"max_age_days": 30}, "kind": "swarm"}) \
        .max_age_days == 30
    assert policy_from_mapping({"kind": "team", "require_source": True}).require_source


@pytest.mark.parametrize(("data", "message"), [
    ({"kind": "family"}, "kind must be one of personal, team, project, bot, swarm"),
    ({"kind": ["team"]}, "kind must be one of"),
    ({"require_source": "yes"}, "require_source must be true or false"),
    ({"limits": {"files": 0}}, "limits.files must be a positive integer"),
    ({"limits": {"max_entries": -1}}, r"limits.max_entries must be a positive integer \(0: no"),
])
def test_mistakes_name_the_key(data: dict, message: str) -> None:
    with pytest.raises(PolicyFileError, match=message):
        policy_from_mapping(data, "memgit.yaml")


def test_which_sources_name_an_agent() -> None:
    named = ["claude-code:session/42", "codex:observation/7", "https://example.com/s/1",
             "/?session=9"]
    anonymous = [None, "", "imported:unknown", "memgit:observation/m-01abc",
                 "javascript:alert(1)"]
    assert all(source_names_agent(s) for s in named)
    assert not any(source_names_agent(s) for s in anonymous)


def _team_server(tmp_path: Path) -> Path:
    bare = create_drive(tmp_path / "team.git", bare=True)
    (bare / "memgit.yaml").write_text("kind: team\n")
    return bare


def test_a_team_server_refuses_entries_that_name_no_agent(tmp_path: Path) -> None:
    bare = _team_server(tmp_path)
    relaxed = tmp_path / "relaxed.git"  # the same drive, with the kind's default undone
    git("clone", "-q", "--bare", str(bare), str(relaxed))
    assert memgit("install-hooks", "--server", str(relaxed)).returncode == 0
    (relaxed / "memgit.yaml").write_text("kind: team\nrequire_source: false\n")
    work = tmp_path / "work"
    git("clone", "-q", str(bare), str(work))
    (work / "notes.md").write_text(
        "# Notes\n\n"
        "- Deploys freeze on Fridays [source: claude-code:session/42; id: m-ok]\n"
        "- The staging cluster is shared [id: m-nosource]\n"
        "- Lunch is at noon [source: memgit:observation/m-anon; id: m-anon]\n")
    commit_all(work, "three entries")
    push = git("push", "--porcelain", "origin", "main", cwd=work, check=False)
    err = push.stderr.decode()
    assert push.returncode != 0 and "pre-receive hook declined" in push.stdout.decode()
    assert re.findall(r"notes\.md:(\d+): MG109", err) == ["4", "5"]
    assert git("push", "-q", str(relaxed), "main", cwd=work, check=False).returncode == 0
    git("reset", "-q", "--hard", "origin/main", cwd=work)  # every pushed commit is judged
    (work / "notes.md").write_text(
        "# Notes\n\n- Deploys freeze on Fridays [source: claude-code:session/42; id: m-ok]\n")
    commit_all(work, "only the sourced entry")
    assert git("push", "-q", "origin", "main", cwd=work, check=False).returncode == 0


def test_the_writer_of_a_team_drive_skips_an_entry_without_a_source(tmp_path: Path) -> None:
    work = create_drive(tmp_path / "work", bare=False)
    (work / ".git" / "memgit.yaml").write_text("kind: team\n")
    proc = memgit("remember", "--json", "Standups move to 9:30", cwd=work)
    result = json.loads(proc.stdout)
    assert proc.returncode == 1 and result["status"] == "unchanged"
    assert [s["reason"] for s in result["skipped"]] == ["policy"]
    assert result["skipped"][0]["detail"].startswith("MG109 source-required")
    proc = memgit("remember", "--json", "--source", "claude-code:session/9",
                  "Standups move to 9:30", cwd=work)
    assert proc.returncode == 0 and json.loads(proc.stdout)["status"] == "committed"


def test_info_and_status_show_the_kind(tmp_path: Path) -> None:
    bare = _team_server(tmp_path)
    info = json.loads(memgit_ok("info", "--json", cwd=bare).stdout)
    assert info["kind"] == "team"
    assert "kind:" in memgit_ok("info", cwd=bare).stdout.decode()
    work = tmp_path / "agent"
    assert memgit("clone", str(bare), str(work)).returncode == 0
    assert json.loads(memgit_ok("status", "--json", cwd=work).stdout)["kind"] == "personal"
    (work / ".git" / "memgit.yaml").write_text((bare / "memgit.yaml").read_text())
    status = memgit_ok("status", cwd=work).stdout.decode()
    assert status.endswith("kind: team drive\n")
    assert json.loads(memgit_ok("status", "--json", cwd=work).stdout)["kind"] == "team"
