"""Vectors for semantic recall: their storage form, the nearest-neighbour scan, rank fusion.

A vector is a BLOB of little-endian float32 (``pack``/``unpack``), so a whole drive loads
into one NumPy matrix with one ``frombuffer``; ``VectorMatrix.nearest`` is an exact scan
of it; ``fuse`` is reciprocal rank fusion (an id scores the sum over rankings of
``weight / (k + rank)``) and :class:`Fusion` says which weights hybrid recall gives the
rankings for a question (``weak_lexical``). NumPy (``memgit[embed]``) is imported only by
what needs it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

RRF_K = 2  # the default k of fuse(): the first ranks count most
LEXICAL_WEIGHT = 1.0


@dataclass(frozen=True)
class Fusion:
    """How hybrid recall fuses the lexical and the semantic ranking: reciprocal rank
    fusion with ``k``, the lexical ranking weighing 1 and the semantic one ``semantic``
    when the lexical ranking is strong for the question, ``weak`` when it is weak
    (:func:`weak_lexical`)."""

    k: int
    semantic: float
    weak: float

    def weights(self, weak: bool) -> dict[str, float]:
        """The weights of the two named rankings for fuse()."""
        return {"lexical": LEXICAL_WEIGHT, "semantic": self.weak if weak else self.semantic}


# Chosen on the tuning halves of both labelled sets (tests/data/recall_conversations and
# tests/data/recall_semantic; bench/bench_fusion.py, docs/embeddings.md), for the query
# vectors of e5 itself and of the fast query encoder (memgit.embeddings.fastquery), whose
# semantic ranking is weaker on conversational memory and so weighs less when the words
# are strong. A single weighting cannot hold on both kinds of memory: FAQ paraphrases
# need the semantic ranking to dominate, conversations the lexical one.
E5_FUSION = Fusion(k=2, semantic=1.0, weak=10.0)
FAST_FUSION = Fusion(k=2, semantic=0.4, weak=10.0)


TIED = 0.95  # the second lexical hit's score over the first's from which they are tied


def weak_lexical(terms: int, known: int, first_matches: int, *, named: bool = False,
                 tied: bool = False) -> bool:
    """Whether the lexical ranking is weak evidence for a question of ``terms`` search
    terms, of which ``known`` match some entry of the drive and ``first_matches`` match
    its first hit: a word the drive never uses says the question is worded unlike the
    memory (a paraphrase: meaning must find it), and a first hit that matches fewer than
    two of the terms was found by one word, which may be incidental (a question of one
    term is strong when its first hit has it: the user named what they look for). A
    first hit that matches two terms (of a question of two or more) and that the
    second hit scores within 5% of (``tied``, from :func:`tied_first`) was picked by two
    words that do not tell the drive's entries apart, as the common words of a drive on
    one subject do: weak too (issue 32, third round).

    A question that names the speaker of one of the lexical ranking's first hits
    (``named``, from :func:`names_a_speaker`) is about a conversation, whose turns share
    their words with the questions asked of them: its lexical ranking is never weak
    (issue 32; docs/embeddings.md, "Second round")."""
    if named:
        return False
    return terms == 0 or known < terms or first_matches < min(2, terms) or \
        (tied and terms >= 2 and first_matches == 2)


def tied_first(scores: Sequence[float]) -> bool:
    """Whether the lexical ranking's first two scores (BM25, higher is better) are
    within :data:`TIED` of each other: its words do not tell its first hit apart."""
    return len(scores) >= 2 and scores[0] > 0 and scores[1] >= TIED * scores[0]


SPEAKER_DEPTH = 5  # the lexical hits names_a_speaker looks at


def speaker(text: str) -> str | None:
    """The speaker of an entry written as a dialogue turn, ``Name: what they said`` (one
    capitalised word of letters, then a colon and a space), casefolded; else None."""
    lead, colon, _rest = text.partition(": ")
    if colon and len(lead) >= 2 and lead.isalpha() and lead[0].isupper() \
            and lead[1:].islower():
        return lead.casefold()
    return None


def names_a_speaker(query_words: Iterable[str], texts: Iterable[str]) -> bool:
    """Whether a question (its casefolded words) names the speaker of one of ``texts``
    (the entry texts of the lexical ranking's first :data:`SPEAKER_DEPTH` hits)."""
    asked = set(query_words)
    return any(speaker(text) in asked for text in texts)


def pack(vector: Sequence[float]) -> bytes:
    """The BLOB form of a vector: little-endian float32."""
    return struct.pack(f"<{len(vector)}f", *vector)


def unpack(blob: bytes) -> list[float]:
    if len(blob) % 4:
        raise ValueError(f"a vector BLOB has a multiple of 4 bytes, not {len(blob)}")
    return list(struct.unpack(f"<{len(blob) // 4}f", blob))


@dataclass
class VectorMatrix:
    """Unit vectors of a drive's entries, one row per id, for a brute-force scan."""

    ids: list[str]
    matrix: Any  # numpy.ndarray, float32, shape (len(ids), dimension)

    @classmethod
    def from_blobs(cls, rows: Iterable[tuple[str, bytes]], dimension: int) -> VectorMatrix:
        """Build from ``(id, blob)`` rows (as a ``SELECT id, vector`` returns them)."""
        import numpy as np

        ids: list[str] = []
        blobs: list[bytes] = []
        for key, blob in rows:
            if len(blob) != 4 * dimension:
                raise ValueError(f"the vector of {key} has {len(blob) // 4} dimensions, "
                                 f"expected {dimension}")
            ids.append(key)
            blobs.append(blob)
        matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(ids), dimension)
        return cls(ids, normalised(matrix))

    def nearest(self, query: Sequence[float] | Any, limit: int) -> list[tuple[str, float]]:
        """The ``limit`` ids most similar to ``query`` (cosine), best first."""
        import numpy as np

        if limit <= 0 or not self.ids:
            return []
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(q))
        if norm == 0.0:
            return []
        # einsum runs in this thread; ``matrix @ q`` goes to the BLAS, whose threads
        # spin on a busy machine: p50 1.0 ms against 13.6 ms at 15,000 x 384, load 6.
        scores = np.einsum("ij,j->i", self.matrix, q / norm)
        if limit < len(self.ids):
            top = np.argpartition(-scores, limit - 1)[:limit]
        else:
            top = np.arange(len(self.ids))
        top = top[np.lexsort((top, -scores[top]))]  # best first; ties by row order
        return [(self.ids[i], float(scores[i])) for i in top]


