"""The entry ids each blob holds (memgit.state.blob_ids), in a real state database."""

from __future__ import annotations

from pathlib import Path

from memgit import state
from memgit.state import blob_ids


def test_ids_are_read_back_by_blob_and_salt_and_another_salt_is_dropped(tmp_path: Path) -> None:
    (tmp_path / "memgit").mkdir()
    conn = state.connect(tmp_path)
    try:
        oids = [f"{n:040x}" for n in range(1200)]  # more than one chunk of variables
        assert blob_ids.write(conn, "s1", [(o, [f"m-{n}", f"entry-{n}"]) for n, o in
                                           enumerate(oids)] + [("e" * 40, [])]) == 1201
        got = blob_ids.read(conn, "s1", [*oids, "f" * 40, "e" * 40])
        assert len(got) == 1201 and got["e" * 40] == ""
        assert got[oids[7]] == "\nm-7\nentry-7\n"
        assert blob_ids.read(conn, "s2", oids) == {}
        assert blob_ids.write(conn, "s2", [(oids[0], ["m-x"])]) == 1
        assert blob_ids.read(conn, "s1", oids) == {}  # the rows of s1 are gone
        assert blob_ids.read(conn, "s2", oids) == {oids[0]: "\nm-x\n"}
        assert blob_ids.write(conn, "s2", []) == 0
    finally:
        conn.close()
