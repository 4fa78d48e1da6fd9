"""The ``openai`` model plugin: any endpoint that speaks OpenAI's chat completions.

Standard library only; ``timeout`` bounds the whole call, retries included. Every failure
is a DreamFailedError saying what was wrong, never the API key: it comes from the
environment variable ``api_key_env`` names, is stripped from any server message, and is
never sent over plain http to a host other than this machine.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from memgit.errors import DreamFailedError
from memgit.http_client import (
    error_detail,
    failure_reason,
    has_userinfo,
    is_loopback,
    one_line,
    public_url,
    retry_after,
)
from memgit.policy.judge import quote

MAX_ANSWER_BYTES = 8 * 1024 * 1024
MAX_ATTEMPTS = 5
DEFAULT_TIMEOUT = 60.0

SYSTEM_PROMPT = """You consolidate an AI agent's memory: a list of entries (facts, one line each, \
with an id, a path, retrieval counts and an age in days) and the last day's conversation turns \
(each with an id). Propose changes as ONE JSON object, nothing else:
{"merges": [{"ids": ["ID", "ID", ...], "text": "merged fact"}],
 "contradictions": [{"ids": ["ID", "ID", ...], "keep": "ID", "text": "optional corrected fact"}],
 "lessons": [{"text": "new fact learned from the turns", "turns": ["TURN_ID", ...], \
"topic": "optional/topic/file"}],
 "prunes": [{"id": "ID", "reason": "why it is no longer useful"}]}
