"""Shared by the tests/test_dream*.py files: a drive to dream on, and a chat server.

``ChatServer`` is a test double for an LLM endpoint (the one remote service that
cannot run here): a real HTTP server on 127.0.0.1 speaking OpenAI's
chat-completions wire protocol. Its bodies follow the shapes of the OpenAI API
reference ("The chat completion object": id, object, created, model, choices
[index, message {role, content, refusal, annotations}, logprobs, finish_reason],
usage; errors as {"error": {"message", "type", "param", "code"}}), and Ollama's
and llama.cpp's servers answer the same shapes on /v1/chat/completions.
"""

from __future__ import annotations

import datetime as _dt
import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.conftest import git

DATA = Path(__file__).parent / "data"


def days_ago(n: int) -> str:
    return (_dt.date.today() - _dt.timedelta(days=n)).isoformat()


def extra_entries() -> str:
    """Duplicates and stale lines added to the recall fixture drive."""
    return (
        "# Dream\n\n"
        f"- Joe writes his weekly update in Google Docs and sends it on Fridays "
        f"[source: claude-code:session/90; added: {days_ago(3)}; id: dup-weekly]\n"
        f"- The office plant is watered on Mondays "
        f"[source: claude-code:session/91; added: {days_ago(400)}; id: old-plant]\n"
        f"- The team offsite is planned for the spring "
        f"[source: claude-code:session/92; added: {days_ago(5)}; id: young-offsite]\n"
    )


def make_dream_drive(new_drive: Any) -> Path:
    """A checkout holding tests/data/recall/drive (107 entries) plus ``dream.md``."""
    source = DATA / "recall" / "drive"
    files: dict[str, str | bytes] = {}
    for path in sorted(source.rglob("*.md")):
        files[str(path.relative_to(source))] = path.read_text()
    files["dream.md"] = extra_entries()
    files.pop("MEMORY.md", None)
    drive = new_drive(files)
    return drive


def tree_of(path: Path, rev: str = "HEAD") -> str:
    return git("rev-parse", f"{rev}^{{tree}}", cwd=path).stdout.decode().strip()


def refs_of(path: Path) -> str:
    return git("for-each-ref", "--format=%(refname) %(objectname)", cwd=path).stdout.decode()


def completion(content: str, finish_reason: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", "object": "chat.completion",
        "created": 1741569952, "model": "gpt-4.1-2025-04-14",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content,
                                             "refusal": None, "annotations": []},
                     "logprobs": None, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29},
        "service_tier": "default"}


def error_body(message: str, type_: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


@dataclass
class Reply:
    status: int = 200
    body: bytes | dict[str, Any] = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float


class ChatServer:
    """Answers POSTs with scripted replies, in order (500 when the script is empty)."""

    def __init__(self) -> None:
        self.script: deque[Reply] = deque()
        self.requests: list[Seen] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"raw": raw.decode(errors="replace")}
                server.requests.append(Seen(self.path, dict(self.headers.items()), body,
                                            time.monotonic()))
                reply = server.script.popleft() if server.script else Reply(
                    500, error_body("no scripted reply", "server_error", None))
                if reply.delay:
                    time.sleep(reply.delay)
                data = reply.body if isinstance(reply.body, bytes) \
                    else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def answer(self, proposal: dict[str, Any] | str, **kwargs: Any) -> None:
        content = proposal if isinstance(proposal, str) else json.dumps(proposal)
        self.script.append(Reply(200, completion(content), **kwargs))

    def start(self) -> ChatServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def chat_server() -> Iterator[ChatServer]:
    server = ChatServer().start()
    try:
        yield server
    finally:
        server.stop()
