"""An embeddings endpoint on 127.0.0.1 for the tests: the test double of a remote
service that cannot run here, speaking the OpenAI embeddings wire protocol over real
HTTP (``POST /v1/embeddings``, ``{"model", "input": [...], "encoding_format"}`` in,
``{"object": "list", "data": [{"object", "index", "embedding"}], "model", "usage"}`` out,
errors as ``{"error": {"message", "type", "code"}}``, as the OpenAI API reference shows).

Replies: ``ok`` (a deterministic hash vector per text), ``by_model`` (the vectors of
memgit's local model, multilingual-e5-small, so that recall by meaning works through
the ``openai`` plugin), ``status`` (an error answer), ``raw`` and ``silent``. Every
request is recorded, so a test counts what was embedded.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def hash_vector(text: str, dim: int) -> list[float]:
    """A deterministic unit vector for ``text`` (what the double answers)."""
    raw = hashlib.sha256(text.encode()).digest() * (dim // 32 + 1)
    v = [b - 127.5 for b in raw[:dim]]
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v]


Reply = Callable[[dict[str, Any]], tuple[int, dict[str, str], bytes]]


def ok(dim: int = 8, *, reverse: bool = False) -> Reply:
    """The OpenAI answer: data[i] = {object, index, embedding}, usage, model."""
    def reply(body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        data = [{"object": "embedding", "index": i, "embedding": hash_vector(t, dim)}
                for i, t in enumerate(body["input"])]
        if reverse:  # the protocol orders by index, not by position
            data.reverse()
        doc = {"object": "list", "data": data, "model": body["model"],
               "usage": {"prompt_tokens": 3, "total_tokens": 3}}
        return 200, {"Content-Type": "application/json"}, json.dumps(doc).encode()
    return reply


def status(code: int, message: str = "", headers: dict[str, str] | None = None) -> Reply:
    def reply(body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        doc = {"error": {"message": message, "type": "error", "code": None}}
        return code, {"Content-Type": "application/json", **(headers or {})}, \
            json.dumps(doc).encode()
    return reply


def raw(payload: bytes) -> Reply:
    return lambda body: (200, {"Content-Type": "application/json"}, payload)


def slow(seconds: float, dim: int = 8) -> Reply:
    """The OpenAI answer after ``seconds`` (a request that stays in flight a while)."""
    def reply(body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        time.sleep(seconds)
        return ok(dim)(body)
    return reply


def gated(gate: threading.Event, dim: int = 8) -> Reply:
    """The OpenAI answer once ``gate`` is set (at most 60 s): a test acts while a
    request is in flight."""
    def reply(body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        gate.wait(60)
        return ok(dim)(body)
    return reply


def silent(seconds: float) -> Reply:
    def reply(body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        time.sleep(seconds)
        return ok()(body)
    return reply


@dataclass
class Double:
    """An embeddings endpoint on 127.0.0.1: answers from ``replies`` in turn (the last
    one repeats) and records every request it got."""

    url: str
    replies: list[Reply] = field(default_factory=list)
    requests: list[tuple[str, dict[str, str], dict[str, Any]]] = field(default_factory=list)
    active: int = 0  # requests being answered now
    peak: int = 0  # the most answered at once
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, *replies: Reply) -> None:
        self.replies[:] = list(replies)


@contextmanager
def serving(*replies: Reply) -> Iterator[Double]:
    """A Double listening on 127.0.0.1 (a free port) until the block ends."""
    state = Double("")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with state.lock:
                state.requests.append((self.path, dict(self.headers), body))
                reply = state.replies.pop(0) if len(state.replies) > 1 else state.replies[0]
                state.active += 1
                state.peak = max(state.peak, state.active)
            try:
                code, headers, payload = reply(body)
            finally:
                with state.lock:
                    state.active -= 1
            self.send_response(code)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            try:
                self.wfile.write(payload)
            except OSError:  # the client gave up (timeout test)
                pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    state.answer(*(replies or (ok(),)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def by_model(model: Any) -> Reply:
    """The vectors of ``model`` (memgit's local embedder) for each input: inputs starting
    with ``query: `` are embedded as queries, the rest as passages (the settings the
    tests give the openai plugin: query_prefix "query: ", passage_prefix "passage: ")."""
    def reply(body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        queries = [t.startswith("query: ") for t in body["input"]]
        texts = [t.split(": ", 1)[1] if ": " in t else t for t in body["input"]]
        kind = "query" if any(queries) else "passage"
        assert all(queries) or not any(queries), "one kind per request"
        vectors = model.embed(texts, kind)
        data = [{"object": "embedding", "index": i, "embedding": v}
                for i, v in enumerate(vectors)]
        doc = {"object": "list", "data": data, "model": body["model"],
               "usage": {"prompt_tokens": 1, "total_tokens": 1}}
        return 200, {"Content-Type": "application/json"}, json.dumps(doc).encode()
    return reply


def inputs(double: Double, kind: str = "") -> list[str]:
    """Every text the double was asked to embed, in order (``kind``: only those with
    this prefix, e.g. "passage: ")."""
    return [t for _path, _headers, body in double.requests for t in body["input"]
            if t.startswith(kind)]
