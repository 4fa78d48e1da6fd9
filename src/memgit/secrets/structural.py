"""Structural detectors: credentials recognised by their surroundings, not a prefix.

Passwords in URLs and connection strings, Authorization headers, crypt/bcrypt/argon2
hashes, PEM blocks and base64-encoded PEM or ``user:pass``, XML elements, netrc lines,
seed phrases, passwords in tables; and the list of every structural rule. Five families have
modules of their own: keyword assignments (``assignments``), credentials named in code and
configuration syntax (``code_forms``), credentials on command lines (``command_lines``),
credentials stated in prose (``prose``) and generated tokens (``tokens``).
Markdown emphasis, code spans and link syntax around a label or a value do not hide
it (``- **Password:** X``).
"""

from __future__ import annotations

import re
import urllib.parse

from . import values as V
from .assignments import (
    KEYWORD_ASSIGNMENT,
    SEED_STOPWORDS,
    kw_kind,
)
from .code_forms import CODE_CALLS, CODE_FORMS, NAMED_VALUE
from .command_lines import COMMAND_LINES
from .prose import PROSE
from .rules import Rule, check, jwt_header_only
from .tokens import GENERATED_TOKEN

_DS = "detect-secrets "


@check("url_password")
def _url_password(m: re.Match[str], text: str) -> bool:
    pw = m.group("s")
    if V.is_placeholder(pw) or (pw.isdigit() and len(pw) <= 5) or pw.lower() == "password":
        return False
    if len(pw) < 3 and not pw.isalnum():
        return False  # scheme://user:;@host: a separator, not a password
    if pw[:1] == "{" and pw.rstrip("\"'`")[-1:] == "}":
        return False  # f"https://user:{token()}@host": an f-string's expression, a template
    opening = text[m.start() - 1: m.start()]
    if opening in ("\"", "'", "`") and opening in pw:
        return False  # "https://host:8000";@x: the quoted URL ended before the @
    if pw.startswith("%") and _PERCENT_ENCODED.fullmatch(pw) and not pw.endswith("%"):
        # percent-encoded from its first character (postgres://u:%51v7G...@h, what a URL
        # encoder writes for any character): the decoded value is judged. "%s",
        # "%(pw)s" and "%PASSWORD%" are templates and stay out (hostile sweep,
        # branch hostile42: such a password landed)
        pw = urllib.parse.unquote(pw)
        if V.is_placeholder(pw) or pw.lower() == "password" or len(pw) < 6:
            return False
        return not (pw.startswith("$") or "{{" in pw or "${" in pw)
    return not (pw.startswith("$") or "{{" in pw or "${" in pw or pw.startswith("%"))


_PERCENT_ENCODED = re.compile(r"(?:%[0-9A-Fa-f]{2}|[^%])+")


@check("basic")
def _basic(m: re.Match[str], text: str) -> bool:
    s = m.group("s")
    return len(s.rstrip("=")) >= 6 and V.is_user_pass(V.decode_b64(s))


@check("b64_user_pass")
def _b64_user_pass(m: re.Match[str], text: str) -> bool:
    s = m.group("s")
    return len(s.rstrip("=")) >= 12 and V.is_user_pass(V.decode_b64(s))


@check("b64_pem")
def _b64_pem(m: re.Match[str], text: str) -> bool:
    s = m.group(0)
    decoded = V.decode_b64(s[: len(s) - len(s) % 4])
    return decoded is not None and "PRIVATE KEY" in decoded


@check("token_value")
def _token_value(m: re.Match[str], text: str) -> bool:
    s = m.group("s").rstrip(".,;")
    if V.is_boring(s) or not V.varied(s, 6):
        return False
    if s[:3] == "eyJ" and "." not in s and jwt_header_only(s):
        return False  # Bearer eyJ0eXAiOiJKV1QifQ: a JWT's header alone, no claims, no signature
    has_digit = any(c.isdigit() for c in s)
    has_alpha = any(c.isalpha() for c in s)
    return (has_digit and has_alpha) or (len(s) >= 20 and V.entropy(s) >= 3.5)


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
    """A header followed at once by its footer is an empty block, not a key; so is one
    whose footer follows on the same line after words (``...-----this is not a key-----
    END...``): key material is base64, in chunks when its lines were joined by spaces."""
    rest = text[m.end():]
    if rest[:12].lstrip("-").startswith("END"):
        return False
    body, sep, _after = rest.partition("-----END")
    return not sep or " " not in body.strip() or all(_PEM_CHUNK.fullmatch(w) for w in body.split())


