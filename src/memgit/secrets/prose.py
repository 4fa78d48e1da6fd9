"""Credentials stated in prose: what people write in notes and Markdown lists.

``the password is X``, ``pw: X`` in a sentence, ``creds: admin / X``, ``login with admin and
X``, ``X is the password``, ``use token X for the API``, ``ID/PW: u/X``, a credential word
before a code span, a conventional account's ``admin:X``. Each value must look chosen or
generated (``values.looks_random``), never a reference or a word; the rules are listed in
``PROSE``, which ``structural.STRUCTURAL`` lists among every structural rule.
"""

from __future__ import annotations

import re

from . import values as V
from .assignments import _FOREIGN_PASSWORD, _FOREIGN_WORDS
from .rules import Rule, check


@check("pair_value")
def _pair_value(m: re.Match[str], text: str) -> bool:
    val = m.group("s").rstrip(".,;:)")
    if V.path_of_names(val):
        return False  # secret "secret/data/app": a path of names (a Vault path), no value
    return V.looks_random(val) and not V.is_reference(val)


@check("login_pair")
def _login_pair(m: re.Match[str], text: str) -> bool:
    """``creds: admin / s3cret``, ``login admin, s3cret``; not a path (``user-guide/x``,
    a slash without spaces after a name with no label) nor an argument list
    (``credentials=False, expose_headers=``)."""
    whole = m.group(0)
    val = m.group("s")
    cut = m.start("s") - m.start()
    head = whole[:cut]
    if V.rx(r"\S/\S").search(head[-3:] + val[:1]) and not _stated_pair(whole, head):
        return False
    if V.rx(r"@[\w.-]+/$").search(head) is not None:
        return False  # user:pw@host/dbname: an authority and a path (schemeless-url-password)
    if val.endswith("=") or "=" in val and val.split("=")[0].isidentifier():
        return False
    if "#" in val and (val[0] == "#" or not any(c.isdigit() for c in val)):
        return False  # admin / #general, user / docs#setup: a channel, an anchor (round 17:
        # a generated password may hold "#", k7#Rpz!2mQ, with digits among its letters)
    if "(" in val:
        return False  # user HOME_DIR", str(path: a call's arguments, not a pair
    return bool(_pair_value(m, text))


@check("colon_pair")
def _colon_pair(m: re.Match[str], text: str) -> bool:
    """``admin:X``: X must look generated and hold a capital or a symbol other than ``.-_``;
    a tag of the images named like these accounts (``postgres:16-alpine``,
    ``tomcat:9.0-jdk17``) is lowercase letters, digits and those three."""
    val = m.group("s").rstrip(".,;:)")
    return V.rx(r"[a-z0-9._-]+").fullmatch(val) is None and bool(_pair_value(m, text))


def _stated_pair(whole: str, head: str) -> bool:
    """``user/X`` without spaces is a pair, not a path, where a label states it (``creds:
    u/X``, ``the login is u/X``) or the user is a conventional account (``creds admin/X``)."""
    if V.rx(r"^[A-Za-z]+(?:\s*[:=]|\s+(?i:is|are)\s)").match(whole.lstrip("`'\"")):
        return True
    user = V.rx(r"[\w.@+-]{1,64}(?=[`'\"]?\s*/\s*$)").search(head)
    return user is not None and \
        V.rx(r"(?i:" + _ADMIN_USERS + r")").fullmatch(user.group(0)) is not None


