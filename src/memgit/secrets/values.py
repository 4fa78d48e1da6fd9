"""Value tests shared by every rule: the one placeholder filter, entropy, randomness.

A rule finds *where* a credential could be; these functions decide whether the
value found there is one. ``is_placeholder`` runs on every finding of every
rule (built-in, structural or a drive's extra rules), so documentation
placeholders are judged the same way everywhere.
"""

from __future__ import annotations

import binascii
import math
import re
import unicodedata
from collections import _count_elements  # type: ignore[attr-defined]
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

_RX: dict[tuple[str, int], re.Pattern[str]] = {}


def rx(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """Compile on first use: importing the scanner compiles no regex."""
    key = (pattern, flags)
    compiled = _RX.get(key)
    if compiled is None:
        compiled = _RX[key] = re.compile(pattern, flags)
    return compiled


class _Rx:
    """This module's regexes by name, each compiled on first use (then a plain attribute)."""

    def __getattr__(self, name: str) -> re.Pattern[str]:
        if name not in _PATTERNS:
            raise AttributeError(name)
        pattern, flags = _PATTERNS[name]
        compiled = rx(pattern or _lazy_pattern(name), flags)
        setattr(self, name, compiled)
        return compiled


R = _Rx()


def patterns() -> list[str]:
    """The names of this module's regexes (``R.NAME``): a warm process compiles them all
    once (memgit.githooks.warm)."""
    return list(_PATTERNS)

_CLOG = [0.0] + [c * math.log2(c) for c in range(1, 4097)]
_LOG2 = [0.0] + [math.log2(n) for n in range(1, 4097)]


@lru_cache(maxsize=1024)
def entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(s)
    if not n:
        return 0.0
    counts: dict[str, int] = {}
    _count_elements(counts, s)
    if n > 4096:
        return math.log2(n) - sum(c * math.log2(c) for c in counts.values()) / n
    return _LOG2[n] - sum(map(_CLOG.__getitem__, counts.values())) / n


_UPPER = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER = b"abcdefghijklmnopqrstuvwxyz"
_DIGIT = b"0123456789"


def classes(s: str) -> tuple[int, int, int]:
    """(uppercase, lowercase, digits): counts of the ASCII letters and digits of ``s``.

    On bytes: ``bytes.translate`` deletes in one C loop, where ``str.translate``
    first builds a lookup cache on every call (slower than the count for short
    values); UTF-8 never encodes another character with an ASCII byte."""
    b = s.encode("utf-8", "surrogatepass")
    n = len(b)
    return (n - len(b.translate(None, _UPPER)), n - len(b.translate(None, _LOWER)),
            n - len(b.translate(None, _DIGIT)))


def varied(s: str, minimum: int = 6) -> bool:
    return len(set(s)) >= minimum


_TEMPLATE = r"""^(?:
        \$\(.*                            # $(command)
      | \$[A-Za-z_][A-Za-z0-9_]*          # $VAR
      | \{[A-Za-z0-9_. -]*\}              # {name}
      | %[A-Za-z0-9_]+%                   # %VAR%
      | %(?:\([A-Za-z0-9_]*\))?[sd]       # %s, %(name)s
      | [*xX\u2022.\u2026#0-]+            # ****, xxxx, ..., ####, 0000
      | \[?(?:redacted|hidden|masked|removed|omitted|snip(?:ped)?|placeholder
             |not[ _-]?set|none|null|nil|empty|unset|tbd|todo|n/?a|changeme|change[_-]me)\]?
      | (?:your|my|the|some|an?|insert|enter|put)[_-][A-Za-z0-9_-]+   # your_token_here
      | [A-Za-z_-]*+(?<=here)             # token_here, YOUR-KEY-HERE
    )$"""
# The last form is "[A-Za-z_-]*(?:_here|-here|here)" written so that it never backtracks:
# "_", "-" and the letters of "here" are in the run's class, so a value matches either way
# exactly when all of it is of the class and it ends in "here"; the possessive run stops
# where the class ends and the lookbehind reads the last four characters, where the greedy
# run gave back one character at a time and tried the three endings at each (half the
# regex's time on a prefixed token such as sk-proj-...).
# Template syntax anywhere in the value: <password>, Bearer <jwt>, ${VAR}, {{ x }}
_TEMPLATE_INSIDE = r"<[^<>]{0,60}>|\$\{|\{\{"
# Words that mark a documentation example wherever they sit in the value.
_MARKERS = (
    "example", "placeholder", "dummy", "sample", "redacted", "your_", "your-", "yourkey",
    "yourtoken", "xxxxx", "changeme", "fake", "replace", "insert", "*****",
    "test_key",
    "testkey", "mytoken", "mykey", "mysecret", "mypassword", "secret123",
)
_MARKER_RX = "|".join(re.escape(m) for m in _MARKERS)
_TEMPLATE_FLAGS = re.VERBOSE | re.IGNORECASE
# runs that only a person types: xxxx, 000000, ***, ####, ..., an ellipsis
_TYPED_RUNS = ("xxxx", "000000", "***", "####", "...", "\u2026")
# all of the above, as literals of one trie: "<" counts only before a ">" (<password>)
_MARKS = frozenset(_MARKERS + _TYPED_RUNS + ("${", "{{", "<"))
_PREFIX = r"^[A-Za-z][A-Za-z0-9]{0,11}(?:[_.-][A-Za-z0-9]{1,8}){0,2}[_.-]"


def body_of(value: str) -> str:
    """The value without a documented-looking prefix (``ghp_``, ``sk-ant-api03-``)."""
    head = value[:31]  # a prefix is at most 31 characters long and holds a separator
    if "_" not in head and "-" not in head and "." not in head:
        return value
    m = R.prefix.match(value)
    return value[m.end() :] if m and len(value) - m.end() >= 8 else value


_RUNS = ("abcdefghijklmnopqrstuvwxyz", "0123456789", "qwertyuiop", "asdfghjkl",
         "zyxwvutsrqponmlkjihgfedcba", "9876543210")


def trie_regex(words: Iterable[str], tails: dict[str, str] | None = None) -> str:
    """An alternation of literals shaped as a trie (one branch tested per position);
    a word listed in `tails` counts only when its tail regex follows it."""
    tails = tails or {}
    trie: dict[str, dict] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {"": tails.get(word, "")}  # type: ignore[dict-item]

    def build(node: dict[str, dict]) -> str:
        alts = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        end = node.get("")
        if end is not None:
            ahead: str = end[""]  # type: ignore[assignment]
            alts.append("(?=" + ahead + ")" if ahead else "")
        if len(alts) == 1:
            return alts[0]
        return "(?:" + "|".join(alts) + ")"

    return build(trie)


# six characters in keyboard or alphabet order: typed, not generated
_WINDOWS = frozenset(run[i : i + 6] for run in _RUNS for i in range(len(run) - 5))
_SHAPE = bytes.maketrans(b"abcdefghijklmnopqrstuvwxyz0123456789", b"a" * 26 + b"0" * 10)
_DIGIT_QUADS = frozenset(run[i : i + 4] for run in ("0123456789", "9876543210")
                         for i in range(len(run) - 3))


def _successors(*runs: str) -> bytes:
    """A bytes.translate table: each character of a run to the next one, others to 0x01."""
    table = bytearray(b"\x01" * 256)
    for run in runs:
        for a, b in zip(run, run[1:], strict=False):
            table[ord(a)] = ord(b)
    return bytes(table)


# the steps of the runs: alphabet and digits up, down, the keyboard rows (and no step: the
# character itself, which needs no table)
_UP, _DOWN, _ROWS = _successors(*_RUNS[:2]), _successors(*_RUNS[4:]), _successors(*_RUNS[2:4])


def _typed_run(low: str, b: bytes | None = None) -> bool:
    """Whether ``low`` (lowercase ASCII) may hold a typed run: four characters in order
    (a step each) or one character four times. Compares each character with the step
    from the one before, for all positions and all steps at once: the XOR of two big
    integers is 0 where they agree (a cheap gate; ``_mostly_typed`` decides). With
    ahocorasick_rs installed, the same answer comes from one search for the runs' four
    characters (``_typed_grams``; the XOR is kept for a string holding 0x01)."""
    if len(low) < 5:  # b (low encoded with "replace") has one byte a character
        return False
    if not _TYPED_FINDER:
        _TYPED_FINDER.append(_ac_finder(_typed_grams(), "ContiguousNFA"))
    find = _TYPED_FINDER[0]
    # the same test, as a search; b holds 0x01 where low does: the test reads the str
    # (``in`` on bytes first tries the operand as an int, a raised and cleared TypeError:
    # several times the cost of the search); an ASCII low (a value's core always is) is
    # what b decodes to, so the search reads it without encoding or decoding
    if find is not None and "\x01" not in low:
        return bool(find(low if low.isascii() else low.encode("ascii", "replace").decode()))
    if b is None:
        b = low.encode("ascii", "replace")
    head = b[:-1]
    rest = b[1:]
    # the three steps and the character itself (a repeat), with separators that never agree
    stepped = b"\x02".join((head.translate(_UP), head.translate(_DOWN), head.translate(_ROWS),
                             head))
    same = int.from_bytes(stepped, "big") ^ int.from_bytes(b"\x03".join((rest, rest, rest, rest)),
                                                           "big")
    return b"\0\0\0" in same.to_bytes(len(stepped), "big")


def _typed_grams() -> list[str]:
    """What _typed_run's XOR finds in ASCII bytes without 0x01, as literals: three places
    in a row where one table's step agrees are four characters in a row of one of the runs
    (a step table sends every character outside its runs to 0x01), or one character four
    times (the character itself)."""
    return sorted({run[i: i + 4] for run in _RUNS for i in range(len(run) - 3)}
                  | {chr(c) * 4 for c in range(128) if c != 1})


_TYPED_FINDER: list[Any] = []  # filled on first use: the runs' finder, or None


def _sequential(s: str) -> bool:
    """Typed rather than generated: alphabet or keyboard runs and repeated characters
    make up at least half of the value (or all but a few characters of a short one),
    or one such run is ten characters long (``...ABCDEFGHIJKL...``); letters and digits
    interleaved in order (``a1b2c3d4``, ``X9y8Z7``); a short unit repeated (``123123123``).
    ``s`` is ASCII letters and digits (a value's core)."""
    if len(s) < 8:
        return False
    low = s.lower()
    return _sequential_low(low, len(set(low)))


def _sequential_low(low: str, distinct: int) -> bool:
    """``_sequential`` of a lowercase core of eight characters or more, with the number of
    its distinct characters (``is_placeholder`` has counted them already)."""
    b = low.encode("ascii", "replace")
    if _typed_run(low, b) and _mostly_typed(low, long_run=10):
        return True
    return _interleaved_or_periodic(low, b, distinct)


def _interleaved_or_periodic(low: str, b: bytes | None = None, distinct: int = 0) -> bool:
    if b is None:
        b = low.encode("ascii", "replace")
    shape = b.translate(_SHAPE)  # a letter as "a", a digit as "0"
    # one find mostly (find, not ``in``: see _typed_run)
    if shape.find(b"a0a0a0a") >= 0 and (
            shape.find(b"a0a0a0a0") >= 0 or shape.find(b"0a0a0a0a") >= 0):
        letters = b.translate(None, b"0123456789").decode()
        digits = b.translate(None, _LOWER).decode()
        if (len(letters) >= 6 and len(digits) >= 4 and _typed_run(letters)
                and _mostly_typed(letters) and _mostly_typed(digits, short=True)):
            return True
    if (distinct or len(set(low))) * 3 <= len(low):  # few distinct characters for its length
        # a short unit repeated: half the characters equal the one 1 to 4 places back
        n = len(b)
        whole = int.from_bytes(b, "big")
        for k in (1, 2, 3, 4):
            same = (whole >> (8 * k)) ^ (whole & ((1 << (8 * (n - k))) - 1))
            if same.to_bytes(n - k, "big").count(0) * 2 >= n:
                return True
    return False


def _mostly_typed(low: str, long_run: int = 0, short: bool = False) -> bool:
    """Runs cover half of ``low`` or all but five characters (runs of four count for
    ``short``: a run of digits), or one run is ``long_run`` characters long."""
    marked: set[int] = set()
    for w in _WINDOWS if not short else _WINDOWS | _DIGIT_QUADS:
        at = low.find(w)
        while at >= 0:
            marked.update(range(at, at + len(w)))
            at = low.find(w, at + 1)
    if long_run:  # a long run in order (a repeated character is base64's zero padding too)
        run = longest = 0
        for i in range(len(low)):
            run = run + 1 if i in marked else 0
            longest = max(longest, run)
        if longest >= long_run:
            return True
    for m in R.repeats.finditer(low):
        marked.update(range(m.start(), m.end()))
    return len(marked) >= max(4 if short else 6, 0.5 * len(low)) or len(low) - len(marked) < 6


@lru_cache(maxsize=4096)
def is_placeholder(value: str) -> bool:
    """True for documentation placeholders and templates, never for a real value.

    Covers ``<TOKEN>``, ``${VAR}``, ``{{ x }}``, ``$VAR``, ``%s``, runs of
    ``x``/``X``/``0``/``#``/``*``, ``EXAMPLE`` keys, ``your_token_here``,
    ``redacted``, sequential alphabets (``abcdefghijklmnop``), bodies of one
    or two distinct characters (``sha256~XXXX``, ``ghp_0000...``), a unit of up to eight
    characters typed three times or more (``02134567`` x 3).
    """
    v = value.strip().strip("\"'`")
    if not v:
        return True
    low = v.lower()
    if _may_be_template(v, low) and R.template.match(v) is not None:
        return True
    if _has_mark(low):
        return True
    if "$" in v and R.env_ref.search(v) is not None:
        return True  # Bearer $TOKEN, X-Token: $API_TOKEN: a reference to a variable
    if "xxx" in low and R.x_segment.search(low) is not None:
        return True  # m0-xxx, sk-xxx-xxx
    if v[0] == "[" and (R.bracketed.match(v) is not None or R.group_open.fullmatch(v)):
        return True  # [PASSWORD], [Shared Access Key Name goes here]; "[source:", the
        # opening of an entry's metadata group ([source: S; added: D; id: I], the format's)
        # after a line that ends with an option or a key
    if "{{" in v or "}}" in v:
        return True  # the rest of a template a match cut (username:password|token}})
    if (v[0] == "^" or v[0] in "CFNPR") and R.tool_keyword.fullmatch(v) is not None:
        return True  # hydra's ^PASS^ (and the form's :condition after it), patator's FILE0
        # and COMBO00:COMBO01 (their manuals)
    if low.endswith("here") and R.here.search(low) is not None:
        return True  # xoxp-1-AccessTokenHere, YOUR_KEY_HERE
    body = body_of(v)
    core = body if body.isascii() and body.isalnum() else _alnum_bytes(body)
    if not core and any(c.isspace() for c in v) and not any(c.isalnum() for c in v):
        return True  # '"=   :  : "  =': punctuation and blanks, layout and no value (round 17)
    if len(core) < 6:
        return False
    low_core = core.lower()
    distinct = distinct_ascii(low_core)  # counted once: the typed-run tests below reuse it
    if distinct <= 3:
        return True  # XXXXXXXX, 0000aaaa, sha256~XXXX
    if len(core) >= 8 and _sequential_low(low_core, distinct):  # _sequential(core)
        return True
    return _repeats_a_unit(core)  # 02134567 02134567 02134567: a unit typed three times


def _repeats_a_unit(val: str) -> bool:
    """A unit of up to eight characters three times or more (``02134567`` x 3, a test
    value). Only the places where the first character comes again are tried, and longer
    units are not looked for: this runs for every value about to be reported."""
    n = len(val)
    if not 12 <= n <= 96:
        return False
    p = val.find(val[0], 1, 9)
    while p != -1 and 3 * p <= n:
        if val[p:] == val[:-p]:
            return True
        p = val.find(val[0], p + 1, 9)
    return False


def _has_mark(low: str) -> bool:
    """``R.marks.search(low) is not None``: a mark of a documentation example in ``low``
    (``"<"`` only before its ``">"``). Through Aho-Corasick when ahocorasick_rs is installed
    (a third of the trie regex's time on a value), the regex otherwise or for a string
    Rust cannot take (a lone surrogate)."""
    if not _MARK_FINDER:
        _MARK_FINDER.append(_ac_finder(_MARK_LIST, "DFA"))
    find = _MARK_FINDER[0]
    if find is None:
        return R.marks.search(low) is not None
    try:
        hits = find(low, True)  # overlapping: every mark at every place, by character index
    except UnicodeEncodeError:
        return R.marks.search(low) is not None
    for index, start, _end in hits:
        if index != _LT or R.mark_tail.match(low, start) is not None:
            return True
    return False


def _ac_finder(words: list[str], implementation: str = "NoncontiguousNFA") -> Any:
    """An Aho-Corasick search for ``words`` (``find(text, overlapping=False)``: a list of
    (word index, start, end) by character), or None without ahocorasick_rs.
    ``implementation``: the automaton, as ahocorasick_rs names it. Each search is cheap
    next to the call's own cost on a value of a few dozen characters, but the automata
    differ by a fifth to a third of it, for builds of a tenth to a fifth of a millisecond
    (on a hook's first value): the marks (31 words) take the DFA, 340 against 560 ns a
    value for a build of 0.10 against 0.04 ms; the typed runs (200 words) the contiguous
    NFA, 380 against 460 ns for 0.21 against 0.16 ms (the DFA, 0.65 ms, gains 20 ns more)."""
    try:
        import ahocorasick_rs
    except ImportError:
        return None
    ac = ahocorasick_rs.AhoCorasick(words, matchkind=ahocorasick_rs.MatchKind.Standard,
                                    implementation=getattr(ahocorasick_rs.Implementation,
                                                           implementation))
    return ac.find_matches_as_indexes


def use_regex_searches(on: bool = True) -> None:
    """Pin the trie regex and the XOR for the marks and the typed runs (``on``), or let
    their next use pick Aho-Corasick when installed (``engine.use_trie_finder`` calls it)."""
    _MARK_FINDER[:] = [None] if on else []
    _TYPED_FINDER[:] = [None] if on else []


_MARK_LIST = sorted(_MARKS)
_LT = _MARK_LIST.index("<")
_MARK_FINDER: list[Any] = []  # filled on first use: the finder, or None


def _may_be_template(v: str, low: str) -> bool:
    """Whether ``_TEMPLATE`` can match: its forms start with ``$ { % [`` or a run
    character, end in ``here``, are one short word, or start with a short word and
    ``_``/``-`` (your_token)."""
    if v[0] in _TEMPLATE_FIRST or low.endswith("here") or len(v) <= 15:
        return True
    head = v[:8]
    if "_" not in head and "-" not in head:
        return False
    # only the your_token form is left: its word and separator begin the value (in any
    # case; a non-ASCII head may be a folding of one, ſome_ or İnsert_, and goes on); and
    # the here-form before a final line break, where "$" matches too
    return not head.isascii() or low.startswith(_TEMPLATE_WORDS) or v[-1] == "\n"


_TEMPLATE_FIRST = frozenset("${%[*xX\u2022.\u2026#0-")
# the words of _TEMPLATE's "your_token" form with its separators
_TEMPLATE_WORDS = tuple(w + sep for w in ("your", "my", "the", "some", "a", "an", "insert",
                                          "enter", "put") for sep in "_-")
_REPEAT_RX = r"(.)\1{3,}"

# --- references: values that name where a secret lives instead of being one ---

_REFERENCE_PREFIXES = (
    "http://", "https://", "vault:", "vault://", "op://", "env:", "env.", "arn:", "ssm:",
    "secretsmanager:", "secret:", "keychain:", "keyring:", "file:", "/", "~/", "./", "../",
    "$", "%", "process.env", "os.environ", "os.getenv", "secrets.",
)
# YAML tags, anchors and aliases (!vault, !Ref, !secret db_password, &default, *default)
# and decorators or references (@Value): the sign, then a word without digits (a value
# that starts with the sign and goes on at random, !n6!(eg..., is a literal)
_SIGILS = ("@", "&", "!", "*")
_SIGIL_REF = r"^(?:!!?|[@&*])[A-Za-z_][A-Za-z_.:/-]*\*?(?:[\s(].*)?$"  # *emphasis* too
_DOTTED_IDENT = r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$"
_ENV_NAME = r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$"
_VERSION = r"^[vV]?\d+(?:\.\d+)+(?:[-+.][A-Za-z0-9.]+)?$"
_DATE = r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?Z?)?$"
_JOINED_WORDS = r"^[A-Za-z]+(?:[-_.:][A-Za-z]+)*$"
CONFIG_WORDS = frozenset(
    """true false yes no on off none null nil required optional enabled disabled
    unset empty auto default prompt env file stdin hidden masked redacted ask
    keychain keyring vault string str bytes int bool text value secret password
    passwd token apikey api_key key undefined unknown variable param params
    argument args kwargs self this""".split()
)
TECH_TERMS = frozenset(
    """sha1 sha256 sha384 sha512 md5 oauth1 oauth2 base32 base64 utf8 utf16 ipv4 ipv6
    x86_64 aes128 aes256 http1 http2 http3 rfc6750 rfc7617 hs256 rs256 es256 ed25519
    pbkdf2 argon2 argon2id bcrypt2 sha3 s3 2fa mfa2 totp6 gpt4 gpt4o tls13 tls12
    p256 secp256k1 secp256r1 curve25519 x25519 pkcs1 pkcs8 pkcs12 pem2""".split()
)


