"""Keyword assignments: ``name = value`` where the name says credential.

The value test depends on how strongly the name says it: after ``password``,
``secret``, ``token``, ``api_key`` a plainly assigned value is enough; after
weaker names (``key``, ``*_key``, ``sid``, ``auth``...) it must look generated.
Names that say something else (``next_page_token``, ``PASSWORD_MIN_LENGTH``) are
skipped. Markdown emphasis, code spans and links around the value do not hide it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from . import values as V
from .rules import Rule, check

SEED_STOPWORDS = frozenset(
    """the and for you not are was but with that this from have they its our your
    will into their what when which should would could been were has had does did
    them than there then these those some very just also""".split()
)

# "password" in the languages notes are written in (German, French, Spanish, Portuguese,
# Dutch, Swedish, Finnish, Danish/Norwegian (adgangskode and, round 17, kodeord), Polish,
# Turkish, Italian and Romanian (parola, parolă, "is" este), Czech, Hungarian,
# Russian/Ukrainian, Chinese, Japanese, Korean, and those below): dictionary words, not
# examples.
_FOREIGN_WORDS = (
    # those that start with an ASCII letter first: the factored core (_KW_CORE) groups them
    # with the names of their first letter, and a word in another script would be a
    # barrier none moves across (factoring._trie)
    "passwort", "kennwort", "contraseña", "contrasena", "contrasenya", "mot de passe",
    "mot_de_passe", "mot-de-passe", "mật khẩu", "senha", "salasana", "sifre", "slaptažodis",
    "wachtwoord", "lösenordet", "lösenord", "losenordet", "losenord", "lozinka", "adgangskoden",
    "adgangskode", "kodeordet", "kodeord", "passordet", "passord", "hasło",
    "haslo", "heslo", "parolă", "parola", "jelszó", "jelszo", "geslo", "kata sandi", "kata laluan",
    "nenosiri",
    # Croatian/Serbian/Bosnian (lozinka), Slovenian (geslo), Lithuanian (slaptažodis),
    # Catalan (contrasenya), Vietnamese (mật khẩu), Indonesian and Malay (kata sandi, kata
    # laluan), Swahili (nenosiri); then Turkish, Russian/Ukrainian, Macedonian and Serbian
    # Cyrillic, Bulgarian, Greek, Chinese, Japanese, Korean, Hindi, Arabic (two), Persian,
    # Hebrew (two spellings), Thai; Korean also in its short and its loan form (비번, 패스워드)
    "şifre", "пароль", "лозинка", "парола", "κωδικός", "密码", "密碼", "口令", "パスワード",
    "비밀번호", "비번", "패스워드", "암호", "पासवर्ड", "كلمة المرور", "كلمة السر", "رمز عبور",
    "סיסמה", "סיסמא", "รหัสผ่าน")
_FOREIGN_PASSWORD = "|".join(w.replace(" ", "[ ]") for w in _FOREIGN_WORDS)
# Names that say "credential" outright: a plain assigned value is enough (and the words
# for "password" in other languages, _FOREIGN_PASSWORD, last in KW_RE's core: see there).
_KW_STRONG = (
    r"pass(?:word|wd|phrase|code)?s?|pwd|pw|p/w"
    r"|client[ _.-]?secrets?|secret[ _.-]?(?:access[ _.-]?)?keys?|secrets?|secrete"
    r"|(?:access|auth|refresh|bearer|bot|api|session|id|oauth|personal[ _.-]?access|app|user"
    r"|service|webhook|master)[ _.-]?tokens?|tokens?"
    r"|api[ _.-]?keys?|apikeys?|access[ _.-]?keys?|auth[ _.-]?keys?|app[ _.-]?keys?|appkey"
    r"|consumer[ _.-]?keys?|private[ _.-]?keys?|signing[ _.-]?keys?|master[ _.-]?keys?"
    r"|encryption[ _.-]?keys?"
    r"|credentials?|creds|hapikey|psk|pre[ _-]?shared[ _-]?keys?"
)
# Names that only suggest it (key, *_key, *_sid, license...): the value must look generated.
# (mnemonic: a wallet's or an account's recovery phrase; access grant: Storj's serialized access)
_KW_WEAK = (r"s?keys?|sid|auth|licen[cs]e[ _.-]?keys?|licen[cs]e|hash|salt"
            r"|signature|sig|pat|pin|jwt|cookie|session|otp|totp|hmac|bearer|mnemonic"
            r"|access[ _.-]?grants?")
# a declared type between a name and its value (Go, TypeScript, Kotlin, Rust, Swift), and
# Go's several names declared at once: ``a, b string = "x", "y"``
_TYPE_GAP = (r"|(?:\s*,\s*[A-Za-z_]\w{0,40}){0,4}(?:\s*:\s*|\s+)"
             r"(?-i:string|String|str|&str|&'static\s+str|\[\]byte|char\s*\*)(?=\s*=)")
# A password word qualified after it by what it opens (PASSWORD_DB, password_couchbase,
# passwordMysql, password-admin): a database, a service or protocol, an account or an
# environment, in snake, kebab, dotted or camel case (the lookahead first: most names end
# at the password word, and one character then tells)
_QUALIFIERS = (r"db|database|mysql|mariadb|postgres|postgresql|pg|psql|redis|mongo|mongodb"
               r"|couchbase|couchdb|cassandra|oracle|mssql|sql|elastic|elasticsearch|neo4j|influx|influxdb"
               r"|rabbit|rabbitmq|amqp|kafka|ldap|smtp|imap|pop3|mail|email|ftp|sftp|ssh|vpn|wifi"
               r"|proxy|keystore|truststore|jks|pfx|p12|cert|admin|root|user|app|api|service|svc"
               r"|system|sys|master|default|local|remote|server|client|stage|stg|uat|qa|prd")
_PASSWORD_QUALIFIER = (
    r"(?:(?=(?-i:[-_.A-Z]))(?:(?<=password)|(?<=passwd)|(?<=passphrase)|(?<=pwd))"
    r"(?:[_.-]|(?=(?-i:[A-Z])))(?:" + _QUALIFIERS + r"))?"
)
_KW_SUFFIX = (
    r"\d*(?:[_.-](?:value|base|b64|base64|hex|str|string|raw|plain|plaintext|text|prod|production"
    r"|in|out|new|old"
    r"|live|dev|staging|test|secure|\d))*" + _PASSWORD_QUALIFIER
)
# The core's alternatives as the regex runs them: _KW_CORE_READABLE factored by leading
# letters (``factoring.factor_alternation``: a trie, the same matches in the same order).
# A place that starts no keyword tests a few branches instead of 70; the core is tried at
# each place a name's prefix could end, so the keyword rule's regex costs about a third less.
# Written out (factoring on import would cost the hook's start 0.4 ms); tests check that it
# is still the factored readable core and that KW_RE matches as the readable pattern does.
_KW_CORE_READABLE = _KW_STRONG + "|" + _KW_WEAK + "|" + _FOREIGN_PASSWORD
_KW_CORE = (
    r"p(?:a(?:ss(?:(?:word|wd|phrase|code)?s?|wort|ord(?:et|))|t|rol(?:ă|a))|w(?:d|)|/w|ersonal[ _."
    r"-]?access[ _.-]?tokens?|r(?:ivate[ _.-]?keys?|e[ _-]?shared[ _-]?keys?)|sk|in)|c(?:lient[ _.-"
    r"]?secrets?|o(?:n(?:sumer[ _.-]?keys?|trase(?:ña|n(?:a|ya)))|okie)|red(?:entials?|s))|s(?:e(?:"
    r"cret(?:[ _.-]?(?:access[ _.-]?)?keys?|s?|e)|ssion(?:[ _.-]?tokens?|)|rvice[ _.-]?tokens?|nha)"
    r"|i(?:g(?:n(?:ing[ _.-]?keys?|ature)|)|d|fre)|keys?|al(?:t|asana)|laptažodis)|a(?:ccess(?:[ _."
    r"-]?tokens?|[ _.-]?keys?|[ _.-]?grants?)|uth(?:[ _.-]?tokens?|[ _.-]?keys?|)|p(?:i(?:[ _.-]?to"
    r"kens?|[ _.-]?keys?|keys?)|p(?:[ _.-]?tokens?|[ _.-]?keys?|key))|dgangskode(?:n|))|refresh[ _."
    r"-]?tokens?|b(?:earer(?:[ _.-]?tokens?|)|ot[ _.-]?tokens?)|id[ _.-]?tokens?|o(?:auth[ _.-]?tok"
    r"ens?|tp)|user[ _.-]?tokens?|w(?:ebhook[ _.-]?tokens?|achtwoord)|m(?:aster(?:[ _.-]?tokens?|[ "
    r"_.-]?keys?)|nemonic|ot(?:[ ]de[ ]passe|_de_passe|-de-passe)|ật[ ]khẩu)|to(?:kens?|tp)|encrypt"
    r"ion[ _.-]?keys?|h(?:a(?:pikey|s(?:h|ło|lo))|mac|eslo)|k(?:e(?:ys?|nnwort)|odeord(?:et|)|ata(?"
    r":[ ]sandi|[ ]laluan))|l(?:icen(?:[cs]e[ _.-]?keys?|[cs]e)|ösenordet|ösenord|o(?:senord(?:et|)"
    r"|zinka))|j(?:wt|elsz(?:ó|o))|geslo|nenosiri|şifre|пароль|лозинка|парола|κωδικός|密码|密碼|口令|パスワー"
    r"ド|비밀번호|비번|패스워드|암호|पासवर्ड|كلمة[ ]المرور|كلمة[ ]السر|رمز[ ]عبور|סיסמה|סיסמא|รหัสผ่าน"
)
# The readable core's alternatives: the foreign words come last, after the weak names, so
# that the common names (token, secret, key...) are tried before them (factored, those
# that start with an ASCII letter join their letter's group; the others are tried last). The order
# of an alternation only matters where two alternatives can match at one place; no other
# alternative can where a foreign word does (each differs from each foreign word at a fixed
# letter: "key"/"kennwort", "salt"/"salasana", "hash"/"hasło"; those that start with "pass"
# stay after ``pass(?:word...)``, which comes first), so the matches are the same.
# The name's runs are possessive (``{1,40}+``): a shorter run would leave a letter or a digit
# where a separator or a capital must follow, so giving characters back never matches;
# the engine just stops trying (the same matches, fewer steps on a name that fails).
# The name with its end (_NAME_END) is atomic: once a name ends where a name may end, the
# engine never tries the name's other parses (MEM0_API_ + KEY, MEM0_ + API_KEY) when what
# follows fails, the same matches for fewer steps (a failing line explored what follows
# once per parse). What follows depends only on where the name ends, and the first parse
# to end where a name may end ends where the longest does: two ends E < F of parses from
# one place differ by a part of the longer name, F's name continues at E with a separator
# and a letter or digit, or a space and the rest of a core ("secret key", "auth token"),
# neither of which can start what follows a name (an operator, a gap, a quote); and
# the engine tries the longer parses first (greedy prefix runs and suffixes, "secret key"
# before "secret" in the core, "signing key" before "sig"). Tests compare it with the
# readable pattern (no atomic group, the core unfactored) at every start of the corpus
# lines and of random names.
_NAME_END = r"(?![A-Za-z0-9])(?!_[A-Za-z0-9])"
# what may stand between a credential word and its value's operator: "password for the NAS:",
# and the same prepositions in the languages of _FOREIGN_WORDS ("mot de passe du wifi :",
# "Passwort für den Server:", "Пароль от сервера:")
_GAP_WORDS_READABLE = ("for|of|on|für|fuer|von|vom|des|du|de|del|della|di|da|do|pour|para|per|van"
                       "|voor|för|от|для|dla")
# factored by leading letters (factoring.factor_alternation, written out as _KW_CORE is; a test
# checks it): tried at every name the keyword rule reads, 24 words one by one cost 1% a line
_GAP_WORDS = (r"f(?:or|ür|uer|ör)|o(?:f|n)|v(?:o(?:n|m|or)|an)|d(?:e(?:s||l(?:|la))|u|i|a|o)"
              r"|p(?:our|ara|er)|от|для|dla")
# Guards of the two prefixes tried last before a name with no prefix (``password = x``): each a
# lookahead that every match of what it guards satisfies, so the matches stay the same (tests
# compare KW_RE with the pattern without them at every start of the corpus lines). The lazy
# glued prefix tests its keyword lookahead after each of up to 30 letters, six branches each;
# where the next letter cannot start one of them (p, s, t, a, k) one class test now fails it.
# The glued "pass" words are tried one by one (17 branches) at every name; they need two to
# five letters and then "pass". Together -6% of the regex's instructions on a pass's names.
_GLUED_GUARD = r"(?=[pstak])"
_PASS_GUARD = r"(?=[a-z]{2,7}pass)"
# The gap's guard, the same kind: the first character after the name's spaces that can open
# one of its three forms: "(" of "(prod)"; the first letters of _GAP_WORDS; "," ":" or
# _TYPE_GAP's type names (s S & [ c). A name followed by "=" or "=>" (or a quote, a bracket)
# now fails the gap with one test, where its three forms each scanned the spaces and failed.
_GAP_GUARD = r"(?=\s*[(,:&\[fovdpscод])"
# The operator's guard: the characters its forms open with (a space, or ":" "=" "|" the full-width
# colon, the arrows, the CJK copulas, ","). On a line whose name is followed by anything else
# ("MEM0_API_KEY` for the hosted platform (get one at ...") the engine tries the operator at
# every place the gap's words can end; each try is now one class test, not six forms.
_OP_GUARD = r"(?=[\s:=|\uff1a\u2192是为為は는은,-])"
KW_RE = (
    r"(?<![A-Za-z0-9])"
    r"(?>(?P<name>"
    r"(?:(?:[A-Za-z0-9]{1,40}+[_.-]){1,6}"
    # then a camelCase head (http.proxyPassword, ldap.bindCredential, app_clientSecret)
    r"(?:(?-i:[a-z][a-z0-9]{0,20}+(?:[A-Z][a-z0-9]{0,20}+){0,3}?)(?=(?-i:[A-Z]))"
    # or a last segment with a word glued to its password (POSTGRES_DBPASSWD, app_adminpwd)
    r"|(?!no(?:pass|pwd))[a-z][a-z0-9]{1,12}?(?=pass(?:word|wd)|pwd))?"  # not NOPWD
    r"|(?-i:[A-Za-z][a-z0-9]{0,20}+(?:[A-Z][a-z0-9]{0,20}+){0,4}?)(?=(?-i:[A-Z]))"
    r"|(?-i:[A-Z][A-Z0-9]{0,40})(?=(?-i:PASS|PWD|SECRET|TOKEN|APIKEY|KEY))"
    r"|(?-i:[A-Za-z][A-Za-z0-9]{1,30}?)" + _GLUED_GUARD
    + r"(?=pass(?:word|wd)|pwd|secret|token|apikey|key(?![a-z]))"
    # "pass" glued to what it opens (dbpass, SMTPPASS); not bypass, compass, surpass
    r"|" + _PASS_GUARD
    + r"(?:db|smtp|mysql|pg|sql|redis|ftp|sftp|mail|ldap|bind|proxy|user|admin|root|vpn|wifi"
    # (offlineimap's remotepass, ddclient's and others' authpass, sasl_pass glued: saslpass)
    r"|remote|local|auth|master|server|client|sasl|imap|pop|ssh|smb|vnc|jmx|rpc|web|app|bot)"
    r"(?=pass(?![a-z])))?"
    r"(?P<core>" + _KW_CORE + r")" + _KW_SUFFIX + r")"
    + _NAME_END + r")"
    # C's array declarators: char pass[] = "...", char key[33] = "..." (ISO C 6.7.9: a
    # character array initialised by a string literal), as Arduino sketches keep Wi-Fi keys
    r"(?:\[[0-9]{0,4}\])?"
    r"[\"'`*_\]]*"
    r"(?P<gap>" + _GAP_GUARD
    + r"(?:\s*\([^()\n]{1,30}\)|\s+(?:" + _GAP_WORDS + r")\s+(?:the\s+)?[\w.@/-]{1,30}"
    r"(?:\s+[\w.@/-]{1,30}){0,2}" + _TYPE_GAP + r"))?"
    r"[\"'`*_]*" + _OP_GUARD
    + r"(?P<op>\s*(?::=|=>|==|=|:|\uff1a|\||\u2192|->)\s*"
    r"|\s+(?:is|was|are|were|=|ist|est|es|é|è|är|er|jest|lautet|este)\s+(?:(?:now|still|(?:set|changed|reset|updated|rotated)\s+to)\s+)?"
    r"|\s+(?:(?:has|had)\s+been\s+|was\s+|is\s+)?(?:changed|set|reset|updated|rotated)\s+to\s+"
    r"|\s*(?:是|为|為|は|는|은)\s*"
    r"|\s+[-\u2013\u2014]\s+|\s*,\s*(?=[\"']))"
    r"(?:[*_]{1,3}\s*)?"  # the closing ** of "**Password:** X"
    r"(?:[bBrRuUfF]{1,2}(?=[\"'])|@(?=\"))?"  # Python's b"...", r"...", f"..."; C#'s @"..."
    r"(?:!!str\s+)?"  # YAML's explicit string tag: password: !!str X
    r"(?P<val>\"[^\"\n]{0,1024}\"|'[^'\n]{0,1024}'|`[^`\n]{0,256}`|[^\s\"'`,;<>)\]|]{1,256})"
)
# What an ASCII letter (or a letter of a name in another language) matches under re.IGNORECASE
# besides its two cases: the Turkish dotted and dotless i, the Kelvin sign, the long s.
_FOLD_EXTRA = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}


def _cases(ch: str) -> str:
    """Every character ``ch`` matches under re.IGNORECASE (``ch`` a letter in the patterns
    here: ASCII, or ñ)."""
    if not ch.isalpha():
        return ch
    low = ch.lower()
    if ch.isascii() or low == "\u00f1":
        return low + low.upper() + _FOLD_EXTRA.get(low, "")
    if len(low) != 1 or len(low.upper()) != 1:
        raise ValueError(f"spell_cases: no case table for {ch!r}")
    # the regex engine's own extra equivalences (Cyrillic о matches ᲂ, Greek σ matches ς)
    from re import _casefix  # type: ignore[attr-defined]

    extra = "".join(map(chr, _casefix._EXTRA_CASES.get(ord(low), ())))
    return "".join(dict.fromkeys(low + low.upper() + extra))


def _class_cases(body: str) -> str:
    """A character class's body with every case of its letters (ranges of letters too)."""
    covered: set[str] = set()
    extra: list[str] = []
    i = 0
    while i < len(body):
        if body[i] == "\\":
            i += 2
            continue
        if i + 2 < len(body) and body[i + 1] == "-":
            members = [chr(c) for c in range(ord(body[i]), ord(body[i + 2]) + 1)]
            i += 3
        else:
            members = [body[i]]
            i += 1
        covered.update(members)
        extra.extend(_cases(ch) for ch in members if ch.isalpha())
    return body + "".join(dict.fromkeys(c for c in "".join(extra) if c not in covered))


