"""Every code check of memgit dream, each with a proposal that breaks it (dream/checks.py)."""

from __future__ import annotations

from typing import Any

import pytest

from memgit.dream import checks, snapshot
from memgit.dream.observations import observe
from memgit.git.repository import Drive, open_drive
from memgit.policy.judge import text_digest
from memgit.policy.registry import PurgeRegistry
from memgit.policy.settings import Policy
from memgit.recall.read_path import recall
from tests.dream_support import make_dream_drive

TOKEN = "ghp_" + "4fZ9kQ2mX7pL1sV8nB3cR6tY0wE5uI2oA9dG"  # synthetic, GitHub-token-shaped


@pytest.fixture
def drive(new_drive: Any) -> Drive:
    d = open_drive(make_dream_drive(new_drive))
    hits = recall(d, "Jira project key LUM", limit=1)
    assert [h.entry_id for h in hits] == ["tools-jira"]
    return d


@pytest.fixture
def snap(drive: Drive) -> snapshot.Snapshot:
    observe(drive, "We agreed that releases go out on Thursdays from now on", session="s1")
    observe(drive, "Noted: Thursday releases.", role="assistant", session="s1")
    return snapshot.take(drive, Policy())


def judge(snap: snapshot.Snapshot, proposal: dict[str, Any], *, prune: bool = True,
          registry: PurgeRegistry | None = None) -> checks.Checked:
    return checks.check(proposal, snap, Policy(), prune=prune, registry=registry)


def only_rejection(checked: checks.Checked) -> checks.Rejection:
    assert checked.accepted == []
    [rejection] = checked.rejected
    return rejection


def turn(snap: snapshot.Snapshot) -> str:
    return snap.turns[0].id


def test_the_snapshot_holds_entries_counts_ages_and_turns(snap: snapshot.Snapshot) -> None:
    assert snap.total_entries == len(snap.entries) == 95  # 92 of the fixture, 3 of dream.md
    jira = snap.by_id["tools-jira"]
    assert jira.retrievals == 1 and jira.path == "tools.md" and jira.age_days > 30
    assert snap.by_id["old-plant"].retrievals == 0 and snap.by_id["old-plant"].age_days == 400
    assert [t.role for t in snap.turns] == ["user", "assistant"]


def test_a_valid_proposal_is_accepted_whole(snap: snapshot.Snapshot) -> None:
    checked = judge(snap, {
        "merges": [{"ids": ["dup-weekly", "tools-weekly-update"],
                    "text": "Joe sends his weekly update from Google Docs on Fridays"}],
        "contradictions": [{"ids": ["tools-slack", "tools-jira"], "keep": "tools-jira"}],
        "prunes": [{"id": "old-plant", "reason": "stale"}],
        "lessons": [{"text": "Releases go out on Thursdays", "turns": [turn(snap)],
                     "topic": "schedule"}]})
    assert checked.rejected == []
    assert [s.kind for s in checked.accepted] == ["merge", "contradiction", "prune", "lesson"]
    assert checked.accepted[0].keep == "dup-weekly"
    assert checked.accepted[0].retired == ["tools-weekly-update"]
    assert checked.accepted[3].topic == "schedule.md"


def test_unknown_id(snap: snapshot.Snapshot) -> None:
    r = only_rejection(judge(snap, {"merges": [{"ids": ["dup-weekly", "m-invented"],
                                                "text": "x y z"}]}))
    assert (r.check, r.kind, r.index) == ("unknown-id", "merge", 0)
    assert "m-invented" in r.reason


def test_an_entry_touched_by_two_suggestions(snap: snapshot.Snapshot) -> None:
    checked = judge(snap, {
        "merges": [{"ids": ["dup-weekly", "tools-weekly-update"], "text": "Weekly update"}],
        "prunes": [{"id": "tools-weekly-update"}]})
    assert [s.kind for s in checked.accepted] == ["merge"]
    [r] = checked.rejected
    assert r.check == "touched-twice" and "already touched by merge #1" in r.reason


def test_an_entry_listed_twice_in_one_suggestion(snap: snapshot.Snapshot) -> None:
    r = only_rejection(judge(snap, {"merges": [{"ids": ["dup-weekly", "dup-weekly"],
                                                "text": "Weekly"}]}))
    assert r.check == "touched-twice" and "listed twice" in r.reason


def test_a_merge_of_one_entry(snap: snapshot.Snapshot) -> None:
    r = only_rejection(judge(snap, {"merges": [{"ids": ["dup-weekly"], "text": "Weekly"}]}))
    assert r.check == "too-few-ids"


def test_a_contradiction_keeping_an_entry_it_does_not_list(snap: snapshot.Snapshot) -> None:
    r = only_rejection(judge(snap, {"contradictions": [
        {"ids": ["tools-slack", "tools-jira"], "keep": "tools-figma"}]}))
    assert r.check == "keep-not-listed"


def test_a_turn_that_was_not_shown(snap: snapshot.Snapshot) -> None:
    r = only_rejection(judge(snap, {"lessons": [
        {"text": "Releases go out on Thursdays", "turns": ["t-01notshown000000000000000"]}]}))
    assert r.check == "turn-not-shown" and "t-01notshown" in r.reason


def test_a_lesson_without_a_turn(snap: snapshot.Snapshot) -> None:
    r = only_rejection(judge(snap, {"lessons": [{"text": "Releases go out on Thursdays",
                                                 "turns": []}]}))
    assert r.check == "lesson-without-turn"


