"""The rule record, its named value checks, and validation of a drive's extra rules.

A rule is data: where to look (``regex``, found through ``keywords`` or a
``shape``/``trigger`` dispatch), what part is the secret (``group``) and which
value test the part must pass (``check``, ``entropy``, ``min_distinct``...).
Routing is a field of the rule (``locate``, ``trigger``), never its display name.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import values as V

Verdict = tuple[int, int, str] | bool | None
Check = Callable[[re.Match[str], str], Verdict]


@dataclass(frozen=True)
class Rule:
    """A detector: its regex and prefilter keywords, its check, the kind it reports."""

    id: str
    kind: str  # the fixed name a finding reports; never built from the text
    regex: str
    keywords: tuple[str, ...] = ()  # lowercase literals any match contains (the prefilter)
    keyword_tails: tuple[tuple[str, str], ...] = ()  # keyword -> regex that must follow it
    word_keywords: bool = False  # keywords match whole words of the line (provider names)
    shape: str = ""  # dispatch by a case-sensitive regex on the line ("default": the shared one)
    trigger: str = ""  # or by this regex on the lowercased line
    locate: str = ""  # "" search the line; "name": match where a keyword name starts; "at";
    # "runs": only where a run of the run shape's characters starts (the engine's _run_matches);
    # "unescaped": a mark (its regex never matches): a line its keywords select and no rule
    # finds anything on is read again without its \" escapes (the engine's scan_unescaped)
    group: int | str = 0
    # the group that holds any span the check reports, less one pair of quotes around it
    # (``keyword``: the value, never the name): a match whose value so bounded lies inside
    # a stronger finding is dropped before its check, as a match inside one by ``group``
    value_group: str = ""
    ignore_case: bool = False
    check: str = ""  # a name in CHECKS
    min_distinct: int = 0
    min_length: int = 0
    entropy: float = 0.0
    charset: str = ""  # a regex character class the secret must consist of, e.g. [A-Za-z0-9]
    priority: int = 0  # 0 provider format, 1 structural, 2 generic assignment
    prefix: str = ""  # the documented prefix, for people reading the rule
    doc: str = ""
    extra: bool = field(default=False, compare=False)  # from a drive's memgit.yaml

    @property
    def flags(self) -> int:
        return re.IGNORECASE if self.ignore_case else 0


CHECKS: dict[str, Check] = {}


def check(name: str) -> Callable[[Check], Check]:
    def register(fn: Check) -> Check:
        CHECKS[name] = fn
        return fn

    return register


def _secret(m: re.Match[str], rule_group: int | str = 0) -> str:
    return m.group(rule_group) or ""


@check("varied")
def _varied(m: re.Match[str], text: str) -> bool:
    return V.varied(m.group(0))


@check("mixed")
def _mixed(m: re.Match[str], text: str) -> bool:
    s = m.group(0)
    return any(c.isdigit() for c in s) and any(c.isalpha() for c in s) and V.varied(s, 8)


@check("mixed_case")
def _mixed_case(m: re.Match[str], text: str) -> bool:
    s = m.group(0)
    return any(c.isupper() for c in s) and any(c.islower() for c in s) and V.varied(s, 10)


@check("token_like")
def _token_like(m: re.Match[str], text: str) -> bool:
    s = m.group(m.lastindex or 0) if m.re.groups else m.group(0)
    return V.token_like(s)


@check("literal")
def _literal(m: re.Match[str], text: str) -> bool:
    return V.literal_ok(m.group("s"))


_AWS_ID = r"(?<![A-Za-z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])"


@check("aws_id")
def _aws_id(m: re.Match[str], text: str) -> bool:
    s = m.group(0)
    return not s.endswith("EXAMPLE") and V.varied(s[4:], 5)


def _base64ish_secret(s: str) -> bool:
    return (
        any(c.isupper() for c in s)
        and any(c.islower() for c in s)
        and any(c.isdigit() for c in s)
        and V.entropy(s) >= 4.0
        and "EXAMPLE" not in s
    )


@check("aws_secret")
def _aws_secret(m: re.Match[str], text: str) -> bool:
    return _base64ish_secret(m.group("s"))


@check("aws_secret_near_id")
def _aws_secret_near_id(m: re.Match[str], text: str) -> bool:
    return _base64ish_secret(m.group(0)) and bool(V.rx(_AWS_ID).search(text))


@check("telegram")
def _telegram(m: re.Match[str], text: str) -> bool:
    tail = m.group(0).split(":", 1)[1]
    return any(c.isupper() for c in tail) and any(c.islower() for c in tail) and V.varied(tail, 10)


@check("slack")
def _slack(m: re.Match[str], text: str) -> bool:
    last = m.group(0).rsplit("-", 1)[-1]  # the random part; numbers alone are ids
    return len(m.group(0)) >= 24 and V.varied(m.group(0), 8) and not last.isdigit()


@check("provider_value")
def _provider_value(m: re.Match[str], text: str) -> bool:
    """A value next to a provider's name; one in a URL's path names a resource."""
    s = m.group("s")
    return text[m.start("s") - 1: m.start("s")] != "/" and V.token_like(s)


@check("sas")
def _sas(m: re.Match[str], text: str) -> bool:
    low = text.lower()
    return ("sv=" in low or "se=" in low or "sp=" in low) and V.varied(m.group("s"), 10)


def b64decode(s: str) -> bytes | None:
    s = s.rstrip("=")
    try:
        return base64.b64decode(s + "=" * (-len(s) % 4), altchars=b"-_", validate=False)
    except (binascii.Error, ValueError):
        return None


@check("jwt")
def _jwt(m: re.Match[str], text: str) -> bool:
    raw = b64decode(m.group(0).split(".", 1)[0])
    if raw is None:
        return False
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return decoded.lstrip().startswith("{") and any(
        f'"{k}"' in decoded for k in ("alg", "typ", "kid", "enc", "cty")
    )


_JWT_HEADER_FIELDS = frozenset("alg typ kid cty enc zip jku jwk x5u x5c x5t crit".split())


def jwt_header_only(s: str) -> bool:
    """True when ``s`` is base64url of a JSON object holding only JWT header fields (RFC 7515
    4.1): a header says how a token is signed and holds nothing secret."""
    raw = b64decode(s)
    try:
        obj = json.loads(raw) if raw else None
    except ValueError:
        return False
    return isinstance(obj, dict) and bool(obj) and set(obj) <= _JWT_HEADER_FIELDS


# --- records from data (built-in formats and a drive's extra rules) -----------------

_FIELDS: dict[str, type | tuple[type, ...]] = {
    "id": str, "kind": str, "regex": str, "keywords": list, "keyword_tails": dict,
    "shape": (bool, str), "group": (int, str), "ignore_case": bool, "check": str,
    "min_distinct": int, "min_length": int, "entropy": (int, float), "charset": str,
    "prefix": str, "doc": str,
}
#: Fields a drive's extra rule may set (the built-in formats use the same record).
EXTRA_FIELDS = ("id", "kind", "regex", "keywords", "group", "ignore_case", "check",
                "min_distinct", "min_length", "entropy", "charset", "prefix", "doc")
#: Value checks an extra rule may name.
EXTRA_CHECKS = ("varied", "mixed", "mixed_case", "token_like")


class RuleError(ValueError):
    """A rule record is invalid; ``rule`` and ``field`` say where."""

    def __init__(self, rule: str, field_name: str, message: str) -> None:
        super().__init__(f"rule {rule!r}, field {field_name!r}: {message}")
        self.rule = rule
        self.field = field_name


def rule_from_record(record: Mapping[str, Any], *, extra: bool = False,
                     compile_regex: bool = True) -> Rule:
    """Validate one record (a dict from data or YAML) and build its Rule.

    ``compile_regex=False`` skips compiling the regex to check it: the built-in
    records are compiled by the tests, and a hook should compile only what a line
    needs (the engine compiles each rule's regex on first use)."""
    rid = record.get("id")
    name = rid if isinstance(rid, str) and rid else "?"
    allowed = EXTRA_FIELDS if extra else tuple(_FIELDS)
    for key in record:
        if key not in allowed:
            raise RuleError(name, str(key), f"unknown field; allowed: {', '.join(allowed)}")
    for key in ("id", "kind", "regex"):
        if not isinstance(record.get(key), str) or not record[key].strip():
            raise RuleError(name, key, "required, a non-empty string")
    for key, value in record.items():
        want = _FIELDS[key]
        if not isinstance(value, want) or (isinstance(value, bool) and want in (int, (int, float))):
            raise RuleError(name, key, f"must be {_type_name(want)}")
    kind = record["kind"]
    if len(kind) > 60 or not kind.isprintable():
        raise RuleError(name, "kind", "a short printable name (at most 60 characters)")
    group = record.get("group", 0)
    if compile_regex:
        _check_regex(name, record["regex"], bool(record.get("ignore_case")), group)
    keywords = record.get("keywords", [])
    if not all(isinstance(k, str) and k.strip() for k in keywords):
        raise RuleError(name, "keywords", "must be a list of non-empty strings")
    chk = record.get("check", "")
    if chk and chk not in (EXTRA_CHECKS if extra else CHECKS):
        choices = EXTRA_CHECKS if extra else tuple(sorted(CHECKS))
        raise RuleError(name, "check", f"unknown check; one of {', '.join(choices)}")
    charset = record.get("charset", "")
    if charset and compile_regex:
        try:
            re.compile(charset)
        except re.error as exc:
            raise RuleError(name, "charset", f"does not compile: {exc}") from exc
    for key in ("min_distinct", "min_length"):
        if record.get(key, 0) < 0:
            raise RuleError(name, key, "must be zero or more")
    if not 0 <= record.get("entropy", 0) <= 8:
        raise RuleError(name, "entropy", "bits per character, between 0 and 8")
    tails = record.get("keyword_tails", {})
    return Rule(
        id=record["id"],
        kind=kind,
        regex=record["regex"],
        keywords=tuple(k.lower() for k in keywords),
        keyword_tails=tuple(sorted(tails.items())),
        shape=_shape(record.get("shape", "")),
        group=group,
        ignore_case=bool(record.get("ignore_case", False)),
        check=chk,
        min_distinct=record.get("min_distinct", 0),
        min_length=record.get("min_length", 0),
        entropy=float(record.get("entropy", 0.0)),
        charset=charset,
        prefix=record.get("prefix", ""),
        doc=record.get("doc", ""),
        extra=extra,
    )


def _check_regex(name: str, regex: str, ignore_case: bool, group: int | str) -> None:
    try:
        compiled = re.compile(regex, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise RuleError(name, "regex", f"does not compile: {exc}") from exc
    if isinstance(group, int) and not 0 <= group <= compiled.groups:
        raise RuleError(name, "group", f"the regex has {compiled.groups} group(s)")
    if isinstance(group, str) and group not in compiled.groupindex:
        raise RuleError(name, "group", f"the regex has no group named {group!r}")


def _shape(value: bool | str) -> str:
    if value is True:
        return "default"
    return value or ""


def _type_name(t: type | tuple[type, ...]) -> str:
    names = {str: "a string", list: "a list", dict: "a mapping", bool: "true or false",
             int: "an integer", float: "a number"}
    if isinstance(t, tuple):
        return " or ".join(names[x] for x in t)
    return names[t]


def extra_rules_from_config(items: Any) -> tuple[Rule, ...]:
    """A drive's ``secrets: {extra_rules: [...]}``; RuleError names the bad rule and field."""
    if not isinstance(items, list):
        raise RuleError("extra_rules", "extra_rules", "must be a list of rule mappings")
    out: list[Rule] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise RuleError(f"#{index + 1}", "extra_rules", "each rule is a mapping")
        rule = rule_from_record(item, extra=True)
        if rule.id in seen:
            raise RuleError(rule.id, "id", "two extra rules share this id")
        seen.add(rule.id)
        out.append(rule)
    return tuple(out)


def value_passes(rule: Rule, value: str) -> bool:
    """The record's declarative value tests (after the rule's own check)."""
    if rule.min_length and len(value) < rule.min_length:
        return False
    if rule.min_distinct and not V.varied(value, rule.min_distinct):
        return False
    if rule.entropy and V.entropy(value) < rule.entropy:
        return False
    return not (rule.charset and not V.rx("(?:" + rule.charset + ")+").fullmatch(value))
