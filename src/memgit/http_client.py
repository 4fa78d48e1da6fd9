"""What memgit's clients of OpenAI-compatible endpoints share (standard library only).

The ``openai`` embedder and the ``openai`` dream model speak the same HTTP dialect (a JSON
POST with a bearer key from an environment variable, 429 with ``Retry-After``, error bodies
``{"error": {"message", ...}}``). Both name the endpoint and quote the server's message in
their errors, and neither may show a credential doing so: :func:`public_url` drops user
name, password, query and fragment, and :func:`error_detail` removes the API key (whole,
or the ends a server echoes of a partly masked one) from the server's message.
"""

from __future__ import annotations

import email.utils
import ipaddress
import json
import time
import urllib.error
import urllib.parse

REDACTED = "[redacted]"


def public_url(url: str) -> str:
    """``url`` as messages show it: scheme, host, port and path only."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # a port that is not a number: not shown
        port = ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def has_userinfo(url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    return parts.username is not None or parts.password is not None


def is_loopback(host: str) -> bool:
    """True for this machine's own addresses (plain http to them keeps a key local)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def retry_after(value: str | None, attempt: int, *, base: float = 1.0) -> float:
    """Seconds to wait before retry ``attempt`` (0 first): the ``Retry-After`` header
    (delta-seconds, a fraction allowed, or an HTTP date), else ``base * 2 ** attempt``."""
    if value:
        value = value.strip()
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            when = None
        if when is not None and when.tzinfo is not None:
            return max(0.0, when.timestamp() - time.time())
    return base * (2 ** attempt)


def redact_key(text: str, key: str) -> str:
    """``text`` without the API key; some servers echo a wrong key partly masked
    ("sk-abc...wxyz"), so a long key's first 8 and last 4 characters go too."""
    if key:
        text = text.replace(key, REDACTED)
        if len(key) > 12:
            text = text.replace(key[:8], REDACTED).replace(key[-4:], REDACTED)
    return text


def one_line(text: str, key: str = "", limit: int = 240) -> str:
    """A server's text fit for a message: one line, no key, at most ``limit`` characters."""
    text = redact_key(" ".join(str(text).split()), key)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def error_detail(raw: bytes, key: str = "", limit: int = 240) -> str:
    """The message of an error body: ``error.message`` of the OpenAI form followed by its
    type and code in brackets, else the body's text; one line, without the key."""
    text = raw.decode("utf-8", "replace")
    try:
        doc = json.loads(text)
    except ValueError:
        return one_line(text, key, limit)
    error = doc.get("error") if isinstance(doc, dict) else None
    if isinstance(error, dict):
        kinds = [str(error[k]) for k in ("type", "code") if error.get(k)]
        message = str(error.get("message") or "")
        return one_line(message + (f" [{' '.join(kinds)}]" if kinds else ""), key, limit)
    if isinstance(error, str):
        return one_line(error, key, limit)
    return one_line(json.dumps(doc), key, limit)


def failure_reason(exc: BaseException, timeout: float, key: str = "") -> str:
    """Why a request got no answer, one line (``timeout``: the seconds it was given)."""
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(reason, TimeoutError):  # socket.timeout is an alias of it
        return f"no answer within {timeout:g} s"
    return one_line(str(reason) or type(reason).__name__, key)
