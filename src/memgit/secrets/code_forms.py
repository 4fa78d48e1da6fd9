"""Credentials written in code and configuration by name: a field that names a credential
beside the one that holds it, Dockerfile ``ENV`` and ``set``/``config set`` commands, SQL's
``IDENTIFIED BY``, calls whose documented signature takes a user and a password or a key
as string literals (.NET, Java, Python, Go, PHP), ``.pgpass`` lines, Cisco's type 0
passwords, and HTML password inputs with a value.

The checks register themselves (``rules.check``) for the rules that name them, which
``structural.STRUCTURAL`` lists with the patterns defined here.
"""

from __future__ import annotations

import re

from . import values as V
from .assignments import kw_kind
from .rules import check

# JSON/YAML objects that name a credential in one field and hold it in another:
# {"key": "db_password", "value": "..."}, {"name": "API_TOKEN", "value": "..."},
# CloudFormation's ParameterKey=DBPassword,ParameterValue=...
NAMED_VALUE = (
    r"[\"']?(?:key|name|Key|Name|ParameterKey)[\"']?\s*[:=]\s*[\"']?"
    r"(?P<name>[\w.-]{0,40}(?i:pass(?:word|wd)?|pwd|secret|token|api[_-]?key|apikey|credential)"
    r"[\w.-]{0,20})[\"']?\s*,\s*[\"']?(?:value|Value|ParameterValue)[\"']?\s*[:=]\s*"
    r"(?P<q>[\"']?)(?P<s>[^\"'\s,}]{4,256})(?P=q)"
)


