"""Generated tokens: what only a generator writes, with no keyword before it.

``prefix_`` plus a generated body (``rzp_...``, ``phc_...``), a quoted 20+
character literal, or a 32+ character token outside a URL mixing letter cases
and digits at high entropy; base64 of ``user:password`` wherever it stands.
A token with a documented provider prefix is judged by its format record
alone; ids, digests and SSH key blobs are never generated tokens.
"""

from __future__ import annotations

import re

from . import values as V
from .engine import RUN_LOOKBEHIND, RUN_SHAPE
from .rules import Rule, check


def _generated(core: str, min_len: int, min_entropy: float) -> bool:
    if len(core) < min_len or core.islower() or core.isupper() or core.isdigit():
        return False
    if min(V.classes(core)) < 2:
        return False
    if V.entropy(core) < min_entropy:
        return False
    if V.rx(r"[a-z]{10}|[A-Z]{10}").search(core) is not None:
        return False  # a random base62 string rarely has ten letters of one case in a row
    runs = V.rx(r"[A-Z][a-z]{3,}|[a-z]{4,}").findall(core)
    half = 0.5 * len(core)
    if sum(map(len, runs)) < half:
        return True  # even if every run read like a word, words would not make half of it
    return sum(len(w) for w in runs if V.wordlike(w)) < half


_known_prefix: list[re.Pattern[str]] = []


def _documented_prefix(token: str) -> bool:
    """True when the token starts with a provider format's documented prefix: such a
    token is judged by its format record alone (a near miss of it is not a secret)."""
    if not _known_prefix:
        from .formats import FORMATS, GENERIC_PREFIX_IDS

        kws = {k for r in FORMATS if r["id"] not in GENERIC_PREFIX_IDS
               for k in r.get("keywords", ()) if len(k) >= 3}
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
# msg_/toolu_/srvtoolu_/msgbatch_, coding agents' session ids ses_): the id names a record, it
# opens nothing.
_ID_WORDS = frozenset(
    """ses session msg message req request evt event cus sub prod price pi ch txn acct pm src
    card seti run job obj item doc chat chatcmpl conv thread asst file batch ft call toolu step
    trace span org proj usr user id uid srvtoolu msgbatch""".split()
)


# both: the words of a digest's or a record's name (a user name made of one is neither)
_RECORD_WORDS = _DIGEST_WORDS | _ID_WORDS


def _single_case_random(core: str, min_len: int) -> bool:
    digits = V.classes(core)[2]
    return (len(core) >= min_len and digits >= 4 and len(core) - digits >= 8
            and not V.rx(r"[0-9a-fA-F]+").fullmatch(core) and V.entropy(core) >= 4.0)


def _one_case_key(core: str, standalone: bool) -> bool:
    """A key of one letter case (base36): long and digit-rich, not hex, at high entropy for
    its length (40 characters: eight digits; 32, standing alone as a word: five)."""
    digits = V.classes(core)[2]
    if len(core) >= 40:
        return digits >= 8 and _single_case_random(core, 40) and V.entropy(core) >= 4.4
    return (standalone and len(core) >= 32 and digits >= 5 and _single_case_random(core, 32)
            and V.entropy(core) >= 4.3)


# what may stand before a token that stands alone as a word (not a part of a compound
# value such as access_token$production$<id>$<key>)
_STANDALONE = frozenset(["", " ", "\t", "(", "[", ",", ";", ">"])


_PREFIXED = r"([a-z][a-z0-9]{1,9}(?:[_-][a-z0-9]{2,8}){0,2}[_-])([A-Za-z0-9][A-Za-z0-9_-]{19,})"
_URL_BEFORE = frozenset("/=?&#%@")
_PREFIX_START = re.compile(r"[a-z][a-z0-9]{1,9}[_-]")
_DIGITS = b"0123456789"


