"""The openai model plugin against a real HTTP server on 127.0.0.1 (dream_support.ChatServer)."""

from __future__ import annotations

import email.utils
import json
import socket
import time
from collections.abc import Iterator

import pytest

from memgit import plugins
from memgit.dream.chat import ChatModel, parse_answer
from memgit.errors import DreamFailedError
from memgit.http_client import retry_after
from tests.dream_support import ChatServer, Reply, chat_server, completion, error_body

SNAPSHOT = {"day": "2026-05-01", "entries": [{"id": "m-a", "path": "notes.md", "text": "A",
                                              "added": "2026-04-01", "age_days": 30,
                                              "retrievals": 0}],
            "turns": [{"id": "t-1", "time": "2026-05-01T01:00:00Z", "session": "s",
                       "role": "user", "text": "hello"}], "entries_in_drive": 1}
PROPOSAL = {"merges": [], "contradictions": [], "lessons": [], "prunes": [{"id": "m-a",
                                                                          "reason": "stale"}]}
KEY = "sk-proj-" + "Zt4Jq8W2nB6xK1pL9mV3cR7yH5dF0gS2aE4uI8oT6wQ1zX3v"  # synthetic, key-shaped


@pytest.fixture
def server() -> Iterator[ChatServer]:
    yield from chat_server()


def model(server: ChatServer, **settings: object) -> ChatModel:
    base = {"base_url": server.url, "model_name": "qwen2.5:7b", "timeout": 5}
    base.update(settings)
    plugin = plugins.load("model", "openai", base)
    assert isinstance(plugin, plugins.ConsolidationModel)
    return plugin


def failure(server: ChatServer, **settings: object) -> str:
    with pytest.raises(DreamFailedError) as err:
        model(server, **settings).propose(SNAPSHOT)
    return err.value.message