def is_reference(v: str) -> bool:
    low = v.lower()
    if low.startswith(_REFERENCE_PREFIXES) and not _prefix_in_literal(v):
        return True
    if v[0] in _SIGILS and (R.sigil_ref.match(v) or len(set(v)) == 1):
        return True
    if "://" in low and R.scheme.match(low) is not None:
        return True  # mongodb://host/db: a URL names a place (its password, if any, is
        # the password-in-URL rule's)
    if ("(" in v or "[" in v or "{" in v) and R.call.search(v):
        return True  # a call, an index or a template: os.getenv("X"), cfg["key"], {name}
    if (v[:2] in ("+ ", "+\t") or v[-2:] in (" +", "\t+")) and not R.b64_tail.match(v):
        return True  # " + getPassword() + ": string concatenation in code (a generated
        # password may start or end with "+": "Tec%+" is no concatenation)
    if "_" in v and v[0].isupper() and R.env_name.match(v):
        return True
    return "." in v and bool(R.dotted.match(v)) and (
        not any(c.isdigit() for c in v) or (v.islower() and v.count(".") >= 2))


def _prefix_in_literal(v: str) -> bool:
    """A reference's first character that begins a generated value instead: base64 that
    starts with "/" (padded or with a "+", which no path has), or "%" not opening a
    variable (%DB_PASSWORD%, Symfony's %env(DB_SECRET)%) or a format (%s, %(password)s)."""
    if v[0] == "/":
        return (v[-1] == "=" or "+" in v) and R.b64_tail.match(v) is not None
    if v[0] == "%":
        return R.percent_ref.match(v) is None
    return False