@check("value_first")
def _value_first(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    """``X is the password`` (matched at "the password"): the value is the token just
    before "is"/"was", and it must look generated, as ``pair_value`` judges."""
    before = V.rx(_VALUE_BEFORE).search(text, max(0, m.start() - 150), m.start())
    if before is None:
        return None
    val = before.group(1).rstrip(".,;:)")
    if not V.looks_random(val) or V.is_reference(val):
        return None
    return before.start(1), before.start(1) + len(val), "password assignment"


# "is", "to", "set to", "has been changed to"... between a credential word and its value
_CHANGED_TO = (r"(?i:(?:is|was)\s+|to\s+|(?:(?:has|had)\s+been\s+|was\s+|is\s+)?"
               r"(?:changed|set|reset|updated|rotated)\s+to\s+)")
_CODE_SPAN_KEYWORDS = ("password", "passphrase", "passcode", "passwd", "pwd", "secret", "token",
                       "api key", "api_key", "api-key", "apikey")

_BARE_PROSE = (r"(?<![A-Za-z0-9_-])(?i:password|passphrase|passcode|passwd|pwd|pw|"
               + _FOREIGN_PASSWORD + r")\s+"
               r"(?P<s>[^\s`'\",;:()\[\]]{8,64})(?=$|[\s.,;)])")

# prose that states the value before naming it: "X is the password for ...", "`X` was my old
# API key"; the value must look generated (pair_value), a word before "is the password" passes
# (matched where its keyword starts, "the password"; the value is looked for before it)
_VALUE_FIRST = (r"(?i:(?:the|my|our|your)\s+)?(?i:(?:new|current|old|actual)\s+)?"
                r"(?i:password|passphrase|passcode|passwd|pwd|pw|api[ _-]?key|access[ _-]?token"
                r"|token|secret)(?![A-Za-z])")
_VALUE_BEFORE = (r"(?:^|[\s(])[`'\"]?([^\s`'\"]{6,128})[`'\"]?\s+(?i:is|was)\s+"
                 r"(?:(?i:the|my|our|your)\s+)?$")
# (the credential word with what precedes it: "is the " alone is in most lines of prose)
_VALUE_FIRST_KEYWORDS = tuple(f"{d} {w}" for d in ("the", "my", "our", "your", "new", "current",
                                                     "old", "actual")
                              for w in ("pass", "pw", "api", "access", "token", "secret"))
_VALUE_FIRST_TAIL = r"|".join(("(?<=pass)", "(?<=pw)d?(?![a-z])", "(?<=api)[ _-]?key",
                               "(?<=access)[ _-]?token", "(?<=token)", "(?<=secret)"))
# user/pass: admin/X, and the documentation habit of labelling a pair "ID/PW" (also "ID PW",
# "ID / PW :", "id/pass") before "user/X", "user // X", "user(X)", "user, X" or "user X"
_PAIR_LABEL = (r"(?:(?i:user(?:name)?|login)\s*/|(?<![A-Za-z0-9])(?i:id)\s*(?:/|\s))\s*"
               r"(?i:pass(?:word)?|pwd|pw)(?![A-Za-z])\s*(?:[:=(]|->)?\s*[`'\"]?"
               r"[\w.@+-]{1,64}[`'\"]?(?:\s*(?:/{1,2}|\(|,)\s*|\s+)[`'\"]?(?P<s>[^\s`'\"()/]{4,128})")


@check("token_prose")
def _token_prose(m: re.Match[str], text: str) -> bool:
    """``use token X for the API``: a credential word, no operator, then a value only a
    generator writes (both cases and digits, not hex, not an identifier)."""
    val = m.group("s").rstrip(".")
    upper, lower, digits = V.classes(val)
    if not (upper and lower and digits) or V.R.uuid.search(val):
        return False
    return V.token_like(val, 16) and not V.is_reference(val)


@check("bare_prose")
def _bare_prose(m: re.Match[str], text: str) -> bool:
    """``use password Tq9vLm2X to log in``: a credential word and, with no operator, a value
    that only a person choosing a password writes (letters with digits or symbols, at
    least eight characters, not a reference, not a version or a name)."""
    val = m.group("s").rstrip(".")
    if val[0] == "-":
        return False  # "$env:PW -AsPlainText": an option follows the word, not its value
    has_alpha = any(c.isalpha() for c in val)
    other = any(not c.isalnum() for c in val)
    if not has_alpha or not (any(c.isdigit() for c in val) or other) or len(val) < 8:
        return False
    return V.looks_random(val) and not V.is_reference(val) and V.entropy(val) >= 2.8 and \
        not ("/" in val and V.names_an_argument(val))  # unshadow passwd path/to/shadow


_LOGIN_PROSE = (
    r"(?i:log(?:ged)?[ -]?(?:in|on)|sign(?:ed)?[ -]?in|connect(?:ed)?|authenticate)\s+"
    r"(?i:with|as|using)\s+(?:(?i:user(?:name)?)\s+)?[`'\"]?[\w.@+-]{1,64}[`'\"]?\s*"
    r"(?:/|,|(?i:and|with)(?:\s+(?i:password|pw|pass))?|(?i:password|pw|pass))\s*[:=]?\s*"
    r"[`'\"]?(?P<s>[^\s`'\"|,/]{6,128})"
)


# accounts that exist by default or by convention (databases' superusers, images' users)
_ADMIN_USERS = ("admin|administrator|root|sa|postgres|guest|ubuntu|pi|elastic|jenkins|superuser"
                "|sysadmin|ec2-user|centos|oracle|tomcat|rabbitmq|minio|grafana|kibana")
_PAIR_WORDS = ("login", "credential", "creds", "user", "account", "wifi", "wi-fi", "wlan",
               "zugangsdaten", "anmeldedaten", "identifiants", "credenciales", "credenciais",
               "inloggegevens", "credenziali")

PROSE: tuple[Rule, ...] = (
    Rule(
        "login-pair", "password assignment",
        r"(?<![A-Za-z0-9])(?i:login|credentials?|creds|user(?:name)?|account|wi-?fi|wlan|zugangsdaten"
        r"|anmeldedaten|identifiants|credenciales|credenciais|inloggegevens|credenziali)(?![A-Za-z])"
        r"[*_`]*(?:\s+(?i:are|is))?"  # **Creds**: u / X, creds are u / X
        r"\s*[:=]?\s*[`'\"]?[\w.@+-]{1,64}[`'\"]?"
        r"(?:\s*(?:/|,|\|)\s*(?:(?i:pass(?:word)?|pw|pwd)\s*[:=]?\s*)?"
        r"|\s+(?i:pass(?:word)?|pw|pwd)(?:\s*[:=]\s*|\s+))"  # user admin pass X
        r"[`'\"]?(?P<s>[^\s`'\"|,/]{6,128})(?![^\s`'\"|,])",
        keywords=_PAIR_WORDS, group="s",
        # the user's run is possessive: what follows it (a quote, a space, / , |) is no run
        # character, so a shorter run never matches (the same answers, no backtracking)
        keyword_tails=tuple((k, r"[a-z]{0,4}[*_`]*(?:\s+(?:are|is))?\s*[:=]?\s*[`'\"]?"
                                r"[\w.@+-]{1,64}+[`'\"]?(?:\s*[/,|]|\s+(?:pass|pw))")
                            for k in _PAIR_WORDS),
        check="login_pair",
        priority=1, doc="notes that pair a login with its password: `admin` / `s3cret`",
    ),
    Rule(
        "keyword-code-span", "password assignment",
        r"(?<![A-Za-z0-9])(?i:password|passphrase|passcode|passwd|pwd|secret|token|api[ _-]?key)"
        r"\s+(?:" + _CHANGED_TO + r")?(?P<q>[`'\"])(?P<s>[^`'\"\s]{6,128})(?P=q)",
        keywords=_CODE_SPAN_KEYWORDS, group="s",
        keyword_tails=tuple((k, r"\s+(?:" + _CHANGED_TO + r")?[`'\"][^`'\"\s]{6}")
                            for k in _CODE_SPAN_KEYWORDS),
        check="pair_value", priority=1,
        doc="prose: a credential word, then its value in a code span or quotes "
            "(wifi password `X`, the password was changed to 'X')",
    ),
    Rule(
        "conventional-login-pair", "password assignment",
        r"(?<![\w/.@-])(?i:" + _ADMIN_USERS + r")\s+/\s+[`'\"]?"
        r"(?P<s>[^\s`'\"|,/(\[<{][^\s`'\"|,/]{5,127})"
        r"(?![^\s`'\"|,])",
        keywords=tuple(u + " /" for u in _ADMIN_USERS.split("|")), group="s",
        check="login_pair", priority=1,
        doc="notes that pair a conventional account with its password, spaced as no path is: "
            "Jenkins: admin / s3cret, MySQL root / s3cret",
    ),
    Rule(
        "conventional-colon-pair", "password assignment",
        r"(?<![\w/.@:$-])(?i:" + _ADMIN_USERS + r"):(?P<s>[^\s`'\"@/:<>{}\[\]()|]{6,128})"
        r"(?=$|[\s,;)`'\"]|\.(?:\s|$))",
        keywords=tuple(u + ":" for u in _ADMIN_USERS.split("|")), group="s",
        keyword_tails=tuple((u + ":", r"[^\s`'\"@/:<>{}\[\]()|]{6}")
                            for u in _ADMIN_USERS.split("|")),
        check="colon_pair", priority=1,
        doc="notes that join a conventional account and its password with a colon, as "
            "curl -u, chpasswd(8) and HTTP Basic do: admin:s3cret works on the router",
    ),
    Rule(
        "password-changed-to", "password assignment",
        r"(?i:\b(?:set|change[ds]?|changing|reset(?:s|ting)?|update[ds]?|rotated?)\s+"
        r"(?:(?:the|my|our|his|her|its|their|your|a|new)\s+)?(?:[\w-]+\s+){0,2}"
        # the word alone or ending a variable's name (set PGPASSWORD to X, round 17), or a
        # token's or a secret's word (set the API token to X)
        r"(?:\w*?(?:password|passwd)|passphrase|passcode|pwd|pw|\w*?token|\w*?secret)\s+to)"
        r"\s+[`'\"]?(?P<s>[^\s`'\",;]{8,128})",
        keywords=tuple(w + " to " for w in ("password", "passphrase", "passcode", "passwd", "pwd",
                                            "pw", "token", "secret")),
        group="s", check="bare_prose", priority=1,
        doc="prose: I changed the router password to X, set PGPASSWORD to X, set the API "
            "token to X (the verb before the credential word)",
    ),
    Rule(
        "use-as-password", "password assignment",
        r"(?i:\buse)\s+[`'\"]?(?P<s>[^\s`'\"]{6,128})[`'\"]?\s+(?i:as|for)\s+"
        r"(?:(?i:the|a|an|your|my|our)\s+)?"
        r"(?:[\w-]+\s+){0,2}(?i:password|passphrase|passcode|pin|token|secret|api key)"
        # the credential word ends the phrase: "as the token store" names a place
        r"(?=\s*$|\s*[.,;:!?)]|\s+(?i:on|at|in|of|for|to|from|with|when|and|but|if|until)\b)",
        keywords=("use ",), group="s",
        keyword_tails=(("use ", r"[`'\"]?[^\s`'\"]{6,128}[`'\"]?\s+(?:as|for)\s"),),
        check="pair_value", priority=1,
        doc="prose: use X as the password, I'll use X for the wifi password",
    ),
    Rule(
        "use-to-log-in", "password assignment",
        r"(?i:\buse)\s+[`'\"]?(?P<s>[^\s`'\"]{6,128})[`'\"]?\s+"
        r"(?i:to\s+(?:log|sign)[ -]?(?:into|in|onto|on)"
        r"|to\s+(?:connect|authenticate|unlock|decrypt))(?![A-Za-z])",
        keywords=("use ",), group="s",
        keyword_tails=(("use ", r"[`'\"]?[^\s`'\"]{6,128}[`'\"]?\s+to\s"),),
        check="pair_value", priority=1,
        doc="prose: use X to log in (to connect, to unlock)",
    ),
    Rule(
        "cred-colon-pair", "password assignment",
        r"(?<![A-Za-z0-9])(?i:creds?|credentials?|login|zugangsdaten|identifiants|credenciales)"
        r"\s*(?::|=|\s(?i:are|is|sind|son|sont))?\s*[`'\"]?[\w.@+-]{1,64}:(?P<s>[^\s`'\"@/:]{6,128})"
        r"[`'\"]?(?=$|[\s,;)]|\.(?:\s|$))",
        keywords=("cred", "login", "zugangsdaten", "identifiants", "credenciales"), group="s",
        keyword_tails=tuple((k, r"[a-z]{0,9}\s*[:=]?\s*(?:are\s|is\s|sind\s|son\s|sont\s)?\s*"
                                r"[`'\"]?[\w.@+-]{1,64}:[^\s`'\"@/:]")
                            for k in ("cred", "login", "zugangsdaten", "identifiants",
                                      "credenciales")),
        check="pair_value", priority=1,
        doc="prose: creds admin:s3cret (a login and its password joined by a colon)",
    ),
    Rule(
        "login-prose", "password assignment", _LOGIN_PROSE,
        keywords=("log in", "login", "log-in", "logged in", "log on", "logon", "sign in", "signin",
                  "sign-in", "signed in", "connect", "authenticate"),
        keyword_tails=tuple((k, r"(?:ed)?\s+(?:with|as|using)\s") for k in (
            "log in", "login", "log-in", "logged in", "log on", "logon", "sign in", "signin",
            "sign-in", "signed in", "connect", "authenticate")),
        group="s", check="login_pair", priority=1,
        doc="prose: log in with admin and s3cret, sign in as admin / s3cret",
    ),
    Rule(
        "token-prose", "API token",
        r"(?<![\w-])(?i:token|api[ _-]?key|access[ _-]?key|secret[ _-]?key|secret)\s+"
        r"(?P<s>[A-Za-z0-9_+/=.-]{16,256})(?=$|[\s,;)]|\.(?:\s|$))",
        keywords=("token ", "key ", "secret "),
        keyword_tails=tuple((k, r"[a-z0-9_+/=.-]{16}") for k in ("token ", "key ", "secret ")),
        group="s", check="token_prose", priority=2,
        doc="prose without an operator: use token X for the API",
    ),
    Rule(
        "bare-prose", "password assignment", _BARE_PROSE,
        keywords=("password ", "passphrase ", "passcode ", "passwd ", "pwd ", "pw ",
                  *(w + " " for w in _FOREIGN_WORDS)),
        group="s", check="bare_prose", priority=2,
        doc="prose without an operator: use password X to log in",
    ),
    Rule(
        "value-first-prose", "password assignment", _VALUE_FIRST,
        keywords=_VALUE_FIRST_KEYWORDS,
        keyword_tails=tuple((k, _VALUE_FIRST_TAIL) for k in _VALUE_FIRST_KEYWORDS
                            if not k.endswith(("pass", "token", "secret"))),
        locate="at", check="value_first", priority=2,
        doc="prose that names the value first: X is the password for the test account",
    ),
    Rule(
        "pair-label", "password assignment", _PAIR_LABEL,
        keywords=("user/", "user /", "username/", "username /", "login/", "login /", "id/p",
                  "id / p", "id p"),
        keyword_tails=(("id p", r"(?:ass|wd|w)"),),
        group="s", check="pair_value", priority=1,
        doc="user/pass: admin/s3cret, login / password = admin / s3cret, ID/PW: admin/s3cret",
    ),
)
