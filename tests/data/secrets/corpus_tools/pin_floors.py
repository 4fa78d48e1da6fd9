"""Measure memgit's default scanner on every corpus set and write what the tests pin.

    python tests/data/secrets/corpus_tools/pin_floors.py

Writes tests/data/secrets/known_misses.json: per set (tuning, evaluation,
independent, regression, and each foreign round's tuning part, ``ROUNDS``), the measured
recall and false-positive rate and the exact lines missed and falsely flagged; for every
round's held-out third (foreign*/heldout.jsonl) the counts only: their lines are never listed
anywhere. tests/test_secrets_corpus.py fails when a
line outside these lists is missed or flagged, or when a figure drops below the
pinned one. Run it after a deliberate change of the rules and review the diff.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(DATA.parents[2] / "src"))

from memgit.secrets import scan_text  # noqa: E402

# the foreign rounds' folders and the names their two parts are pinned under, in order
ROUNDS = (("foreign", "foreign-tuning", "heldout"),
          *((f"foreign_r{n}", f"foreign-r{n}-tuning", f"heldout-r{n}")
            for n in (6, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21)))


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def sets() -> dict[str, list[dict]]:
    dev = _jsonl(DATA / "dev" / "lines.jsonl")
    reg = [dict(r, label="pos") for r in _jsonl(DATA / "positives.jsonl")]
    reg += [dict(r, label="neg") for r in _jsonl(DATA / "negatives.jsonl")]
    out = {
        "tuning": [r for r in dev if r["split"] == "tune"],
        "evaluation": [r for r in dev if r["split"] == "eval"],
        "independent": _jsonl(DATA / "independent" / "lines.jsonl"),
        # a second independent set (stop 45, kingfisher's rule examples): counts only
        "independent2": _jsonl(DATA / "independent2" / "lines.jsonl"),
        "regression": reg,
    }
    for folder, tuning, heldout in ROUNDS:
        out[tuning] = _jsonl(DATA / folder / "tuning.jsonl")
        out[heldout] = _jsonl(DATA / folder / "heldout.jsonl")
    return out


def measure(recs: list[dict]) -> dict:
    pos = [r for r in recs if r["label"] == "pos"]
    neg = [r for r in recs if r["label"] == "neg"]
    missed = sorted(r["line"] for r in pos if not scan_text(r["line"]))
    flagged = sorted(r["line"] for r in neg if scan_text(r["line"]))
    return {
        "recall": round(1 - len(missed) / len(pos), 4),
        "fp_rate": round(len(flagged) / len(neg), 4),
        "positives": len(pos),
        "negatives": len(neg),
        "missed": missed,
        "false_positives": flagged,
    }


# counts only, never their lines (rounds 12 and 13 measured once, at the end of stop 43;
# rounds 14 to 16 once each, at the end of stop 44; round 17 at the end of stop 45; rounds 18
# and 19 at the start and the end of stop 46; rounds 20 and 21 at the start and the end of
# stop 47)
HELD_OUT = ("heldout", "heldout-r6", "heldout-r9", "heldout-r11", "heldout-r12", "heldout-r13",
            "heldout-r14", "heldout-r15", "heldout-r16", "heldout-r17", "heldout-r18",
            "heldout-r19", "heldout-r20", "heldout-r21", "independent2")


def counts_only(measured: dict) -> dict:
    """The held-out third's figures without its lines."""
    return {"recall": measured["recall"], "fp_rate": measured["fp_rate"],
            "positives": measured["positives"], "negatives": measured["negatives"],
            "missed_count": len(measured["missed"]),
            "false_positive_count": len(measured["false_positives"])}


def main() -> None:
    out = {name: measure(recs) for name, recs in sets().items()}
    for held in HELD_OUT:
        out[held] = counts_only(out[held])
    (DATA / "known_misses.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    for name, m in out.items():
        print(f"{name:17} recall {m['recall']:.4f} ({m['positives']})  "
              f"fp {m['fp_rate']:.4f} ({m['negatives']})")


if __name__ == "__main__":
    main()