@lru_cache(maxsize=4096)
def is_boring(v: str) -> bool:
    """Placeholders, references, numbers, dates, versions, configuration words."""
    if not v or is_placeholder(v) or is_reference(v):
        return True
    if v[0].isdigit() or v[0] in "vV":
        if (v.isdigit() and len(v) < 20) or R.date.match(v) or R.version.match(v):
            return True
    return v.lower() in CONFIG_WORDS


@lru_cache(maxsize=4096)
def looks_random(v: str) -> bool:
    """For a value after a keyword in prose (``password: X``, ``token is X``)."""
    if len(v) < 6 or is_boring(v) or v.lower() in TECH_TERMS:
        return False
    if v.isascii():
        upper, lower, digits = classes(v)
        other = len(v) - upper - lower - digits
        has_digit, has_alpha = digits > 0, upper + lower > 0
        n_kinds = has_digit + (upper > 0) + (lower > 0) + (other > 0)
        symbols = other - v.count("-") - v.count("_") - v.count(".")
    else:
        digits = sum(map(str.isdigit, v))
        has_digit = digits > 0
        has_alpha = any(c.isalpha() for c in v)
        n_kinds = (has_digit + any(c.isupper() for c in v) + any(c.islower() for c in v)
                   + any(not c.isalnum() for c in v))
        symbols = sum(1 for c in v if not (c.isalnum() or c in "-_."))
    if len(v) >= 8 and n_kinds >= 3 and " " not in v and entropy(v) >= 3.0:
        # qILXZlbtI-NI99, Tr0ub4dor&3 but not 2FA-enforced, Q3-Roadmap, OAuth2-Proxy
        if digits >= 2 or len(R.flips.findall(v)) >= 2:
            return True
    if has_digit and has_alpha:
        # "hunter2", "Zx81!kq0", "s3cr3t-Pa55" but not "2FA-enforced", "Q1-2026"
        return any(
            len(seg) >= 5 and any(c.isdigit() for c in seg) and any(c.isalpha() for c in seg)
            for seg in R.seg_split.split(v)
        )
    if not has_alpha:
        return False
    if symbols > 0:
        return True  # hunter!!, p@ss, aB+/cd...
    if R.joined.match(v):
        letters = v.replace("-", "").replace("_", "").replace(".", "")
        return (
            len(letters) >= 16
            and not letters.islower()
            and not letters.isupper()
            and entropy(letters) >= 3.5
            and sum(1 for a, b in zip(letters, letters[1:], strict=False)
                    if a.islower() and b.isupper()) >= 3
        )
    return False