def spell_cases(pattern: str) -> str:
    """``pattern`` (meant for re.IGNORECASE) spelled so that it matches the same strings
    without the flag: each letter becomes a class of its cases, each class gets its
    letters' cases; ``(?-i:...)`` groups stay as written. Python's regex engine compares
    a character with both cases of an ignore-case class by lowercasing it first, on every
    character a repeat tries; a spelled class is one table lookup (the keyword rule runs
    about 40% faster). Handles the syntax of this module's patterns (escapes, classes,
    groups, scoped flags); tests compare both forms on the corpus and random text."""
    out: list[str] = []
    stack: list[bool] = []  # per open group: is ignore-case active inside it
    active, i = True, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            n = 6 if pattern[i + 1] == "u" else 4 if pattern[i + 1] == "x" else 2
            out.append(pattern[i: i + n])
            i += n
        elif c == "[":
            j = i + 1 + (pattern[i + 1] == "^")
            j += pattern[j] == "]"
            while pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            head = "[^" if pattern[i + 1] == "^" else "["
            body = pattern[i + len(head): j]
            out.append(head + (_class_cases(body) if active else body) + "]")
            i = j + 1
        elif c == "(":
            stack.append(active)
            m = re.match(r"\(\?(?:P<\w+>|<?[=!]|>|[-a-z]*:)?", pattern[i:])
            head = m.group(0) if m else "("
            if head.startswith("(?") and head.endswith(":") and "i" in head:
                active = "-" not in head.split("i")[0][2:] and not head.startswith("(?-")
            out.append(head)
            i += len(head)
        elif c == ")":
            active = stack.pop()
            out.append(c)
            i += 1
        else:
            spelled = _cases(c) if active and c.isalpha() else c
            out.append(spelled if len(spelled) == 1 else "[" + spelled + "]")
            i += 1
    return "".join(out)