# a chunk of a key's base64 body (PEM's lines are 64 characters; "\n" escapes between them)
_PEM_CHUNK = re.compile(r"(?:\\n|[A-Za-z0-9+/=]){16,}")


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
        names = m.groupdict()
        label = names.get("tag") or names.get("name") or ""
        strong = V.rx(r"(?i)pass|pwd|secret|token").search(label)
        if val.lower() == label.lower():
            return None  # <passphrase>passphrase</passphrase>: the element's name again
        if not V.literal_ok(val) or " " in val or not (
                V.looks_random(val) or (strong and val.isalnum() and len(val) >= 8)):
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


@check("netrc")
def _netrc(m: re.Match[str], text: str) -> bool:
    return V.literal_ok(m.group("s"))


# ---- seed phrases ---------------------------------------------------------------------

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


_HASH_RE = (
    r"(?<![A-Za-z0-9$])(?:"
    r"\$(?:1|2[abxy]?|3|5|6|8|9|md5|sha1|apr1|y|gy|7|sm3|bsdicrypt)[$,](?:rounds=\d{1,7}\$)?"
    r"[./A-Za-z0-9$=,]{8,}[./A-Za-z0-9]"
    r"|\$(?:argon2(?:i|d|id)|scrypt|pbkdf2(?:-sha\d+)?|bcrypt-sha256)\$[A-Za-z0-9+/=.,$-]{16,}"
    r"|\$[PHS]\$[./A-Za-z0-9]{20,}"
    r"|(?:pbkdf2_sha\d+|bcrypt_sha256|argon2|scrypt|sha1|md5)\$\d*\$?[A-Za-z0-9+/=.$]{16,}"
    r"|\{[A-Z0-9][A-Z0-9.-]{1,20}\}[A-Za-z0-9+/=.$]{12,}"  # LDAP / Dovecot {SCHEME}
    r"|grub\.pbkdf2\.sha\d+\.\d+\.[0-9A-Fa-f]{16,}\.[0-9A-Fa-f]{16,}"
    # Werkzeug's generate_password_hash(): method$salt$hex (pbkdf2:sha256:600000, scrypt:N:r:p)
    r"|(?:pbkdf2:sha\d+(?::\d+)?|scrypt:\d+:\d+:\d+)\$[A-Za-z0-9]{8,}\$[0-9a-f]{32,}"
    r"|SCRAM-SHA-256\$\d+:[A-Za-z0-9+/=]{12,}\$[A-Za-z0-9+/=]{20,}:[A-Za-z0-9+/=]{20,}"
    r"|(?<![A-Za-z0-9])md5[0-9a-f]{32}(?![A-Za-z0-9])"  # PostgreSQL md5 password
    r"|(?<![A-Fa-f0-9])[0-9A-Fa-f]{32}:[0-9A-Fa-f]{32}(?=:::|$|\s)"  # pwdump LM:NT (by ::: or
    # the empty LM hash aad3b435b51404ee...)
    # Cisco type 7 (reversible): "username u password 7 X", "key 7 X", "key-string 7 X"
    r"|(?:(?<=(?<![A-Za-z0-9-])password 7 )|(?<=(?<![A-Za-z0-9-])key 7 )|(?<=key-string 7 ))"
    r"[0-9A-F]{8,}(?![A-Za-z0-9])"
    # SQL Server's pwdencrypt(): 0x0100 (2005: salt, SHA-1, SHA-1 of the upper case) and
    # 0x0200 (2012 and after: salt, SHA-512)
    r"|(?<![A-Za-z0-9])0x0(?:100[0-9A-Fa-f]{88}|200[0-9A-Fa-f]{136})(?![A-Za-z0-9])"
    # hashcat's formats of captured credentials: Kerberos tickets and pre-authentication
    # ($krb5tgs$, $krb5asrep$, $krb5pa$), macOS ($ml$), NetNTLMv1/v2 (user::domain:...); and
    # its formats of protected files' passwords, as its example hashes write them (KeePass,
    # wallets, Office, PDF, archives, BitLocker, SSH keys, Ansible Vault)
    r"|\$(?:krb5tgs|krb5asrep|krb5pa|ml|keepass|bitcoin|ethereum|electrum|blockchain|office"
    r"|oldoffice|pdf|zip2|7z|rar5|RAR3|pkzip2?|bitlocker|sshng|ansible|axcrypt|dmg)\$[^\s]{16,}"
    r"|(?<![\w.$-])[\w.$-]{1,64}::[\w.-]{0,64}:[0-9A-Fa-f]{16,48}:[0-9A-Fa-f]{32,48}:[0-9A-Fa-f]{16,}"
    r")"
)