def literal_ok(v: str) -> bool:
    """For a value that is plainly assigned (``passwd=X``, ``token: "X"``)."""
    return len(v) >= 5 and not is_boring(v) and not (v.isalpha() and len(set(v)) == 1)


def token_like(v: str, min_len: int = 16) -> bool:
    """A generated credential: long enough, varied, mixed character classes or high entropy.

    Used where the context already says "credential" (``*_token = X``, a provider
    name next to the value): hex, base32, base64 and mixed-case alphanumerics pass;
    words, identifiers in snake_case, UUID-free ids and paths do not.
    """
    return _token_length(v) >= min_len


@lru_cache(maxsize=4096)
def _token_length(v: str) -> int:
    """The length of ``v``'s letters and digits if it reads as generated, else 0 (one
    judgement per value, whatever length the caller asks for)."""
    core = alnum_core(v)
    if len(core) < 8 or distinct_ascii(core) < 8:
        return 0
    upper, lower, digits = classes(core)
    if core is not v and (R.snake.match(v) or wordy(v)):
        return 0  # snake_case identifiers, names with dates (both have separators)
    if upper and lower and R.camel.match(v):
        return 0  # CamelCase identifiers
    n_kinds = (digits > 0) + (upper > 0) + (lower > 0)
    ent = entropy(core)
    if n_kinds >= 2 and ent >= 3.0:
        ok = digits > 0 or (upper >= 2 and lower >= 2 and ent >= 3.8)
    else:
        ok = ent >= 3.6 and len(core) >= 24
    return len(core) if ok and not is_boring(v) else 0