def test_prunes_need_prune_true(snap: snapshot.Snapshot) -> None:
    r = only_rejection(judge(snap, {"prunes": [{"id": "old-plant"}]}, prune=False))
    assert r.check == "prune-off" and "dream.prune: true" in r.reason


def test_a_prune_of_a_retrieved_entry(snap: snapshot.Snapshot) -> None:
    r = only_rejection(judge(snap, {"prunes": [{"id": "tools-jira"}]}))
    assert r.check == "prune-retrieved" and "retrieved 1 time" in r.reason


def test_a_prune_of_a_young_entry(snap: snapshot.Snapshot) -> None:
    r = only_rejection(judge(snap, {"prunes": [{"id": "young-offsite"}]}))
    assert r.check == "prune-young" and "5 days old" in r.reason


def test_a_prune_of_an_entry_without_a_date(new_drive: Any) -> None:
    d = open_drive(new_drive({"notes.md": "# Notes\n\n- A line without a date "
                                          "[source: imported:unknown; id: m-nodate]\n"}))
    r = only_rejection(judge(snapshot.take(d, Policy()), {"prunes": [{"id": "m-nodate"}]}))
    assert r.check == "prune-young" and "no added date" in r.reason


@pytest.mark.parametrize(("text", "expected"), [
    ("Line one\nline two", "spans several lines"),
    ("   ", "the text is empty"),
    ("x" * 1001, "1001 characters"),
    ("Weekly notes <script>alert(1)</script>", "MG303 raw-html"),
    ("Weekly notes ![chart](https://example.com/c.png)", "MG304 image"),
    ("12:00:01 weekly job finished", "MG305 transcript"),
])
def test_merged_text_must_pass_format_and_policy(snap: snapshot.Snapshot, text: str,
                                                 expected: str) -> None:
    r = only_rejection(judge(snap, {"merges": [{"ids": ["dup-weekly", "tools-weekly-update"],
                                                "text": text}]}))
    assert r.check == "text" and expected in r.reason


def test_new_text_with_a_credential_is_refused_without_echoing_it(
        snap: snapshot.Snapshot) -> None:
    checked = judge(snap, {"lessons": [{"text": f"The CI token is {TOKEN}",
                                        "turns": [turn(snap)]}],
                           "contradictions": [{"ids": ["tools-slack", "tools-jira"],
                                               "keep": "tools-jira",
                                               "text": f"Jira token {TOKEN}"}]})
    assert checked.accepted == []
    assert {r.check for r in checked.rejected} == {"text"}
    assert len(checked.rejected) == 2  # the lesson and the contradiction, each checked below
    for r in checked.rejected:
        assert "possible credential" in r.reason
        assert TOKEN not in str(r.as_dict()) and TOKEN[:12] not in str(r.as_dict())


def test_a_purged_text_may_not_return(snap: snapshot.Snapshot) -> None:
    registry = PurgeRegistry(ids={"m-gone"}, digests={text_digest("The old VPN is at vpn1")})
    r = only_rejection(judge(snap, {"lessons": [{"text": "the old VPN is at  VPN1",
                                                 "turns": [turn(snap)]}]}, registry=registry))
    assert r.check == "text" and "purged" in r.reason


@pytest.mark.parametrize("topic", ["questions", "twin/notes", "../outside", "imports/x"])
def test_a_lesson_for_a_reserved_or_invalid_topic(snap: snapshot.Snapshot, topic: str) -> None:
    r = only_rejection(judge(snap, {"lessons": [{"text": "Releases go out on Thursdays",
                                                 "turns": [turn(snap)], "topic": topic}]}))
    assert r.check == "topic"


@pytest.mark.parametrize(("proposal", "expected"), [
    ({"merges": {"ids": ["a"]}}, "merges must be a list"),
    ({"merges": ["dup-weekly"]}, "must be an object"),
    ({"merges": [{"ids": "dup-weekly", "text": "x"}]}, "ids must be a list"),
    ({"merges": [{"ids": ["dup-weekly", "tools-weekly-update"], "text": 42}]}, "string"),
    ({"lessons": [{"text": "x y", "turns": "t-1"}]}, "turns must be a list"),
    ({"prunes": [{"reason": "no id"}]}, "id must be an entry id"),
])
def test_malformed_suggestions(snap: snapshot.Snapshot, proposal: dict[str, Any],
                               expected: str) -> None:
    r = only_rejection(judge(snap, proposal))
    assert r.check == "shape" and expected in r.reason


def test_too_many_suggestions(snap: snapshot.Snapshot) -> None:
    lessons = [{"text": f"Lesson number {n}", "turns": [turn(snap)]}
               for n in range(checks.MAX_SUGGESTIONS + 2)]
    checked = judge(snap, {"lessons": lessons})
    assert len(checked.accepted) == checks.MAX_SUGGESTIONS
    assert [r.check for r in checked.rejected] == ["too-many", "too-many"]


@pytest.mark.parametrize(("proposal", "expected"), [
    (["merges"], "a list, not a JSON object"),
    ({"answer": "nothing to do"}, "none of the keys"),
])
def test_an_unusable_answer(proposal: Any, expected: str) -> None:
    why = checks.usable(proposal)
    assert why is not None and expected in why


def test_an_empty_proposal_is_usable_and_unknown_keys_are_listed(
        snap: snapshot.Snapshot) -> None:
    assert checks.usable({}) is None
    checked = judge(snap, {"merges": [], "notes": "none"})
    assert checked.accepted == checked.rejected == [] and checked.ignored_keys == ["notes"]