def test_posts_the_snapshot_to_chat_completions_and_reads_the_proposal(
        server: ChatServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGIT_TEST_KEY", KEY)
    server.answer(PROPOSAL)
    assert model(server, api_key_env="MEMGIT_TEST_KEY").propose(SNAPSHOT) == PROPOSAL
    [seen] = server.requests
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["Authorization"] == f"Bearer {KEY}"
    assert seen.headers["Content-Type"] == "application/json"
    assert seen.body["model"] == "qwen2.5:7b"
    assert seen.body["response_format"] == {"type": "json_object"}
    system, user = seen.body["messages"]
    assert system["role"] == "system" and '"merges"' in system["content"]
    assert user["role"] == "user" and json.loads(user["content"]) == SNAPSHOT


def test_no_authorization_header_without_a_key(server: ChatServer) -> None:
    server.answer(PROPOSAL)
    model(server).propose(SNAPSHOT)
    assert "Authorization" not in server.requests[0].headers


def test_a_fenced_json_answer_is_read(server: ChatServer) -> None:
    server.answer("```json\n" + json.dumps(PROPOSAL) + "\n```")
    assert model(server).propose(SNAPSHOT) == PROPOSAL


@pytest.mark.parametrize(("status", "kind"), [(500, "server_error"), (503, "overloaded"),
                                              (404, "invalid_request_error")])
def test_http_errors_name_the_status_and_the_servers_message(server: ChatServer, status: int,
                                                             kind: str) -> None:
    server.script.append(Reply(status, error_body(f"The model failed ({status})", kind, None)))
    message = failure(server)
    assert f"answered HTTP {status}" in message
    assert f"The model failed ({status})" in message and kind in message
    assert len(server.requests) == 1  # only a 429 is retried


def test_an_error_echoing_the_key_never_shows_it(server: ChatServer,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGIT_TEST_KEY", KEY)
    server.script.append(Reply(401, error_body(f"Incorrect API key provided: {KEY}.",
                                               "invalid_request_error", "invalid_api_key")))
    message = failure(server, api_key_env="MEMGIT_TEST_KEY")
    assert "HTTP 401" in message and "invalid_api_key" in message
    assert KEY not in message and KEY[:20] not in message


def test_a_missing_key_variable_is_named(server: ChatServer,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMGIT_NO_SUCH_KEY", raising=False)
    message = failure(server, api_key_env="MEMGIT_NO_SUCH_KEY")
    assert "MEMGIT_NO_SUCH_KEY" in message and "not set" in message
    assert server.requests == []


def test_the_key_is_never_sent_over_plain_http_to_another_host(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGIT_TEST_KEY", KEY)
    plugin = ChatModel({"base_url": "http://models.example.com/v1", "model_name": "m",
                        "api_key_env": "MEMGIT_TEST_KEY", "timeout": 1})
    with pytest.raises(DreamFailedError) as err:
        plugin.propose(SNAPSHOT)
    assert "plain http" in err.value.message and KEY not in err.value.message


def test_a_timeout_fails_the_call_at_the_configured_time(server: ChatServer) -> None:
    server.answer(PROPOSAL, delay=3.0)
    started = time.monotonic()
    message = failure(server, timeout=0.5)
    assert "did not answer within the 0.5 s timeout" in message
    assert time.monotonic() - started < 2.5  # gave up long before the server answered


def test_a_malformed_json_body_is_an_unusable_answer(server: ChatServer) -> None:
    server.script.append(Reply(200, b'{"id": "chatcmpl-1", "choices": [{"index": 0,'))
    assert "answer is not JSON" in failure(server)


@pytest.mark.parametrize(("content", "expected"), [
    ("Sure! Here are my suggestions: merge the two Joe entries.", "not a JSON object"),
    ('["merges"]', "a list, not an object"),
    ("", "no message content"),
])
def test_content_that_is_not_a_json_object_is_refused(server: ChatServer, content: str,
                                                      expected: str) -> None:
    server.answer(content)
    assert expected in failure(server)


def test_an_answer_without_choices_says_what_is_missing(server: ChatServer) -> None:
    server.script.append(Reply(200, {"object": "list", "data": []}))
    assert "no choices[0]" in failure(server)


def test_a_cut_off_answer_says_so(server: ChatServer) -> None:
    server.script.append(Reply(200, completion('{"merges": [', finish_reason="length")))
    assert "cut off" in failure(server)


def test_429_is_retried_after_retry_after(server: ChatServer) -> None:
    server.script.append(Reply(429, error_body("Rate limit reached for requests",
                                               "requests", "rate_limit_exceeded"),
                               {"Retry-After": "1"}))
    server.answer(PROPOSAL)
    assert model(server, timeout=10).propose(SNAPSHOT) == PROPOSAL
    first, second = server.requests
    assert second.at - first.at >= 0.95  # waited as the server asked


def test_429_whose_retry_after_exceeds_the_timeout_fails_at_once(server: ChatServer) -> None:
    server.script.append(Reply(429, error_body("Rate limit reached", "requests",
                                               "rate_limit_exceeded"), {"Retry-After": "120"}))
    started = time.monotonic()
    message = failure(server, timeout=5)
    assert "HTTP 429" in message and "retry after 120 s" in message
    assert "5 s timeout" in message
    assert len(server.requests) == 1 and time.monotonic() - started < 4


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after("7", 0) == 7.0
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= retry_after(later, 0) <= 31
    assert retry_after(None, 0) == 1.0 and retry_after("soon", 2) == 4.0


def test_an_unreachable_endpoint_is_named() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again when the block ends: nobody listens
    plugin = ChatModel({"base_url": f"http://127.0.0.1:{port}/v1?api-version=abc",
                        "model_name": "m", "timeout": 2})
    with pytest.raises(DreamFailedError) as err:
        plugin.propose(SNAPSHOT)
    assert f"cannot reach http://127.0.0.1:{port}/v1/chat/completions" in err.value.message
    assert "abc" not in err.value.message  # a query may carry credentials: never shown


def test_credentials_in_the_url_are_refused_unshown() -> None:
    plugin = ChatModel({"base_url": "https://user:hunter2@models.example.com/v1",
                        "model_name": "m", "timeout": 2})
    with pytest.raises(DreamFailedError) as err:
        plugin.propose(SNAPSHOT)
    assert "user name or password" in err.value.message
    assert "hunter2" not in err.value.message + err.value.hint


def test_parse_answer_reads_a_refusal() -> None:
    body = completion("")
    body["choices"][0]["message"]["content"] = None
    body["choices"][0]["message"]["refusal"] = "I can't help with that."
    with pytest.raises(DreamFailedError) as err:
        parse_answer(json.dumps(body).encode())
    assert "the model refused: I can't help with that." in err.value.message