def _lazy_pattern(name: str) -> str:
    """The trie of the marks, built the first time a value needs it."""
    return trie_regex(_MARKS, {"<": r"[^<>]{0,60}>"})


# Words that say what a value is: a value made of them (and plain words) describes itself.
_CREDENTIAL_WORDS = frozenset(
    """key apikey token secret password passwd pass pwd passphrase credential credentials
    auth""".split())


# "password" in other languages, as a value names the password it stands for (7z -pmotdepasse,
# -p palavra-passe, --auth user:wachtwoord); the keyword list's words and their glued forms
PASSWORD_WORDS = frozenset(
    """passwort kennwort contraseña contrasena contrasenya motdepasse mot_de_passe mot-de-passe
    palavra-passe palavra_passe palavrapasse senha salasana sifre şifre wachtwoord lösenord
    losenord lösenordet adgangskode kodeord passord hasło haslo heslo parolă jelszó jelszo geslo
    lozinka slaptažodis nenosiri пароль 密码 密碼 パスワード 비밀번호""".split())


def self_describing(low: str) -> bool:
    """``strong-password``, ``vllm-api-key``, ``m0-new-key``, ``password``, ``motdepasse``:
    plain words, one of them a credential word (a short prefix such as ``m0`` aside)."""
    if len(low) > 64 or (low.isalnum() and not low.isalpha()):
        return False  # a long value, or letters with digits and no separator
    if low in PASSWORD_WORDS:
        return True
    if low.isalpha():
        return low in _CREDENTIAL_WORDS
    parts = R.segments.split(low)
    if parts and len(parts[0]) <= 3 and len(parts) > 1:
        parts = parts[1:]
    return (all(p.isalpha() and p.isascii() for p in parts)
            and not (_CREDENTIAL_WORDS.isdisjoint(parts) and PASSWORD_WORDS.isdisjoint(parts)))


