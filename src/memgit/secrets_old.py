"""Refuse possible credentials in memory lines.

memgit stores what agents remember as Markdown bullet lines in git; nothing in
such a line should be a credential.  This module answers one question per line,
fast enough for a git hook: does this line look like it holds a secret?

Design (measured figures are in docs/security.md):

* The formats come from detect-secrets' plugins (AWS, GitHub, GitLab, Slack,
  Stripe, OpenAI, Twilio, SendGrid, npm, PyPI, Discord, Mailchimp, Square,
  Azure storage, JWT, Telegram, Artifactory, private keys, basic auth,
  keywords), re-expressed for prose lines and widened with the current
  formats of other providers (gitleaks' rule set and the providers' docs),
  plus memgit's own structural rules (passwords in URLs, ``password: ...``
  in prose, Authorization headers, seed phrases...).
* detect-secrets itself is **not imported** here: any import of it pulls in
  ``requests`` (about 100 ms), and its ``scan_line`` costs about 1 ms per line.
  The test suite checks that every corpus line whose format is documented by a
  detect-secrets plugin is flagged both by that plugin and by this module.
* ``scan_text`` lowercases the line and runs one trie-shaped regex of literal
  anchors (``akia``, ``ghp_``, ``://user:pw@``, ``password``...).  Only the
  rules tied to the anchors found run, so an ordinary line costs a few
  microseconds.  Rules are compiled on first use.
* A finding carries the kind and the span only: callers must never print the
  matched text.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

__all__ = ["KINDS", "SecretFinding", "scan_lines", "scan_text"]


@dataclass(frozen=True)
class SecretFinding:
    kind: str  # human name of the secret type; never contains the secret
    start: int  # offset in the scanned string where the secret starts
    end: int  # offset just past the secret


# --------------------------------------------------------------------------
# value heuristics
# --------------------------------------------------------------------------


_RX: dict[tuple[str, int], re.Pattern[str]] = {}


def _rx(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """Compile on first use: importing this module compiles no regex."""
    key = (pattern, flags)
    compiled = _RX.get(key)
    if compiled is None:
        compiled = _RX[key] = re.compile(pattern, flags)
    return compiled


def _entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    if not s:
        return 0.0
    counts: dict[str, int] = {}
    for ch in s:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _varied(s: str, minimum: int = 6) -> bool:
    """Reject ``xxxxxxxx``, ``00000000``, ``aaaa1111``: doc placeholders."""
    return len(set(s)) >= minimum


_PLACEHOLDER = r"""^(?:
        <[^<>]*>                          # <password>
      | \$\{[^}]*\}?                      # ${VAR}
      | \$\(.*                            # $(command)
      | \$[A-Za-z_][A-Za-z0-9_]*          # $VAR
      | \{\{.*\}\}                        # {{ template }}
      | \{[A-Za-z0-9_. -]*\}              # {name}
      | %[A-Za-z0-9_]+%                   # %VAR%
      | %(?:\([A-Za-z0-9_]*\))?[sd]       # %s, %(name)s
      | [*xX\u2022.\u2026#-]+             # ****, xxxx, ..., ####
      | \[?(?:redacted|hidden|masked|removed|omitted|snip(?:ped)?|placeholder
             |not[ _-]?set|none|null|nil|empty|unset|tbd|todo|n/?a)\]?
      | (?:your|my|the)[_-][A-Za-z0-9_-]+  # your_token_here, my-password
      | [A-Za-z_-]*(?:_here|-here)        # token_here
    )$"""
_PLACEHOLDER_FLAGS = re.VERBOSE | re.IGNORECASE


def _is_placeholder(v: str) -> bool:
    return _rx(_PLACEHOLDER, _PLACEHOLDER_FLAGS).match(v) is not None


# Values that name where a secret lives instead of being one.
_REFERENCE_PREFIXES = (
    "http://",
    "https://",
    "vault:",
    "vault://",
    "op://",
    "env:",
    "env.",
    "arn:",
    "ssm:",
    "secretsmanager:",
    "secret:",
    "keychain:",
    "keyring:",
    "file:",
    "/",
    "~/",
    "./",
    "../",
    "$",
    "%",
    "@",
    "&",
    "!",  # YAML tags: !vault, !Ref, !secret
    "*",  # YAML aliases
)
_DOTTED_IDENT = r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$"
_ENV_NAME = r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$"
_VERSION = r"^[vV]?\d+(?:\.\d+)+(?:[-+.][A-Za-z0-9.]+)?$"
_DATE = r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?Z?)?$"
_JOINED_WORDS = r"^[A-Za-z]+(?:[-_.][A-Za-z]+)*$"
_CONFIG_WORDS = frozenset(
    """true false yes no on off none null nil required optional enabled disabled
    unset empty auto default prompt env file stdin hidden masked redacted ask
    keychain keyring vault string str bytes int bool text value secret password
    passwd token apikey api_key key undefined unknown variable param params
    argument args kwargs self this""".split()
)
# Short technical words with digits that follow "token:" etc. in prose.
_TECH_TERMS = frozenset(
    """sha1 sha256 sha384 sha512 md5 oauth1 oauth2 base32 base64 utf8 utf16 ipv4 ipv6
    x86_64 aes128 aes256 http1 http2 http3 rfc6750 rfc7617 hs256 rs256 es256 ed25519
    pbkdf2 argon2 argon2id bcrypt2 sha3 s3 2fa mfa2 totp6 gpt4 gpt4o tls13 tls12
    p256 secp256k1 secp256r1 curve25519 x25519 pkcs1 pkcs8 pkcs12 pem2""".split()
)


def _is_reference(v: str) -> bool:
    low = v.lower()
    if low.startswith(_REFERENCE_PREFIXES):
        return True
    if "(" in v or "[" in v or "{" in v:
        return True
    if _rx(_ENV_NAME).match(v):
        return True
    # settings.DB_PASSWORD, process.env.TOKEN (but not a random "a1B.c2D" token)
    return bool(_rx(_DOTTED_IDENT).match(v)) and not any(c.isdigit() for c in v)


def _is_boring(v: str) -> bool:
    """Placeholders, references, numbers, dates, versions."""
    if not v:
        return True
    if _is_placeholder(v) or _is_reference(v):
        return True
    if "<" in v and ">" in v:  # "Bearer <jwt>", "<user>:<password>"
        return True
    if v.isdigit() or _rx(_DATE).match(v) or _rx(_VERSION).match(v):
        return True
    return v.lower() in _CONFIG_WORDS


def _looks_random(v: str) -> bool:
    """For values after a keyword in prose (``password: X``, ``token is X``)."""
    if len(v) < 6 or _is_boring(v):
        return False
    if v.lower() in _TECH_TERMS:
        return False
    has_digit = any(c.isdigit() for c in v)
    has_alpha = any(c.isalpha() for c in v)
    if has_digit and has_alpha:
        # "hunter2", "Zx81!kq0", "s3cr3t-Pa55" but not "2FA-enforced", "Q1-2026"
        return any(
            len(seg) >= 5 and any(c.isdigit() for c in seg) and any(c.isalpha() for c in seg)
            for seg in _rx(r"[-_./]").split(v)
        )
    if not has_alpha:
        return False
    if any(not (c.isalnum() or c in "-_.") for c in v):
        return True  # hunter!!, p@ss, aB+/cd...
    if _rx(_JOINED_WORDS).match(v):
        # letters, maybe joined by - _ . : random only if long, mixed case, high entropy
        letters = v.replace("-", "").replace("_", "").replace(".", "")
        return (
            len(letters) >= 16
            and not letters.islower()
            and not letters.isupper()
            and _entropy(letters) >= 3.5
            and sum(
                1 for a, b in zip(letters, letters[1:], strict=False) if a.islower() and b.isupper()
            )
            >= 3
        )
    return False


def _literal_ok(v: str) -> bool:
    """For values that are plainly assigned (``passwd=X``, ``token: "X"``)."""
    return len(v) >= 5 and not _is_boring(v) and not (v.isalpha() and len(set(v)) == 1)


# --------------------------------------------------------------------------
# rules
# --------------------------------------------------------------------------

_Check = Callable[[re.Match[str], str], tuple[int, int, str] | bool | None]


@dataclass(frozen=True)
class _Rule:
    kind: str
    anchors: tuple[str, ...]  # lowercase literals that any match contains
    pattern: str
    flags: int = 0
    group: int | str = 0
    check: _Check | None = None
    priority: int = 0  # 0 provider format, 1 structural, 2 keyword
    doc: str = ""


_L = r"(?<![A-Za-z0-9_-])"  # token start
_R = r"(?![A-Za-z0-9_-])"  # token end
_LA = r"(?<![A-Za-z0-9])"
_RA = r"(?![A-Za-z0-9])"


def _plausible(m: re.Match[str], text: str) -> bool:
    return _varied(m.group(0))


def _aws_id_check(m: re.Match[str], text: str) -> bool:
    s = m.group(0)
    return not s.endswith("EXAMPLE") and _varied(s[4:], 5)


_AWS_ID_SRC = _LA + r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}" + _RA


def _base64ish_secret(s: str) -> bool:
    return (
        any(c.isupper() for c in s)
        and any(c.islower() for c in s)
        and any(c.isdigit() for c in s)
        and _entropy(s) >= 4.0
        and "EXAMPLE" not in s
    )


def _aws_secret_kw_check(m: re.Match[str], text: str) -> bool:
    return _base64ish_secret(m.group("s"))


def _aws_secret_near_id_check(m: re.Match[str], text: str) -> bool:
    return _base64ish_secret(m.group(0)) and bool(_rx(_AWS_ID_SRC).search(text))


def _mixed(m: re.Match[str], text: str) -> bool:
    s = m.group(0)
    return any(c.isdigit() for c in s) and any(c.isalpha() for c in s) and _varied(s, 8)


def _mixed_case(m: re.Match[str], text: str) -> bool:
    s = m.group(0)
    return any(c.isupper() for c in s) and any(c.islower() for c in s) and _varied(s, 10)


def _telegram_check(m: re.Match[str], text: str) -> bool:
    tail = m.group(0).split(":", 1)[1]
    return any(c.isupper() for c in tail) and any(c.islower() for c in tail) and _varied(tail, 10)


def _b64decode(s: str) -> bytes | None:
    s = s.rstrip("=")
    try:
        return base64.b64decode(s + "=" * (-len(s) % 4), altchars=b"-_", validate=False)
    except (binascii.Error, ValueError):
        return None


def _jwt_check(m: re.Match[str], text: str) -> bool:
    head = m.group(0).split(".", 1)[0]
    raw = _b64decode(head)
    if raw is None:
        return False
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return decoded.lstrip().startswith("{") and any(
        f'"{k}"' in decoded for k in ("alg", "typ", "kid", "enc", "cty")
    )


def _basic_check(m: re.Match[str], text: str) -> bool:
    s = m.group("s")
    if len(s.rstrip("=")) < 6:
        return False
    try:
        raw = base64.b64decode(s + "=" * (-len(s) % 4), validate=True)
        decoded = raw.decode("ascii")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    if not decoded.isprintable():
        return False
    user, sep, pw = decoded.partition(":")
    return bool(sep and pw and not _is_placeholder(pw))


def _token_value_check(m: re.Match[str], text: str) -> bool:
    s = m.group("s").rstrip(".,;")
    if _is_boring(s) or not _varied(s, 6):
        return False
    has_digit = any(c.isdigit() for c in s)
    has_alpha = any(c.isalpha() for c in s)
    return (has_digit and has_alpha) or (len(s) >= 20 and _entropy(s) >= 3.5)


def _url_password_check(m: re.Match[str], text: str) -> bool:
    pw = m.group("s")
    if _is_placeholder(pw) or (pw.isdigit() and len(pw) <= 5):
        return False
    return not (pw.startswith("$") or "{{" in pw or "${" in pw)


def _netrc_check(m: re.Match[str], text: str) -> bool:
    return _literal_ok(m.group("s"))


def _npm_rc_check(m: re.Match[str], text: str) -> bool:
    return _literal_ok(m.group("s"))


def _sas_check(m: re.Match[str], text: str) -> bool:
    low = text.lower()
    return ("sv=" in low or "se=" in low or "sp=" in low) and _varied(m.group("s"), 10)


# Seed phrases: words that never appear in the BIP-39 English list.
_SEED_STOPWORDS = frozenset(
    """the and for you not are was but with that this from have they its our your
    will into their what when which should would could been were has had does did
    them than there then these those some very just also""".split()
)
_SEED_LENGTHS = (24, 21, 18, 15, 12)


def _seed_check(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    start = m.start("s")
    words = list(_rx(r"[a-z]+").finditer(m.group("s")))
    good = []
    for w in words:
        if w.group(0) in _SEED_STOPWORDS:
            break
        good.append(w)
    for n in _SEED_LENGTHS:
        if len(good) >= n:
            return start + good[0].start(), start + good[n - 1].end(), "seed phrase"
    return None


# ---- keyword assignments (detect-secrets KeywordDetector, prose-aware) ----

_KW_CORE = (
    r"pass(?:word|wd|phrase|code)?s?|pwd|pw"
    r"|client[_.-]?secrets?|secret[_.-]?(?:access[_.-]?)?keys?|secrets?"
    r"|(?:access|auth|refresh|bearer|bot|api|session|id|oauth|personal[_.-]?access)"
    r"[_.-]?tokens?|tokens?"
    r"|api[ _.-]?keys?|apikeys?|access[_.-]?keys?|auth[_.-]?keys?"
    r"|private[_.-]?keys?|signing[_.-]?keys?|master[_.-]?keys?|encryption[_.-]?keys?"
    r"|credentials?|creds"
)
_KW_SUFFIX = r"(?:[_.-](?:value|base|b64|base64|hex|str|string|raw|plain|plaintext|text|\d))?"
_KW_RE_SRC = (
    r"(?<![A-Za-z0-9])"
    r"(?P<name>"
    r"(?:(?:[A-Za-z0-9]{1,40}[_.-]){1,6}"
    r"|(?-i:[a-z][a-z0-9]{0,40})(?=(?-i:[A-Z]))"
    r"|(?-i:[A-Z][A-Z0-9]{0,40})(?=(?-i:PASS|PWD|SECRET|TOKEN|APIKEY)))?"
    r"(?:" + _KW_CORE + r")" + _KW_SUFFIX + r")"
    r"(?![A-Za-z0-9_])"
    r"[\"'`*\]]*"
    r"(?P<gap>\s*\([^()\n]{1,30}\)|\s+(?:for|of|on)\s+(?:the\s+)?[\w.@/-]{1,30}(?:\s+[\w.@/-]{1,30}){0,2})?"
    r"[\"'`*]*"
    r"(?P<op>\s*(?::=|=>|==|=|:)\s*|\s+(?:is|was|are|were)\s+(?:set\s+to\s+)?)"
    r"(?P<val>\"[^\"\n]{0,256}\"|'[^'\n]{0,256}'|`[^`\n]{0,256}`|[^\s\"'`,;<>)\]]{1,256})"
)

_KW_STOP_PARTS = (
    "page",
    "next",
    "prev",
    "continuation",
    "csrf",
    "xsrf",
    "cursor",
    "sync",
    "pagination",
    "max",
    "min",
    "num",
    "total",
    "count",
    "input",
    "output",
    "prompt",
    "completion",
    "public",
    "pub",
    "publishable",
    "cache",
    "reasoning",
    "context",
    "limit",
    "budget",
    "fake",
    "example",
    "dummy",
    "mock",
)


def _kw_kind(name: str) -> str:
    n = name.lower()
    if "pass" in n or "pwd" in n or n.endswith("pw"):
        return "password assignment"
    if "token" in n:
        return "token assignment"
    if "cred" in n:
        return "credential assignment"
    if "secret" in n:
        return "secret assignment"
    if _rx(r"api[ _.-]?key|apikey|access[_.-]?key|auth[_.-]?key").search(n):
        return "API key assignment"
    return "key assignment"


def _keyword_check(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    name = m.group("name")
    split = _rx(r"([a-z0-9])([A-Z])").sub(r"\1 \2", name)
    parts = {p.lower() for p in _rx(r"[A-Za-z0-9]+").findall(split)}
    if parts & set(_KW_STOP_PARTS):
        return None
    val = m.group("val")
    start = m.start("val")
    op = m.group("op").strip()
    quoted = len(val) >= 2 and val[0] in "\"'`" and val[-1] == val[0]
    if quoted:
        inner = val[1:-1].strip()
        start += val.index(inner) if inner else 1
        if " " in inner:
            # a quoted phrase: a passphrase, or prose ("see the vault")?
            words = inner.lower().split()
            if len(words) > 8 or any(w in _SEED_STOPWORDS or w in _PROSE_WORDS for w in words):
                return None
        ok = _literal_ok(inner)
        val = inner
    else:
        code_style = op in ("=", ":=", "=>", "==") and not m.group("op")[0].isspace()
        code_style = code_style and not m.group("gap")
        val = val.rstrip(".,") if code_style else val.rstrip(".,;:")
        if code_style:
            ok = _literal_ok(val) and (len(val) >= 6 or any(c.isdigit() for c in val))
        else:
            ok = _looks_random(val)
    if not ok:
        return None
    return start, start + len(val), _kw_kind(name)


_PROSE_WORDS = frozenset(
    """see in at on stored kept ask use uses using same as is via lives found
    check from under our my your vault 1password bitwarden lastpass keychain env
    rotated rotate managed provided generated shared given sent""".split()
)


# ---- the rule table ----

_DS = "detect-secrets "  # doc prefix for formats documented by a detect-secrets plugin
_GL = "gitleaks rule "

_RULES: tuple[_Rule, ...] = (
    # --- cloud providers
    _Rule(
        "AWS access key ID",
        ("akia", "asia", "abia", "acca", "a3t"),
        _AWS_ID_SRC,
        check=_aws_id_check,
        doc=_DS + "AWSKeyDetector",
    ),
    _Rule(
        "AWS secret access key",
        ("aws",),
        r"(?i:aws)[\w .-]{0,30}?(?i:secret|sk\b)[\w .-]{0,30}?[\"'`*\]]*"
        r"\s*(?::=|=>|=|:|\s)\s*[\"'`]?"
        r"(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        group="s",
        check=_aws_secret_kw_check,
        doc=_DS + "AWSKeyDetector",
    ),
    _Rule(
        "AWS secret access key",
        ("akia", "asia", "abia", "acca", "a3t"),
        r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
        check=_aws_secret_near_id_check,
        doc=_DS + "AWSKeyDetector",
    ),
    _Rule(
        "Google API key",
        ("aiza",),
        _L + r"AIza[0-9A-Za-z_-]{35}" + _R,
        check=_plausible,
        doc=_GL + "gcp-api-key",
    ),
    _Rule(
        "Azure storage account key",
        ("accountkey",),
        r"(?i:AccountKey)\s*=\s*(?P<s>[A-Za-z0-9+/]{40,}={0,2})",
        group="s",
        check=lambda m, t: _varied(m.group("s"), 12),
        doc=_DS + "AzureStorageKeyDetector",
    ),
    _Rule(
        "Azure SAS token",
        ("sig=",),
        r"(?<![A-Za-z0-9_])sig=(?P<s>[A-Za-z0-9%+/]{30,}(?:%3D|=){0,2})",
        group="s",
        check=_sas_check,
        doc="https://learn.microsoft.com/en-us/azure/storage/common/storage-sas-overview",
    ),
    _Rule(
        "Azure AD client secret",
        ("q~",),
        r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
        check=_plausible,
        doc=_GL + "azure-ad-client-secret",
    ),
    _Rule(
        "DigitalOcean token",
        ("_v1_",),
        r"(?<![A-Za-z0-9_])do[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9_])",
        check=_plausible,
        doc=_GL + "digitalocean-pat",
    ),
    _Rule(
        "Heroku API key",
        ("hrku-",),
        _L + r"HRKU-[A-Za-z0-9_-]{40,}" + _R,
        check=_plausible,
        doc=_GL + "heroku-api-key-v2",
    ),
    _Rule(
        "Heroku API key",
        ("heroku",),
        r"(?i:heroku)[\w .-]{0,30}?(?i:key|token|api|auth|secret|password)[\w .-]{0,10}?"
        r"[\"'`*\]]*\s*(?::=|=>|=|:)\s*[\"'`]?"
        r"(?P<s>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})" + _RA,
        group="s",
        doc=_GL + "heroku-api-key",
    ),
    _Rule(
        "Alibaba Cloud access key ID",
        ("ltai",),
        _LA + r"LTAI[A-Za-z0-9]{20}" + _RA,
        check=_mixed,
        doc=_GL + "alibaba-access-key-id",
    ),
    # --- source hosting and CI
    _Rule(
        "GitHub token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9_]{36,251}(?![A-Za-z0-9_])",
        check=_plausible,
        doc=_DS + "GitHubTokenDetector",
    ),
    _Rule(
        "GitHub fine-grained token",
        ("github_pat_",),
        r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{50,255}(?![A-Za-z0-9_])",
        check=_plausible,
        doc=_GL + "github-fine-grained-pat",
    ),
    _Rule(
        "GitLab token",
        (
            "glpat-",
            "gldt-",
            "glft-",
            "glsoat-",
            "glrt-",
            "glffct-",
            "glimt-",
            "glagent-",
            "gloas-",
            "glptt-",
            "glcbt-",
            "gr1348941",
        ),
        _L + r"(?:(?:glpat|gldt|glft|glsoat|glrt|glffct|glimt|glagent|gloas|glptt)-"
        r"[A-Za-z0-9_-]{20,300}(?:\.[0-9a-z]{9})?"
        r"|glcbt-(?:[0-9a-fA-F]{2}_)?[A-Za-z0-9_-]{20,}|GR1348941[A-Za-z0-9_-]{20,})" + _R,
        check=_plausible,
        doc=_DS + "GitLabTokenDetector",
    ),
    _Rule(
        "GitLab session cookie",
        ("_gitlab_session=",),
        r"_gitlab_session=(?P<s>[0-9a-z]{32})" + _RA,
        group="s",
        check=lambda m, t: _varied(m.group("s"), 8),
        doc=_GL + "gitlab-session-cookie",
    ),
    _Rule(
        "Atlassian API token",
        ("atatt3",),
        _L + r"ATATT3[A-Za-z0-9_=-]{150,}" + _R,
        check=_plausible,
        doc=_GL + "atlassian-api-token",
    ),
    _Rule(
        "Bitbucket app password",
        ("atbb",),
        _L + r"ATBB[A-Za-z0-9_=.-]{28,}" + _R,
        check=_mixed,
        doc="https://support.atlassian.com/bitbucket-cloud/docs/app-passwords/",
    ),
    _Rule(
        "Terraform Cloud token",
        ("atlasv1",),
        _LA + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}" + _R,
        check=_plausible,
        doc=_GL + "hashicorp-tf-api-token",
    ),
    _Rule(
        "HashiCorp Vault token",
        ("hvs.", "hvb."),
        r"(?<![A-Za-z0-9_.])hv[sb]\.[A-Za-z0-9_-]{90,300}" + _R,
        check=_plausible,
        doc=_GL + "vault-service-token",
    ),
    _Rule(
        "Databricks token",
        ("dapi",),
        r"(?<![A-Za-z0-9_])dapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9_])",
        check=_mixed,
        doc=_GL + "databricks-api-token",
    ),
    _Rule(
        "Doppler token",
        ("dp.",),
        r"(?<![A-Za-z0-9_.])dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}" + _RA,
        check=_plausible,
        doc=_GL + "doppler-api-token",
    ),
    _Rule(
        "Pulumi token",
        ("pul-",),
        _L + r"pul-[a-f0-9]{40}" + _R,
        check=_mixed,
        doc=_GL + "pulumi-api-token",
    ),
    _Rule(
        "PlanetScale token",
        ("pscale_",),
        r"(?<![A-Za-z0-9_])pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,64}" + _R,
        check=_plausible,
        doc=_GL + "planetscale-api-token",
    ),
    _Rule(
        "Grafana token",
        ("glsa_", "glc_", "eyjrijoi"),
        r"(?<![A-Za-z0-9_])(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,3}"
        r"|eyJrIjoi[A-Za-z0-9]{70,400}={0,3})" + _RA,
        check=_plausible,
        doc=_GL + "grafana-service-account-token",
    ),
    _Rule(
        "New Relic key",
        ("nrak-", "nrii-"),
        _L + r"(?:NRAK-[A-Za-z0-9]{27}|NRII-[A-Za-z0-9-]{32})" + _R,
        check=_plausible,
        doc=_GL + "new-relic-user-api-key",
    ),
    _Rule(
        "Sentry token",
        ("sntryu_", "sntrys_"),
        r"(?<![A-Za-z0-9_])(?:sntryu_[a-f0-9]{64}|sntrys_eyJ[A-Za-z0-9+/=_]{60,})" + _RA,
        check=_plausible,
        doc=_GL + "sentry-user-token",
    ),
    _Rule(
        "Postman API key",
        ("pmak-",),
        _L + r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}" + _R,
        check=_plausible,
        doc=_GL + "postman-api-token",
    ),
    _Rule(
        "Linear API key",
        ("lin_api_",),
        r"(?<![A-Za-z0-9_])lin_api_[A-Za-z0-9]{40}" + _RA,
        check=_plausible,
        doc=_GL + "linear-api-key",
    ),
    _Rule(
        "Notion token",
        ("ntn_", "secret_"),
        r"(?<![A-Za-z0-9_])(?:ntn_\d{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})" + _RA,
        check=_mixed_case,
        doc=_GL + "notion-api-token",
    ),
    _Rule(
        "Artifactory token",
        ("akcp", "cmvmd"),
        _LA + r"(?:AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})" + _RA,
        check=_plausible,
        doc=_DS + "ArtifactoryDetector",
    ),
    _Rule(
        "1Password secret",
        ("ops_eyj", "a3-"),
        r"(?<![A-Za-z0-9_])(?:ops_eyJ[A-Za-z0-9+/]{250,}={0,3}"
        r"|A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})"
        + _RA,
        check=_plausible,
        doc=_GL + "1password-secret-key",
    ),
    # --- package registries
    _Rule(
        "npm token",
        ("npm_",),
        r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}" + _RA,
        check=_plausible,
        doc=_DS + "NpmDetector",
    ),
    _Rule(
        "npm token",
        ("_authtoken",),
        r"(?i:_authToken)\s*=\s*[\"']?(?P<s>[^\s\"'$;]+)",
        group="s",
        check=_npm_rc_check,
        doc=_DS + "NpmDetector",
    ),
    _Rule(
        "PyPI token",
        ("pypi-ag",),
        r"pypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,}",
        check=_plausible,
        doc=_DS + "PypiTokenDetector",
    ),
    _Rule(
        "RubyGems API key",
        ("rubygems_",),
        r"(?<![A-Za-z0-9_])rubygems_[a-f0-9]{48}" + _RA,
        check=_plausible,
        doc=_GL + "rubygems-api-token",
    ),
    # --- chat and messaging
    _Rule(
        "Slack token",
        ("xox", "xapp-"),
        _LA + r"(?:(?i:xox[abposr])-(?:\d+-)+[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*"
        r"|xoxe\.xox[bp]-\d-[A-Za-z0-9]{100,}|xoxe-\d-[A-Za-z0-9]{100,}"
        r"|xapp-\d-[A-Za-z0-9]+-\d+-[A-Za-z0-9]+)",
        check=lambda m, t: len(m.group(0)) >= 24 and _varied(m.group(0), 8),
        doc=_DS + "SlackDetector",
    ),
    _Rule(
        "Slack webhook URL",
        ("hooks.slack.com",),
        r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}",
        check=_plausible,
        doc=_DS + "SlackDetector",
    ),
    _Rule(
        "Discord webhook URL",
        ("discord.com/api/webhooks", "discordapp.com/api/webhooks"),
        r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}",
        check=_plausible,
        doc="https://discord.com/developers/docs/resources/webhook#execute-webhook",
    ),
    _Rule(
        "Microsoft Teams webhook URL",
        ("webhook.office.com",),
        r"https://[A-Za-z0-9-]+\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/-]{60,}",
        check=_plausible,
        doc=_GL + "microsoft-teams-webhook",
    ),
    _Rule(
        "Telegram bot token",
        (),  # shape rule: no literal anchor
        r"(?:(?<=/bot)|(?<![A-Za-z0-9:/_-]))\d{8,10}:[A-Za-z0-9_-]{35}" + _R,
        check=_telegram_check,
        doc=_DS + "TelegramBotTokenDetector",
    ),
    _Rule(
        "Discord bot token",
        (),
        _L + r"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}" + _R,
        check=_mixed_case,
        doc=_DS + "DiscordBotTokenDetector",
    ),
    _Rule(
        "Twilio API key",
        (),
        _LA + r"SK[0-9a-fA-F]{32}" + _RA,
        check=_mixed,
        doc=_DS + "TwilioKeyDetector",
    ),
    _Rule(
        "Twilio account SID",
        (),
        _LA + r"AC[0-9a-f]{32}" + _RA,
        check=_mixed,
        doc=_DS + "TwilioKeyDetector",
    ),
    _Rule(
        "SendGrid API key",
        ("sg.",),
        _L + r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _R,
        check=_plausible,
        doc=_DS + "SendGridDetector",
    ),
    _Rule(
        "Sendinblue API key",
        ("xkeysib-",),
        _L + r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}" + _R,
        check=_plausible,
        doc=_GL + "sendinblue-api-token",
    ),
    _Rule(
        "Mailgun API key",
        ("key-",),
        _L + r"key-[0-9a-f]{32}" + _R,
        check=_mixed,
        doc=_GL + "mailgun-private-api-token",
    ),
    _Rule(
        "Mailchimp API key",
        ("-us",),
        _LA + r"[0-9a-f]{32}-us\d{1,2}" + _RA,
        check=_mixed,
        doc=_DS + "MailchimpDetector",
    ),
    # --- payments and commerce
    _Rule(
        "Stripe secret key",
        ("sk_live", "sk_test", "sk_prod"),
        r"(?<![A-Za-z0-9_])sk_(?:live|test|prod)_[A-Za-z0-9]{10,247}" + _RA,
        check=_plausible,
        doc=_DS + "StripeDetector",
    ),
    _Rule(
        "Stripe restricted key",
        ("rk_live", "rk_test", "rk_prod"),
        r"(?<![A-Za-z0-9_])rk_(?:live|test|prod)_[A-Za-z0-9]{10,247}" + _RA,
        check=_plausible,
        doc=_DS + "StripeDetector",
    ),
    _Rule(
        "Stripe publishable key",
        ("pk_live",),
        r"(?<![A-Za-z0-9_])pk_live_[A-Za-z0-9]{20,247}" + _RA,
        check=_plausible,
        doc="https://docs.stripe.com/keys",
    ),
    _Rule(
        "Stripe webhook secret",
        ("whsec_",),
        r"(?<![A-Za-z0-9_])whsec_[A-Za-z0-9+/=]{24,}" + _RA,
        check=_plausible,
        doc="https://docs.stripe.com/webhooks",
    ),
    _Rule(
        "Square access token",
        ("sq0atp-", "sq0csp-", "eaaa"),
        _L
        + r"(?:sq0atp-[0-9A-Za-z_-]{22}|sq0csp-[0-9A-Za-z_-]{43}|EAAA[0-9A-Za-z_-]{56,100})"
        + _R,
        check=_plausible,
        doc=_DS + "SquareOAuthDetector",
    ),
    _Rule(
        "Shopify token",
        ("shpat_", "shpca_", "shppa_", "shpss_"),
        r"(?<![A-Za-z0-9_])shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _RA,
        check=_mixed,
        doc=_GL + "shopify-access-token",
    ),
    _Rule(
        "Facebook access token",
        ("eaac", "eaam"),
        _LA + r"EAA[CM][A-Za-z0-9]{100,}" + _RA,
        check=_plausible,
        doc=_GL + "facebook-page-access-token",
    ),
    # --- AI providers
    _Rule(
        "Anthropic API key",
        ("sk-ant-",),
        _L + r"sk-ant-(?:[a-z]+\d{2}-)?[A-Za-z0-9_-]{32,}" + _R,
        check=_plausible,
        doc=_GL + "anthropic-api-key",
    ),
    _Rule(
        "OpenAI API key",
        ("sk-",),
        _L + r"sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}"
        r"|[A-Za-z0-9_-]*[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}"
        r"|[A-Za-z0-9]{32,})" + _R,
        check=_mixed,
        doc=_DS + "OpenAIDetector",
    ),
    _Rule(
        "Hugging Face token",
        ("hf_", "api_org_"),
        r"(?<![A-Za-z0-9_])(?:hf_[A-Za-z0-9]{34,40}|api_org_[A-Za-z0-9]{34})" + _RA,
        check=_mixed_case,
        doc=_GL + "huggingface-access-token",
    ),
    _Rule(
        "Perplexity API key",
        ("pplx-",),
        _L + r"pplx-[A-Za-z0-9]{48}" + _R,
        check=_plausible,
        doc=_GL + "perplexity-api-key",
    ),
    # --- other formats
    _Rule(
        "Mapbox secret token",
        ("sk.eyj",),
        _LA + r"sk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}",
        check=_plausible,
        doc="https://docs.mapbox.com/help/glossary/access-token/",
    ),
    _Rule(
        "JSON Web Token",
        ("eyj",),
        _L + r"eyJ[A-Za-z0-9_-]{10,}={0,2}\.[A-Za-z0-9_-]{10,}={0,2}\.[A-Za-z0-9_+/=-]*",
        check=_jwt_check,
        doc=_DS + "JwtTokenDetector",
    ),
    _Rule(
        "age secret key",
        ("age-secret-key-1",),
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        doc=_GL + "age-secret-key",
    ),
    # --- structural rules
    _Rule(
        "private key block",
        ("private key", "putty-user-key-file"),
        r"-{2,}\s*BEGIN[ A-Z0-9_-]{0,100}?PRIVATE KEY(?: BLOCK)?\s*-*|PuTTY-User-Key-File-\d:",
        priority=1,
        doc=_DS + "PrivateKeyDetector",
    ),
    _Rule(
        "private key material",
        (
            "ibaakc",
            "ibadanbgkqhkig9w0baqefaas",
            "ageambmgbyqgsm49ageg",
            "mc4caqawbqydk2vwbciei",
            "mhccaqeei",
            "b3blbnnzac1rzxktdjea",
        ),
        r"(?<![A-Za-z0-9+/])(?:MII[A-Za-z0-9+/]{3}IBAAKC[AB]|MII[A-Za-z0-9+/]{3}IBADANBgkqhkiG9w0BAQEFAAS"
        r"|MIG[A-Za-z0-9+/]AgEAMBMGByqGSM49AgEG|MC4CAQAwBQYDK2VwBCIEI|MHcCAQEEI"
        r"|b3BlbnNzaC1rZXktdjEA)[A-Za-z0-9+/]{16,}={0,2}",
        priority=1,
        doc="https://datatracker.ietf.org/doc/html/rfc5958",
    ),
    _Rule(
        "password in URL",
        (),  # dispatched by the URL fragment of the prefilter
        r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,30}://(?P<u>[^\s:/?#@\[\]]{0,256}):"
        r"(?P<s>[^\s/?#]{1,256})@(?=[A-Za-z0-9\[_])",
        group="s",
        check=_url_password_check,
        priority=1,
        doc=_DS + "BasicAuthDetector",
    ),
    _Rule(
        "HTTP Basic credentials",
        ("basic",),
        r"(?i:\bbasic)\s+(?P<s>[A-Za-z0-9+/]{6,1024}={0,2})(?![A-Za-z0-9+/=])",
        group="s",
        check=_basic_check,
        priority=1,
        doc="https://datatracker.ietf.org/doc/html/rfc7617",
    ),
    _Rule(
        "bearer token",
        ("bearer",),
        r"(?i:\bbearer)\s+(?P<s>[A-Za-z0-9._~+/-]{16,4096}={0,2})",
        group="s",
        check=_token_value_check,
        priority=1,
        doc="https://datatracker.ietf.org/doc/html/rfc6750",
    ),
    _Rule(
        "Authorization header credential",
        ("authorization",),
        r"(?i:\bauthorization)[\"'`]?\s*[:=]\s*[\"'`]?(?!(?i:basic|bearer)\b)"
        r"(?:(?i:token|apikey|api-key|key|sso-key|digest|hmac)[ =])?"
        r"(?P<s>[A-Za-z0-9._~+/=:-]{16,4096})",
        group="s",
        check=_token_value_check,
        priority=1,
        doc="https://datatracker.ietf.org/doc/html/rfc9110#section-11.6.2",
    ),
    _Rule(
        "netrc credentials",
        ("machine",),
        r"(?i)\bmachine\s+\S+\s+login\s+\S+\s+password\s+(?P<s>\S+)",
        group="s",
        check=_netrc_check,
        priority=1,
        doc="https://www.gnu.org/software/inetutils/manual/html_node/The-_002enetrc-file.html",
    ),
    _Rule(
        "seed phrase",
        ("seed", "mnemonic", "recovery", "phrase"),
        r"(?i:seed(?:[ _-]?(?:phrase|words))?|mnemonic(?:[ _-]?phrase)?"
        r"|(?:secret[ _-]?)?recovery[ _-]?(?:phrase|words)|secret[ _-]?phrase)"
        r"[\"'`*]*\s*(?:(?i:is|was|=|:|-)\s*)?[\"'`]?(?P<s>(?:[a-z]{3,8}[ ,]+){11,30}[a-z]{3,8})",
        check=_seed_check,
        priority=1,
        doc="https://github.com/bitcoin/bips/blob/master/bip-0039.mediawiki",
    ),
    _Rule(
        "keyword assignment",  # kind refined by _keyword_check
        (
            "pass",
            "pwd",
            "pw",
            "secret",
            "token",
            "key",
            "credential",
            "creds",
        ),
        _KW_RE_SRC,
        flags=re.IGNORECASE,
        check=_keyword_check,
        priority=2,
        doc=_DS + "KeywordDetector",
    ),
)

_KEYWORD_KINDS = (
    "password assignment",
    "token assignment",
    "credential assignment",
    "secret assignment",
    "API key assignment",
    "key assignment",
)
#: Every kind scan_text can report: fixed names, never built from the text.
KINDS: frozenset[str] = frozenset(
    [r.kind for r in _RULES if r.kind != "keyword assignment"] + list(_KEYWORD_KINDS)
)

# Rules without a literal anchor are dispatched by one of these.
# "password in URL": run on the lowercased line when it contains "://".
_URL_CRED_TRIGGER = r"://[^\s/?#@:]{0,256}:[^\s/?#]{0,256}@"
# Twilio SK/AC, Discord bot tokens, Telegram bot tokens: case-sensitive shapes
# on the original line, each starting with a rare character (S, A, '.', ':').
_SHAPE_TRIGGER = (
    r"SK[0-9a-fA-F]{32}|AC[0-9a-f]{32}"
    r"|\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}"
    r"|:(?<=\d{8}:)[A-Za-z0-9_-]{35}"
)
# The keyword rule runs only where a keyword is followed by an operator.
_KW_TRIGGER = (
    r"(?:pass|pwd|pw|secret|token|key|cred)[a-z0-9_.-]{0,40}[\"'`*\]]{0,4}"
    r"(?:\s*\([^()\n]{1,30}\)|\s+(?:for|of|on)\s+(?:the\s+)?[\w.@/-]{1,30}(?:\s+[\w.@/-]{1,30}){0,2})?"
    r"[\"'`*]*"
    r"(?:\s*[:=]|\s+(?:is|was|are|were)\s)"
)
_SEED_TRIGGER = (
    r"(?:seed|mnemonic|recovery|secret[ _-]?phrase)(?:[ _-]?(?:phrase|words))?[\"'`*]*\s*"
    r"(?:(?:is|was|=|:|-)\s*)?[\"'`]?(?:[a-z]{3,8}[ ,]+){11}"
)
# kind -> regex on the lowercased line; the rule's own regex then runs only at
# the places found (see _matches)
_TRIGGERS = {"keyword assignment": _KW_TRIGGER, "seed phrase": _SEED_TRIGGER}
# Anchors that dispatch only when followed by what their rule needs (on the
# lowercased line), so that prose words ("the key decision") dispatch nothing.
_KW_TAIL = _KW_TRIGGER[_KW_TRIGGER.index(")") + 1 :]
_SEED_TAIL = r"[\"'`*]*\s*(?:(?:is|was|=|:|-)\s*)?[\"'`]?(?:[a-z]{3,8}[ ,]+){11}"
_ANCHOR_LOOKAHEAD = {
    **{
        kw: _KW_TAIL
        for kw in ("pass", "pwd", "pw", "secret", "token", "key", "credential", "creds")
    },
    "seed": r"(?:[ _-]?(?:phrase|words))?" + _SEED_TAIL,
    "mnemonic": r"(?:[ _-]?phrase)?" + _SEED_TAIL,
    "recovery": r"[ _-]?(?:phrase|words)" + _SEED_TAIL,
    "phrase": _SEED_TAIL,
    "basic": r"\s+[a-z0-9+/]{6}",
    "bearer": r"\s+[a-z0-9._~+/-]{16}",
    "authorization": r"[\"'`]?\s*[:=]",
    "aws": r"[\w .-]{0,30}?(?:secret|sk\b)",
    "heroku": r"[\w .-]{0,30}?(?:key|token|api|auth|secret|password)",
    "machine": r"\s+\S+\s+login\s",
    "key-": r"[0-9a-f]{32}",
    "-us": r"(?<=[0-9a-f]{8}-us)\d",
    "secret_": r"[a-z0-9]{43}",
}
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


# --------------------------------------------------------------------------
# engine
# --------------------------------------------------------------------------


def _trie_regex(words: Iterable[str], lookahead: dict[str, str]) -> str:
    """An alternation of literals shaped as a trie, so that the regex engine
    tests one branch per position instead of every word.  An anchor listed in
    `lookahead` only counts when that regex matches right after it."""
    trie: dict[str, dict] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {"": lookahead.get(word, "")}  # type: ignore[dict-item]

    def build(node: dict[str, dict]) -> str:
        alts = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        end = node.get("")
        if end is not None:
            # prefer the longest anchor ("sk-ant-" over "sk-"), then this one
            ahead: str = end[""]  # type: ignore[assignment]
            alts.append("(?=" + ahead + ")" if ahead else "")
        if len(alts) == 1:
            return alts[0]
        return "(?:" + "|".join(alts) + ")"

    return build(trie)


class _Lazy:
    """A rule's regex, compiled the first time a line needs it.

    Most pushes touch a handful of anchors, so compiling all rules up front
    (10-30 ms) would be paid for nothing on every hook run.
    """

    __slots__ = ("pattern", "flags", "_rx")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._rx: re.Pattern[str] | None = None

    @property
    def rx(self) -> re.Pattern[str]:
        if self._rx is None:
            self._rx = re.compile(self.pattern, self.flags)
        return self._rx

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.rx.finditer(text)

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        return self.rx.match(text, pos)


_Pair = tuple[_Rule, _Lazy, "_Lazy | None"]


@dataclass
class _Compiled:
    anchors: re.Pattern[str]
    by_anchor: dict[str, list[_Pair]]
    url_trigger: re.Pattern[str]
    url_rules: list[_Pair]
    shape_trigger: re.Pattern[str]
    shape_rules: list[_Pair]


_compiled: _Compiled | None = None


def _compile() -> _Compiled:
    """Build the anchor prefilter once, on the first scan; rules compile when first needed."""
    global _compiled
    if _compiled is not None:
        return _compiled
    pairs: list[_Pair] = []
    for rule in _RULES:
        trigger = _TRIGGERS.get(rule.kind)
        pairs.append(
            (
                rule,
                _Lazy(rule.pattern, rule.flags),
                _Lazy(trigger) if trigger else None,
            )
        )
    direct: dict[str, list[_Pair]] = {}
    for pair in pairs:
        for anchor in pair[0].anchors:
            direct.setdefault(anchor, []).append(pair)
    # The prefilter reports the longest anchor at each place, so an anchor match
    # also dispatches the rules of every anchor it contains ("sk-ant-" has "sk-").
    by_anchor: dict[str, list[_Pair]] = {}
    for anchor in direct:
        merged: list[_Pair] = []
        for other, rules in direct.items():
            if other in anchor:
                merged.extend(r for r in rules if r not in merged)
        by_anchor[anchor] = merged
    url_rules = [p for p in pairs if p[0].kind == "password in URL"]
    shape_rules = [p for p in pairs if not p[0].anchors and p[0].kind != "password in URL"]
    _compiled = _Compiled(
        anchors=re.compile(_trie_regex(direct, _ANCHOR_LOOKAHEAD)),
        by_anchor=by_anchor,
        url_trigger=re.compile(_URL_CRED_TRIGGER),
        url_rules=url_rules,
        shape_trigger=re.compile(_SHAPE_TRIGGER),
        shape_rules=shape_rules,
    )
    return _compiled


def _select(text: str, lowered: str, comp: _Compiled) -> list[_Pair]:
    selected: list[_Pair] = []
    for hit in comp.anchors.finditer(lowered):
        for pair in comp.by_anchor[hit.group(0)]:
            if pair not in selected:
                selected.append(pair)
    if "://" in lowered and comp.url_trigger.search(lowered):
        selected.extend(comp.url_rules)
    if comp.shape_trigger.search(text):
        selected.extend(comp.shape_rules)
    return selected


def _name_starts(text: str, at: int) -> list[int]:
    """Where a keyword name that contains the keyword found at `at` may begin:
    DB_PASSWORD, dbPassword, "api key", --password, or the keyword itself."""
    p = at
    low = max(0, at - 64)
    while p > low and text[p - 1] in _NAME_CHARS:
        p -= 1
    starts = [p]
    if p >= 4 and text[p - 4 : p].lower() == "api ":
        starts.insert(0, p - 4)
    q = p
    while q < at and not text[q].isalnum():
        q += 1
    if q not in starts:
        starts.append(q)
    if at not in starts:
        starts.append(at)
    return starts


def _matches(
    rx: _Lazy, trigger: _Lazy | None, kind: str, text: str, lowered: str
) -> Iterable[re.Match[str]]:
    if trigger is None:
        return rx.finditer(text)
    hits = list(trigger.finditer(lowered))
    if not hits:
        return ()
    if len(lowered) != len(text):  # lower() changed offsets (rare Unicode): scan it all
        return rx.finditer(text)
    found: list[re.Match[str]] = []
    for hit in hits:
        starts = [hit.start()] if kind == "seed phrase" else _name_starts(text, hit.start())
        for start in starts:
            m = rx.match(text, start)
            if m is not None:
                found.append(m)
                break
    return found


def scan_text(text: str) -> list[SecretFinding]:
    """Scan one line of text (an entry's text or a metadata value). Empty list if nothing found."""
    comp = _compiled or _compile()
    lowered = text.lower()
    selected = _select(text, lowered, comp)
    if not selected:
        return []
    candidates: list[tuple[int, int, int, str]] = []  # priority, start, end, kind
    for rule, rx, trigger in selected:
        for m in _matches(rx, trigger, rule.kind, text, lowered):
            kind = rule.kind
            start, end = m.span(rule.group)
            if rule.check is not None:
                verdict = rule.check(m, text)
                if not verdict:
                    continue
                if isinstance(verdict, tuple):
                    start, end, kind = verdict
            if end > start:
                candidates.append((rule.priority, start, end, kind))
    if not candidates:
        return []
    # Overlapping findings: the most specific rule wins, then the earliest.
    candidates.sort()
    kept: list[tuple[int, int, str]] = []
    for _prio, start, end, kind in candidates:
        if all(end <= s or start >= e for s, e, _k in kept):
            kept.append((start, end, kind))
    kept.sort()
    return [SecretFinding(kind, start, end) for start, end, kind in kept]


def scan_lines(lines: Iterable[str]) -> list[tuple[int, SecretFinding]]:
    """(0-based index, finding) for each line with a finding."""
    out: list[tuple[int, SecretFinding]] = []
    for index, line in enumerate(lines):
        for finding in scan_text(line):
            out.append((index, finding))
    return out


# --- deep mode: detect-secrets' own plugins ------------------------------------------

# Plugins that make sense on prose lines. Left out: the two high-entropy plugins
# (in line-by-line "adhoc" scanning they flag ordinary words) and public IPs
# (an address in a memory is not a credential).
_DEEP_EXCLUDED = frozenset({"Base64HighEntropyString", "HexHighEntropyString",
                            "IPPublicDetector"})
_deep_ready: list[bool] = []


def _configure_deep() -> None:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.settings import get_settings

    plugins: list[type] = list(get_mapping_from_secret_type_to_class().values())
    names = sorted(c.__name__ for c in plugins if c.__name__ not in _DEEP_EXCLUDED)
    get_settings().configure_plugins([{"name": n} for n in names])
    _deep_ready.append(True)


def scan_text_deep(text: str) -> list[SecretFinding]:
    """``scan_text`` plus detect-secrets' own plugins, configured for prose lines.

    Opt-in (policy ``secrets: deep``): importing detect-secrets costs ~100-150 ms
    and its ``scan_line`` ~0.1-0.2 ms a line, too much for every push by default.
    A finding's kind is the plugin's secret type, a fixed name, never the text.
    """
    found = scan_text(text)
    if not _deep_ready:
        _configure_deep()
    from detect_secrets.core.scan import scan_line

    spans = [(f.start, f.end) for f in found]
    for secret in scan_line(text):
        value = secret.secret_value or ""
        start = text.find(value) if value else -1
        if start < 0:
            start, end = 0, len(text)
        else:
            end = start + len(value)
        if any(not (end <= s or start >= e) for s, e in spans):
            continue
        found.append(SecretFinding(f"{secret.type} (detect-secrets)", start, end))
        spans.append((start, end))
    return sorted(found, key=lambda f: f.start)