KW_TRIGGER = (
    r"(?:pass|pwd|pw|p/w|secret|token|key|cred|sid|auth|licen|hash|salt|sig|pat|pin|jwt|cookie"
    r"|session|otp|hmac|bearer|psk|pre[ _-]?shared|mnemonic|access[ _.-]?grant|"
    + _FOREIGN_PASSWORD + ")"
    r"[a-z0-9_.-]{0,40}(?:\[[0-9]{0,4}\])?[\"'`*_\]]{0,4}"
    r"(?:\s*\([^()\n]{1,30}\)|\s+(?:" + _GAP_WORDS + r")\s+(?:the\s+)?[\w.@/-]{1,30}"
    r"(?:\s+[\w.@/-]{1,30}){0,2}" + _TYPE_GAP + ")?"
    r"[\"'`*_]*"
    r"(?:\s*(?:[:=|\uff1a]|\u2192|->)|\s+(?:is|was|are|were|=|ist|est|es|é|è|är|er|jest|lautet|este)\s"
    r"|\s+(?:(?:has|had)\s+been\s+|was\s+|is\s+)?(?:changed|set|reset|updated|rotated)\s+to\s"
    r"|\s*[是为為는은は]|\s+[-\u2013\u2014]\s|\s*,\s*[\"'])"
)
# What must follow a keyword for the prefilter to dispatch the rule: a cheap superset of
# KW_TRIGGER's tail (the rule's trigger then finds the exact places). The run of name
# characters is possessive: backing into it could only let an operator or a word start
# inside it, and the rule's regex never reads one there (a word operator follows a space,
# "->" keeps its ">" after the run, a name cannot end before a letter): a failing test
# then costs one pass over the run, not one try of every operator at each of its places.
_KW_TAIL = (r"[a-z0-9_.\"'`*\[\]-]{0,44}+\s*(?:[:=|(>,\u2192\uff1a是为為는은は\u2013\u2014-]"
            r"|(?:is|was|are|were|ist|est|es|é|è|är|er|jest|lautet|este|has|had|changed|set|reset"
            r"|updated|rotated|" + _GAP_WORDS + r")\s|(?:string|str|&str)\s*=)")