# after "$" or "{" (on the lowercased line): a crypt scheme ($2y$, $argon2id$) or {SSHA}
_HASH_HEAD = r"(?:[0-9a-z-]{1,14}[$,]|[a-z0-9][a-z0-9.-]{1,20}\})"
_SECRET_PHRASE = ("secret phrase", "secret-phrase", "secret_phrase", "secretphrase")
_SEED_TAIL = r"[\"'`*]*\s*(?:(?:is|was|=|:|-)\s*)?[\"'`]?(?:[a-z]{3,8}[ ,]+){11}"

# a read of an environment variable, and what must follow each for env-default to run: the
# variable's name, then a fallback operator (most reads in notes have none)
_ENV_FALLBACK = r"\s*(?:\|\||\?\?|\?:|or\s)"
_ENV_ATTRIBUTE = r"[a-z0-9_]{1,60}" + _ENV_FALLBACK  # process.env.NAME ||
# getenv("NAME") or "v", and the call's own default: os.getenv("NAME", "v"), environ.get
_ENV_ARGS = r"\s*[\"'][a-z0-9_]{1,60}[\"']\s*(?:\)" + _ENV_FALLBACK + r"|,)"
_ENV_CALL = r"\s*\(" + _ENV_ARGS
_ENV_INDEX = r"\s*[\"'][a-z0-9_]{1,60}[\"']\s*\]" + _ENV_FALLBACK  # ENV["NAME"] ||
# django-environ's reads take the default as a keyword too: env("NAME", default="v")
# (https://django-environ.readthedocs.io/en/latest/quickstart.html)
_ENV_READS = {"process.env.": _ENV_ATTRIBUTE, "meta.env.": _ENV_ATTRIBUTE,
              "environ.get": _ENV_CALL, "getenv": _ENV_CALL, "env(": _ENV_ARGS,
              "environ[": _ENV_INDEX, "env[": _ENV_INDEX}


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
        "private-key-xml", "private key material",
        r"<(?:InverseQ|DP|DQ)>(?P<s>[A-Za-z0-9+/]{16,}={0,2})",
        keywords=("<inverseq>", "<dp>", "<dq>"), group="s", priority=1,
        doc="an RSA private key in .NET's XML form (RSA.ToXmlString(true): <RSAKeyValue> with "
            "<P>, <Q>, <DP>, <DQ>, <InverseQ>, <D>; a public key has only <Modulus>, <Exponent>)",
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
        r"(?P<s>[^\s/?]{1,256})@(?=[A-Za-z0-9\[_(]|%2[Ff])",  # %2F: a socket's path (MongoDB)
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
        # a name may end in it (SUGARSYNC_AUTHORIZATION=X): "_" is a word's character for \b
        r"(?<![A-Za-z0-9])(?i:authorization)[\"'`]?\s*[:=]\s*[\"'`]?(?!(?i:basic|bearer)\b)"
        r"(?:(?i:token|apikey|api-key|key|sso-key|digest|hmac|otoken|klaviyo-api-key|ssws|ntlm"
        r"|negotiate)[ =])?"
        r"(?P<s>[A-Za-z0-9._~+/=:-]{16,4096})",
        keywords=("authorization",), keyword_tails=(("authorization", r"[\"'`]?\s*[:=]"),),
        group="s", check="token_value", priority=1,
        doc="https://datatracker.ietf.org/doc/html/rfc9110#section-11.6.2",
    ),
    *COMMAND_LINES,
    *PROSE,
    Rule(
        "schemeless-url-password", "password in URL",
        r"(?<![\w/@:.%+$-])[A-Za-z_][\w.-]{0,63}:(?P<s>[^\s`'\"@/:<>{}\[\]()|]{6,128})@"
        r"(?=(?:[\w-]+\.)*[\w-]+(?::[0-9]{2,5}(?![\w.-])|/[\w.-])"
        r"|localhost(?![\w.-])|[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?![\w.-]))",
        keywords=("@",), keyword_tails=(("@", r"(?:[\w-]+\.)*[\w-]+(?::[0-9]|/[\w.-])"
                                                r"|localhost|[0-9]{1,3}\."),),
        group="s", check="colon_pair", priority=1,
        doc="user:password@host:port without a scheme, as proxies take it (http_proxy, curl "
            "-x, pip --proxy: [user:passwd@]proxy.server:port), or user:password@host/dbname "
            "(a connection string without its scheme; round 17: the login-pair rule had read "
            "it with 'user' as a label and the path as the password, and redact() left the "
            "password); the host needs its port, a path (or is an address or localhost): an "
            "e-mail address is user@host.tld, with neither",
    ),
    Rule(
        "go-mysql-dsn", "password in URL",
        r"(?<![\w/@:.%+$-])[A-Za-z_][\w.-]{0,63}:(?P<s>[^\s`'\"@/:<>()|]{1,128})"
        r"@(?:(?:tcp6?|udp|unix)\(|/[\w.-]{0,64}(?:[?\s]|$))",
        keywords=("@tcp(", "@tcp6(", "@udp(", "@unix(", "@/"), group="s", check="url_password",
        priority=1,
        doc="https://github.com/go-sql-driver/mysql#dsn-data-source-name "
            "(user:password@tcp(host:port)/dbname, and user:password@/dbname with the default "
            "protocol and address): the password is judged as a URL's is",
    ),
    Rule(
        "dotnet-appsetting", "secret assignment",
        r"<(?:add|property|param|parameter|entry|setting|env|variable|constant|item|arg)\s+"
        r"(?:key|name)=\"(?P<name>[^\"]{0,60}(?i:key|token|secret|password|passwd|pwd"
        r"|credential)[^\"]{0,30})\"\s+value=\"(?P<s>[^\"]{6,512})\"",
        keywords=("key=\"", "name=\""),
        keyword_tails=tuple((k, r"[^\"]{0,60}(?:key|token|secret|password|passwd|pwd|credential)")
                            for k in ("key=\"", "name=\"")),
        group="s", check="appsetting", priority=1,
        doc="https://learn.microsoft.com/en-us/dotnet/framework/configure-apps/file-schema/appsettings/",
    ),
    Rule(
        "xml-credential", "secret assignment",
        r"<(?P<tag>[A-Za-z0-9:_.-]{0,40}(?i:password|passwd|pwd|pass|secret|token|apikey"
        r"|api[_-]?key|key|credential|master)s?[A-Za-z0-9_.-]{0,20})>(?P<s>[^<\n]{6,400})</",
        keywords=("password>", "passwd>", "secret>", "token>", "key>", "credential>",
                  "credentials>", "passwords>", "pwd>", "pass>", "secrets>", "tokens>", "keys>",
                  "passphrase>", "master>"),
        check="xml_value", priority=1, doc="XML/HTML configuration elements",
    ),
    Rule(
        "named-resource", "secret assignment",
        r"<(?:string|item|entry|add|property|param)\s+(?:name|key)=\"(?P<name>[^\"]{0,60}"
        r"(?i:password|passwd|secret|token|api[_-]?key|key|credential)[^\"]{0,30})\"\s*>"
        r"(?P<s>[^<\n]{6,400})</",
        keywords=("name=\"", "key=\""),
        keyword_tails=(("name=\"", r"[^\"]{0,60}(?:password|passwd|secret|token|key|credential)"),
                       ("key=\"", r"[^\"]{0,60}(?:password|passwd|secret|token|key|credential)")),
        check="xml_value", priority=1,
        doc="Android string resources and XML properties named by an attribute: "
            "<string name=\"maps_api_key\">VALUE</string>",
    ),
    Rule(
        "password-hash", "password hash",
        _HASH_RE,
        keywords=("pbkdf2_sha", "bcrypt_sha256$", "argon2$", "scrypt$", "grub.pbkdf2.",
                  "pbkdf2:sha", "scrypt:",
                  "scram-sha-256$", "md5", "$", "{", ":::", "aad3b435b51404ee", "password 7 ",
                  "key 7 ", "key-string 7 ", "0x0100", "0x0200", "::"),
        keyword_tails=(("md5", r"[0-9a-f]{32}(?![a-z0-9])"), ("$", _HASH_HEAD), ("{", _HASH_HEAD),
                       ("::", r"[\w.-]{0,64}:[0-9a-f]{16,48}:[0-9a-f]{32,48}:")),
        check="hash", priority=1, doc="crypt(5), passlib's modular crypt format",
    ),
    Rule(
        "named-value", "secret assignment", NAMED_VALUE,
        keywords=("\"value\"", "'value'", "value=", "value:", "value =", "value :"),
        check="named_value", priority=1,
        doc="{\"key\": \"db_password\", \"value\": ...}: a name in one field, its value in "
            "another",
    ),
    Rule(
        "docker-config-secret", "secret assignment",
        r"(?<![\w-])\.docker(?:configjson|cfg)[\"']?\s*:\s*[\"']?(?P<s>[A-Za-z0-9+/=]{8,4096})",
        keywords=(".dockercfg", ".dockerconfigjson"), group="s", check="token_value",
        priority=1,
        doc="Kubernetes kubernetes.io/dockerconfigjson and dockercfg Secrets: the data "
            "entry is a registry's credentials",
    ),
    Rule(
        "hcl-variable-default", "secret assignment",
        r"\bvariable\s+\"(?P<name>[\w-]{0,60}(?i:password|passwd|secret|token|api[_-]?key"
        r"|private[_-]?key|credential)[\w-]{0,30})\"\s*\{[^}\n]{0,200}?\bdefault\s*=\s*"
        r"\"(?P<s>[^\"\n]{6,256})\"",
        keywords=("variable \"",), group="s", check="pair_value", priority=1,
        doc="https://developer.hashicorp.com/terraform/language/values/variables "
            "(a credential's variable with a default written on one line)",
    ),
    Rule(
        "dockerfile-env", "secret assignment",
        r"^\s*(?:ENV|ARG)\s+(?P<name>[A-Za-z_][A-Za-z0-9_]{0,60})\s+(?P<s>[^\s=][^\s]{3,255})\s*$",
        keywords=("env ", "arg "), check="dockerfile_env", priority=1,
        doc="https://docs.docker.com/reference/dockerfile/#env (ENV <key> <value>)",
    ),
    Rule(
        "code-forms", "password assignment", CODE_FORMS,
        keywords=("identified", "credential(", "credentials(", "credential (", "authentication(",
                  "basicauth(", "plainauth(", "getconnection(", "login(", "login (", "auth(",
                  "auth=(", "auth = (", "auth =(", "auth= (", "password 0 ", ":*:", ":5432:",
                  ":3306:", "password(", "password (", "curlopt_", ": psk ", ": eap ",
                  ": xauth ", ": ntlm ", ":psk ", "]:", "pragma key", "pragma rekey"),
        # (Postfix's map is dispatched by its port, "]:587": "] " alone opens every Markdown
        # checkbox and link, and its dispatch cost 0.6% of the scan)
        keyword_tails=(("identified", r"\s+(?:with\s+\w+\s+)?by\s"),
                       ("]:", r"\d{1,5}\s+[^\s:]{1,128}:\S{4}")),
        check="code_form", priority=1,
        doc="SQL IDENTIFIED BY and PASSWORD('X'); NetworkCredential/HTTPBasicAuth/PlainAuth(user, "
            "password) calls; .pgpass lines (host:port:db:user:password); Cisco 'password 0'; "
            "libcurl's CURLOPT_USERPWD/CURLOPT_PASSWORD; strongSwan's ipsec.secrets ': PSK \"X\"'; "
            "Postfix's sasl_passwd '[relay]:587 user:password' (with its port); SQLCipher's PRAGMA "
            "key = 'X'",
    ),
    Rule(
        "code-calls", "password assignment", CODE_CALLS,
        keywords=("connect(", "connect (", "pdo(", "pdo (", "mysqli(", "mysqli (", "sequelize(",
                  "sequelize (", "password(",
                  "passwd(", "passphrase(", "secret(", "token(", "apikey(", "api_key(",
                  "accesskey(", "secretkey(", "credential(", "credentials(", "setproperty(",
                  "setenv(", "putenv(", "put(", "set(", "setdefault("),
        check="code_call", priority=1,
        doc="mysqli_connect/new mysqli/new PDO/connect(host, user, password); "
            "setPassword(\"X\"), .password(\"X\"), withApiKey(\"X\"); "
            "System.setProperty(\"...password\", \"X\"), os.Setenv(\"API_TOKEN\", \"X\")",
    ),
    Rule(
        "html-password-input", "password assignment",
        r"<input\b[^>]{0,200}?\btype=[\"']?password\b[^>]{0,200}?\bvalue=[\"'](?P<s>[^\"'\n]{4,128})[\"']"
        r"|<input\b[^>]{0,200}?\bvalue=[\"'](?P<s2>[^\"'\n]{4,128})[\"'][^>]{0,200}?\btype=[\"']?password\b",
        keywords=("type=\"password", "type='password", "type=password"), check="html_input",
        priority=1, doc="HTML <input type=\"password\" value=\"...\">: a pre-filled password",
    ),
    Rule(
        "shell-default", "password assignment",
        r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]{0,60}):?[-=](?P<s>[^}\s\"'$]{4,256})\}",
        keywords=("${",), keyword_tails=(("${", r"[a-z_][a-z0-9_]{0,60}:?[-=][^}\s\"'$]{4}"),),
        check="named_default", priority=1,
        doc="bash(1) parameter expansion ${NAME:-default}, as docker-compose files use it: "
            "the default of a credential's variable is its value wherever the variable is unset",
    ),
    Rule(
        "env-default", "password assignment",
        r"(?:\bprocess\.env\.|\bimport\.meta\.env\.|\benviron(?:\.get)?\s*[(\[]\s*[\"']"
        r"|\b[Gg]et[Ee]nv\s*\(\s*[\"']|\bENV\s*\[\s*[\"']|(?<![\w.])env\s*\(\s*[\"'])"
        r"(?P<name>[A-Za-z_][A-Za-z0-9_]{0,60})"
        r"(?:[\"']?\s*[)\]]?\s*(?:\|\||\?\?|\?:|\bor\b)|(?<=[(\w])[\"']\s*,(?:\s*default\s*=)?)\s*"
        r"(?P<s>\"[^\"\n]{4,256}\"|'[^'\n]{4,256}')",
        keywords=tuple(_ENV_READS), keyword_tails=tuple(_ENV_READS.items()),
        check="named_default", priority=1,
        doc="a literal after an environment variable's read as its fallback: "
            "process.env.X || 'v', os.environ.get('X') or 'v', System.getenv(\"X\") ?: \"v\", "
            "and the read's default argument: os.getenv('X', 'v'), os.environ.get('X', 'v')",
    ),
    Rule(
        "gradle-signing", "password assignment",
        r"(?<![\w.])(?P<name>storePassword|keyPassword)\s+(?P<s>\"[^\"\n]{4,256}\"|'[^'\n]{4,256}')",
        keywords=("storepassword ", "keypassword "), check="config_set", priority=1,
        doc="https://developer.android.com/build/building-cmdline#sign_manually (a Gradle "
            "signingConfigs block: storePassword \"X\", keyPassword 'X', Groovy's call without "
            "parentheses)",
    ),
    Rule(
        "rpm-define", "password assignment",
        r"^\s*%(?:define|global)\s+(?P<name>[A-Za-z_][A-Za-z0-9_]{0,60})\s+(?P<s>[^\s%{][^\s]{3,255})"
        r"\s*$",
        keywords=("%define", "%global"), check="config_set", priority=1,
        doc="https://rpm-software-management.github.io/rpm/manual/macros.html "
            "(%define NAME VALUE in a spec file)",
    ),
    GENERATED_TOKEN,
    Rule(
        "escaped-quotes", "password assignment", r"(?!)",
        keywords=('\\"', "\\n", "\\r", "\\t"), locate="unescaped", priority=1,
        doc="JSON quoted inside a string: curl -d \"{\\\"password\\\": \\\"X\\\"}\", "
            "a log's payload; lines joined by \\\\n in one literal: \"host=db\\\\npassword=X\"",
    ),
    Rule(
        "table-cell", "password in a table",
        r"\|[ \t]*`?(?P<s>[^\s|`]{10,64})`?[ \t]*(?=\|)",
        # possessive runs: each is followed by what it cannot hold (a cell's run by a
        # backtick, a space or "|"), so giving characters back never matches
        keywords=("|",), keyword_tails=(("|", r"[ \t]*+`?[^\s|`]{10,64}+`?[ \t]*+\|"),),
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
    KEYWORD_ASSIGNMENT,
)

KEYWORD_KINDS = ("password assignment", "token assignment", "credential assignment",
                 "secret assignment", "API key assignment", "key assignment", "seed phrase",
                 "command-line credential", "high-entropy string", "API token")
