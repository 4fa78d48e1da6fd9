"""Build the labelled semantic-recall set in tests/data/recall_semantic/ from two public FAQ sets.

Run (the sources come from the public repository ML-Recipes/BERT-FAQ, see ORIGIN.md):

    git --git-dir=MIRROR show 3c184030:data/StackFAQ/stackExchange-FAQ.xml > /tmp/stackfaq.xml
    git --git-dir=MIRROR show 3c184030:data/CovidFAQ/query_answer_pairs.json > /tmp/covidfaq.json
    python bench/make_recall_semantic.py /tmp/stackfaq.xml /tmp/covidfaq.json

Everything below is mechanical: which answer becomes an entry, which question becomes a
query, whether a query is a paraphrase (no content word shared with its entry) and which
half it falls in are decided by rules and a fixed seed, never by hand.
"""

from __future__ import annotations

import argparse
import html
import json
import random
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))  # recall_eval

from recall_eval import content_words, is_paraphrase  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "recall_semantic"
SEED = 20260515
ADDED = "2026-05-15"
# The files the entries go to; their names are neutral so that topic words (which the
# lexical index searches too) do not name the answers.
FILES = {"web": "apps.md", "cov": "health.md"}
TITLES = {"web": "# Web apps\n\n", "cov": "# Health\n\n"}


def clean(text: str) -> str:
    """One line of plain text: chat-bot suggestions ``[[...]]`` dropped, brackets (which
    open an entry's metadata group) turned into parentheses, white space collapsed."""
    text = html.unescape(text)
    text = re.sub(r"\[\[.*?\]\]", " ", text)
    text = text.replace("[", "(").replace("]", ")")
    return re.sub(r"\s+", " ", text).strip()


def lead(text: str, at_least: int = 60, at_most: int = 280) -> str:
    """The answer's first sentence that ends after ``at_least`` characters, cut at a word
    boundary before ``at_most``."""
    text = clean(text)
    end = len(text)
    for match in re.finditer(r"[.!?](?=\s|$)", text):
        if match.end() >= at_least:
            end = match.end()
            break
    out = text[:end].strip()
    if len(out) > at_most:
        out = out[:at_most].rsplit(" ", 1)[0].rstrip(",;:") + " ..."
    return out


def stackfaq(path: Path) -> tuple[list[dict], list[dict]]:
    """Web-app threads: the entry is the thread's title and its first answer's lead; the
    queries are the annotators' rephrasings of the title."""
    entries, queries = [], []
    for n, pair in enumerate(ET.parse(path).getroot().findall("qapair"), 1):
        title = clean(pair.findtext("question", "")).rstrip("?").strip()
        answers = [a.text or "" for a in pair.findall("answer")]
        if not title or not answers:
            continue
        eid = f"web-{n:03d}"
        entries.append({"id": eid, "file": FILES["web"], "text": f"{title}: {lead(answers[0])}"})
        for r in pair.findall("rephr"):
            text = clean(r.text or "")
            if len(content_words(text)) >= 1 and text != "*":
                queries.append({"query": text, "relevant": [eid], "source": "StackFAQ"})
    return entries, queries


def covidfaq(path: Path) -> tuple[list[dict], list[dict]]:
    """COVID-19 FAQ: each distinct answer's lead is an entry; the queries are the users'
    questions that the dataset's annotators aligned with that answer."""
    rows = json.loads(path.read_text())
    ids: dict[str, str] = {}
    entries, queries = [], []
    for row in rows:
        if row["query_type"] != "faq" or row["label"] != 1:
            continue
        key = clean(row["answer"])
        if key in ids:
            continue
        eid = f"cov-{len(ids) + 1:03d}"
        ids[key] = eid
        entries.append({"id": eid, "file": FILES["cov"], "text": lead(row["answer"])})
    for row in rows:
        if row["query_type"] == "user_query" and row["label"] == 1:
            eid = ids.get(clean(row["answer"]))
            if eid is not None:
                queries.append({"query": clean(row["question"]), "relevant": [eid],
                                "source": "CovidFAQ"})
    return entries, queries


def pick(entries: list[dict], queries: list[dict], paraphrases: int, others: int) -> list[dict]:
    """For each entry, in the sources' order: the first ``paraphrases`` paraphrase queries
    and the first ``others`` other queries (a query with the same content words as one
    taken before is skipped)."""
    text_of = {e["id"]: e for e in entries}
    seen: set[frozenset[str]] = set()
    taken: dict[tuple[str, bool], int] = {}
    out = []
    for q in queries:
        entry = text_of[q["relevant"][0]]
        words = frozenset(content_words(q["query"]))
        if words in seen:
            continue
        para = is_paraphrase(q["query"], entry["text"], entry["file"])
        key = (entry["id"], para)
        if taken.get(key, 0) >= (paraphrases if para else others):
            continue
        taken[key] = taken.get(key, 0) + 1
        seen.add(words)
        out.append({**q, "paraphrase": para})
    return out


def split_halves(entries: list[dict], queries: list[dict]) -> None:
    """Split once by answer entry (a fixed seed): queries of one entry stay in one half."""
    ids = sorted(e["id"] for e in entries)
    random.Random(SEED).shuffle(ids)
    tune = set(ids[: len(ids) // 2])
    for q in queries:
        q["half"] = "tune" if q["relevant"][0] in tune else "report"


def write(entries: list[dict], queries: list[dict]) -> None:
    drive = OUT / "drive"
    drive.mkdir(parents=True, exist_ok=True)
    for prefix, name in FILES.items():
        lines = [TITLES[prefix]]
        for e in entries:
            if e["file"] == name:
                lines.append(f"- {e['text']} [source: https://github.com/ML-Recipes/BERT-FAQ; "
                             f"added: {ADDED}; id: {e['id']}]\n")
        (drive / name).write_text("".join(lines))
    (drive / "MEMORY.md").write_text(
        "# Memory\n\n## Index\n" + "".join(f"- [[{n[:-3]}]]\n" for n in sorted(FILES.values())))
    keys = ("query", "relevant", "paraphrase", "half", "source")
    body = ",\n".join("  " + json.dumps({k: q[k] for k in keys}, ensure_ascii=False)
                      for q in queries)
    (OUT / "queries.json").write_text("[\n" + body + "\n]\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("stackfaq", type=Path)
    ap.add_argument("covidfaq", type=Path)
    ap.add_argument("--paraphrases", type=int, default=10, help="per entry, at most")
    ap.add_argument("--others", type=int, default=1, help="per entry, at most")
    args = ap.parse_args()
    web_entries, web_queries = stackfaq(args.stackfaq)
    cov_entries, cov_queries = covidfaq(args.covidfaq)
    entries = web_entries + cov_entries
    queries = pick(entries, web_queries + cov_queries, args.paraphrases, args.others)
    split_halves(entries, queries)
    write(entries, queries)
    para = sum(q["paraphrase"] for q in queries)
    print(f"{len(entries)} entries, {len(queries)} queries, {para} paraphrases; "
          f"tune {sum(q['half'] == 'tune' for q in queries)}")


if __name__ == "__main__":
    main()
