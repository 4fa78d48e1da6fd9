"""Characters that hide text, and the one terminal sanitiser (:func:`printable`).

Standard library only, and no ``re`` at import: the post-receive hook prints through
:func:`printable`, and every import is paid by every push. The policy (MG214), the purge
registry's normalisation and the sanitiser share its one list of invisible characters
(:data:`INVISIBLE_RANGES`).
"""

from __future__ import annotations

# Invisible characters: Unicode category Cf (format: zero-width, bidi controls, soft
# hyphen, tags...) and the other default-ignorable code points (variation selectors,
# Hangul fillers, the combining grapheme joiner), as (first, last) code points.
# tests/format/test_entries.py checks that every Cf character of this Python's Unicode
# database is in one of them.
INVISIBLE_RANGES: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x0600, 0x0605), (0x061C, 0x061C),
    (0x06DD, 0x06DD), (0x070F, 0x070F), (0x0890, 0x0891), (0x08E2, 0x08E2),
    (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F),
    (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFFB), (0x110BD, 0x110BD),
    (0x110CD, 0x110CD), (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)

_LINE_SEPARATORS = (0x2028, 0x2029)


def is_invisible(code: int) -> bool:
    """Whether code point ``code`` is in :data:`INVISIBLE_RANGES`."""
    if code < 0xAD:
        return False
    for first, last in INVISIBLE_RANGES:
        if code < first:
            return False
        if code <= last:
            return True
    return False


def printable(text: str, limit: int = 0) -> str:
    """``text`` fit for a terminal: control characters (C0, DEL, C1: ESC, BEL, OSC...),
    undecodable bytes, line separators and invisible characters (bidi controls could
    reorder what is shown, zero-width ones hide) escaped as ``\\xNN``/``\\uNNNN``; cut to
    ``limit`` characters when one is given."""
    out = []
    for ch in text:
        code = ord(ch)
        if code < 32 or 127 <= code < 0xA0:
            out.append(f"\\x{code:02x}")
        elif 0xDC80 <= code <= 0xDCFF:  # an undecodable byte kept by surrogateescape
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code in _LINE_SEPARATORS or is_invisible(code):
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    cleaned = "".join(out)
    return cleaned if not limit or len(cleaned) <= limit else cleaned[: limit - 3] + "..."


def append_log_line(path: str, message: str) -> None:
    """Append ``message`` as one printable line (at most 500 characters) to the log at
    ``path``, mode 0600, never through a symlink (``O_NOFOLLOW``); a log that cannot be
    written is skipped, since a log line is never worth failing the work it reports."""
    import os
    import time

    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    line = f"{stamp} {printable(message, 500)}\n"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, line.encode("utf-8", "backslashreplace"))
        finally:
            os.close(fd)
    except OSError:
        pass


def display_url(url: str) -> str:
    """``url`` fit to print: a password in it becomes ``***`` and a query string is
    dropped (tokens travel there too); scp-style ``user@host:path`` stays as it is.
    Every message, status and summary that shows a remote's URL goes through it."""
    from urllib.parse import urlsplit, urlunsplit  # not at import: the hooks load this module

    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unprintable URL>"
    if not parts.scheme or not parts.netloc:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:***@{host}" if ":" in userinfo else f"{user}@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, "***" if parts.query else "", ""))


def scrub_url(text: str, url: str) -> str:
    """``text`` (git's message about ``url``) with the URL shown by :func:`display_url`
    and its password and query masked wherever else they appear."""
    from urllib.parse import urlsplit

    out = text.replace(url, display_url(url)) if url else text
    try:
        parts = urlsplit(url)
        secrets = [parts.password or "", parts.query]
    except ValueError:
        secrets = []
    for secret in secrets:
        if len(secret) >= 3:
            out = out.replace(secret, "***")
    return out
