"""Build the labelled conversational-memory set in tests/data/recall_conversations/ from LoCoMo.

LoCoMo (snap-research/locomo, CC BY-NC 4.0; see the set's ORIGIN.md) is ten long
conversations between two people over many sessions, with questions whose evidence is
labelled by dialogue turn. Here every turn becomes one memory entry and every question
with evidence one query. Run (the source comes from the public repository through the
``fetch`` mirror, or any copy of the same file):

    python bench/make_recall_conversations.py                 # from the fetch mirror
    python bench/make_recall_conversations.py --source locomo10.json

Everything is mechanical: the entry text is the speaker and what they said (and the
caption of a shared photo), a query is the question as written with its category and
evidence turns, and the halves are drawn once by conversation with a fixed seed. The
file's digest is checked, so the set cannot silently change with the source.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import shutil
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "recall_conversations"
MIRROR = Path("/work/.mirror/snap-research+LoCoMo/repo")
COMMIT = "3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376"
PATH = "data/locomo10.json"
SHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"
SOURCE_URL = "https://github.com/snap-research/locomo"
SEED = 20260601
# LoCoMo's category numbers (its paper and README: 1 multi-hop, 2 temporal, 3 open-domain,
# 4 single-hop, 5 adversarial: a question about something the other speaker did)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop",
              5: "adversarial"}
_TURN_RE = re.compile(r"D(\d+):(\d+)")


def read_source(source: Path | None) -> bytes:
    """The bytes of locomo10.json, from ``source`` or the mirror; its digest checked."""
    if source is not None:
        data = source.read_bytes()
    else:
        data = subprocess.run(["git", f"--git-dir={MIRROR}", "show", f"{COMMIT}:{PATH}"],
                              check=True, capture_output=True).stdout
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        raise SystemExit(f"locomo10.json has sha256 {digest}, expected {SHA256} "
                         f"({SOURCE_URL} at {COMMIT})")
    return data


def clean(text: str) -> str:
    """One line of plain text: brackets (which open an entry's metadata group) turned into
    parentheses, white space collapsed."""
    text = text.replace("[", "(").replace("]", ")")
    return re.sub(r"\s+", " ", text).strip()


def session_date(stamp: str) -> str:
    """``1:56 pm on 8 May, 2023`` as ``2023-05-08``."""
    return datetime.strptime(stamp.split(" on ", 1)[1], "%d %B, %Y").strftime("%Y-%m-%d")


def short(conversation: str) -> str:
    """``conv-26`` -> ``c26``: the folder and id prefix, neutral words for the index."""
    return "c" + conversation.split("-", 1)[1]


def entry_id(conversation: str, turn: str) -> str:
    """``D1:3`` of conv-26 -> ``c26-d1-3``."""
    match = _TURN_RE.fullmatch(turn)
    if match is None:
        raise ValueError(f"not a dialogue id: {turn!r}")
    return f"{short(conversation)}-d{match[1]}-{match[2]}"


def turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {clean(turn['text'])}"
    if turn.get("blip_caption"):
        text += f" (shares a photo: {clean(turn['blip_caption'])})"
    return text


def sessions(conv: dict[str, Any]) -> list[tuple[int, str, list[dict[str, Any]]]]:
    """(number, date-time stamp, turns) of each session, in order."""
    found = []
    for key, turns in conv.items():
        match = re.fullmatch(r"session_(\d+)", key)
        if match and isinstance(turns, list) and turns:
            found.append((int(match[1]), conv[f"{key}_date_time"], turns))
    return sorted(found)


def write_conversation(sample: dict[str, Any], out: Path) -> set[str]:
    """One topic file per session under ``out/<cNN>/``; returns the entry ids written."""
    conv = sample["conversation"]
    folder = out / short(sample["sample_id"])
    folder.mkdir(parents=True)
    ids: set[str] = set()
    for number, stamp, turns in sessions(conv):
        added = session_date(stamp)
        lines = [f"# {conv['speaker_a']} and {conv['speaker_b']}, session {number} "
                 f"({stamp})", ""]
        for turn in turns:
            fid = entry_id(sample["sample_id"], turn["dia_id"])
            if fid in ids:
                raise ValueError(f"{sample['sample_id']}: dialogue id {turn['dia_id']} twice")
            ids.add(fid)
            lines.append(f"- {turn_text(turn)} [source: {SOURCE_URL}; added: {added}; "
                         f"id: {fid}]")
        (folder / f"s{number:02d}.md").write_text("\n".join(lines) + "\n")
    return ids


def queries_of(sample: dict[str, Any], ids: set[str], half: str,
               dropped: dict[str, int]) -> list[dict[str, Any]]:
    """The questions with at least one evidence turn that exists; evidence ids that name no
    turn (a few malformed ones, e.g. ``D:11:26``) are dropped and counted."""
    out = []
    for number, qa in enumerate(sample["qa"]):
        turns = [t for e in qa.get("evidence", []) for t in _TURN_RE.findall(e)]
        relevant = []
        for d, t in turns:
            fid = entry_id(sample["sample_id"], f"D{d}:{t}")
            if fid in ids and fid not in relevant:
                relevant.append(fid)
            elif fid not in ids:
                dropped["evidence"] += 1
        if not relevant:
            dropped["questions"] += 1
            continue
        out.append({"query": clean(qa["question"]), "relevant": relevant,
                    "category": CATEGORIES[qa["category"]],
                    "conversation": sample["sample_id"], "qa": number, "half": half})
    return out


def halves(samples: list[dict[str, Any]]) -> dict[str, str]:
    """Conversation id -> half, drawn once with :data:`SEED`: half of them each."""
    names = sorted(s["sample_id"] for s in samples)
    random.Random(SEED).shuffle(names)
    return {name: ("tune" if i < len(names) // 2 else "report") for i, name in enumerate(names)}


def build(data: bytes, out: Path) -> dict[str, Any]:
    samples = json.loads(data)
    split = halves(samples)
    drive = out / "drive"
    if drive.exists():
        shutil.rmtree(drive)
    drive.mkdir(parents=True)
    queries: list[dict[str, Any]] = []
    dropped = {"evidence": 0, "questions": 0}
    turns = {}
    for sample in samples:
        ids = write_conversation(sample, drive)
        turns[sample["sample_id"]] = len(ids)
        queries += queries_of(sample, ids, split[sample["sample_id"]], dropped)
    (out / "queries.json").write_text(json.dumps(queries, indent=1, ensure_ascii=False) + "\n")
    return {"turns": turns, "queries": len(queries), "dropped": dropped, "halves": split}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, help="a copy of locomo10.json (default: the "
                        "fetch mirror of snap-research/locomo at the pinned commit)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    made = build(read_source(args.source), args.out)
    print(json.dumps(made, indent=1))


if __name__ == "__main__":
    main()
