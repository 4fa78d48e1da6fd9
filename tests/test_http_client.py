"""The helpers the OpenAI-compatible clients share (memgit.http_client).

The clients themselves run against real HTTP servers on 127.0.0.1 in test_embedders.py
and test_dream_chat.py; these are the rules both rely on, checked on their own.
"""

from __future__ import annotations

import email.utils
import json
import time
import urllib.error

import pytest

from memgit.http_client import (
    error_detail,
    failure_reason,
    has_userinfo,
    is_loopback,
    public_url,
    redact_key,
    retry_after,
)

KEY = "sk-proj-" + "Zq9Xw8Vu7Ts6" * 3  # synthetic, the shape of an OpenAI project key


@pytest.mark.parametrize(("url", "shown"), [
    ("https://user:pw@api.example.com/v1?key=abc#frag", "https://api.example.com/v1"),
    ("http://127.0.0.1:8080/v1/embeddings", "http://127.0.0.1:8080/v1/embeddings"),
    ("http://[::1]:11434/v1", "http://[::1]:11434/v1"),
    ("http://host:notaport/v1", "http://host/v1"),
])
def test_public_url_keeps_only_scheme_host_port_and_path(url: str, shown: str) -> None:
    assert public_url(url) == shown


def test_userinfo_and_loopback() -> None:
    assert has_userinfo("https://user@example.com/") and has_userinfo("https://:pw@h/")
    assert not has_userinfo("https://example.com/v1")
    assert is_loopback("localhost") and is_loopback("127.0.0.2") and is_loopback("::1")
    assert not is_loopback("10.0.0.1") and not is_loopback("example.com")


def test_retry_after_reads_seconds_fractions_and_dates_else_backs_off() -> None:
    assert retry_after("7", 0) == 7.0 and retry_after(" 0.25 ", 3) == 0.25
    assert retry_after("-3", 0) == 0.0
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= retry_after(later, 0) <= 31
    assert retry_after(None, 0) == 1.0 and retry_after("soon", 2) == 4.0
    assert retry_after(None, 2, base=0.5) == 2.0


def test_the_key_is_redacted_whole_and_by_its_echoed_ends() -> None:
    text = f"bad key {KEY}; you sent {KEY[:8]}****{KEY[-4:]}"
    clean = redact_key(text, KEY)
    assert KEY not in clean and KEY[:8] not in clean and KEY[-4:] not in clean
    assert clean.startswith("bad key [redacted]; you sent ") and "[redacted]" in clean[29:]
    assert redact_key("nothing", "") == "nothing"


@pytest.mark.parametrize(("raw", "expected"), [
    (json.dumps({"error": {"message": "model  not\nfound", "type": "invalid_request_error",
                           "code": "model_not_found"}}).encode(),
     "model not found [invalid_request_error model_not_found]"),
    (json.dumps({"error": {"message": "overloaded", "type": None}}).encode(), "overloaded"),
    (json.dumps({"error": "plain string"}).encode(), "plain string"),
    (b"<html>502 Bad Gateway</html>", "<html>502 Bad Gateway</html>"),
    (json.dumps({"detail": "odd"}).encode(), '{"detail": "odd"}'),
])
def test_error_detail_reads_the_openai_error_form(raw: bytes, expected: str) -> None:
    assert error_detail(raw) == expected


def test_error_detail_is_short_and_never_shows_the_key() -> None:
    raw = json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}. "
                                           + "x" * 500}}).encode()
    detail = error_detail(raw, KEY, limit=100)
    assert len(detail) == 100 and detail.endswith("...") and KEY not in detail
    assert detail.startswith("Incorrect API key provided: [redacted]")


def test_failure_reason_names_a_timeout_and_a_refused_connection() -> None:
    assert failure_reason(urllib.error.URLError(TimeoutError("timed out")), 2.5) == \
        "no answer within 2.5 s"
    assert failure_reason(TimeoutError(), 30) == "no answer within 30 s"
    refused = urllib.error.URLError(ConnectionRefusedError(111, "Connection refused"))
    assert "Connection refused" in failure_reason(refused, 1)
    assert failure_reason(OSError(f"proxy said {KEY}"), 1, KEY) == "proxy said [redacted]"