Rules (code checks every suggestion and rejects those that break one):
- use only entry ids and turn ids given to you; touch each entry at most once;
- a merge keeps the first id (with the merged text) and removes the others;
- a contradiction keeps "keep" (optionally with a corrected text) and removes the others;
- a lesson cites at least one turn it was learned from; write facts, never transcripts;
- prune only entries with 0 retrievals that are at least 30 days old;
- each text is one line of plain text, no Markdown markup, no credentials;
- when nothing is worth changing, answer {"merges": [], "contradictions": [], "lessons": [], \
"prunes": []}."""


def _fail(message: str, hint: str = "") -> DreamFailedError:
    return DreamFailedError(message, hint or "check dream.base_url, dream.model_name and the "
                                              "model server; the drive was not changed")


def sanitize(text: str, key: str = "") -> str:
    """A server's message fit for an error: one line, no key, possible credentials
    redacted (policy.quote), at most 240 characters."""
    return quote(one_line(text, key))[:240]


def strip_fences(content: str) -> str:
    """Some servers wrap JSON in a Markdown code fence despite the response format."""
    m = re.fullmatch(r"\s*```[A-Za-z]*\s*\n(.*?)\n?```\s*", content, re.S)
    return m.group(1) if m else content


def parse_answer(raw: bytes, key: str = "") -> dict[str, Any]:
    """The proposal object in a chat-completions answer body."""
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _fail(f"the model endpoint's answer is not JSON ({exc.__class__.__name__}: "
                    f"{sanitize(str(exc), key)})") from exc
    choices = doc.get("choices") if isinstance(doc, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise _fail("the model endpoint's answer has no choices[0] "
                    "(is base_url a chat-completions API, e.g. .../v1?)")
    choice = choices[0]
    message = choice.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str) or not content.strip():
        refusal = message.get("refusal") if isinstance(message, dict) else None
        if refusal:
            raise _fail(f"the model refused: {sanitize(str(refusal), key)}")
        raise _fail("the model's answer has no message content")
    try:
        proposal = json.loads(strip_fences(content))
    except ValueError as exc:
        cut = " (cut off: finish_reason is length)" if choice.get("finish_reason") == "length" \
            else ""
        raise _fail(f"the model's message is not a JSON object{cut}: "
                    f"{sanitize(str(exc), key)}") from exc
    if not isinstance(proposal, dict):
        raise _fail(f"the model's message is JSON but a {type(proposal).__name__}, "
                    "not an object")
    return proposal


class ChatModel:
    """A consolidation model behind an OpenAI-compatible chat-completions endpoint."""

    name = "openai"

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.base_url = str(settings.get("base_url") or "").rstrip("/")
        self.model_name = str(settings.get("model_name") or "")
        self.api_key_env = str(settings.get("api_key_env") or "")
        self.timeout = float(settings.get("timeout") or DEFAULT_TIMEOUT)
        extra = settings.get("extra_body") or {}
        self.extra_body = dict(extra) if isinstance(extra, Mapping) else {}

    def _key(self) -> str:
        if not self.api_key_env:
            return ""
        key = os.environ.get(self.api_key_env, "").strip()
        if not key:
            raise _fail(f"the environment variable {self.api_key_env} (dream.api_key_env) "
                        "is not set or empty", f"export {self.api_key_env}=... before "
                        "memgit dream, or remove api_key_env for a server without keys")
        return key

    def request_body(self, snapshot: Mapping[str, Any]) -> dict[str, Any]:
        return {"model": self.model_name,
                "messages": [{"role": "system", "content": SYSTEM_PROMPT},
                             {"role": "user", "content": json.dumps(snapshot,
                                                                    ensure_ascii=False)}],
                "response_format": {"type": "json_object"},
                "temperature": 0, **self.extra_body}

    def propose(self, snapshot: Mapping[str, Any]) -> Mapping[str, Any]:
        if not self.base_url:
            raise _fail("no model endpoint: dream.base_url is not set",
                        "set dream.base_url in memgit.yaml or pass --base-url")
        if not self.model_name:
            raise _fail("no model name: dream.model_name is not set",
                        "set dream.model_name in memgit.yaml or pass --model-name")
        parts = urllib.parse.urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise _fail(f"dream.base_url must be an http:// or https:// URL, not "
                        f"{sanitize(public_url(self.base_url))!r}")
        if has_userinfo(self.base_url):
            raise _fail(f"dream.base_url {public_url(self.base_url)} carries a user name or "
                        "password", "put the key in the environment variable api_key_env "
                        "names, not in the URL")
        key = self._key()
        if key and parts.scheme == "http" and not is_loopback(parts.hostname):
            raise _fail(f"refusing to send the API key over plain http to {parts.hostname}",
                        "use an https:// base_url (plain http only to this machine)")
        raw = self._post(self.request_body(snapshot), key)
        return parse_answer(raw, key)

    def _post(self, body: Mapping[str, Any], key: str) -> bytes:
        parts = urllib.parse.urlsplit(self.base_url)
        url = urllib.parse.urlunsplit(parts._replace(path=parts.path.rstrip("/")
                                                     + "/chat/completions", fragment=""))
        shown = public_url(url)
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "User-Agent": "memgit-dream"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        deadline = time.monotonic() + self.timeout
        limited = 0
        for attempt in range(MAX_ATTEMPTS):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            request = urllib.request.Request(url, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=remaining) as response:
                    raw: bytes = response.read(MAX_ANSWER_BYTES + 1)
                if len(raw) > MAX_ANSWER_BYTES:
                    raise _fail(f"the answer of {shown} is larger than "
                                f"{MAX_ANSWER_BYTES // (1024 * 1024)} MiB")
                return raw
            except urllib.error.HTTPError as err:
                detail = quote(error_detail(err.read(65536), key))[:240]
                if err.code != 429:
                    raise _fail(f"{shown} answered HTTP {err.code}"
                                f"{': ' + detail if detail else ''}") from None
                wait = retry_after(err.headers.get("Retry-After"), attempt)
                if time.monotonic() + wait >= deadline:
                    raise _fail(f"{shown} answered HTTP 429 (rate limited) and asks to retry "
                                f"after {wait:g} s, beyond the {self.timeout:g} s timeout",
                                "raise dream.timeout or try later (memgit dream --due "
                                "retries a failed night up to 3 times)") from None
                limited += 1
                time.sleep(wait)
            except TimeoutError:
                break
            except urllib.error.URLError as err:
                if isinstance(err.reason, TimeoutError):
                    break
                raise _fail(f"cannot reach {shown}: "
                            f"{quote(failure_reason(err, self.timeout, key))}") from None
            except (http.client.HTTPException, OSError) as err:
                raise _fail(f"the connection to {shown} failed: "
                            f"{sanitize(f'{type(err).__name__}: {err}', key)}") from None
        if limited == MAX_ATTEMPTS:
            raise _fail(f"{shown} answered HTTP 429 (rate limited) {limited} times",
                        "try later (memgit dream --due retries a failed night up to 3 times)")
        raise _fail(f"{shown} did not answer within the {self.timeout:g} s timeout",
                    "raise dream.timeout, or use a smaller or faster model")


def make(settings: Mapping[str, Any]) -> ChatModel:
    """The plugin factory (plugins.BUILTIN["model"]["openai"])."""
    return ChatModel(settings)
