"""Refuse possible credentials in memory lines (the secret gate).

One question per line, fast enough for a git hook: does this line hold a
credential? Findings carry the kind and the span only; callers never print
the matched text (``redact`` replaces it by its kind when a value must be quoted).

Layout: ``formats`` (provider formats as data records), ``structural``
(detectors that need code; keyword assignments in ``assignments``, generated
tokens in ``tokens``), ``values`` (the one placeholder filter and the
value tests), ``rules`` (the record, its checks, validation of a drive's extra
rules), ``engine`` (prefilter and dispatch), ``deep`` (detect-secrets and
betterleaks as optional second engines behind ``secrets: deep``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .rules import EXTRA_CHECKS, EXTRA_FIELDS, Rule, RuleError, extra_rules_from_config

if TYPE_CHECKING:
    KINDS: frozenset[str]

__all__ = [
    "EXTRA_CHECKS", "EXTRA_FIELDS", "KINDS", "Rule", "RuleError", "SecretFinding",
    "builtin_rules", "extra_rules_from_config", "redact", "scan_lines", "scan_text",
    "scan_text_deep",
]


@dataclass(frozen=True)
class SecretFinding:
    """Where a possible credential is in a scanned string, and its kind (never its text)."""

    kind: str  # fixed name of the secret type; never contains the secret
    start: int  # offset in the scanned string where the secret starts
    end: int  # offset just past the secret


def _finding(kind: str, start: int, end: int, _new: object = object.__new__) -> SecretFinding:
    """A ``SecretFinding`` without the frozen dataclass's ``__init__`` (three
    ``object.__setattr__`` calls through a generated frame, about half a microsecond): the
    same fields in the instance's ``__dict__``, so equality, hashing, ``repr``, pickling and
    ``dataclasses.replace`` see the same object; it stays frozen (assignment raises)."""
    finding: SecretFinding = _new(SecretFinding)  # type: ignore[operator]
    fields = finding.__dict__
    fields["kind"] = kind
    fields["start"] = start
    fields["end"] = end
    return finding


_builtin: tuple[Rule, ...] | None = None
_compiled: dict[tuple[Rule, ...], object] = {}


def builtin_rules() -> tuple[Rule, ...]:
    """Every built-in rule: provider format records, then the structural detectors."""
    global _builtin
    if _builtin is None:
        from .formats import FORMATS
        from .provider_context import load_context_formats
        from .rules import rule_from_record
        from .structural import STRUCTURAL

        records = [rule_from_record(r, compile_regex=False) for r in FORMATS]
        _builtin = (*records, *load_context_formats(), *STRUCTURAL)
    return _builtin


def _scan(text: str, comp: object) -> list[tuple[int, int, str]]:
    from .engine import scan

    globals()["_scan"] = scan  # bind the engine on first use (importing it compiles nothing)
    return scan(text, comp)  # type: ignore[arg-type]


def _comp(extra: Sequence[Rule]):  # type: ignore[no-untyped-def]
    from .engine import compile_rules

    key = tuple(extra)
    comp = _compiled.get(key)
    if comp is None:
        comp = _compiled[key] = compile_rules(builtin_rules() + key)
    return comp


# ECMA-48 control sequences (CSI: ESC [ parameters final byte) and the two-byte escapes, as a
# terminal's output pasted into a note carries them around a token it printed in colour
_ANSI_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|[@-Z\\-_])")


def _blank(m: re.Match[str]) -> str:
    return " " * (m.end() - m.start())


def scan_text(text: str, extra_rules: Sequence[Rule] = ()) -> list[SecretFinding]:
    """Scan one line (an entry's text, a metadata value, a path). Empty list if clean."""
    comp = (_compiled.get(tuple(extra_rules)) if extra_rules else _compiled.get(())) \
        or _comp(extra_rules)
    if "\x1b" in text:  # a terminal's colours (ESC[93m): blanks of the same length, offsets kept
        text = _ANSI_ESCAPE.sub(_blank, text)
    found = _scan(text, comp)
    return [_finding(k, s, e) for s, e, k in found] if found else []


def scan_lines(
    lines: Iterable[str], extra_rules: Sequence[Rule] = ()
) -> list[tuple[int, SecretFinding]]:
    """(0-based index, finding) for each line with a finding."""
    out: list[tuple[int, SecretFinding]] = []
    for index, line in enumerate(lines):
        for finding in scan_text(line, extra_rules):
            out.append((index, finding))
    return out


def scan_text_deep(text: str, extra_rules: Sequence[Rule] = ()) -> list[SecretFinding]:
    """``scan_text`` plus the optional engines (detect-secrets, betterleaks if installed)."""
    from .deep import deep_findings

    found = scan_text(text, extra_rules)
    return deep_findings(text, found, SecretFinding)


def redact(value: str, extra_rules: Sequence[Rule] = (), *, as_words: bool = False) -> str:
    """``value`` with each detected secret replaced by ``<redacted: KIND>``.

    Returns ``value`` itself when nothing is found, so messages can quote a path,
    an id, a source or a link target through it at no cost on clean values.
    ``as_words``: scanned with each ``/`` read as a space, as a path's names are judged
    (policy.judge's MG402); the replacement keeps the ``/`` (one character for one).
    """
    found = scan_text(value.replace("/", " ") if as_words else value, extra_rules)
    if not found:
        return value
    parts: list[str] = []
    pos = 0
    for f in found:
        parts.append(value[pos : f.start])
        parts.append(f"<redacted: {f.kind}>")
        pos = f.end
    parts.append(value[pos:])
    out = "".join(parts)
    # the same value elsewhere, where its context did not reveal it, goes too
    for f in found:
        secret = value[f.start : f.end]
        if len(secret) >= 8 and secret in out:
            out = out.replace(secret, f"<redacted: {f.kind}>")
    return out


def _kinds() -> frozenset[str]:
    from .formats import FORMATS
    from .provider_context import CONTEXT_KIND
    from .structural import KEYWORD_KINDS, STRUCTURAL

    return frozenset(
        [str(r["kind"]) for r in FORMATS] + [r.kind for r in STRUCTURAL if r.check != "keyword"]
        + list(KEYWORD_KINDS) + [CONTEXT_KIND]
    )


_KINDS: list[frozenset[str]] = []


def __getattr__(name: str) -> frozenset[str]:
    """``KINDS``: every kind the built-in rules report (a drive's extra rules add their
    own), computed on first use so that importing the scanner stays cheap for hooks."""
    if name == "KINDS":
        if not _KINDS:
            _KINDS.append(_kinds())
        return _KINDS[0]
    raise AttributeError(name)
