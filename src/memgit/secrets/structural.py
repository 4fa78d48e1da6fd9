"""Structural detectors: credentials recognised by their surroundings, not a prefix.

Passwords in URLs and connection strings, credentials on command lines,
Authorization headers, crypt/bcrypt/argon2 hashes, PEM blocks and base64-encoded
PEM or ``user:pass``, XML elements, netrc lines, seed phrases, and generic
``name = value`` assignments whose name says credential (with a value test
that depends on how strongly the name says it: ``password`` needs less
evidence than ``*_key``). Markdown emphasis, code spans and link syntax
around a label or a value do not hide it (``- **Password:** X``).
"""

from __future__ import annotations

import base64
import binascii
import re
from functools import lru_cache

from . import values as V
from .engine import RUN_SHAPE
from .rules import Rule, check

_DS = "detect-secrets "


@check("url_password")
def _url_password(m: re.Match[str], text: str) -> bool:
    pw = m.group("s")
    if V.is_placeholder(pw) or (pw.isdigit() and len(pw) <= 5) or pw.lower() == "password":
        return False
    return not (pw.startswith("$") or "{{" in pw or "${" in pw or pw.startswith("%"))


def _decode_b64(s: str) -> str | None:
    try:
        raw = base64.b64decode(s + "=" * (-len(s) % 4), validate=True)
        return raw.decode("ascii")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None


def _user_pass(decoded: str | None) -> bool:
    if decoded is None or not decoded.isprintable():
        return False
    user, sep, pw = decoded.partition(":")
    return bool(sep and user and len(pw) >= 3 and " " not in user
                and not V.is_placeholder(pw) and not V.is_placeholder(user + ":" + pw))


@check("basic")
def _basic(m: re.Match[str], text: str) -> bool:
    s = m.group("s")
    return len(s.rstrip("=")) >= 6 and _user_pass(_decode_b64(s))


@check("b64_user_pass")
def _b64_user_pass(m: re.Match[str], text: str) -> bool:
    s = m.group("s")
    return len(s.rstrip("=")) >= 12 and _user_pass(_decode_b64(s))


@check("b64_pem")
def _b64_pem(m: re.Match[str], text: str) -> bool:
    s = m.group(0)
    decoded = _decode_b64(s[: len(s) - len(s) % 4])
    return decoded is not None and "PRIVATE KEY" in decoded


@check("token_value")
def _token_value(m: re.Match[str], text: str) -> bool:
    s = m.group("s").rstrip(".,;")
    if V.is_boring(s) or not V.varied(s, 6):
        return False
    has_digit = any(c.isdigit() for c in s)
    has_alpha = any(c.isalpha() for c in s)
    return (has_digit and has_alpha) or (len(s) >= 20 and V.entropy(s) >= 3.5)


