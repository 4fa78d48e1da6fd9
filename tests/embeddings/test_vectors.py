"""Vector BLOBs, the NumPy nearest-neighbour scan and reciprocal rank fusion."""

from __future__ import annotations

import random
import sqlite3

import pytest

from memgit.embeddings import vectors

np = pytest.importorskip("numpy", reason="NumPy comes with the embed extra")


def test_pack_is_little_endian_float32_and_round_trips() -> None:
    blob = vectors.pack([1.0, -0.5, 0.25])
    assert blob == bytes.fromhex("0000803f000000bf0000803e")
    assert vectors.unpack(blob) == [1.0, -0.5, 0.25]
    with pytest.raises(ValueError, match="multiple of 4"):
        vectors.unpack(b"\x00" * 5)


def test_a_matrix_loads_from_sqlite_blobs_and_finds_the_nearest() -> None:
    rng = random.Random(4)
    rows = [(f"id{i}", [rng.gauss(0, 1) for _ in range(16)]) for i in range(300)]
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE v (fact_id TEXT PRIMARY KEY, vector BLOB)")
    conn.executemany("INSERT INTO v VALUES (?, ?)", [(k, vectors.pack(v)) for k, v in rows])
    vm = vectors.VectorMatrix.from_blobs(conn.execute("SELECT fact_id, vector FROM v"), 16)
    query = [rng.gauss(0, 1) for _ in range(16)]

    def cosine(v: list[float]) -> float:
        return float(np.dot(v, query) / (np.linalg.norm(v) * np.linalg.norm(query)))

    expected = sorted(rows, key=lambda r: -cosine(r[1]))[:7]
    got = vm.nearest(query, 7)
    assert [k for k, _ in got] == [k for k, _ in expected]
    assert [s for _, s in got] == pytest.approx([cosine(v) for _, v in expected], abs=1e-5)
    assert [k for k, _ in vm.nearest(query, 1000)][:7] == [k for k, _ in expected]


def test_a_blob_of_another_dimension_is_refused() -> None:
    with pytest.raises(ValueError, match="id1 has 3 dimensions, expected 4"):
        vectors.VectorMatrix.from_blobs([("id0", vectors.pack([1, 0, 0, 0])),
                                         ("id1", vectors.pack([1, 0, 0]))], 4)


def test_ties_keep_row_order_and_degenerate_queries_find_nothing() -> None:
    vm = vectors.VectorMatrix(["a", "b", "c"], vectors.normalised([[1, 0], [1, 0], [0, 1]]))
    assert [k for k, _ in vm.nearest([2, 0], 2)] == ["a", "b"]
    assert vm.nearest([0, 0], 2) == []
    assert vm.nearest([1, 0], 0) == []
    assert vectors.VectorMatrix([], np.zeros((0, 2), dtype=np.float32)).nearest([1, 0], 3) == []


def test_fuse_sums_weight_over_k_plus_rank() -> None:
    lexical = ["a", "b", "c"]
    semantic = ["c", "d", "a"]
    # a: 1/(1+1) + 1/(1+3) = .75; c: 1/4 + 1/2 = .75; b: 1/3; d: 1/3
    assert vectors.fuse({"lexical": lexical, "semantic": semantic}, k=1) == ["a", "c", "b", "d"]
    # semantic weighted 3: c = 1/4 + 3/2, a = 1/2 + 3/4, d = 1, b = 1/3
    assert vectors.fuse({"lexical": lexical, "semantic": semantic}, k=1,
                        weights={"semantic": 3.0}) == ["c", "a", "d", "b"]
    assert vectors.fuse({"lexical": lexical, "semantic": semantic}, k=1, limit=2) == ["a", "c"]
    assert vectors.fuse({"lexical": [], "semantic": ["x"]}) == ["x"]
    with pytest.raises(ValueError):
        vectors.fuse({"lexical": lexical}, k=-1)
