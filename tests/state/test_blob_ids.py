"""The entry ids each blob holds (memgit.state.blob_ids), in a real state database."""

from __future__ import annotations

from pathlib import Path

from memgit import state
from memgit.state import blob_ids


def test_blobs_holding_ids_are_found_by_whole_id_and_salt(tmp_path: Path) -> None:
    (tmp_path / "memgit").mkdir()
    conn = state.connect(tmp_path)
    try:
        oids = [f"{n:040x}" for n in range(1200)]  # more than one chunk of variables
        rows = [(o, [f"m-{n}", f"entry-{n}"]) for n, o in enumerate(oids)] + [("e" * 40, [])]
        assert blob_ids.write(conn, "s1", rows) == 1201
        assert blob_ids.recorded(conn, "s1", [*oids, "f" * 40, "e" * 40]) == {*oids, "e" * 40}
        assert blob_ids.holding(conn, "s1", oids, ["m-7"]) == {oids[7]}  # not m-70, m-700
        assert blob_ids.holding(conn, "s1", oids, ["entry-1", "m-1100", "m-", "7"]) == \
            {oids[1], oids[1100]}
        many = [f"m-{n}" for n in range(0, 1200, 10)]  # more ids than one statement holds
        assert blob_ids.holding(conn, "s1", oids, many) == set(oids[::10])
        assert blob_ids.holding(conn, "s1", ["e" * 40], ["m-1"]) == set()
        assert blob_ids.recorded(conn, "s2", oids) == set()
        assert blob_ids.write(conn, "s2", [(oids[0], ["m-x"])]) == 1
        assert blob_ids.recorded(conn, "s1", oids) == set()  # the rows of s1 are gone
        assert blob_ids.holding(conn, "s2", oids, ["m-x"]) == {oids[0]}
        assert blob_ids.write(conn, "s2", []) == 0
    finally:
        conn.close()