@check("cli_value")
def _cli_value(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    val = m.group("s").strip("\"'")
    start = m.start("s") + m.group("s").index(val) if val else m.start("s")
    if len(val) < 4 or V.is_boring(val) or val.startswith("-") or V.self_describing(val.lower()):
        return None
    if val.isalpha() and val.islower() and len(val) < 8:
        return None  # mysql -p mydb? `-p` then a word: too often a database name
    return start, start + len(val), "command-line credential"


@check("cli_user_pass")
def _cli_user_pass(m: re.Match[str], text: str) -> bool:
    pw = m.group("s").strip("\"'")
    if pw.endswith(">") or "<" in m.group(0) or len(set(pw)) <= 2:
        return False  # <user:password>, xxx:yyy
    return len(pw) >= 3 and not V.is_placeholder(pw) and not V.is_reference(pw)


@check("table_cell")
def _table_cell(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    """A cell of a Markdown table row that only a password generator writes (a row
    such as ``| staging | admin | *ipIQuA5MsB7dP |``; the header is on another line)."""
    first = text.find("|")
    if m.start() == first or text[:first].strip():
        return None  # not a table row, or its first cell (a row's name)
    v, start = m.group("s"), m.start("s")
    if v[:2] == "**" and v[-2:] == "**":
        v, start = v[2:-2], start + 2  # bold: emphasis does not hide a value
    if len(v) < 10 or "/" in v or "@" in v and "." in v.split("@")[-1]:
        return None  # paths, e-mail addresses
    # *, !, & and % start a password as often as a reference (``*ptr``) in a table
    if V.is_placeholder(v) or (v[0] not in "*!&%" and V.is_boring(v)):
        return None
    upper, lower, digits = V.classes(v)
    other = len(v) - upper - lower - digits - v.count("-") - v.count("_") - v.count(".")
    if min(upper, lower) < 2 or digits < 1 or (other < 1 and digits < 3):
        return None
    if max((len(r) for r in V.rx(r"[a-z]+|[A-Z]+").findall(v)), default=0) > 6:
        return None  # an identifier's words (CamelCase, SNAKE_CASE), not generated
    if V.entropy(v) < 3.3 or V.wordy(v):
        return None
    return start, start + len(v), "password in a table"


@check("pem_header")
def _pem_header(m: re.Match[str], text: str) -> bool:
    """A header followed at once by its footer is an empty block, not a key."""
    return not text[m.end(): m.end() + 12].lstrip("-").startswith("END")


@check("pair_value")
def _pair_value(m: re.Match[str], text: str) -> bool:
    val = m.group("s").rstrip(".,;:)")
    return V.looks_random(val) and not V.is_reference(val)


@check("appsetting")
def _appsetting(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    val = m.group("s")
    if " " in val.strip() or not (V.literal_ok(val) and (V.looks_random(val) or V.token_like(val))):
        return None
    return m.start("s"), m.end("s"), kw_kind("", m.group("name"))


@check("xml_value")
def _xml_value(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    inner = m.group("s")
    best = None
    for tok in V.rx(r"[A-Za-z0-9+/=_.~-]{8,}").finditer(inner):
        if V.token_like(tok.group(0), 12) and (best is None or len(tok.group(0)) > len(best[1])):
            best = (tok.start(), tok.group(0))
    if best is None:
        val = inner.strip()
        if not V.literal_ok(val) or " " in val or not V.looks_random(val):
            return None
        best = (inner.index(val), val)
    start = m.start("s") + best[0]
    return start, start + len(best[1]), "secret assignment"


@check("hash")
def _hash(m: re.Match[str], text: str) -> tuple[int, int, str] | bool:
    # the salt or the digest, whichever is longer (a line may hold a hash cut short);
    # the engine's placeholder filter then judges the whole hash
    whole = m.group(0)
    body = max(V.rx(r"[$}]").split(whole), key=len)
    if len(body) < 8 or not V.varied(body, 8):
        return False
    if not V.is_placeholder(whole):
        return True
    # a placeholder salt (``$2a$05$XXXX...``) before a computed digest: a test vector's
    # real hash; only the digest is judged (bcrypt: 22 salt characters, then the digest)
    if V.rx(r"\$2[abxy]?\$\d\d\$").match(whole) and len(body) == 53:
        body = body[22:]
    start = m.start() + whole.rindex(body)
    return (start, start + len(body), "password hash") if len(body) >= 20 else False


def _generated(core: str, min_len: int, min_entropy: float) -> bool:
    if len(core) < min_len or core.islower() or core.isupper() or core.isdigit():
        return False
    if min(V.classes(core)) < 2:
        return False
    if V.entropy(core) < min_entropy:
        return False
    if max((len(r) for r in V.rx(r"[a-z]+|[A-Z]+").findall(core)), default=0) > 9:
        return False  # a random base62 string rarely has ten letters of one case in a row
    words = [w for w in V.rx(r"[A-Z][a-z]{3,}|[a-z]{4,}").findall(core) if V.wordlike(w)]
    return sum(len(w) for w in words) < 0.5 * len(core)


_known_prefix: list[re.Pattern[str]] = []


def _documented_prefix(token: str) -> bool:
    """True when the token starts with a provider format's documented prefix: such a
    token is judged by its format record alone (a near miss of it is not a secret)."""
    if not _known_prefix:
        from .formats import FORMATS

        kws = {k for r in FORMATS for k in r.get("keywords", ()) if len(k) >= 3}
        _known_prefix.append(re.compile(V.trie_regex(kws)))
    return _known_prefix[0].match(token.lower()) is not None


# Prefix words that name a digest or an id, not a credential (sha256_<hex>, build_<hex>).
_DIGEST_WORDS = frozenset(
    """sha sha1 sha224 sha256 sha384 sha512 md5 hash digest checksum crc etag commit rev revision
    build run job trace span request req id uid uuid guid ref blob tree object obj file cache
    image img tx txn block node pod container layer chunk part msg message event order user
    item key""".split()
)


# Prefix words of object ids, not credentials (Stripe cus_, OpenAI asst_/thread_/run_, Anthropic
# msg_/toolu_, coding agents' session ids ses_): the id names a record, it opens nothing.
_ID_WORDS = frozenset(
    """ses session msg message req request evt event cus sub prod price pi ch txn acct pm src
    card seti run job obj item doc chat chatcmpl conv thread asst file batch ft call toolu step
    trace span org proj usr user id uid""".split()
)


def _single_case_random(core: str, min_len: int) -> bool:
    digits = V.classes(core)[2]
    return (len(core) >= min_len and digits >= 4 and len(core) - digits >= 8
            and not V.rx(r"[0-9a-fA-F]+").fullmatch(core) and V.entropy(core) >= 4.0)


_PREFIXED = r"([a-z][a-z0-9]{1,9}(?:[_-][a-z0-9]{2,8}){0,2}[_-])([A-Za-z0-9][A-Za-z0-9_-]{19,})"
_URL_BEFORE = frozenset("/=?&#%@")
_PREFIX_START = re.compile(r"[a-z][a-z0-9]{1,9}[_-]")


@check("generated_token")
def _generated_token(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    """One pass for three shapes of generated credentials, cheapest rejections first."""
    start, end = m.span()
    token = m.group(0)
    while token[-1] in ".=" and len(token) > 20:  # sentence end or padding after a bare token
        token = token[:-1]
        end -= 1
    before = text[start - 1: start] if start else ""
    after = text[end: end + 1]
    quoted = before in ("\"", "'", "`") and after == before
    if before == ":" and not quoted:  # user:TOKEN, as in a credentials list or a URL's userinfo
        # scheme:word/... (memgit:observation/m-01...) is a URI's path, not user:TOKEN
        quoted = (V.rx(r"[a-z]+/").match(token) is None) and _user_before(text, start - 1)
    decoded = _decode_b64(m.group(0)) if len(m.group(0)) % 4 == 0 else None
    if decoded is not None and decoded.isprintable():
        if _user_pass(decoded):  # base64 of user:password, wherever it stands
            return m.start(), m.end(), "HTTP Basic credentials"
        if " " in decoded:
            return None  # base64 of prose, not a generated token
    if not quoted and len(token) < 32 and not _PREFIX_START.match(token):
        return None  # the common case: an id, a word run, a short path
    pm = V.rx(_PREFIXED).fullmatch(token)
    if pm is not None:
        if _id_prefix(pm.group(1)):
            return None  # ses_..., toolu_...: the id of a record
        if _prefixed_ok(pm.group(1), pm.group(2), token):
            return None if _named_not_secret(text, start) else (start, end, "API token")
    if quoted:
        if not _quoted_ok(token) or _named_not_secret(text, start):
            return None  # client_id = "...", publicToken: "...", authenticity_token
        return start, end, "high-entropy string"
    if (len(token) < 32 or before in _URL_BEFORE or token.startswith("AAAA")
            or "/" in token or "." in token):
        return None  # short, in a URL, an SSH key blob, a path
    core = V.rx(r"[^A-Za-z0-9]").sub("", token)
    if token.islower() or token.isupper():
        # one letter case: only long base36 keys (not hex, not ids), well mixed with digits
        if not (len(core) >= 40 and V.classes(core)[2] >= 8
                and _single_case_random(core, 40) and V.entropy(core) >= 4.4):
            return None
    elif not _generated(core, 32, 4.2):
        return None
    if V.rx(r"(?:ssh|ecdsa|sk)-[\w@.-]+\s+$").search(text[max(0, start - 80): start]):
        return None  # the key blob of an SSH public key line
    if V.is_boring(token) or _documented_prefix(token):
        return None
    return start, end, "API token"


# The last word of a name that says the value is public or an identifier, not a secret.
_NOT_SECRET_NAMES = frozenset(
    """id ids uuid guid public pub publishable name label hash digest sha checksum etag path
    url uri file version""".split()
)
_CSRF = frozenset("csrf xsrf authenticity".split())


def _named_not_secret(text: str, start: int) -> bool:
    """The assignment's name (``AUTH0_CLIENT_ID=``, ``"credentialId": ``, ``publicToken =``)
    ends with a word for an identifier or says public; or a CSRF field is near."""
    window = text[max(0, start - 80): start]
    name = _name_before(window)
    if name:
        words = [w.lower() for w in V.rx(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+").findall(name)]
        if words and (words[-1] in _NOT_SECRET_NAMES or "public" in words or "pub" in words):
            return True
    low = window.lower()
    return any(w in low for w in _CSRF)


_OPS = (":=", "=>", "==", "=", ":")


def _name_before(window: str) -> str:
    """The name assigned at the end of ``window`` (``name = "``, ``"name": ``), or ""."""
    w = window.rstrip(" \t\"'`")
    for op in _OPS:
        if w.endswith(op):
            w = w[: -len(op)].rstrip(" \t\"'`")
            break
    else:
        return ""
    m = V.rx(r"[\w.-]{1,41}").match(w[::-1])  # the identifier, read backwards
    return m.group(0)[::-1] if m is not None else ""


def _user_before(text: str, colon: int) -> bool:
    """A user name (not a digest or scheme name) ends at ``colon``, after a space or a
    line start: ``deploy:TOKEN``, ``user2:TOKEN``."""
    m = V.rx(r"[\w.-]{2,32}").match(text[max(0, colon - 33): colon][::-1])
    if m is None:
        return False
    user = m.group(0)[::-1]
    at = colon - len(user)
    if not user[0].isalpha() or (at > 0 and text[at - 1] not in " \t(,;["):
        return False
    return not set(V.rx(r"[a-z0-9]+").findall(user.lower())) & (_DIGEST_WORDS | _ID_WORDS)


def _id_prefix(prefix: str) -> bool:
    return not _ID_WORDS.isdisjoint(V.rx(r"[a-z0-9]+").findall(prefix))


def _prefixed_ok(prefix: str, body: str, token: str) -> bool:
    words = set(V.rx(r"[a-z0-9]+").findall(prefix))
    core = V.rx(r"[^A-Za-z0-9]").sub("", body)
    if _generated(core, 20, 3.9) or _single_case_random(core, 24):
        pass
    elif not (prefix.endswith("_") and len(core) >= 32
              and V.rx(r"[0-9a-f]+").fullmatch(core) is not None and V.entropy(core) >= 3.5
              and not words & _DIGEST_WORDS):
        return False
    return not V.is_boring(token) and not _documented_prefix(token)


def _quoted_ok(s: str) -> bool:
    """A quoted literal that only a generator writes: both cases, digits, high entropy."""
    if s.count("/") > 1 or s.count(".") > 2:
        return False
    core = V.rx(r"[^A-Za-z0-9]").sub("", s)
    if len(core) < 20:
        return False
    upper, lower, digits = V.classes(core)
    if min(upper, lower) < 2:
        # one letter case (base36 keys): long, not hex, digits and letters well mixed
        ok = (len(core) >= 32 and digits >= 6 and upper + lower >= 8
              and not V.rx(r"[0-9a-fA-F]+").fullmatch(core) and V.entropy(core) >= 4.3)
    else:
        ok = digits >= 2 and _generated(core, 20, 4.0)
    return ok and not V.is_boring(s)


@check("netrc")
def _netrc(m: re.Match[str], text: str) -> bool:
    return V.literal_ok(m.group("s"))


# ---- seed phrases ---------------------------------------------------------------------

SEED_STOPWORDS = frozenset(
    """the and for you not are was but with that this from have they its our your
    will into their what when which should would could been were has had does did
    them than there then these those some very just also""".split()
)


@check("seed")
def _seed(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    start = m.start("s")
    good = []
    for w in V.rx(r"[a-z]+").finditer(m.group("s")):
        if w.group(0) in SEED_STOPWORDS:
            break
        good.append(w)
    for n in (24, 21, 18, 15, 12):
        if len(good) >= n:
            return start + good[0].start(), start + good[n - 1].end(), "seed phrase"
    return None


# ---- keyword assignments ----------------------------------------------------------------

# Names that say "credential" outright: a plain assigned value is enough.
_KW_STRONG = (
    r"pass(?:word|wd|phrase|code)?s?|pwd|pw|passwort|contrase[nñ]a|mot[_ -]?de[_ -]?passe"
    r"|client[ _.-]?secrets?|secret[ _.-]?(?:access[ _.-]?)?keys?|secrets?|secrete"
    r"|(?:access|auth|refresh|bearer|bot|api|session|id|oauth|personal[ _.-]?access|app|user"
    r"|service|webhook|master)[ _.-]?tokens?|tokens?"
    r"|api[ _.-]?keys?|apikeys?|access[ _.-]?keys?|auth[ _.-]?keys?|app[ _.-]?keys?|appkey"
    r"|consumer[ _.-]?keys?|private[ _.-]?keys?|signing[ _.-]?keys?|master[ _.-]?keys?"
    r"|encryption[ _.-]?keys?"
    r"|credentials?|creds|hapikey"
)
# Names that only suggest it (key, *_key, *_sid, license...): the value must look generated.
_KW_WEAK = (r"s?keys?|sid|auth|licen[cs]e[ _.-]?keys?|licen[cs]e|hash|salt|signature|sig|pat"
            r"|pin|jwt|cookie|session|otp|totp|hmac")
_KW_SUFFIX = (
    r"\d*(?:[_.-](?:value|base|b64|base64|hex|str|string|raw|plain|plaintext|text|prod|production"
    r"|live|dev|staging|test|secure|\d))*"
)
KW_RE = (
    r"(?<![A-Za-z0-9])"
    r"(?P<name>"
    r"(?:(?:[A-Za-z0-9]{1,40}[_.-]){1,6}"
    r"|(?-i:[A-Za-z][a-z0-9]{0,20}(?:[A-Z][a-z0-9]{0,20}){0,4}?)(?=(?-i:[A-Z]))"
    r"|(?-i:[A-Z][A-Z0-9]{0,40})(?=(?-i:PASS|PWD|SECRET|TOKEN|APIKEY|KEY)))?"
    r"(?P<core>" + _KW_STRONG + "|" + _KW_WEAK + r")" + _KW_SUFFIX + r")"
    r"(?![A-Za-z0-9])(?!_[A-Za-z0-9])"
    r"[\"'`*_\]]*"
    r"(?P<gap>\s*\([^()\n]{1,30}\)|\s+(?:for|of|on)\s+(?:the\s+)?[\w.@/-]{1,30}"
    r"(?:\s+[\w.@/-]{1,30}){0,2})?"
    r"[\"'`*_]*"
    r"(?P<op>\s*(?::=|=>|==|=|:|\||\u2192|->)\s*"
    r"|\s+(?:is|was|are|were|=)\s+(?:(?:now|still|set\s+to|changed\s+to)\s+)?"
    r"|\s+[-\u2013\u2014]\s+|\s*,\s*(?=[\"']))"
    r"(?:[*_]{1,3}\s*)?"  # the closing ** of "**Password:** X"
    r"(?P<val>\"[^\"\n]{0,1024}\"|'[^'\n]{0,1024}'|`[^`\n]{0,256}`|[^\s\"'`,;<>)\]|]{1,256})"
)
KW_TRIGGER = (
    r"(?:pass|pwd|pw|secret|token|key|cred|sid|auth|licen|hash|salt|sig|pat|pin|jwt|cookie"
    r"|session|otp|hmac)"
    r"[a-z0-9_.-]{0,40}[\"'`*_\]]{0,4}"
    r"(?:\s*\([^()\n]{1,30}\)|\s+(?:for|of|on)\s+(?:the\s+)?[\w.@/-]{1,30}"
    r"(?:\s+[\w.@/-]{1,30}){0,2})?"
    r"[\"'`*_]*"
    r"(?:\s*(?:[:=|]|\u2192|->)|\s+(?:is|was|are|were|=)\s|\s+[-\u2013\u2014]\s|\s*,\s*[\"'])"
)
# What must follow a keyword for the prefilter to dispatch the rule: a cheap superset of
# KW_TRIGGER's tail (the rule's trigger then finds the exact places).
_KW_TAIL = r"[a-z0-9_.\"'`*\]-]{0,44}\s*(?:[:=|(>,\u2192-]|(?:is|was|are|were|for|of|on)\s)"
_KW_ANCHORS = ("pass", "pwd", "pw", "secret", "token", "key", "credential", "creds", "sid", "auth",
               "licen", "hash", "salt", "sig", "pat", "pin", "jwt", "cookie", "session", "otp",
               "hmac")

_KW_STOP_PARTS = frozenset(
    """page next prev continuation csrf xsrf cursor sync pagination max min num total count
    input output prompt completion public pub publishable cache reasoning context limit budget
    fake example dummy mock hashed primary foreign sort partition idempotency cache hash_key
    ssh_public hotkey hotkeys keyboard keybinding keybindings keymap keystroke monkey turkey
    whiskey jockey hockey donkey lookup dict map object field column row index secret_name
    policy length rotation expiry expires expiration ttl type kind format mode name names id ids
    label labels file path dir url uri endpoint location env header prefix suffix version
    algorithm algo size timeout manager store vault ref reference usage status valid validation
    required enabled strength reset forgot change confirm confirmation hint strategy provider
    service_name role scope scopes event events state""".split()
)
# Suffixes after the keyword that name something else (PASSWORD_MIN_LENGTH, token_url).
_KW_STOP_TAILS = frozenset(
    """name count url uri file path dir id ids type len length min max size ttl expiry expires
    expiration env header prefix label mode policy format version endpoint store manager
    vault ref hint usage status rotation rotate reset field column""".split()
)
_PROSE_WORDS = frozenset(
    """see in at on stored kept ask use uses using same as is via lives found check from under
    our my your vault 1password bitwarden lastpass keychain env rotated rotate managed provided
    generated shared given sent required needed missing invalid expired""".split()
)
_WEAK_CORES = re.compile(r"(?i)^(?:" + _KW_WEAK + r")$")


def kw_kind(core: str, name: str) -> str:
    n = name.lower()
    if "pass" in n or "pwd" in n or n.endswith("pw") or "mot" in n or "contrase" in n:
        return "password assignment"
    if "token" in n:
        return "token assignment"
    if "cred" in n:
        return "credential assignment"
    if "secret" in n:
        return "secret assignment"
    if V.rx(r"api[ _.-]?key|apikey|access[_.-]?key|auth[_.-]?key").search(n):
        return "API key assignment"
    return "key assignment"


@lru_cache(maxsize=2048)
def _name_info(name: str, core: str) -> tuple[bool, bool, str, frozenset[str]]:
    """(skip, weak, kind, words) for a keyword name: DB_PASSWORD, next_page_token, api key."""
    split = V.rx(r"([a-z0-9])([A-Z])").sub(r"\1 \2", name)
    parts = [p.lower() for p in V.rx(r"[A-Za-z0-9]+").findall(split)]
    core_parts = [p.lower() for p in V.rx(r"[A-Za-z0-9]+").findall(core)]
    tail = parts[_last_index(parts, core_parts[-1]) + 1:] \
        if core_parts and core_parts[-1] in parts else []
    skip = bool(set(parts) & _KW_STOP_PARTS or set(tail) & _KW_STOP_TAILS)
    return skip, bool(_WEAK_CORES.match(core)), kw_kind(core, name), frozenset(parts)


@check("keyword")
def _keyword(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    name = m.group("name")
    core = m.group("core")
    skip, weak, kind, name_words = _name_info(name, core)
    if skip:
        return None
    val = m.group("val")
    before = text[m.start("name") - 1: m.start("name")]
    if before in ("?", "&"):
        kind = "API key assignment" if kind == "key assignment" else kind  # ?key=: a URL's key
    if before in ("\"", "'") and val.startswith(before) and m.group("op") == ":":
        return None  # "Password:" is a quoted label; its closing quote is not a value
    start = m.start("val")
    op = m.group("op").strip()
    quoted = len(val) >= 2 and val[0] in "\"'`" and val[-1] == val[0]
    if quoted:
        inner = val[1:-1].strip()
        if len(inner) >= 2 and inner[0] in "\"'" and inner[-1] == inner[0]:
            inner = inner[1:-1]  # `"value"`: a code span around a string literal
        start += val.index(inner) if inner else 1
        if " " in inner:
            if weak:
                return None  # a phrase is not a generated key
            words = inner.lower().split()
            if len(words) > 8 or any(w in SEED_STOPWORDS or w in _PROSE_WORDS for w in words):
                return None
        val = inner
        ok = (V.token_like(val, 12) and not _bare_uuid(val, kind)) if weak else V.literal_ok(val)
    else:
        val = _strip_markup(val)
        start = m.start("val") + m.group("val").find(val)
        code_style = op in ("=", ":=", "=>", "==") and not m.group("op")[0].isspace()
        code_style = code_style and not m.group("gap")
        val = val.rstrip(".,") if code_style else val.rstrip(".,;:")
        if weak:
            ok = V.token_like(val, 16 if not code_style else 12) and not _bare_uuid(val, kind)
        elif code_style:
            ok = V.literal_ok(val) and (len(val) >= 6 or any(c.isdigit() for c in val))
        else:
            ok = V.looks_random(val) or V.token_like(val)
    low = val.lower()
    if not ok or V.is_placeholder(val) or low in name_words or V.self_describing(low):
        return None  # POSTGRES_PASSWORD=postgres, password: strong-password: no secret
    return start, start + len(val), kind


def _bare_uuid(val: str, kind: str) -> bool:
    """A UUID after a name that says only "key" (``key: '9df2...'``) is an identifier;
    after ``api_key`` or a provider's name it may be a key (Heroku's are UUIDs)."""
    return kind == "key assignment" and V.R.uuid.fullmatch(val) is not None


def _last_index(parts: list[str], item: str) -> int:
    return len(parts) - 1 - parts[::-1].index(item)


def _strip_markup(val: str) -> str:
    """`X`, **X**, [X](...), X**, **X**: -> X: emphasis, code and links do not hide a value."""
    v = val
    if v.startswith("[") and "](" in v:
        v = v[1 : v.index("](")]
    v = v.strip("*_`~")
    if v[-1:] in ".,;:" and v.rstrip(".,;:")[-1:] in ("*", "`", "~"):
        v = v.rstrip(".,;:").rstrip("*_`~")
    return v


_HASH_RE = (
    r"(?<![A-Za-z0-9$])(?:"
    r"\$(?:1|2[abxy]?|3|5|6|8|9|md5|sha1|apr1|y|gy|7|sm3|bsdicrypt)[$,](?:rounds=\d{1,7}\$)?"
    r"[./A-Za-z0-9$=,]{8,}[./A-Za-z0-9]"
    r"|\$(?:argon2(?:i|d|id)|scrypt|pbkdf2(?:-sha\d+)?|bcrypt-sha256)\$[A-Za-z0-9+/=.,$-]{16,}"
    r"|\$[PHS]\$[./A-Za-z0-9]{20,}"
    r"|(?:pbkdf2_sha\d+|bcrypt_sha256|argon2|scrypt|sha1|md5)\$\d*\$?[A-Za-z0-9+/=.$]{16,}"
    r"|\{[A-Z0-9][A-Z0-9.-]{1,20}\}[A-Za-z0-9+/=.$]{12,}"  # LDAP / Dovecot {SCHEME}
    r"|grub\.pbkdf2\.sha\d+\.\d+\.[0-9A-Fa-f]{16,}\.[0-9A-Fa-f]{16,}"
    r"|SCRAM-SHA-256\$\d+:[A-Za-z0-9+/=]{12,}\$[A-Za-z0-9+/=]{20,}:[A-Za-z0-9+/=]{20,}"
    r"|(?<![A-Za-z0-9])md5[0-9a-f]{32}(?![A-Za-z0-9])"  # PostgreSQL md5 password
    r"|(?<![A-Za-z0-9*])\*[0-9A-F]{40}(?![A-Za-z0-9])"  # MySQL 4.1+ PASSWORD()
    r")"
)

# after "$" or "{" (on the lowercased line): a crypt scheme ($2y$, $argon2id$) or {SSHA}
_HASH_HEAD = r"(?:[0-9a-z-]{1,14}[$,]|[a-z0-9][a-z0-9.-]{1,20}\})"
_SECRET_PHRASE = ("secret phrase", "secret-phrase", "secret_phrase", "secretphrase")
_SEED_TAIL = r"[\"'`*]*\s*(?:(?:is|was|=|:|-)\s*)?[\"'`]?(?:[a-z]{3,8}[ ,]+){11}"

_CODE_SPAN_KEYWORDS = ("password", "passphrase", "passcode", "passwd", "pwd", "secret", "token",
                       "api key", "api_key", "api-key", "apikey")

# One shared gate for the generic token rules: a run of 20 token characters somewhere
# (the engine searches each distinct shape once per line).
TOKEN_GATE = RUN_SHAPE

STRUCTURAL: tuple[Rule, ...] = (
    Rule(
        "private-key-block", "private key block",
        r"-{2,}\s*BEGIN[ A-Z0-9_-]{0,100}?PRIVATE KEY(?: BLOCK)?\s*-*|PuTTY-User-Key-File-\d:",
        keywords=("private key", "putty-user-key-file"), check="pem_header", priority=1,
        doc=_DS + "PrivateKeyDetector",
    ),
    Rule(
        "private-key-material", "private key material",
        r"(?<![A-Za-z0-9+/])(?:MII[A-Za-z0-9+/]{3}IBAAKC[AB]|MII[A-Za-z0-9+/]{3}IBADANBgkqhkiG9w0BAQEFAAS"
        r"|MIG[A-Za-z0-9+/]AgEAMBMGByqGSM49AgEG|MC4CAQAwBQYDK2VwBCIEI|MHcCAQEEI"
        r"|b3BlbnNzaC1rZXktdjEA)[A-Za-z0-9+/]{16,}={0,2}",
        keywords=("ibaakc", "ibadanbgkqhkig9w0baqefaas", "ageambmgbyqgsm49ageg",
                  "mc4caqawbqydk2vwbciei", "mhccaqeei", "b3blbnnzac1rzxktdjea"),
        priority=1, doc="https://datatracker.ietf.org/doc/html/rfc5958",
    ),
    Rule(
        "private-key-base64", "private key block",
        r"(?<![A-Za-z0-9+/])LS0tLS1CRUdJT[A-Za-z0-9+/]{20,}={0,2}",
        keywords=("ls0tls1cruDJT".lower(),), check="b64_pem", priority=1,
        doc="base64 of '-----BEGIN ... PRIVATE KEY-----' (Kubernetes secrets, CI variables)",
    ),
    Rule(
        "password-in-url", "password in URL",
        r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,30}://(?P<u>[^\s:/?#@\[\]]{0,256}):"
        r"(?P<s>[^\s/?]{1,256})@(?=[A-Za-z0-9\[_(])",
        keywords=("://",), keyword_tails=(("://", r"[^\s:/?#@\[\]]{0,256}:[^\s/?]{1,256}@"),),
        group="s", check="url_password", priority=1,
        doc=_DS + "BasicAuthDetector",
    ),
    Rule(
        "http-basic", "HTTP Basic credentials",
        r"(?i:\bbasic)\s+(?P<s>[A-Za-z0-9+/]{6,1024}={0,2})(?![A-Za-z0-9+/=])",
        keywords=("basic",), keyword_tails=(("basic", r"\s+[a-z0-9+/]{6}"),), group="s",
        check="basic", priority=1, doc="https://datatracker.ietf.org/doc/html/rfc7617",
    ),
    Rule(
        "base64-user-pass", "HTTP Basic credentials",
        r"(?i:auth|authorization|credentials?|basic_auth|_auth)[\\\"'`]*\s*[:=]\s*[\\\"'`]*"
        r"(?P<s>[A-Za-z0-9+/]{12,1024}={0,2})(?![A-Za-z0-9+/=])",
        keywords=("auth", "credential"), keyword_tails=(("auth", r"[a-z_]*[\\\"'`]*\s*[:=]"),),
        group="s", check="b64_user_pass", priority=1,
        doc="docker config.json / .npmrc _auth: base64 of user:password",
    ),
    Rule(
        "bearer", "bearer token",
        r"(?i:\bbearer)\s+(?P<s>[A-Za-z0-9._~+/-]{16,4096}={0,2})",
        keywords=("bearer",), keyword_tails=(("bearer", r"\s+[a-z0-9._~+/-]{16}"),), group="s",
        check="token_value", priority=1, doc="https://datatracker.ietf.org/doc/html/rfc6750",
    ),
    Rule(
        "authorization-header", "Authorization header credential",
        r"(?i:\bauthorization)[\"'`]?\s*[:=]\s*[\"'`]?(?!(?i:basic|bearer)\b)"
        r"(?:(?i:token|apikey|api-key|key|sso-key|digest|hmac|otoken|klaviyo-api-key)[ =])?"
        r"(?P<s>[A-Za-z0-9._~+/=:-]{16,4096})",
        keywords=("authorization",), keyword_tails=(("authorization", r"[\"'`]?\s*[:=]"),),
        group="s", check="token_value", priority=1,
        doc="https://datatracker.ietf.org/doc/html/rfc9110#section-11.6.2",
    ),
    Rule(
        "cli-user-pass", "command-line credential",
        r"(?:\s|^)(?:-u|--user|--proxy-user|-U)[ =]['\"]?[^\s:'\"]{1,64}:(?P<s>[^\s'\"@]{3,128})",
        keywords=("-u", "--user", "--proxy-user"),
        keyword_tails=tuple((k, r"[ =]['\"]?[^\s:'\"]{1,64}:[^\s'\"@]{3}")
                            for k in ("-u", "--user", "--proxy-user")),
        group="s", check="cli_user_pass", priority=1,
        doc="curl(1) -u user:password",
    ),
    Rule(
        "cli-password-option", "command-line credential",
        r"(?:\s|^)(?:--?(?:password|passwd|pass|pwd|token|api-key|apikey|secret|auth-token"
        r"|client-secret|storepass|keypass|srcstorepass|deststorepass|srckeypass|destkeypass"
        r"|access-token|with-token\s*<<<)"
        r"|(?<=sshpass )-p|-P(?=\S{6}))[ =](?P<s>\"[^\"]{1,128}\"|'[^']{1,128}'|[^\s\"']{1,128})",
        keywords=("--pass", "-pass", "--pwd", "--token", "--api-key", "--apikey", "--secret",
                  "storepass", "keypass", "--auth-token", "--with-token", "--client-secret",
                  "--access-token", "sshpass -p"),
        check="cli_value", priority=1, doc="mysql(1), keytool, sshpass(1), gh, vault CLI options",
    ),
    Rule(
        "cli-user-then-p", "command-line credential",
        r"(?:\s|^)(?:-u|--username|--user)[ =]\S{1,64}\s+-p[ =](?P<s>\"[^\"]{1,128}\"|'[^']{1,128}'"
        r"|[^\s\"'-][^\s\"']{0,127})",
        keywords=(" -p ",), keyword_tails=((" -p ", r"[^\s-]"),), check="cli_value", priority=1,
        doc="docker login -u USER -p PASSWORD, az login -u ID -p SECRET",
    ),
    Rule(
        "login-pair", "password assignment",
        r"(?<![A-Za-z0-9])(?i:login|credentials?|creds|user(?:name)?|account)(?![A-Za-z])"
        r"\s*[:=]?\s*[`'\"]?[\w.@+-]{1,64}[`'\"]?"
        r"\s*(?:/|,|\|)\s*(?:(?i:pass(?:word)?|pw|pwd)\s*[:=]?\s*)?[`'\"]?(?P<s>[^\s`'\"|,/]{6,128})"
        r"(?![^\s`'\"|,])",
        keywords=("login", "credential", "creds", "user", "account"), group="s",
        keyword_tails=tuple((k, r"[a-z]{0,4}\s*[:=]?\s*[`'\"]?[\w.@+-]{1,64}[`'\"]?\s*[/,|]")
                            for k in ("login", "credential", "creds", "user", "account")),
        check="pair_value",
        priority=1, doc="notes that pair a login with its password: `admin` / `s3cret`",
    ),
    Rule(
        "keyword-code-span", "password assignment",
        r"(?<![A-Za-z0-9])(?i:password|passphrase|passcode|passwd|pwd|secret|token|api[ _-]?key)"
        r"\s+(?:(?i:is|was|to|set\s+to|changed\s+to)\s+)?`(?P<s>[^`\s]{6,128})`",
        keywords=_CODE_SPAN_KEYWORDS, group="s",
        keyword_tails=tuple((k, r"\s+(?:(?:is|was|to|set\s+to|changed\s+to)\s+)?`[^`\s]{6}")
                            for k in _CODE_SPAN_KEYWORDS),
        check="pair_value", priority=1,
        doc="prose: a credential word, then its value in a code span (wifi password `X`)",
    ),
    Rule(
        "use-as-password", "password assignment",
        r"(?i:\buse)\s+[`'\"]?(?P<s>[^\s`'\"]{6,128})[`'\"]?\s+(?i:as)\s+(?:(?i:the|a|an|your)\s+)?"
        r"(?:[\w-]+\s+){0,2}(?i:password|passphrase|passcode|pin|token|secret|api key)",
        keywords=("use ",), group="s",
        keyword_tails=(("use ", r"[`'\"]?[^\s`'\"]{6,128}[`'\"]?\s+as\s"),),
        check="pair_value", priority=1,
        doc="prose: use X as the password",
    ),
    Rule(
        "cli-mysql-p", "command-line credential",
        r"(?<![A-Za-z0-9_-])(?:mysql|mysqldump|mysqladmin|mariadb)\b[^|;&\n]{0,80}?\s-p"
        r"(?P<s>[^\s\"'-][^\s\"']{3,127})",
        keywords=("mysql", "mariadb"),
        keyword_tails=tuple((k, r"[^|;&\n]{0,80}?\s-p[^\s\"'-]") for k in ("mysql", "mariadb")),
        group="s", check="cli_value", priority=1,
        doc="mysql(1): -pPASSWORD (no space)",
    ),
    Rule(
        "dotnet-appsetting", "secret assignment",
        r"<add\s+key=\"(?P<name>[^\"]{0,60}(?i:key|token|secret|password|passwd|pwd|credential)"
        r"[^\"]{0,30})\"\s+value=\"(?P<s>[^\"]{6,512})\"",
        keywords=("<add key=",), group="s", check="appsetting", priority=1,
        doc="https://learn.microsoft.com/en-us/dotnet/framework/configure-apps/file-schema/appsettings/",
    ),
    Rule(
        "xml-credential", "secret assignment",
        r"<(?P<tag>[A-Za-z0-9:_.-]{0,40}(?i:password|passwd|secret|token|apikey|api[_-]?key|key"
        r"|credential)[A-Za-z0-9_.-]{0,20})>(?P<s>[^<\n]{6,400})</",
        keywords=("password>", "passwd>", "secret>", "token>", "key>", "credential>",
                  "credentials>"),
        check="xml_value", priority=1, doc="XML/HTML configuration elements",
    ),
    Rule(
        "password-hash", "password hash",
        _HASH_RE,
        keywords=("pbkdf2_sha", "bcrypt_sha256$", "argon2$", "scrypt$", "grub.pbkdf2.",
                  "scram-sha-256$", "md5", "$", "{"),
        keyword_tails=(("md5", r"[0-9a-f]{32}(?![a-z0-9])"), ("$", _HASH_HEAD), ("{", _HASH_HEAD)),
        check="hash", priority=1, doc="crypt(5), passlib's modular crypt format",
    ),
    Rule(
        "generated-token", "API token",  # "high-entropy string" when quoted
        r"(?<![A-Za-z0-9_+/=.~-])[A-Za-z0-9_+/.~-]{20,1024}={0,3}",
        shape=TOKEN_GATE, check="generated_token", priority=3,
        doc="a token that only a generator writes: prefix_ + generated body (rzp_, phc_, ...), "
            "a quoted 20+ character literal, or a 32+ character token outside a URL, mixing "
            "letter cases and digits at high entropy",
    ),
    Rule(
        "table-cell", "password in a table",
        r"\|[ \t]*`?(?P<s>[^\s|`]{10,64})`?[ \t]*(?=\|)",
        keywords=("|",), keyword_tails=(("|", r"[ \t]*`?[^\s|`]{10,64}`?[ \t]*\|"),),
        locate="at", group="s", check="table_cell", priority=2,
        doc="a Markdown table row holding a generated password in one of its cells",
    ),
    Rule(
        "netrc", "netrc credentials",
        r"(?i)\bmachine\s+\S+\s+login\s+\S+\s+password\s+(?P<s>\S+)",
        keywords=("machine",), keyword_tails=(("machine", r"\s+\S+\s+login\s"),), group="s",
        check="netrc", priority=1,
        doc="https://www.gnu.org/software/inetutils/manual/html_node/The-_002enetrc-file.html",
    ),
    Rule(
        "seed-phrase", "seed phrase",
        r"(?i:seed(?:[ _-]?(?:phrase|words))?|mnemonic(?:[ _-]?phrase)?"
        r"|(?:secret[ _-]?)?recovery[ _-]?(?:phrase|words)|secret[ _-]?phrase)"
        r"[\"'`*]*\s*(?:(?i:is|was|=|:|-)\s*)?[\"'`]?(?P<s>(?:[a-z]{3,8}[ ,]+){11,30}[a-z]{3,8})",
        keywords=("seed", "mnemonic", "recovery", *_SECRET_PHRASE),
        keyword_tails=tuple((k, t + _SEED_TAIL) for k, t in (
            ("seed", r"(?:[ _-]?(?:phrase|words))?"), ("mnemonic", r"(?:[ _-]?phrase)?"),
            ("recovery", r"[ _-]?(?:phrase|words)"), *((k, "") for k in _SECRET_PHRASE))),
        trigger=(r"(?:seed|mnemonic|recovery|secret[ _-]?phrase)(?:[ _-]?(?:phrase|words))?"
                 r"[\"'`*]*\s*(?:(?:is|was|=|:|-)\s*)?[\"'`]?(?:[a-z]{3,8}[ ,]+){11}"),
        locate="at", check="seed", priority=1,
        doc="https://github.com/bitcoin/bips/blob/master/bip-0039.mediawiki",
    ),
    Rule(
        "keyword-assignment", "key assignment",  # the kind is refined by the check
        KW_RE,
        keywords=_KW_ANCHORS,
        keyword_tails=tuple((k, _KW_TAIL) for k in _KW_ANCHORS),
        trigger=KW_TRIGGER, locate="name", ignore_case=True, check="keyword", priority=2,
        doc=_DS + "KeywordDetector",
    ),
)

KEYWORD_KINDS = ("password assignment", "token assignment", "credential assignment",
                 "secret assignment", "API key assignment", "key assignment", "seed phrase",
                 "command-line credential", "high-entropy string", "API token")
