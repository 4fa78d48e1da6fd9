"""The secret gate on the issue-11 corpus: its shape, its split, and the pinned figures.

The corpus (tests/data/secrets/dev/lines.jsonl) was built from public sources by
tests/data/secrets/corpus_tools/build_corpus.py and split once by source unit; the
independent set (gitleaks' and noseyparker's rule fixtures) is never tuned on.
Figures and known misses are pinned in tests/data/secrets/known_misses.json
(written by build/pin_floors.py): a new miss or a new false alarm fails here.
"""

from __future__ import annotations

import collections
import importlib.util
import json
from pathlib import Path

import pytest

from memgit.secrets import scan_text

DATA = Path(__file__).parents[1] / "data" / "secrets"
DEV = [json.loads(x) for x in (DATA / "dev" / "lines.jsonl").read_text().splitlines()]
INDEPENDENT = [json.loads(x) for x in
               (DATA / "independent" / "lines.jsonl").read_text().splitlines()]
PINNED = json.loads((DATA / "known_misses.json").read_text())


def _pin_module():
    spec = importlib.util.spec_from_file_location("pin_floors",
                                                  DATA / "corpus_tools" / "pin_floors.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_PIN = _pin_module()
SETS = _PIN.sets()
# the sets pinned line by line, and the held-out thirds pinned by counts only
LISTED = ["evaluation", "tuning", "independent", "regression"] + [t for _, t, _ in _PIN.ROUNDS]
HELD_OUT = [h for _, _, h in _PIN.ROUNDS]
assert set(_PIN.HELD_OUT) == set(HELD_OUT) | {"independent2"}


def test_corpus_size_and_breadth():
    pos = [r for r in DEV if r["label"] == "pos"]
    neg = [r for r in DEV if r["label"] == "neg"]
    assert len(pos) >= 1500 and len(neg) >= 1500
    assert len({r["kind"] for r in pos}) >= 200
    families = collections.Counter(r["family"] for r in neg)
    assert {"agent notes", "docs with placeholders", "near miss"} <= set(families)


def test_every_line_names_its_origin_and_unit():
    for rec in DEV:
        assert rec["origin"] and rec["unit"] and rec["source"], rec
        assert rec["split"] in ("tune", "eval")
        if rec["label"] == "pos":
            assert rec["line"][rec["start"]: rec["start"] + len(rec["secret"])] == rec["secret"]
    for rec in INDEPENDENT:
        assert rec["origin"].startswith(("gitleaks/gitleaks@", "praetorian-inc/noseyparker@"))


def test_split_is_by_source_unit_and_decided_by_the_unit_alone():
    spec = importlib.util.spec_from_file_location(
        "build_corpus", DATA / "corpus_tools" / "build_corpus.py")
    assert spec and spec.loader
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    halves: dict[str, set[str]] = collections.defaultdict(set)
    for rec in DEV:
        halves[rec["unit"]].add(rec["split"])
        assert build.split_of(rec["unit"]) == rec["split"]
    assert all(len(s) == 1 for s in halves.values())
    counts = collections.Counter(r["split"] for r in DEV)
    assert 0.4 < counts["tune"] / len(DEV) < 0.6


def test_no_independent_line_in_the_development_corpus():
    dev_lines = {r["line"] for r in DEV}
    assert not dev_lines & {r["line"] for r in INDEPENDENT}
    assert not any("gitleaks" in r["origin"] or "noseyparker" in r["origin"] for r in DEV)


def _unpinned(what: str, name: str, recs: list[dict]) -> str:
    """A failure message that never quotes a line (a line may hold a credential): the
    count, and each line's origin except on the evaluation half, whose lines nobody
    tuning the rules may read (pin_floors.py writes the lists for review)."""
    if name == "evaluation" or name in HELD_OUT:
        return f"{len(recs)} {what} on the {name} set"
    return f"{len(recs)} {what}:\n" + "\n".join(r.get("origin", "?")[:160] for r in recs)


@pytest.mark.parametrize("name", LISTED)
def test_pinned_recall_and_known_misses(name):
    pinned = PINNED[name]
    pos = [r for r in SETS[name] if r["label"] == "pos"]
    assert len(pos) == pinned["positives"]
    missed = [r for r in pos if not scan_text(r["line"])]
    new = [r for r in missed if r["line"] not in set(pinned["missed"])]
    assert not new, _unpinned("newly missed", name, new)
    assert len(missed) <= len(pinned["missed"])  # recall at least the pinned figure


@pytest.mark.parametrize("name", LISTED)
def test_pinned_false_positives(name):
    pinned = PINNED[name]
    neg = [r for r in SETS[name] if r["label"] == "neg"]
    assert len(neg) == pinned["negatives"]
    flagged = [r for r in neg if scan_text(r["line"])]
    new = [r for r in flagged if r["line"] not in set(pinned["false_positives"])]
    assert not new, _unpinned("newly flagged", name, new)
    assert len(flagged) <= len(pinned["false_positives"])


def test_figure_of_record():
    """The evaluation half is the figure of record: issue 11 asks for false positives
    <= 1% and recall >= 95%; issue 29: not below 94.9% / 0.5%. Round 5 (new detectors from
    each family's specification, identifiers): the same 703 of 741 (0.9487), false alarms
    18 -> 14 of 3,697; round 8 (forms from the manuals and the formats' specifications):
    705 of 741 (0.9514), the same 14 false alarms; round 17 (a provider catalogue's names in
    assignments' names; a schemeless connection string is no login pair): 706 of 741
    (0.9528), 13 false alarms."""
    record = PINNED["evaluation"]
    assert record["fp_rate"] <= 0.005
    assert record["recall"] >= 0.95
    assert (record["positives"], len(record["missed"])) == (741, 35)
    assert (record["negatives"], len(record["false_positives"])) == (3697, 13)


# (positives, negatives) of each held-out third, fixed when its round was built
HELD_OUT_SHAPES = {"heldout": (83, 1011), "heldout-r6": (66, 2522), "heldout-r9": (204, 11710),
                   "heldout-r11": (31, 1375), "heldout-r12": (115, 298), "heldout-r13": (159, 734),
                   "heldout-r14": (130, 150), "heldout-r15": (24, 70), "heldout-r16": (92, 157),
                   "heldout-r17": (930, 321), "heldout-r18": (14, 468), "heldout-r19": (361, 4917),
                   "heldout-r20": (158, 3449), "heldout-r21": (221, 3008)}


def test_every_held_out_third_has_its_shape_pinned():
    assert list(HELD_OUT_SHAPES) == HELD_OUT


@pytest.mark.parametrize("name,shape", [*HELD_OUT_SHAPES.items(), ("independent2", (751, 5))])
def test_heldout_thirds(name, shape):
    """Rounds 5, 6, 9, 11 to 21 (issue 29): the third of each round's new
    foreign material set aside by source unit before any detector of the round was written,
    measured once at the end (docs/security.md); and the second independent set (stop 45,
    kingfisher's rule examples), never tuned on. Its lines are never printed, not even their
    origins: only the counts are pinned."""
    record = PINNED[name]
    recs = SETS[name]
    pos = [r for r in recs if r["label"] == "pos"]
    neg = [r for r in recs if r["label"] == "neg"]
    assert (len(pos), len(neg)) == (record["positives"], record["negatives"]) == shape
    missed = sum(not scan_text(r["line"]) for r in pos)
    flagged = sum(bool(scan_text(r["line"])) for r in neg)
    assert missed <= record["missed_count"], _unpinned("missed (more than pinned)", name, pos)
    assert flagged <= record["false_positive_count"], \
        _unpinned("flagged (more than pinned)", name, neg)
    assert "missed" not in record and "false_positives" not in record


@pytest.mark.parametrize("folder,names", [(f, (t, h)) for f, t, h in _PIN.ROUNDS])
def test_foreign_split_is_by_unit_and_fixed(folder, names):
    """Every unit is in one part, as units.json decided once (a fixed seed), a third held
    out; a unit found after the split (round 11's late units) is a tuning unit; no line of the
    corpus or the independent set is among them."""
    units = json.loads((DATA / folder / "units.json").read_text())
    parts: dict[str, set[str]] = collections.defaultdict(set)
    for name in names:
        for rec in SETS[name]:
            parts[rec["unit"]].add(rec["split"])
            assert units.get(rec["unit"], "tune") == rec["split"]
            assert rec["origin"] and rec["source"]
    assert all(len(p) == 1 for p in parts.values())
    held = sum(1 for v in units.values() if v == "heldout")
    assert abs(held - len(units) / 3) <= 1
    dev_lines = {r["line"] for r in DEV} | {r["line"] for r in INDEPENDENT}
    assert not dev_lines & {r["line"] for n in names for r in SETS[n]}


def test_near_misses_cover_every_fixed_format():
    near = [r for r in DEV if r["family"] == "near miss"]
    kinds = collections.Counter(r["kind"] for r in near)
    assert set(kinds) == {"one char short", "wrong alphabet", "placeholder body"}
    assert len({r["origin"].split(" record ")[1].split()[0] for r in near}) >= 80
