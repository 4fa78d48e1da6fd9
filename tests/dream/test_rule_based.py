"""The rule-based proposer: which lines it calls duplicates, which it leaves alone."""

from __future__ import annotations

from typing import Any

import pytest

from memgit.dream.rule_based import PRUNE_DAYS, RuleProposer, propose_rules


def entry(entry_id: str, text: str, retrievals: int = 0, age: int | None = 5,
          added: str = "2026-04-01") -> dict[str, Any]:
    return {"id": entry_id, "path": "notes.md", "text": text, "retrievals": retrievals,
            "age_days": age, "added": added}


def merged(*texts: str) -> list[list[str]]:
    entries = [entry(f"m-{n}", t) for n, t in enumerate(texts)]
    return [sorted(m["ids"]) for m in propose_rules(entries, prune=False)["merges"]]


def test_exact_duplicates_up_to_case_spacing_and_punctuation() -> None:
    assert merged("Joe leads the product team", "joe  LEADS the product team.") == \
        [["m-0", "m-1"]]


def test_near_duplicates_by_word_overlap_and_order() -> None:
    assert merged("Staging runs on Kubernetes in eu-central-1",
                  "Staging runs on Kubernetes in the eu-central-1 region") == [["m-0", "m-1"]]


@pytest.mark.parametrize(("a", "b"), [
    ("Flights from Berlin to Paris leave at noon", "Flights from Paris to Berlin leave at noon"),
    ("The launch is on 2026-10-15 for payments", "The launch is on 2026-11-15 for payments"),
    ("The team uses Jira for all tickets", "The team no longer uses Jira for all tickets"),
    ("Priya owns pricing for billing", "Marco owns the roadmap for search"),
    ("Use tabs", "Use spaces"),  # too short to judge by overlap
])
def test_not_duplicates(a: str, b: str) -> None:
    assert merged(a, b) == []


def test_the_keeper_is_the_most_retrieved_then_oldest_with_the_longest_text() -> None:
    entries = [entry("m-a", "Joe leads the product team", retrievals=0),
               entry("m-b", "Joe leads the product team", retrievals=4),
               entry("m-c", "joe leads the product team!", retrievals=0, added="2025-01-01")]
    [merge] = propose_rules(entries, prune=False)["merges"]
    assert merge["ids"] == ["m-b", "m-c", "m-a"]
    assert merge["text"] == "Joe leads the product team"  # exact duplicates: the keeper's
    longer = [entry("m-a", "Staging runs on Kubernetes in eu-central-1", retrievals=2),
              entry("m-b", "Staging runs on Kubernetes in the eu-central-1 region")]
    [merge] = propose_rules(longer, prune=False)["merges"]
    assert merge["ids"] == ["m-a", "m-b"]
    assert merge["text"] == "Staging runs on Kubernetes in the eu-central-1 region"


def test_prune_candidates_only_when_asked() -> None:
    entries = [entry("m-old", "An old unread fact", age=PRUNE_DAYS),
               entry("m-read", "An old read fact", retrievals=1, age=400),
               entry("m-new", "A new fact", age=PRUNE_DAYS - 1),
               entry("m-undated", "A fact without a date", age=None)]
    assert propose_rules(entries, prune=False)["prunes"] == []
    prunes = RuleProposer(prune=True).propose({"entries": entries})["prunes"]
    assert [p["id"] for p in prunes] == ["m-old"]
    assert prunes[0]["reason"] == f"never retrieved in {PRUNE_DAYS} days"


def test_a_merged_entry_is_not_also_pruned() -> None:
    entries = [entry("m-a", "Joe leads the product team", age=90),
               entry("m-b", "Joe leads the product team", age=95)]
    proposal = propose_rules(entries, prune=True)
    assert len(proposal["merges"]) == 1 and proposal["prunes"] == []
