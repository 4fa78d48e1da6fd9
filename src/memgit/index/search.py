"""Search of a current recall index: the FTS5 expression of a free-text query, common terms
pruned, ranked hits, retrievals counted.

It loads sqlite3 and nothing of pygit2, the policy, the drive format, typing or re, so the
shell's quick path can search at the cost of a bare interpreter start. Callers make the
index current first.
"""

from __future__ import annotations

from collections import namedtuple

from memgit import state
from memgit.safe_text import printable
from memgit.state import search as rows

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads it so)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any, NamedTuple

    class _HitFields(NamedTuple):
        entry_id: str
        text: str
        path: str
        line: int
        source: str
        added: str
        score: float
        fact_id: str
        retrievals: int
else:  # the same fields without typing.NamedTuple, whose import costs 7 ms
    _HitFields = namedtuple("_HitFields", "entry_id text path line source added score "
                                          "fact_id retrievals")


class Hit(_HitFields):
    """One recall result."""

    __slots__ = ()


def hit_json(hit: Hit, drive: str | None = None) -> dict[str, Any]:
    """A hit as JSON, the one shape the command line, the MCP server and the agent hooks
    give (``drive``: the label of the drive it came from, in a recall across mounts)."""
    out: dict[str, Any] = {"drive": drive} if drive is not None else {}
    out.update(id=hit.entry_id, text=hit.text, topic=hit.path, line=hit.line,
               source=hit.source, added=hit.added, score=hit.score,
               retrievals=hit.retrievals)
    return out


def hit_line(hit: Hit) -> str:
    """One result as ``memgit recall`` prints it (control and invisible characters
    escaped: safe_text.printable)."""
    return printable(f"{hit.path}:{hit.line}: {hit.text}  "
                     f"[{hit.entry_id}; score {hit.score:.2f}]")


_STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its
itself just me more most my myself no nor not now of off on once only or other our ours
ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself yourselves
tell know find get got anything something anyone someone thing things remember recall did
does say said us
""".split())


def words(text: str) -> list[str]:
    """The runs of word characters of ``text``, as ``re.findall(r"\\w+", text)`` finds
    them (a word character is one ``str.isalnum`` accepts, or ``_``: the same Unicode
    test as re's; tests/index/test_search.py checks every code point), without re."""
    out: list[str] = []
    start = -1
    for i, char in enumerate(text):
        if char.isalnum() or char == "_":
            if start < 0:
                start = i
        elif start >= 0:
            out.append(text[start:i])
            start = -1
    if start >= 0:
        out.append(text[start:])
    return out


def match_expression(query: str) -> str:
    """The FTS5 query for free text: its words (stop words dropped), OR-ed.

    Each word is quoted, so FTS5 syntax in the query is never interpreted;
    words of four letters or more also match as prefixes (config ->
    configuration). BM25 then ranks entries matching more and rarer words first.
    """
    kept: list[str] = []
    for word in words(query.casefold()):
        if word in _STOPWORDS or word in kept:
            continue
        kept.append(word)
    if not kept:  # a query of stop words only: search them as given
        kept = list(dict.fromkeys(words(query.casefold())))
    return " OR ".join(match_terms(kept))


def match_terms(words: Iterable[str]) -> list[str]:
    return [f'"{w}"*' if len(w) >= 4 else f'"{w}"' for w in words]


# Terms matching more than this share of a large drive's entries are dropped
# from a query that has rarer terms: BM25 gives them almost no weight, but
# scoring their thousands of matches dominates the time (bench_recall.py).
COMMON_SHARE = 0.2
COMMON_MIN_ENTRIES = 1000
# Per drive: the head the counts were taken at, the number of entries then, and
# the number of entries matching each term. Document frequencies move slowly, so
# they survive new heads until the drive's size has changed by more than 2%.
_df_cache: dict[str, tuple[str, int, dict[str, int]]] = {}


def _term_counts(conn: state.Connection, key: tuple[str, str]) -> tuple[int, dict[str, int]]:
    drive, head = key
    cached = _df_cache.get(drive)
    if cached is not None and cached[0] == head:
        return cached[1], cached[2]
    total = rows.searchable_count(conn)
    counts = cached[2] if cached is not None and abs(total - cached[1]) <= 0.02 * cached[1] \
        else {}
    if len(_df_cache) > 64:
        _df_cache.clear()
    _df_cache[drive] = (head, total, counts)
    return total, counts


def _matches(conn: state.Connection, counts: dict[str, int], term: str) -> int:
    if term not in counts:
        counts[term] = rows.match_count(conn, term)
    return counts[term]


def _prune_common(conn: state.Connection, key: tuple[str, str], expression: str) -> str:
    terms = expression.split(" OR ")
    if len(terms) < 2:
        return expression
    total, counts = _term_counts(conn, key)
    if total < COMMON_MIN_ENTRIES:
        return expression
    rare = [t for t in terms if _matches(conn, counts, t) <= COMMON_SHARE * total]
    return " OR ".join(rare) if rare else expression


def _only_common(conn: state.Connection, key: tuple[str, str], expression: str) -> bool:
    """A one-term query whose term matches a large share of a large drive ("the")."""
    if " OR " in expression:
        return False
    total, counts = _term_counts(conn, key)
    return total >= COMMON_MIN_ENTRIES and \
        _matches(conn, counts, expression) > COMMON_SHARE * total


def search(conn: state.Connection, query: str, limit: int = 5, *, count: bool = True,
           key: tuple[str, str] = ("", "")) -> list[Hit]:
    """The ``limit`` best entries for ``query`` (BM25 over text and topic path) in an
    index that is current; counts one retrieval for each entry returned. ``key``
    (git dir, head) names the index for the cached word counts. Reads call
    memgit.recall.read_path.recall, which makes the index current first."""
    expression = match_expression(query)
    if not expression or limit <= 0:
        return []
    expression = _prune_common(conn, key, expression)
    found = rows.search(conn, expression, limit, newest=_only_common(conn, key, expression))
    hits = [Hit(r[0], r[1], r[2], r[3], r[4], r[5], round(-float(r[6]), 4), r[7],
                int(r[8]) + (1 if count else 0))
            for r in found]
    if count and found:
        rows.count_retrievals(conn, [r[9] for r in found])
    return hits



# --- recall across mounted drives (memgit.sync.mounts, memgit.cli.quick_read) ---


def merge_drives(found: list[tuple[str, state.Connection, list[Hit]]], query: str,
                 limit: int, *, count: bool = True) -> list[tuple[str, Hit]]:
    """The ``limit`` best of several drives' hits for ``query`` (each drive's ``(label,
    connection, hits)``, searched without counting), as ``(label, hit)``.

    BM25 scores of different drives do not compare (each comes from its own drive's
    statistics), so the hits are ordered first by how many of the query's terms each
    matches (FTS5's own matching: state.search.terms_matched), then by score. Only the
    hits returned count as retrievals, each in its own drive's index. The one merge of
    both read paths (the full one and the shell's quick one)."""
    terms = match_expression(query).split(" OR ")
    scored = [(rows.terms_matched(conn, hit.fact_id, terms), label, hit, conn)
              for label, conn, hits in found for hit in hits]
    scored.sort(key=lambda t: (-t[0], -t[2].score, t[1], t[2].entry_id))
    chosen = scored[:limit]
    if count:
        by_label: dict[str, tuple[state.Connection, list[str]]] = {}
        for _terms, label, hit, conn in chosen:
            by_label.setdefault(label, (conn, []))[1].append(hit.fact_id)
        for conn, fact_ids in by_label.values():
            rows.count_fact_retrievals(conn, fact_ids)
    return [(label, hit._replace(retrievals=hit.retrievals + 1) if count else hit)
            for _terms, label, hit, _conn in chosen]


def labelled_line(label: str, hit: Hit) -> str:
    """A hit of recall across mounts as ``memgit recall --mounts`` prints it."""
    return f"[{label}] {hit_line(hit)}"