_PATH_OF_NAMES = r"[a-z_][a-z0-9_.-]*(?:/(?:\[\d+\]|[a-z_][a-z0-9_.-]*))+/?"


def path_of_names(val: str, steps: int = 1) -> bool:
    """A path of lowercase names and indexes, ``steps`` slashes or more between names (a
    Vault secret's path ``secret/data/app``, a JSON pointer ``metadata_options/[0]/http_tokens``,
    a source tree's folders): it says where a value is, and holds none."""
    return "/" in val and val.rstrip("/").count("/") >= steps and \
        rx(_PATH_OF_NAMES).fullmatch(val) is not None


# an argument that names what goes in its place: a path of word segments or one that ends in a
# file's extension (path/to/passwords.txt, 경로/대상/파일), a file read with "@", words
# joined by "_" or "-" with no digit (database_name, api_키, パスワード), a ``name=word``
# pair, a partial template (``token}}``) or hydra's ``^PASS^``
_ARG_PATH = (r"@?[~.]{0,2}/?(?:[^\W\d][\w.-]*/)+[^\W\d][\w-]*(?:\.\w{1,8})?/?"
             r"|@?(?:[\w.-]+/)*[\w-]+\.\w{1,8}")
_ARG_WORDS = r"(?:[^\W\d_]+[_-])*[^\W\d_]+"