@check("named_value")
def _named_value(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    val = m.group("s")
    if not V.literal_ok(val) or V.is_reference(val) or V.self_describing(val.lower()):
        return None
    return m.start("s"), m.end("s"), kw_kind("", m.group("name"))


@check("dockerfile_env")
def _dockerfile_env(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    """``ENV NAME value`` (the legacy form without ``=``) whose name says credential."""
    return _named_literal(m)


def _named_literal(m: re.Match[str]) -> tuple[int, int, str] | None:
    name, val = m.group("name"), m.group("s").strip("\"'")
    if not V.rx(r"(?i)pass(?:word|wd)?|pwd|secret|token|api_?key|credential").search(name) or \
            V.rx(r"(?i)_(?:file|path|url|user(?:name)?|name|id)$").search(name):
        return None
    if not V.literal_ok(val) or V.self_describing(val.lower()) or V.names_an_argument(val):
        return None  # (safe set path/to/secret key=value: a pair of names)
    start = m.start("s") + m.group("s").index(val)
    return start, start + len(val), kw_kind("", name)


@check("config_set")
def _config_set(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    """``set -x NAME VALUE``, ``%define NAME VALUE``: as ``ENV NAME value``."""
    return _config_value(m)


@check("named_default")
def _named_default(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    """A default written for a credential's variable (``${NAME:-VALUE}``, ``getenv("NAME") or
    "VALUE"``): as ``config_set``, and a key's or token's default must look generated (a
    digit, or a token's shape): ``process.env.API_KEY || 'sk-anything'`` is a proxy's
    placeholder, a password's default is a password."""
    found = _config_value(m)
    if found is None:
        return _generated_key_default(m)
    if "pass" in found[2]:
        return found
    val = text[found[0]:found[1]]
    return found if any(c.isdigit() for c in val) or V.token_like(val, 12) else None


def _generated_key_default(m: re.Match[str]) -> tuple[int, int, str] | None:
    """The default of a variable named only as a key (``ACCOUNT_KEY``, ``storageKey``) when
    the literal is what a generator writes (an account key's base64): the name alone says
    too little for a word or a path to count."""
    name, raw = m.group("name"), m.group("s")
    if raw[:1] not in "\"'" or not V.rx(r"(?i)(?:^|[_.-]|[a-z])key$").search(name):
        return None
    val = raw[1:-1]
    if not V.token_like(val, 16) or V.is_placeholder(val):
        return None
    start = m.start("s") + 1
    return start, start + len(val), "key assignment"


def _config_value(m: re.Match[str]) -> tuple[int, int, str] | None:
    """A named literal, where an unquoted word of letters alone after the name is prose
    (``set API_TOKEN before running``)."""
    val = m.group("s")
    if val[:1] not in "\"'" and val.isalpha():
        return None
    return _named_literal(m)


# credentials written in SQL (MySQL/Oracle IDENTIFIED BY, MySQL's PASSWORD() function), in
# calls that take a user and a password as two strings (.NET, Java, Python requests, Go
# net/smtp...), in .pgpass lines, Cisco's type 0 (plain text) passwords, and libcurl's
# credential options (https://curl.se/libcurl/c/CURLOPT_USERPWD.html and its siblings)
CODE_FORMS = (
    r"(?i:\bidentified\s+(?:with\s+\w+\s+)?by)\s+(?!password\b)(?:(?i:password)\s+)?"
    r"(?P<q1>['\"]?)(?P<a>[^'\"\s;]{4,128})(?P=q1)"
    r"|\b(?:NetworkCredential|PasswordAuthentication|HTTPBasicAuth|HTTPDigestAuth|HttpBasicAuth"
    r"|PlainAuth|getConnection|UsernamePasswordCredentials|SetBasicAuth|basicAuth|login|auth"
    r"|BasicAuthenticationHeaderValue|Credentials)\s*(?:=\s*)?\(\s*(?:[^,()\n]{0,80},\s*)?"
    r"[\"'][^\"'\n]{1,64}[\"']\s*,\s*[\"'](?P<b>[^\"'\n]{4,128})[\"']"
    r"|^(?:[\w.-]+|\*):(?:\d{1,5}|\*):(?:[\w.-]+|\*):(?:[\w.@-]+|\*):(?P<c>[^\s:]{4,128})$"
    r"|\bpassword\s+0\s+(?P<d>\S{4,128})"
    # MySQL's PASSWORD('...') function (SET PASSWORD ... = PASSWORD('X'), mysql.user rows)
    r"|(?<![\w.])(?i:password)\s*\(\s*'(?P<e>[^'\s]{4,128})'\s*\)"
    # libcurl's options: CURLOPT_USERPWD "user:password", CURLOPT_PASSWORD "password"...
    r"|\bCURLOPT_(?:PROXY)?USERPWD\s*,\s*\"[^\":\n]{1,64}:(?P<f>[^\"\n]{3,128})\""
    r"|\bCURLOPT_(?:(?:PROXY)?PASSWORD|XOAUTH2_BEARER|KEYPASSWD|(?:PROXY_)?TLSAUTH_PASSWORD)\s*,"
    r"\s*\"(?P<g>[^\"\n]{4,256})\""
    # strongSwan's ipsec.secrets(5): [selectors] : PSK|EAP|XAUTH|NTLM "secret"
    r"|(?:^|\s):\s*(?:PSK|EAP|XAUTH|NTLM)\s+(?P<h>\"[^\"\n]{4,128}\"|'[^'\n]{4,128}'|[^\s\"']{4,128})"
    # SQLCipher's PRAGMA key = 'passphrase' (and rekey, the new one)
    r"|(?i:\bpragma\s+(?:re)?key)\s*=\s*[\"'](?P<j>[^\"'\n]{4,256})[\"']"
    # Postfix's sasl_passwd(5) map: [relayhost]:port user:password
    r"|^\s*\[[\w.-]{1,128}\](?::\d{1,5})?\s+[^\s:]{1,128}:(?P<i>\S{4,128})\s*$"
)


# Oracle's unquoted IDENTIFIED BY takes an account before it (CREATE|ALTER USER scott
# [ACCOUNT UNLOCK...] IDENTIFIED BY tiger, GRANT ... TO scott IDENTIFIED BY tiger, CONNECT TO
# scott IDENTIFIED BY tiger); MySQL's quoted form needs none
_SQL_ACCOUNT_BEFORE = re.compile(r"(?i)\b(?:user|role)\s+\S+(?:\s+[a-z]+){0,4}\s+$"
                                 r"|\bto\s+\S+\s+$")


@check("code_form")
def _code_form(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    name = next(k for k in "abcdefghij" if m.group(k) is not None)
    val = m.group(name).strip("\"'")
    if name == "a" and not m.group("q1") and not _SQL_ACCOUNT_BEFORE.search(text, 0, m.start()):
        return None  # "identified by being in the photos space": prose, not Oracle's SQL
    if not V.literal_ok(val) or V.is_reference(val) or V.self_describing(val.lower()):
        return None
    start = m.start(name) + m.group(name).index(val)
    return start, start + len(val), "password assignment"

# calls whose documented signature takes a password or a key as a string literal
_CRED_CALL_NAME = (r"(?:Password|Passwd|Passphrase|Secret|Token|ApiKey|APIKey|AccessKey"
                   r"|SecretKey|Credentials?|ClientSecret|AuthToken|AccessToken)")
CODE_CALLS = (
    # PHP and Python DB-API: (host, user, password[, db]); Sequelize: (database, user, password)
    r"\b(?:mysqli?_connect|mysql_pconnect|mysqli|PDO|connect|Sequelize)\s*\(\s*[\"'][^\"'\n]{1,120}[\"']\s*,"
    r"\s*[\"'][^\"'\n]{1,64}[\"']\s*,\s*[\"'](?P<a>[^\"'\n]{4,128})[\"']"
    # setters and builders with one string argument
    r"|(?:\b(?:set|with|use)(?:[A-Z][a-z0-9]*){0,3}?" + _CRED_CALL_NAME + r"|\.(?:password|passwd"
    r"|passphrase|secret|token|apiKey|api_key|clientSecret|secretKey|accessToken|authToken))"
    r"\s*\(\s*(?P<q>[\"'])(?P<b>[^\"'\n]{4,256})(?P=q)\s*\)"
    # a property or an environment variable named as a credential, then its literal value
    r"|\b(?:setProperty|setenv|Setenv|putenv|put|set|setdefault)\s*\(\s*[\"'](?P<name>[^\"'\n]{0,60}"
    r"(?i:password|passwd|pwd|passphrase|secret|token|api[_.-]?key|apikey|credential)"
    r"[^\"'\n]{0,20})[\"']\s*,\s*[\"'](?P<c>[^\"'\n]{4,256})[\"']\s*\)"
)


@check("code_call")
def _code_call(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    key = next(k for k in ("a", "b", "c") if m.group(k) is not None)
    val = m.group(key)
    if key == "c" and V.rx(r"(?i)(?:name|id|url|uri|file|path|type|length|size|ttl|header"
                           r"|prefix|policy|env|expir\w*)$").search(m.group("name")):
        return None  # setenv("TOKEN_URL", ...): names something else
    if (" " in val.strip() or not V.literal_ok(val) or V.is_reference(val)
            or V.self_describing(val.lower())):
        return None
    kind = "password assignment"
    if key != "a":
        named = m.group("name") if key == "c" else m.group(0)
        kind = kw_kind("", named)
        if "pass" not in kind and not (any(c.isdigit() for c in val) or V.token_like(val, 12)):
            return None  # setToken("abcdef"): a key or token is generated
    return m.start(key), m.end(key), kind


@check("html_input")
def _html_input(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    key = "s" if m.group("s") is not None else "s2"
    val = m.group(key)
    if not V.literal_ok(val) or V.is_reference(val) or V.self_describing(val.lower()):
        return None
    return m.start(key), m.end(key), "password assignment"