_KW_ANCHORS = (*(w for w in _FOREIGN_WORDS if "pass" not in w), "psk", "preshared", "pre-shared",
               "pre_shared", "pre shared", "pass", "pwd", "pw", "p/w", "secret",
               "token", "key", "credential", "creds", "sid", "auth",
               "licen", "hash", "salt", "sig", "pat", "pin", "jwt", "cookie", "session", "otp",
               "hmac", "bearer", "mnemonic", "access_grant", "access-grant", "accessgrant",
               "access grant", "access.grant")

_KW_STOP_PARTS = frozenset(
    """page next prev continuation csrf xsrf cursor sync pagination max min num total count
    input output prompt completion public pub publishable cache reasoning context limit budget
    fake example dummy mock hashed not primary foreign sort partition idempotency cache hash_key
    ssh_public hotkey hotkeys keyboard keybinding keybindings keymap keystroke monkey turkey
    whiskey jockey hockey donkey lookup dict map object field column row index secret_name
    policy length rotation expiry expires expiration ttl type kind format mode name names id ids
    label labels file path dir url uri endpoint location env header prefix suffix version
    algorithm algo size timeout manager store vault ref reference usage status valid validation
    required enabled strength reset forgot change update confirm confirmation hint strategy
    provider service_name role scope scopes event events state""".split()
)
# The stop words of a listing's pages (next_page_token, cursor_token), which a strong name
# (``*_API_KEY``, ``*_SECRET_KEY``) never is: there they are a provider's or a product's name
_PAGING_PARTS = frozenset("page next prev continuation cursor pagination sync".split())
# A place named before the keyword is where the credential is used (DATABASE_URL_PASSWORD,
# uri.Password: a URI builder's password, endpoint_key); after it (token_url, password_uri)
# the name names the place: those stop as tails (_KW_STOP_TAILS) only
_PLACE_PARTS = frozenset(("url", "uri", "endpoint"))
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
# An unquoted value that opens another name's assignment: the keyword named a command or a
# module (Ansible's ``community.general.jenkins_credential: url=http://…``, its key=value
# arguments), and the value is that pair's own when its name is a credential's
# (``…htpasswd: password=X``), none otherwise; base64's "=" only pads its end
_ARG_PAIR = re.compile(r"([a-z_][a-z0-9_]*|[A-Z_][A-Z0-9_]*)=(?=[^=])")  # one case: not base64
_WEAK_CORES = re.compile(r"(?i)^(?:" + _KW_WEAK + r")$")
# A strong name the regex split into a prefix and a weak core (``SECRET_`` + ``KEY``,
# ``api_`` + ``key``, ``pd_api_`` + ``key``): the name as a whole still says credential.
_STRONG_IN_NAME = re.compile(
    r"(?i)(?<![a-z])(?:secret[ _.-]?(?:access[ _.-]?)?keys?|api[ _.-]?keys?|apikeys?"
    r"|access[ _.-]?keys?|auth[ _.-]?keys?|private[ _.-]?keys?|signing[ _.-]?keys?"
    r"|master[ _.-]?keys?|encryption[ _.-]?keys?|consumer[ _.-]?keys?|app[ _.-]?keys?)$")