def names_an_argument(val: str) -> bool:
    """A command-line value that names what goes there instead of holding it (a manual's
    or a page's placeholder written out, a file the tool reads the secret from): see
    ``_ARG_PATH`` and ``_ARG_WORDS``. Words of ASCII letters are not enough (a password may
    be words): they must end in a word of ``_KIND_WORDS`` (``NT_Hash``, ``database_name``),
    or be in another script."""
    if "{{" in val or "}}" in val or (len(val) > 2 and val[0] == val[-1] == "^"):
        return True
    if not val.isascii():  # a vowel sign or a virama is a mark, not a letter (पासवर्ड)
        val = "".join(c for c in val if unicodedata.category(c)[0] != "M")
    if "=" in val.rstrip("="):
        val = val.rsplit("=", 1)[1]  # hurl --secret name=value: the value
        if val.isalpha():
            return True
    if not val:
        return False
    if "/" in val or val[0] == "@":  # a path, or a file the tool reads (curl -d @file)
        return rx(_ARG_PATH).fullmatch(val) is not None and (
            val.islower() or not val.isascii() or rx(r"\.[A-Za-z]{1,8}$").search(val) is not None)
    if "." in val:  # a file's name: lower-case words and an extension (passwords.txt)
        return rx(r"[a-z_-]+\.[a-z]{1,8}").fullmatch(val) is not None
    return rx(_ARG_WORDS).fullmatch(val) is not None and (
        not val.isascii() or R.segments.split(val.lower())[-1] in _KIND_WORDS)


# the last word of a placeholder's name that says what kind of thing goes there
# (database_name, app_name, path_to_file, target_host): such a value names, it holds nothing
_KIND_WORDS = frozenset(
    """name names file files path dir directory folder id ids host hostname port url uri db
    database table user username device bucket server address value string text here hash
    nthash lmhash""".split())


def wordy(v: str) -> bool:
    """An identifier of words and numbers: ``project_session_2026-04-30_close_out.md``."""
    parts = R.segments.split(v)
    return len(parts) >= 3 and all(p.isalpha() or p.isdigit() for p in parts)


_VOWEL_BYTES = b"aeiouyAEIOUY"


def wordlike(run: str) -> bool:
    """A run of letters that reads like a word: vowels between its consonants."""
    b = run.encode("utf-8", "surrogatepass")
    vowels = len(b) - len(b.translate(None, _VOWEL_BYTES))  # vowels are one byte each
    return vowels * 4 >= len(run) and R.consonants.search(run) is None


# the 256 byte values: distinct_ascii deletes those a string holds
_ALL_BYTES = bytes(range(256))


def distinct_ascii(s: str) -> int:
    """``len(set(s))`` for an ASCII ``s`` (a value's core): the bytes of ``s`` deleted from
    the 256 byte values leave 256 minus its distinct characters (one byte each). A fixed
    cost (the delete table and one pass over 256 bytes) where ``set`` makes a character
    object and a hash test for each character: 0.4 against 0.9 us on a core of 41."""
    return 256 - len(_ALL_BYTES.translate(None, s.encode()))


def alnum_core(v: str) -> str:
    """The ASCII letters and digits of ``v``."""
    return v if v.isascii() and v.isalnum() else _alnum_bytes(v)


# every byte but the ASCII letters and digits: deleted by _alnum_bytes
_NOT_ALNUM = bytes(c for c in range(256) if not (chr(c).isascii() and chr(c).isalnum()))


