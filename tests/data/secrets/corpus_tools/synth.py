"""Turn a real-looking credential into a synthetic one of the same shape.

Same documented prefix, same length, same alphabet per position (upper stays
upper, lower lower, digit digit, punctuation kept), a valid checksum where the
format has one (GitHub and npm tokens end in a base62 CRC32 of their body).
Deterministic: the replacement is seeded by the value itself.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import random
import re
import string
import zlib

_B62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
_HEX_LOWER = set("0123456789abcdef")
_HEX_UPPER = set("0123456789ABCDEF")
# Literal prefixes kept as they are (longest first).
_PREFIX = re.compile(
    r"^(?:[A-Za-z][A-Za-z0-9]{0,11}[_-](?:[A-Za-z0-9]{1,8}[_-]){0,3}"  # ghp_, sk-ant-api03-, xoxb-
    r"|AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9]|AIza|LTAI|AKCp|EAA[A-Z]|SG\.|eyJ|MII[A-Za-z0-9+/]{9}"
    r"|[A-Za-z]{2,6}\.(?:[A-Za-z]{2,6}\.)?)"
)


def _rng(value: str) -> random.Random:
    return random.Random(hashlib.sha256(("synth:" + value).encode()).digest())


def _same_class(ch: str, rng: random.Random, hexish: str) -> str:
    if hexish == "lower" and ch in _HEX_LOWER:
        return rng.choice("0123456789abcdef")
    if hexish == "upper" and ch in _HEX_UPPER:
        return rng.choice("0123456789ABCDEF")
    if ch.isdigit():
        return rng.choice(string.digits)
    if ch.isupper() and ch.isascii():
        return rng.choice(string.ascii_uppercase)
    if ch.islower() and ch.isascii():
        return rng.choice(string.ascii_lowercase)
    return ch


def _hexish(body: str) -> str:
    letters = {c for c in body if c.isalpha()}
    if body and letters and all(c in _HEX_LOWER for c in body if c.isalnum()):
        return "lower"
    if body and letters and all(c in _HEX_UPPER for c in body if c.isalnum()):
        return "upper"
    return ""


def _crc_b62(body: str) -> str:
    n = zlib.crc32(body.encode()) & 0xFFFFFFFF
    out = ""
    while n:
        n, r = divmod(n, 62)
        out = _B62[r] + out
    return out.rjust(6, "0")


def reshape(value: str, keep: int | None = None) -> str:
    """A synthetic value of the same shape as `value`."""
    rng = _rng(value)
    if keep is None:
        m = _PREFIX.match(value)
        keep = m.end() if m and m.end() < len(value) - 6 else 0
    if value.startswith("eyJ") and value.count(".") >= 2:
        # JWT: keep header and claims (not secret by themselves), redo the signature
        head, claims, sig = value.split(".", 2)
        return head + "." + claims + "." + reshape(sig, 0)
    head, body = value[:keep], value[keep:]
    hexish = _hexish(body)
    new = "".join(_same_class(c, rng, hexish) for c in body)
    # GitHub classic tokens and npm tokens: 30 random base62 + 6 checksum
    if re.fullmatch(r"(?:gh[pousr]|npm)_[A-Za-z0-9]{36}", head + new):
        core = new[:30]
        new = core + _crc_b62(core)
    return head + new


def looks_live(value: str) -> bool:
    """A value that could be a working credential (not a word, not a placeholder)."""
    core = re.sub(r"[^A-Za-z0-9]", "", value)
    if len(core) < 12:
        return False
    if len(set(core)) < 6:
        return False
    classes = sum(
        (any(c.isdigit() for c in core), any(c.isupper() for c in core),
         any(c.islower() for c in core))
    )
    return classes >= 2 or len(core) >= 24


def reshape_basic(b64: str) -> str | None:
    """base64('user:pass') -> base64('user:<synthetic pass>'), or None if not that."""
    try:
        raw = base64.b64decode(b64 + "=" * (-len(b64) % 4), validate=True).decode("ascii")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    user, sep, pw = raw.partition(":")
    if not sep or not pw.isprintable():
        return None
    return base64.b64encode(f"{user}:{reshape(pw, 0)}".encode()).decode()