def normalised(matrix: Any) -> Any:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    import numpy as np

    m = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Any = m / norms
    return out


def fused_scores(rankings: Mapping[str, Sequence[str]], *, k: int = RRF_K,
                 weights: Mapping[str, float] | None = None) -> dict[str, float]:
    """Each id's reciprocal-rank-fusion score: the sum over the named rankings (best
    first each) of ``weight / (k + rank)``; ids in the order they were first met."""
    if k < 0:
        raise ValueError("k must be >= 0")
    scores: dict[str, float] = {}
    for name, ranked in rankings.items():
        weight = 1.0 if weights is None else float(weights.get(name, 1.0))
        for rank, key in enumerate(ranked, 1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    return scores


def fuse(rankings: Mapping[str, Sequence[str]], *, k: int = RRF_K,
         weights: Mapping[str, float] | None = None, limit: int | None = None) -> list[str]:
    """Reciprocal rank fusion of named rankings (best first each) into one, best first.

    ``weights`` by ranking name (default 1.0 each). Ties keep the order in which the ids
    were first met, ranking by ranking, so the result is deterministic.
    """
    scores = fused_scores(rankings, k=k, weights=weights)
    order = {key: i for i, key in enumerate(scores)}
    fused = sorted(scores, key=lambda key: (-scores[key], order[key]))
    return fused if limit is None else fused[:limit]