def _alnum_bytes(v: str) -> str:
    """``R.non_alnum.sub("", v)`` (``[^A-Za-z0-9]`` removed) as one ``bytes.translate``
    that deletes: UTF-8 writes every other character (a lone surrogate too, with
    surrogatepass) with bytes of 0x80 and up, which go with the ASCII punctuation; about
    half the time of the regex's substitution, which builds a list of the kept pieces."""
    return v.encode("utf-8", "surrogatepass").translate(None, _NOT_ALNUM).decode("ascii")


_PATTERNS: dict[str, tuple[str, int]] = {
    # base64 of 16+ characters with letters and digits that ends in + or /+ (an ACR
    # password, a key), not a string concatenation
    "sigil_ref": (_SIGIL_REF, re.DOTALL),
    "b64_tail": (
        r"^(?=[A-Za-z0-9+/]*\d)(?=[A-Za-z0-9+/]*[A-Za-z])[A-Za-z0-9/][A-Za-z0-9+/]{15,}={0,2}$", 0),
    "template": (_TEMPLATE, _TEMPLATE_FLAGS),
    "marks": ("", 0),  # built on first use: see _lazy_pattern
    "mark_tail": (r"<[^<>]{0,60}>", 0),  # the "<" mark counts before its ">" (_has_mark)
    "prefix": (_PREFIX, 0),
    "non_alnum": (r"[^A-Za-z0-9]", 0),
    "repeats": (_REPEAT_RX, 0),
    # a call where code would write one: the value starts with it (after a template's
    # opener) and closes it, or a space comes before it; a generated password's
    # "@xbMt0ie9(" or "Eb(2(gK" (Django's alphabet has ( and ) but no space or brace) is no
    # call
    "call": (r"^(?:\$\{|\{\{|\$\(|=)?\s*[A-Za-z_$][\w.$]{2,}\(.*\)|\s[A-Za-z_$][\w.$]{2,}\("
             r"|^[A-Za-z_$][\w.$]*\[[\"'\w]|\{", 0),
    # %DB_PASSWORD% (Windows), %env(DB_SECRET)% and %kernel.secret% (Symfony), %s, %(pw)s
    "percent_ref": (r"%(?:[A-Za-z_][\w.():-]*%|\(\w*\)[a-z]|[a-z]\b)", 0),
    "env_name": (_ENV_NAME, 0),
    "dotted": (_DOTTED_IDENT, 0),
    "date": (_DATE, 0),
    "version": (_VERSION, 0),
    "flips": (r"[a-z][A-Z]|[A-Z][a-z](?=[A-Z])", 0),
    "seg_split": (r"[-_./]", 0),
    "segments": (r"[-_./:]", 0),
    "env_ref": (r"(?<![A-Za-z0-9$])\$[A-Z_][A-Z0-9_]{2,}(?![A-Za-z0-9_])", 0),
    "x_segment": (r"(?:^|[-_.:])x{3,}(?:$|[-_.:])", 0),
    "consonants": (r"[^aeiouyAEIOUY]{4}", 0),
    "joined": (_JOINED_WORDS, 0),
    "group_open": (r"\[[a-z]{2,12}:", 0),
    "tool_keyword": (r"\^[A-Z]{2,8}\^(?::.*)?|(?:(?:FILE|COMBO|NET|RANGE|PROG)\d{1,2}:?)+", 0),
    "snake": (r"^[a-z]+(?:[_-][a-z]+)+$", 0),
    "camel": (r"^[A-Z][a-z]+(?:[A-Z][a-z]+)+\d{0,3}$", 0),
    "bracketed": (r"\[[A-Za-z][A-Za-z _-]*\]?$", 0),
    "here": (r"(?:token|key|secret|password|pass|value|goes|name)[_-]?here$", 0),
    "scheme": (r"[a-z][a-z0-9+.-]{1,30}://", 0),
    # a character outside base64's alphabet (a2b_base64 in strict mode refuses the string)
    "not_b64": (r"[^A-Za-z0-9+/=]", 0),
    "uuid": (r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", 0),
}


def decode_b64(s: str) -> str | None:
    """The ASCII text ``s`` encodes in base64 (padding optional), or None."""
    if not s.isascii() or R.not_b64.search(s) is not None:
        return None  # what a2b_base64 refuses at once, without raising (an exception costs more)
    try:  # base64.b64decode(..., validate=True) without its Python layer
        raw = binascii.a2b_base64((s + "=" * (-len(s) % 4)).encode("ascii"), strict_mode=True)
    except (binascii.Error, ValueError):
        return None
    return raw.decode("ascii") if raw.isascii() else None  # random bytes: not a text


def is_user_pass(decoded: str | None) -> bool:
    """Whether a decoded text is ``user:password`` with a real password (HTTP Basic)."""
    if decoded is None or not decoded.isprintable():
        return False
    user, sep, pw = decoded.partition(":")
    return bool(sep and user and len(pw) >= 3 and " " not in user
                and not is_placeholder(pw) and not is_placeholder(user + ":" + pw))