# MySQL 4.1+'s password hash ("*" and SHA-1 of SHA-1 in upper-case hex, as PASSWORD() and
# mysql.user print it) is a run of 40 after a character that is none: this rule, which sees
# every run, recognises it (https://dev.mysql.com/doc/refman/8.0/en/password-hashing.html)
_UPPER_HEX = "0123456789ABCDEF"
# Mailgun's private API keys since 2023: 32 hex, a hyphen, 8 hex, a hyphen, 8 hex (the older
# ones are key-<32 hex>, a format record); no UUID or digest has this shape
_MAILGUN_KEY = r"[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}"


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
    if before == "*" and len(token) == 40 and not token.strip(_UPPER_HEX):
        return start, end, "password hash"  # MySQL's PASSWORD(): "*", 40 upper-case hex
    if len(token) == 50 and token[32] == "-" and V.rx(_MAILGUN_KEY).fullmatch(token):
        return start, end, "API token"
    if before == ":" and not quoted:  # user:TOKEN, as in a credentials list or a URL's userinfo
        # scheme:word/... (memgit:observation/m-01...) is a URI's path, not user:TOKEN
        quoted = (V.rx(r"[a-z]+/").match(token) is None) and _user_before(text, start - 1)
    decoded = V.decode_b64(m.group(0)) if len(m.group(0)) % 4 == 0 else None
    if decoded is not None and decoded.isprintable():
        if V.is_user_pass(decoded):  # base64 of user:password, wherever it stands
            return m.start(), m.end(), "HTTP Basic credentials"
        if " " in decoded:
            return None  # base64 of prose, not a generated token
    if not quoted and len(token) < 32 and not _PREFIX_START.match(token):
        return None  # the common case: an id, a word run, a short path
    if len(token) - len(token.encode("ascii", "replace").translate(None, _DIGITS)) < 2:
        return None  # every shape below needs two digits or more (words, paths, names)
    found = _token_finding(text, token, start, end, before, quoted)
    if found is not None and _identifier(text, start, token):
        return None  # a UUID, a digest, a content id, or a value an id word names
    return found


def _token_finding(text: str, token: str, start: int, end: int, before: str,
                   quoted: bool) -> tuple[int, int, str] | None:
    """The prefixed, provider-hex, quoted and bare shapes of ``_generated_token``."""
    pm = V.rx(_PREFIXED).fullmatch(token)
    if pm is not None:
        if _id_prefix(pm.group(1)):
            return None  # ses_..., toolu_...: the id of a record
        if _prefixed_ok(pm.group(1), pm.group(2), token):
            return None if _named_not_secret(text, start) else (start, end, "API token")
    if len(token) in (32, 40, 64) and _provider_hex_key(text, start, token):
        return start, end, "API token"
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
        if not _one_case_key(core, standalone=before in _STANDALONE):
            return None
    elif not _generated(core, 32, 4.2):
        return None
    if V.rx(r"(?:ssh|ecdsa|sk)-[\w@.-]+\s+$").search(text[max(0, start - 80): start]):
        return None  # the key blob of an SSH public key line
    if V.is_boring(token) or _documented_prefix(token):
        return None
    return start, end, "API token"


# Identifiers by their shape: a digest in Subresource Integrity form (sha512-<base64>), an
# IPFS content id (CIDv0 Qm..., CIDv1 base32 bafy...), a Bitcoin bech32 address, an age
# recipient (age1 + 58 bech32 characters: a public key; its secret is AGE-SECRET-KEY-1...,
# https://age-encryption.org/v1).
_ID_SHAPES = (r"(?:sha(?:1|224|256|384|512)|md5)[-:][A-Za-z0-9+/_-]{20,}={0,2}"
              r"|Qm[1-9A-HJ-NP-Za-km-z]{44}|baf[a-z2-7]{50,}|bc1[a-z0-9]{25,87}"
              r"|age1[qpzry9x8gf2tvdw0s3jn54khce6mua7l]{58}")
# Words that name an identifier when they stand just before a value (``notebook <id>``,
# ``tx: <hash>``, ``The spreadsheet <id>``): the value names a record, it opens nothing.
_ID_CONTEXT = frozenset(
    """notebook notebooks spreadsheet sheet doc docs document file folder drive page dataset
    cid cids tx txn txid transaction wallet address addr session conversation chat thread run
    trace span request message msg build job pipeline volume pvc pod node cluster project
    workspace video playlist channel ticket record row item entry uuid guid id ids kid
    fingerprint thumbprint""".split())
