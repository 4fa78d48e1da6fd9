"""Proposals through the command line: the team drive's rules, review, approve, reject and
the expiry of rejected entries (memgit maintain with an explicit clock)."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from typing import Any

import pytest

from memgit.drives.maintain import maintain
from memgit.errors import PolicyFileError
from memgit.git.repository import open_drive
from memgit.policy import autonomy as au
from memgit.policy.settings import drive_policy, policy_from_mapping
from tests.conftest import git, memgit, memgit_ok
from tests.review.support import context_text, entries_of, recalled_ids, team_drive


def _remember(path: Path, text: str, topic: str, *extra: str) -> dict[str, Any]:
    out = memgit_ok("-C", str(path), "remember", text, "--topic", topic,
                    "--source", "codex:session/7", "--json", *extra)
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def _review(path: Path, *extra: str) -> list[dict[str, Any]]:
    out = json.loads(memgit_ok("-C", str(path), "review", "--json", *extra).stdout)
    found: list[dict[str, Any]] = out["proposals"]
    return found


def test_the_first_matching_rule_decides_and_no_rule_is_direct() -> None:
    policy = policy_from_mapping({"kind": "team", "autonomy": [
        {"author": "*@people.example", "decide": "direct"},
        {"topic": "decisions.md", "decide": "propose"},
        {"agent": ["codex", "cursor"], "action": "forget", "decide": "refuse"}]})
    assert au.decide(policy, au.Write("add", "decisions.md", agent="codex")) == \
        au.Decision("propose", 2)
    owner = au.Write("add", "decisions.md", author="Owner <owner@people.example>")
    assert au.decide(policy, owner) == au.Decision("direct", 1)
    assert au.decide(policy, au.Write("forget", "notes.md", agent="codex")).decide == "refuse"
    # a condition on who writes never matches a write that does not say it
    assert au.decide(policy, au.Write("forget", "notes.md")) == au.Decision("direct", 0)
    assert au.decide(policy_from_mapping({}), au.Write("add", "decisions.md")).rule == 0
    assert au.agent_of("claude-code:session/1") == "claude-code"
    assert au.agent_of("https://example.com/a:b") == ""


@pytest.mark.parametrize(("rules", "says"), [
    ({"topic": "x.md"}, "autonomy must be a list of rules"),
    ([{"decide": "maybe"}], "decide must be one of"),
    ([{"decide": "direct", "who": "x"}], "unknown key(s) who"),
    ([{"decide": "direct", "action": "delete"}], "unknown action(s) delete"),
])
def test_a_bad_rule_is_an_error_naming_it(rules: Any, says: str) -> None:
    with pytest.raises(PolicyFileError) as caught:
        policy_from_mapping({"autonomy": rules})
    assert says in caught.value.message
    assert caught.value.hint


def test_cli_writes_end_where_the_policy_says_and_approval_is_a_second_commit(
        new_drive: Any) -> None:
    path = team_drive(new_drive)
    note = _remember(path, "The staging host reboots every Monday", "notes")
    assert note["status"] == "committed" and note["proposed"] == []
    decision = _remember(path, "We deploy the billing service on Tuesdays only", "decisions",
                         "--why", "the on-call rota is thin on Fridays")
    pid = decision["added"][0]["id"]
    assert decision["proposed"] == [pid]
    entry = entries_of(path, "decisions.md")[pid]
    assert (entry.get("status"), entry.get("proposed-by"), entry.get("why")) == \
        ("proposed", "codex", "the on-call rota is thin on Fridays")
    # never recalled, never in the context packet, listed by review
    assert note["added"][0]["id"] in recalled_ids(path, "staging host Monday")
    assert pid not in recalled_ids(path, "billing service Tuesdays deploy")
    assert "Tuesdays" not in context_text(path)
    listed = _review(path)
    assert [(p["id"], p["kind"], p["proposed_by"]) for p in listed] == [(pid, "add", "codex")]
    text = memgit_ok("-C", str(path), "review").stdout.decode()
    assert pid in text and "why: the on-call rota" in text
    proposed_at = git("rev-parse", "HEAD", cwd=path).stdout.decode().strip()
    # approve: one commit, the same id, active, recalled; history shows both commits
    approved = json.loads(memgit_ok("-C", str(path), "approve", pid, "--json").stdout)
    assert approved["status"] == "committed"
    assert git("rev-parse", "HEAD~1", cwd=path).stdout.decode().strip() == proposed_at
    assert git("log", "-1", "--format=%s", cwd=path).stdout.decode().strip() == \
        "Approve 1 proposal"
    entry = entries_of(path, "decisions.md")[pid]
    assert entry.get("status") == "" and entry.get("proposed-by") == "codex"
    assert pid in recalled_ids(path, "billing service Tuesdays deploy")
    assert "Tuesdays" in context_text(path)
    assert _review(path) == []
    assert memgit_ok("-C", str(path), "review").stdout.decode().strip() == \
        "No proposals waiting"


def test_approve_with_a_new_text_and_errors(new_drive: Any) -> None:
    path = team_drive(new_drive)
    pid = _remember(path, "Releases are frozen in December", "decisions")["added"][0]["id"]
    other = _remember(path, "Design reviews happen on Thursdays", "decisions")["added"][0]["id"]
    both = memgit("-C", str(path), "approve", pid, other, "--text", "x")
    assert both.returncode == 2 and b"--text approves one proposal" in both.stderr
    missing = memgit("-C", str(path), "approve", "m-nope")
    assert missing.returncode == 2 and b"not a pending proposal: m-nope" in missing.stderr
    memgit_ok("-C", str(path), "approve", pid, "--text",
              "Releases are frozen from 15 December to 5 January")
    assert entries_of(path, "decisions.md")[pid].text == \
        "Releases are frozen from 15 December to 5 January"
    assert [p["id"] for p in _review(path)] == [other]
    no_reason = memgit("-C", str(path), "reject", other)
    assert no_reason.returncode == 2 and b"--reason" in no_reason.stderr


def test_reject_keeps_the_entry_out_of_recall_until_maintain_removes_it(
        new_drive: Any) -> None:
    path = team_drive(new_drive)
    pid = _remember(path, "Every service moves to Kubernetes next week", "decisions"
                    )["added"][0]["id"]
    memgit_ok("-C", str(path), "reject", pid, "--reason", "not agreed; see ADR 12")
    entry = entries_of(path, "decisions.md")[pid]
    today = _dt.date.fromisoformat(entry.get("rejected-on"))
    assert (entry.get("status"), entry.get("reason")) == ("rejected", "not agreed, see ADR 12")
    assert pid not in recalled_ids(path, "Kubernetes services next week")
    assert _review(path) == []
    assert [p["id"] for p in _review(path, "--rejected")] == [pid]
    drive = open_drive(path)
    policy = drive_policy(drive)

    def at(days: int) -> _dt.datetime:
        return _dt.datetime.combine(today + _dt.timedelta(days=days), _dt.time(12),
                                    tzinfo=_dt.UTC)

    kept = maintain(drive, policy, only=["rejected"], now=at(30))
    assert kept[0].figures == {"rejected_removed": 0} and pid in entries_of(path, "decisions.md")
    head = git("rev-parse", "HEAD", cwd=path).stdout
    removed = maintain(drive, policy, only=["rejected"], now=at(31))
    assert removed[0].ok and removed[0].figures == {"rejected_removed": 1}
    assert pid not in entries_of(path, "decisions.md")
    assert git("rev-parse", "HEAD~1", cwd=path).stdout == head
    assert _review(path, "--rejected") == []


def test_edit_and_forget_under_the_rules(new_drive: Any) -> None:
    path = team_drive(new_drive)
    git("config", "user.email", "owner@people.example", cwd=path)  # the owner writes
    owner_entry = memgit_ok("-C", str(path), "remember", "Payments use PostgreSQL 15",
                            "--topic", "decisions", "--source", "https://example.com/adr/3",
                            "--json").stdout
    old = json.loads(owner_entry)["added"][0]["id"]
    assert json.loads(owner_entry)["proposed"] == []
    git("config", "user.email", "agent@example.com", cwd=path)  # an agent's checkout again
    edit = json.loads(memgit_ok("-C", str(path), "edit", old, "Payments use PostgreSQL 16",
                                "--json").stdout)
    assert edit["edited"] == [] and edit["proposed"] and edit["added"]
    new = edit["proposed"][0]
    assert entries_of(path, "decisions.md")[new].get("replaces") == old
    assert entries_of(path, "decisions.md")[old].text == "Payments use PostgreSQL 15"
    [proposal] = _review(path)
    assert (proposal["kind"], proposal["replaces"]) == ("edit", [old])
    memgit_ok("-C", str(path), "approve", new)
    after = entries_of(path, "decisions.md")
    assert old not in after and after[new].text == "Payments use PostgreSQL 16"
    # a forget in decisions.md marks the entry; it stays active until approved
    gone = json.loads(memgit_ok("-C", str(path), "forget", new, "--json").stdout)
    assert gone["retired"] == [] and gone["proposed"] == [new]
    assert entries_of(path, "decisions.md")[new].get("review") == "forget"
    assert new in recalled_ids(path, "PostgreSQL 16 payments")
    memgit_ok("-C", str(path), "reject", new, "--reason", "still true")
    kept = entries_of(path, "decisions.md")[new]
    assert kept.get("review") == "" and kept.get("status") == "" and kept.get("reason") == ""
    memgit_ok("-C", str(path), "forget", new)
    memgit_ok("-C", str(path), "approve", new)
    assert new not in entries_of(path, "decisions.md")
    # an agent's forget in notes.md is refused (rule 3)
    note = _remember(path, "The wiki moved to Confluence", "notes")["added"][0]["id"]
    refused = memgit("-C", str(path), "forget", note, "--json")
    assert refused.returncode == 1  # everything asked was skipped
    assert json.loads(refused.stdout)["retired"] == []
    forget_agent = memgit("-C", str(path), "forget", note)
    assert b"refused (MG613 forget in notes.md is refused by autonomy rule 3)" in \
        forget_agent.stdout
    assert note in entries_of(path, "notes.md")
