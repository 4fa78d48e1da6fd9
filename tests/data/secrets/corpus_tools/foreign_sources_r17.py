"""Round 17 (issue 29): an eleventh foreign set, split once by source unit into a tuning
two-thirds and a held-out third: a secret scanner's per-provider detector catalogue and
its detectors' own test cases.

    python tests/data/secrets/corpus_tools/foreign_sources_r17.py --split-only  # units.json
    python tests/data/secrets/corpus_tools/foreign_sources_r17.py               # ../foreign_r17/

Source (a mirror brought by the ``fetch`` tool; origins ``repository@commit:path:line`` on
every line). It was not used by an earlier round, and it is not the independent set:

* santhreal/keyhog (a Rust secret scanner, MIT or Apache-2.0): ``detectors/<id>.toml``, one
  file a detector (its provider's documentation address, the format, the regular
  expressions, and ``[[detector.tests]]`` cases), and
  ``crates/scanner/tests/contracts/<id>.toml`` (``[[positive]]``, ``[[negative]]`` and
  ``[[evasion]]`` cases with the credential each positive must surface).

**Units** are providers: a detector's or contract's file name up to its first hyphen
(``aws-access-key`` and ``aws-secret-key`` are the unit ``keyhog:aws``), so one provider's
detectors and tests fall in one part. The split was made from the file names alone (seed
2917, every third unit held out) and committed before any file was read.

**Provenance, and what it means for the independent set.** keyhog's README credits
TruffleHog (detector breadth), Betterleaks (a gitleaks fork) and Titus (a Nosey Parker
port) for ideas; its formats may share regular expressions with gitleaks' and Nosey
Parker's rules, whose fixtures are the independent set. This round's own held-out third is
the clean measure of what it teaches; the independent set's figure after it is reported
beside the figure before it, with this caveat.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import foreign_sources as r5  # noqa: E402

OUT = HERE.parent / "foreign_r17"
SEED = 2917
KEYHOG = "santhreal/keyhog"
DETECTORS = "detectors/"
CONTRACTS = "crates/scanner/tests/contracts/"


def unit_of(path: str) -> str:
    """``detectors/aws-access-key.toml`` -> ``keyhog:aws`` (the provider's stem)."""
    name = path.rsplit("/", 1)[1].removesuffix(".toml")
    return "keyhog:" + name.split("-", 1)[0].lower()


def unit_files() -> dict[str, tuple[str, list[str]]]:
    """unit -> (repository, its detector and contract files), from the file names alone."""
    units: dict[str, tuple[str, list[str]]] = {}
    for path in r5._files(KEYHOG):
        if path.endswith(".toml") and (
                (path.startswith(DETECTORS) and path.count("/") == 1)
                or (path.startswith(CONTRACTS) and path.count("/") == 4)):
            units.setdefault(unit_of(path), (KEYHOG, []))[1].append(path)
    return units


def main() -> None:
    units = unit_files()
    split = r5.the_split(list(units), OUT, SEED)
    if "--split-only" in sys.argv:
        held = sum(v == "heldout" for v in split.values())
        print(f"{len(split)} units, {held} held out")
        return
    raise SystemExit("the builder is not written yet: --split-only")


if __name__ == "__main__":
    main()