# A token of pagination (next_page_token, nextToken, page token): where the next page starts
_PAGING = frozenset("next page continuation cursor pagination".split())
# (digests and git object ids are hex: their shape already keeps them out; a mixed-case
# random string after "blob" or "commit" is no git id)
# Words that make a value a credential whatever else names it.
_CREDENTIAL_CONTEXT = frozenset(
    """key keys token tokens secret secrets password passwd pwd pass auth credential credentials
    bearer apikey signature cookie""".split())
# any of them inside a word (one search over the words joined by spaces, which none holds)
_CREDENTIAL_WORD = "|".join(sorted(_CREDENTIAL_CONTEXT))


def _identifier(text: str, start: int, token: str) -> bool:
    """Whether ``token`` at ``start`` is an identifier and no credential word says otherwise:
    its random part is a UUID or a hex digest (``kubernetes-dynamic-pvc-<uuid>``), its shape
    is a digest's or a content id's (issue 23: such ids in notes and front matter are not
    credentials), or the words just before it name an identifier (``notebook``, ``tx``)."""
    before = text[max(0, start - 48): start]
    words = [w.lower() for w in V.rx(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+").findall(before)[-3:]]
    if words and V.rx(_CREDENTIAL_WORD).search(" ".join(words)) is not None:
        return not _PAGING.isdisjoint(words)  # spotifykey id: a credential word, even glued
        # to a name; but a page token names where a listing goes on
    if V.rx(r"(?i)(?:sha(?:1|224|256|384|512)|md5):$").search(before) is not None:
        return True  # ssh-keygen -l, GitHub's and TLS tools' fingerprints: SHA256:<base64>
    if V.rx(_ID_SHAPES).fullmatch(token.rstrip("=")) or V.rx(_ID_SHAPES).fullmatch(token):
        return True
    if "-" in token or len(token) >= 32:
        rest = V.rx(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
                    r"|[0-9a-f]{16,}|[0-9A-F]{16,}").sub("", token)
        if rest and len(rest) < len(token) and len(V.alnum_core(rest)) < 20:
            return True
    return bool(words) and words[-1] in _ID_CONTEXT


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
    return _RECORD_WORDS.isdisjoint(V.rx(r"[a-z0-9]+").findall(user.lower()))


def _provider_hex_key(text: str, start: int, token: str) -> bool:
    """A hex key of a key's length assigned to a bare provider name (``SOFTLAYER: <64 hex>``,
    ``cloudsmith: "<40 hex>"``): one word of letters, no digest's or id's name. Hex looks
    like a digest, so only such a name makes it a key."""
    if V.rx(r"[0-9a-f]+|[0-9A-F]+").fullmatch(token) is None or V.entropy(token) < 3.5:
        return False
    name = _name_before(text[max(0, start - 80): start])
    if not (4 <= len(name) <= 24 and name.isalpha()):
        return False
    low = name.lower()
    return not (low in _DIGEST_WORDS or low in _ID_WORDS or low in _NOT_SECRET_NAMES
                or low in _HEX_NAMES)


# names of hex values that are not keys, beyond digests and ids
_HEX_NAMES = frozenset("""version hex color colour nonce salt seed address wallet contract
    account block parent head base tag sum fingerprint thumbprint kid value data body payload
    output input result expected actual signature sig integrity""".split())


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
    core = V.alnum_core(s)
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


# One shared gate for the generic token rules: a run of 20 token characters somewhere
# (the engine searches each distinct shape once per line).
TOKEN_GATE = RUN_SHAPE

GENERATED_TOKEN = Rule(
    "generated-token", "API token",  # "high-entropy string" when quoted
    RUN_LOOKBEHIND + r"[A-Za-z0-9_+/.~-]{20,1024}={0,3}",
    shape=TOKEN_GATE, locate="runs", check="generated_token", priority=3,
    doc="a token that only a generator writes: prefix_ + generated body (rzp_, phc_, ...), "
        "a quoted 20+ character literal, or a 32+ character token outside a URL, mixing "
        "letter cases and digits at high entropy",
)