# Words a setting's line holds where a credential would be, naming its type or its form, not
# a value: a schema's or an interface's types, how it is stored or sent, where it comes from
_SETTING_WORDS = frozenset(
    """string str number integer int boolean bool object array list dict float double char
    bytes text any none null undefined optional required encrypted hashed plaintext plain
    cleartext bcrypt scrypt sha1 sha256 sha512 md5 argon2 pbkdf2 masked hidden redacted
    bearer basic digest oauth jwt prompt interactive getpass keyring keychain stdin
    environment generated random auto default empty inherit""".split())


# What a password opens, named before a password word: the name still names the password
# (keyStorePassword, trustStorePassword, vault_password, file_password, key_file_pass: the
# password of a store, a vault, a file); after it (password_store, token_vault,
# password_file) the name names the place or the file
_KEEPER_PARTS = frozenset(("store", "vault", "manager", "file"))
# A pipeline's input or output, named before a password or a key (Beats' and Logstash's
# output.elasticsearch.password, input.kafka.password): the credential of that connector.
# They stop for tokens only (input_tokens, max_output_tokens: a model's token counts).
_FLOW_PARTS = frozenset(("input", "output"))


def kw_kind(core: str, name: str) -> str:
    n = name.lower()
    if ("pass" in n or "pwd" in n or n.endswith("pw") or "mot" in n or "contrase" in n
            or any(w in n for w in _FOREIGN_WORDS)):
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
def _name_info(name: str, core: str) -> tuple[bool, bool, bool, str, frozenset[str]]:
    """(skip, weak, weak_core, kind, words) for a keyword name: DB_PASSWORD,
    next_page_token, api key (``weak_core``: the core alone is a weak name, ``key``).
    An environment object before the variable (``process.env.``, ``os.environ.``,
    ``import.meta.env.``) is where the name lives, not a word of it ("env" alone stops)."""
    name = V.rx(r"^(?:process\.env|import\.meta\.env|os\.environ|ENV|env)\.(?=.)").sub("", name)
    split = V.rx(r"([a-z0-9])([A-Z])").sub(r"\1 \2", name)
    parts = [p.lower() for p in V.rx(r"[A-Za-z0-9]+").findall(split)]
    core_parts = [p.lower() for p in V.rx(r"[A-Za-z0-9]+").findall(core)]
    tail = parts[_last_index(parts, core_parts[-1]) + 1:] \
        if core_parts and core_parts[-1] in parts else []
    stops = set(parts) & _KW_STOP_PARTS
    if stops & _PLACE_PARTS:
        stops = {s for s in stops if s not in _PLACE_PARTS or s in tail}
    if stops and stops <= _PAGING_PARTS and _STRONG_IN_NAME.search(name):
        stops = set()  # CURSOR_API_KEY: no page of a listing has an API key (Cursor's is one)
    if stops and stops <= _KEEPER_PARTS and not tail and core_parts[-1:] and \
            V.rx(r"pass|pwd").match(core_parts[-1]):
        stops = set()  # keyStorePassword, vault_password: the password of a store
    if stops and stops <= _FLOW_PARTS and not tail and core_parts[-1:] and \
            not core_parts[-1].startswith("token"):
        stops = set()  # output.elasticsearch.password: an output's password, not a token count
    skip = bool(stops or set(tail) & _KW_STOP_TAILS)
    weak_core = _WEAK_CORES.match(core) is not None
    weak = weak_core and not _STRONG_IN_NAME.search(name)
    return skip, weak, weak_core, kw_kind(core, name), frozenset(parts)


@check("keyword")
def _keyword(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    name, core, val, raw_op, gap = m.group("name", "core", "val", "op", "gap")
    skip, weak, weak_core, kind, name_words = _name_info(name, core)
    if skip:
        return None
    at = m.start("name")
    before = text[at - 1: at]
    if before in ("?", "&"):
        kind = "API key assignment" if kind == "key assignment" else kind  # ?key=: a URL's key
    if (before in ("\"", "'") and val.startswith(before) and raw_op == ":"
            and text[m.end("name"): m.end("name") + 1] != before):
        return None  # "Password:" is a quoted label; its closing quote is not a value
        # ("password":"X", a JSON key closed before its colon, is a key and its value)
    start = m.start("val")
    op = raw_op.strip()
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
        ok = ((V.token_like(val, 12) and not _bare_uuid(val, kind, name_words)) or _symbol_mix(val)
              if weak else V.literal_ok(val))
    else:
        whole = val
        if val.startswith("{") and raw_op.strip() == "=" and _ODBC_BRACED.match(val):
            val = val[1:val.index("}")]  # ODBC: PWD={value}; (braces quote a value)
        val = _strip_markup(val)
        if ("&" in val or "?" in val) and before in ("?", "&"):
            val = _QUERY_NEXT.split(val, 1)[0]  # ?password=123&next=x: a query's next pair
            # (and ?A=x?B=y: a game server's options, each after a "?")
        start += whole.find(val)
        end = start + len(val)
        if _code_reference(val, text, end):
            return None  # secrets["x"], f(x), {clientSecret: config}, other_name=
        pair = _ARG_PAIR.match(val)
        if pair:
            if not V.rx(r"(?i)pass|pwd|secret|token|key|cred|auth").search(pair.group(1)):
                return None
            start += pair.end(1) + 1  # htpasswd: password=X: the pair's own value, judged
            val = val[pair.end(1) + 1:]  # by the pair's own name
            if V.rx(r"(?i)pass|pwd|secret|token|cred").search(pair.group(1)):
                weak, kind = False, kw_kind(pair.group(1), pair.group(1))
        code_style = op in ("=", ":=", "=>", "==") and not raw_op[0].isspace()
        code_style = code_style and not gap
        val = val.rstrip(".,") if code_style else val.rstrip(".,;:")
        if weak:
            ok = (V.token_like(val, 16 if not code_style else 12)
                  and not _bare_uuid(val, kind, name_words))
            ok = ok or _encodes_secret(val) or _symbol_mix(val)
        elif code_style or _config_line(m, text, name, end):
            ok = V.literal_ok(val) and (len(val) >= 6 or any(c.isdigit() for c in val))
            if ok and not code_style and not any(c.isdigit() for c in val):
                ok = V.R.joined.match(val) is None or val.isalpha()  # shorter-version: words
            if ok and val.isalnum() and val.lower() in _SETTING_WORDS:
                ok = False  # password: string, token: bearer, password: encrypted
        else:  # prose: a generated value, never words joined by "-_.:" (uid:gid, a-b)
            ok = (V.looks_random(val) or V.token_like(val)) and (
                V.R.joined.match(val) is None or val.isalpha())
    low = val.lower()
    if ok and _glued(name, core) and " " in val:
        return None  # a glued name (somepassword) takes no phrase
    if ok and not weak and weak_core:  # api_key, SECRET_KEY: a key's value
        ok = (any(c.isdigit() for c in val) or V.token_like(val, 12)) \
            and _PREFIX_PLACEHOLDER.fullmatch(val) is None
    if not ok or V.is_placeholder(val) or low in name_words or V.self_describing(low):
        return None  # POSTGRES_PASSWORD=postgres, password: strong-password: no secret
    # (the one-character tests inline: a call for every value reported costs 1% a line)
    if ("-" in low or "_" in low) and _sentence(low):
        return None  # this-is-probably-a-test, if_you_see_this_please_use_k8s: a sentence
    if val.isalnum() and val != low and not val.isupper() and _names_a_variable(val, name_words):
        return None  # secret = apiAppSecret: a variable named after what it holds
    if low in _FETCH_CREDENTIALS and kind == "credential assignment":
        return None  # fetch(url, {credentials: 'include'}): the Fetch standard's modes
    key_named = weak or weak_core  # key, SECRET_KEY, api_key
    if key_named and V.path_of_names(val):
        return None  # key: "metadata_options/[0]/http_tokens": a path of names
    if key_named and _encodes_prose(val):
        return None  # ANY_KEY = <base64 of a sentence>: an encoded text, not a generated key
    if _holds_no_value(name, val, text, at, start + len(val), op, quoted):
        return None
    return start, start + len(val), kind


# a query's bind parameter (password=:param, Password=@pwd, ?), a path of names
# (xml/src/main/java/file), a camelCase variable
_BIND_PARAMETER = re.compile(r"[:@][A-Za-z_]\w{0,40}|\?")
_CAMEL_VARIABLE = re.compile(r"[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+")
_PASCAL_NAME = re.compile(r"[A-Z][A-Za-z_]*[a-z][A-Za-z_]*")
_PROPERTY = re.compile(r"\.[A-Z]")
_DIGIT = re.compile(r"[0-9]")
_LETTERS = re.compile(r"[A-Za-z_.-]+")
_NOT_LOWER = re.compile(r"[^a-z]")


def _holds_no_value(name: str, val: str, text: str, at: int, end: int, op: str,
                    quoted: bool) -> bool:
    """What code writes in a credential's place without holding one (round 13, the static
    analysers' fixtures): the next argument after a variable (``NetworkCredential("u",
    nonHardcodedPassword, "domain")``), a bind parameter, a concatenation's inside (``"pw='"
    + pwd + "'"``, VB's ``& SecretConst &``), a conditional's branch (``c ? A_SECRET :
    other``), a property set from a field (``cred.Password = SecretField``), an object's
    property set from a camelCase variable (``password: dbPass,``), a path of names, the
    name spelled again (``Token = "__Token"``); a unit repeated (``02134567`` x 3) is the
    placeholder filter's (``values.is_placeholder``), for every rule. Run for every value
    about to be reported: string tests first, a regex where one must."""
    if op == ",":
        return text[max(0, at - 3): at].rstrip()[-1:] == ","  # f("u", aPassword, "domain")
    if op == ":" and text[max(0, at - 4): at].rstrip()[-1:] == "?":
        return True
    core = val.strip()
    first, last = core[:1], core[-1:]
    if (first in ("+", "&") and core[1:2].isspace()) or \
            (last in ("+", "&") and core[-2:-1].isspace()):
        return True
    if first in (":", "@", "?") and _BIND_PARAMETER.fullmatch(core):
        return True
    if not quoted and _DIGIT.search(val) is None:
        if "." in name and _PROPERTY.search(name) and _PASCAL_NAME.fullmatch(val):
            return True
        if op == ":" and text[end: end + 1] in (",", "}") and _CAMEL_VARIABLE.fullmatch(val):
            return True
    if V.path_of_names(val, 2):
        return True
    return _LETTERS.fullmatch(val) is not None and \
        _NOT_LOWER.sub("", val.lower()) == _NOT_LOWER.sub("", name.lower())


# where a URL query's next parameter starts (RFC 3986 3.4; the WHATWG URL standard splits
# at "&"): a value read after "?name=" or "&name=" ends there
_QUERY_NEXT = re.compile(r"[&?](?=[A-Za-z_][\w.-]{0,63}=)")
# an ODBC connection string's braced value: PWD={p;a=ss};
_ODBC_BRACED = re.compile(r"\{[^{}\s]{1,254}\}(?:;|$)")
# a provider's prefix before a placeholder body: sk-xx, sk-..., pk_***
_PREFIX_PLACEHOLDER = re.compile(r"(?i)[a-z]{1,8}[-_](?:x+|\.+|\*+|0+)")
_STOP_SENTENCE = frozenset("this is a an the it not no probably test".split())


def _sentence(low: str) -> bool:
    """Three or more words joined by ``-`` or ``_``, one of them a sentence's word
    (``this-is-probably-a-test``, ``if_you_see_this_please_use_k8s``): a text, not a secret."""
    words = _JOINERS.split(low)
    return len(words) >= 3 and not _STOP_SENTENCE.isdisjoint(words) and all(
        w.isalnum() for w in words)


_JOINERS = re.compile(r"[-_]")


def _glued(name: str, core: str) -> bool:
    """A name written as one lowercase word around the keyword (``someotherpassword``)."""
    return name.isalpha() and len(name) > len(core) and name[: len(name) - len(core)].islower()


def _code_reference(val: str, text: str, end: int) -> bool:
    """An unquoted value that code reads from elsewhere: a subscript or a call
    (``secrets[``, ``get(``), the next name of an argument list (``other_name=``), a
    variable closed by the bracket of an object or a call (``{clientSecret: config}``)."""
    after = text[end: end + 1]
    if "(" in val and after in (",", ")"):
        return True  # JWT.sign(payload, secret): a call's arguments, the value cut at a comma
    if val[-1:] in "[(" or val[:1] == "(" or (
            val[-1:] == "=" and val[:-1].isidentifier() and after in ("\"", "'", "(", "[", "{")):
        return True
    core = val.rstrip("})]")
    if core != val:
        after = val[len(core)]
    return after in ("}", ")", "]") and core.isidentifier() and not any(c.isdigit() for c in core)


def _config_line(m: re.Match[str], text: str, name: str, end: int) -> bool:
    """A configuration line, not prose: ``db_password: wordpress``, ``"password": x``,
    ``MYSQL_ROOT_PASSWORD: x``. The name is written as code (a separator, a digit, camel
    or upper case, or quoted) and the value ends the line (a comment aside). ``Password:
    hunter`` (a plain word before a colon) stays prose."""
    rest = text[end:]
    if rest.strip() and not rest.lstrip().startswith(("#", "//", ",")) \
            and not _ends_quoted_line(text, m.start("name"), rest):
        return False
    if m.group("gap") or m.group("op").strip() not in (":", "=", "\uff1a", ":=", "=>"):
        return False  # prose: "LOGFIRE_TOKEN is present"
    at = m.start("name")
    closing = text[m.end("name"): m.end("name") + 1]
    quoted = text[at - 1: at] in ("\"", "'") and closing == text[at - 1]
    if quoted or name.isupper() or any(c in name for c in "_.-0123456789"):
        return True
    if m.group("op").strip() == "=":
        indent = _LINE_INDENT.match(text)  # always matches (it may match nothing)
        if indent is not None and indent.end() == at:  # the name starts its line (no slice)
            return True  # an INI or TOML key at the start of its line: password = X
    return name[:1].islower() and any(c.isupper() for c in name)


_LINE_INDENT = re.compile(r"[ \t]*")
# the end of a string literal that holds a whole configuration line ("DB_PASSWORD: X",): its
# closing quote, then what closes an argument, an element or a statement
_QUOTED_LINE_END = re.compile(r"[\"'`]\s*[,;)\]}]*\s*(?:(?://|#).*)?$")


def _ends_quoted_line(text: str, at: int, rest: str) -> bool:
    """The value ends a string literal that opened just before the name: a configuration line
    quoted in code or in a test's table (``matchValue: "PASSWORD_DB : X",``)."""
    quote = rest[:1]
    return (quote in "\"'`" and _QUOTED_LINE_END.match(rest) is not None
            and text[:at].rstrip().endswith(quote))


# what the Fetch standard's ``credentials`` option takes (RequestCredentials): no secret
_FETCH_CREDENTIALS = frozenset(("omit", "same-origin", "include"))
# a variable named after the credential it holds (secret = apiAppSecret, password = dbPassword)
_CAMEL_NAME = re.compile(r"[A-Za-z][a-z0-9]*(?:[A-Z][a-z0-9]*)*(?P<last>[A-Z][a-z0-9]+)")


def _names_a_variable(val: str, name_words: frozenset[str]) -> bool:
    """A camelCase identifier whose last word is a word of the name: a variable, not a value."""
    m = _CAMEL_NAME.fullmatch(val)
    return m is not None and m.group("last").lower() in name_words


def _symbol_mix(val: str) -> bool:
    """A value only a password generator writes (``*uMBOa)NN*eQ+L3j``, ``0BE$3+7zQ)7Tp+3C``):
    twelve or more characters with letters, two digits and two symbols other than the
    separators names use, at high entropy: what a key name holds, not a name or a path."""
    if len(val) < 12 or " " in val or "/" in val or not val.isascii():
        return False
    upper, lower, digits = V.classes(val)
    symbols = len(val) - upper - lower - digits - sum(map(val.count, "-_.:"))
    return (symbols >= 2 and digits >= 2 and upper + lower >= 4 and V.entropy(val) >= 3.5
            and not V.is_placeholder(val))


def _encodes_secret(val: str) -> bool:
    """Base64 of a short printable secret (a Kubernetes Secret's data, an encoded
    password): letters and digits or symbols, no spaces, not a word alone."""
    if len(val) % 4 or len(val) < 8 or not V.rx(r"[A-Za-z0-9+/]+={0,2}").fullmatch(val):
        return False
    decoded = V.decode_b64(val)
    if decoded is None or not decoded.isprintable() or " " in decoded or len(decoded) < 6:
        return False
    return (any(c.isdigit() for c in decoded) and any(c.isalpha() for c in decoded)
            and not V.is_placeholder(decoded))


def _encodes_prose(val: str) -> bool:
    """Base64 of printable text with spaces (a sentence, not random bytes)."""
    if len(val) % 4 or len(val) < 16:
        return False
    decoded = V.decode_b64(val)
    return decoded is not None and decoded.isprintable() and " " in decoded


# Words that make a key name say what the key opens: a UUID they name is the key itself
# (license keys, HMAC and JWT signing keys, bearer tokens are issued as UUIDs too).
_UUID_KEY_WORDS = frozenset("hmac jwt bearer license licence cookie".split())


def _bare_uuid(val: str, kind: str, name_words: frozenset[str]) -> bool:
    """A UUID after a name that says only "key" (``key: '9df2...'``, ``session``) is an
    identifier; after ``api_key``, ``hmac_key``, ``license`` or a provider's name it may be
    a key (Heroku's are UUIDs)."""
    return (kind == "key assignment" and not name_words & _UUID_KEY_WORDS
            and V.R.uuid.fullmatch(val) is not None)


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


KEYWORD_ASSIGNMENT = Rule(
    "keyword-assignment", "key assignment",  # the kind is refined by the check
    spell_cases(KW_RE),  # KW_RE under re.IGNORECASE, spelled out (faster)
    keywords=_KW_ANCHORS,
    keyword_tails=tuple((k, _KW_TAIL) for k in _KW_ANCHORS),
    trigger=KW_TRIGGER, locate="name", check="keyword", priority=2, value_group="val",
    doc="detect-secrets KeywordDetector",
)
