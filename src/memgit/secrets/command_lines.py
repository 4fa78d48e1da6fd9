"""Credentials on command lines: each tool's credential options as its manual documents them
(database clients, curl and httpie, docker/podman login, cloud and package CLIs, ssh and
archive helpers, LDAP, SMB and Samba, SNMP, PowerShell, Windows' remote options, impacket's
targets), ``set``/``config set`` commands, and configuration directives that take a password
as their argument. An argument that names what goes there (a path, a placeholder's words:
``values.names_an_argument``) holds no value, whichever option it follows.

The checks register themselves (``rules.check``) for the rules that name them; ``structural``
lists ``COMMAND_LINES`` among every structural rule.
"""

from __future__ import annotations

import re

from . import values as V
from .rules import Rule, check

# SASL mechanisms (IANA's registry) and HTTP authentication schemes: what --auth names
# in swaks, curl and others when it takes a mechanism, not a secret
_AUTH_MECHANISMS = frozenset(
    """plain login cram-md5 digest-md5 ntlm gssapi xoauth2 oauthbearer scram-sha-1
    scram-sha-256 anonymous external basic digest bearer negotiate kerberos""".split())

# tools whose password option takes no separate argument: mysql(1) --password[=X] and
# -p[X] (a word after a space is the database), psql(1) -W/--password (never an argument:
# it forces the prompt); a word after it is the database's name
_PROMPTING_TOOLS = re.compile(
    r"(?:mysql|mariadb|mysqldump|mysqladmin|mysqlcheck|mysqlimport|mysqlshow|mariadb-dump"
    r"|psql|pg_dump|pg_dumpall|pg_restore|pg_basebackup|createdb|dropdb|createuser|dropuser"
    r"|vacuumdb|reindexdb|clusterdb|pgbench)(?:\.exe)?")
_PROMPTING_OPTION = re.compile(r"(?:--password|-p|-W)\s+$")


def _program_at(text: str, at: int) -> str:
    """The program of the command that ``at`` is in: the first word after the last ``|``,
    ``;`` or ``&`` before it, past ``sudo`` and ``VAR=value`` prefixes."""
    head = re.split(r"[|;&]", text[:at])[-1].split()
    while head and (head[0] in ("sudo", "doas", "env", "exec", "time") or "=" in head[0]):
        head = head[1:]
    return head[0].rsplit("/", 1)[-1] if head else ""


def _value_named(val: str) -> bool:
    """A command-line value that is no secret: too short, a placeholder or reference, an
    option, a credential's own word, or an argument that names what goes there."""
    return (len(val) < 4 or V.is_boring(val) or val.startswith(("-", "(")) or
            V.self_describing(val.lower()) or V.names_an_argument(val)
            or val.lower() in _AUTH_MECHANISMS)


@check("cli_value")
def _cli_value(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    val = m.group("s").strip("\"'")
    start = m.start("s") + m.group("s").index(val) if val else m.start("s")
    if _value_named(val):
        return None
    if val.isalpha() and val.islower() and len(val) < 8:
        return None  # mysql -p mydb? `-p` then a word: too often a database name
    words = val.replace("_", "").replace("-", "").isalpha()
    if words and _PROMPTING_OPTION.search(text, m.start(), m.start("s")) and \
            _PROMPTING_TOOLS.fullmatch(_program_at(text, m.start())):
        return None  # mysql --password shop, psql --password database: the prompt, then a
        # database's name (a generated value after the space is what its writer meant)
    return start, start + len(val), "command-line credential"


@check("cli_user_pass")
def _cli_user_pass(m: re.Match[str], text: str) -> bool:
    pw = m.group("s").strip("\"'")
    if pw.endswith(">") or "<" in m.group(0) or len(set(pw)) <= 2:
        return False  # <user:password>, xxx:yyy
    if V.names_an_argument(pw) or (m.group(0).lstrip().startswith("-a") and (
            pw.isdigit() or (pw.isalpha() and pw.islower()))):
        return False  # -u user:path/to/file; -a ip:port (only httpie's -a is user:password)
    return (len(pw) >= 3 and not V.is_placeholder(pw) and not V.is_reference(pw)
            and not V.self_describing(pw.lower()))  # svc:token names what goes there


# command lines whose credential option the generic ones miss, from each tool's manual
_CLI_EXTRA = (
    r"\b(?:(?:redis|valkey|keydb)-cli\b[^\n]{0,120}?\s(?:-a|--pass)\s+(?P<a>\"[^\"]{1,128}\"|'[^']{1,128}'|[^\s\"']{1,128})"
    r"|echo\s+(?:-[neE]{1,3}\s+)*(?P<b>\"[^\"\n]{4,128}\"|'[^'\n]{4,128}'|[^\s\"'|]{4,128})\s*\|\s*"
    r"(?:sudo\s+)?[\w.-]{2,20}\s[^\n|]{0,120}?(?:--password-stdin|--stdin\b|--with-token\b|chpasswd"
    r"|--key-file[= ]-(?!\S))"
    # the same options given a here-string (bash's <<<: the word is the command's input);
    # cryptsetup(8) --key-file=- reads the passphrase from standard input
    r"|(?<=-)(?:password-stdin|stdin|with-token|key-file[= ]-|password)(?![\w=-])"
    r"[^\n|<]{0,120}?<<<\s*"
    r"(?P<ap>\"[^\"\n]{4,128}\"|'[^'\n]{4,128}'|[^\s\"'|;]{4,128})"
    r"|chpasswd\s*<<<\s*[\"']?[\w.@-]{1,64}:(?P<aq>[^\s\"'|:\\]{4,128})"
    r"|openssl\b[^\n]{0,160}?\s-(?:pass(?:in|out)?\s+(?:pass|env):|k\s+)(?P<c>[^\s\"']{1,128})"
    r"|htpasswd\s+(?:-[a-zA-Z]+\s+)*-[a-zA-Z]*b[a-zA-Z]*\s+(?:-[a-zA-Z]+\s+)*\S+\s+\S+\s+(?P<d>\S{1,128})"
    r"|ldap(?:search|modify|add|delete|whoami|passwd|compare|modrdn|exop)\b[^\n]{0,160}?\s-w\s+"
    r"(?P<e>\"[^\"]{1,128}\"|'[^']{1,128}'|[^\s\"']{1,128})"
    r"|(?:smbclient|rpcclient|smbmap|smbget|mount\.cifs)\b[^\n]{0,160}?(?:-U\s*|--user=|user=)"
    r"[^\s%]{1,64}%(?P<f>[^\s\"']{1,128})"
    r"|rabbitmqctl\s+(?:add_user|change_password)\s+\S+\s+(?P<g>\"[^\"]{1,128}\"|'[^']{1,128}'|\S{1,128})"
    r"|lftp\b[^\n]{0,80}?\s-u\s+[^\s,]{1,64},(?P<h>[^\s\"']{1,128})"
    r"|net\s+use\b[^\n]{0,160}?/user:\S{1,64}\s+(?P<i>[^\s/]\S{0,127})"
    r"|(?:sqlplus|sqlldr|expdp|impdp|rman|dgmgrl)\s+(?:-\w+\s+)*(?!/)[\w$#.]{1,64}/(?P<j>[^\s@/\\]{1,128})"
    r"(?=@|\s|$)"
    r"|jdbc:oracle:\w+:[\w$#.]{1,64}/(?P<k>[^\s@/]{1,128})@"
    r"|mc\s+(?:alias\s+set|config\s+host\s+add)\s+\S+\s+\S+\s+\S+\s+(?P<m>[^\s\"']{8,128})"
    r"|vault\s+login\s+(?:-\S+\s+)*(?P<n>(?!-)[^\s=\"']{20,128})(?=\s|$)"
    # chpasswd(8) reads user:password lines; sudo(8) -S reads the password from stdin
    r"|(?:echo|printf)\s+(?:-[ne]\s+)*[\"']?[\w.@-]{1,64}:(?P<o>[^\s\"'|:\\]{4,128})"
    r"(?:\\n[\w.@-]{1,64}:[^\s\"'|:\\]{1,128})*[\"']?\s*\|\s*(?:sudo\s+)?chpasswd\b"
    # argon2(1) hashes the password it reads; openssl passwd -stdin; pass(1)/passage/gopass
    # insert store what they read
    r"|(?:echo|printf)\s+(?:-[ne]\s+)*(?P<ae>\"[^\"\n]{4,128}\"|'[^'\n]{4,128}'|[^\s\"'|]{4,128})\s*\|"
    r"\s*(?:sudo\s+)?(?:argon2\b|openssl\s+passwd\b[^|\n]{0,40}?-stdin\b"
    r"|(?:pass|passage|gopass)\s+insert\b)"
    r"|echo\s+(?:-[ne]\s+)*(?P<p>\"[^\"\n]{4,128}\"|'[^'\n]{4,128}'|[^\s\"'|]{4,128})\s*\|\s*"
    r"sudo\s+(?:-\w+\s+)*-\w*S\w*\b"
    # neo4j-admin; doctl; unrar/rar -pX; PuTTY's plink/pscp/psftp -pw; FreeRDP /p:;
    # net use's password before /user:, net user NAME PASSWORD /add; Net-SNMP v3's -A (auth)
    # and -X (privacy)
    # passphrases; wpa_passphrase SSID PASSPHRASE
    r"|set-initial-password\s+(?P<q>\"[^\"\n]{1,128}\"|'[^'\n]{1,128}'|[^\s\"']{1,128})"
    r"|doctl\s+auth\s+init\b[^\n]{0,80}?\s(?:-t|--access-token)[ =](?P<r>[^\s\"']{20,128})"
    r"|(?:unrar|rar)\s+[a-z]\b[^\n|;&]{0,80}?\s-h?p(?P<t>[^\s\"'-][^\s]{3,127}|\"[^\"\n]{4,128}\""
    r"|'[^'\n]{4,128}')"
    r"|(?:plink|pscp|psftp)(?:\.exe)?\b[^\n|;&]{0,160}?\s-pw\s+"
    r"(?P<u>\"[^\"\n]{1,128}\"|'[^'\n]{1,128}'|[^\s\"']{1,128})"
    r"|(?:xfreerdp|wfreerdp|sdl-freerdp)\b[^\n]{0,200}?\s/p:"
    r"(?P<v>\"[^\"\n]{1,128}\"|'[^'\n]{1,128}'|[^\s\"']{1,128})"
    r"|net\s+use\s+(?:[A-Za-z*]:\s+)?\\\\\S+\s+(?P<w>[^\s/*\"']\S{3,127})(?=\s+/user:)"
    r"|net\s+user\s+[^\s/]+\s+(?P<aa>[^\s/*\"']\S{3,127})(?=\s+/(?:add|domain|active|y)\b)"
    # net-snmp's tools: -A/-X (SNMPv3's authentication and privacy passphrases) and -c
    # (SNMPv1/v2c's community string, the protocol's only credential; "public" and
    # "private", the agents' defaults, and "community", the manual's name for the argument,
    # are no secret)
    r"|snmp(?:walk|get|set|bulkwalk|bulkget|getnext|trap|inform|table|status|df|netstat|usm"
    r"|delta)\b[^\n]{0,200}?\s(?:-[AX]\s+(?P<x>\"[^\"\n]{1,128}\"|'[^'\n]{1,128}'|[^\s\"']{1,128})"
    r"|-c\s+(?![\"']?(?i:public|private|community)[\"']?(?:\s|$))"
    r"(?P<am>\"[^\"\n]{1,128}\"|'[^'\n]{1,128}'|[^\s\"'-][^\s\"']{0,127}))"
    r"|wpa_passphrase\s+(?:\"[^\"\n]+\"|'[^'\n]+'|\S+)\s+"
    r"(?P<y>\"[^\"\n]{8,63}\"|'[^'\n]{8,63}'|[^\s\"']{8,63})"
    # hydra(1) and medusa(1) -p PASS; schtasks /rp (the task's user) and /p (the remote
    # system's); rclone config create|update NAME [TYPE] KEY VALUE... (the backends' secret
    # keys: pass, password, secret_access_key, client_secret, account key, token, SAS URL)
    r"|(?:hydra|medusa)\b[^\n|;&]{0,120}?\s-p\s+(?P<ab>\"[^\"\n]{1,128}\"|'[^'\n]{1,128}'"
    r"|[^\s\"'-][^\s\"']{0,127})"
    r"|schtasks(?:\.exe)?\b[^\n]{0,200}?\s/r?p\s+(?P<ac>\"[^\"\n]{1,128}\"|'[^'\n]{1,128}'"
    r"|[^\s\"'/*][^\s\"']{0,127})"
    r"|rclone\s+config\s+(?:create|update)\b[^\n|;&]{0,200}?\s(?:pass|password|secret_access_key"
    r"|client_secret|key|account_key|token|sas_url|api_key)[ =](?P<ad>\"[^\"\n]{1,256}\""
    r"|'[^'\n]{1,256}'|[^\s\"'-][^\s\"']{0,255}))"
    # airdecap-ng(1) -p (the network's passphrase), stegsnow(1) -p, olevba -p, openttd(6) -p
    # (the server's), cryptcat -k and sic(1) -k (the shared secret, the password);
    # idevicebackup2 encryption on PASSWORD; hsd's hsw-cli unlock PASSPHRASE; Cisco IOS
    # username NAME [privilege N] secret [TYPE] X and enable secret X (their password forms
    # are CODE_FORMS' and the type 7 rule's)
    r"|(?:airdecap-ng|stegsnow|olevba|openttd)\b[^\n|;&]{0,120}?\s-p\s+(?P<af>\"[^\"\n]{1,128}\""
    r"|'[^'\n]{1,128}'|[^\s\"'-][^\s\"']{0,127})"
    r"|(?:cryptcat|sic)\b[^\n|;&]{0,120}?\s-k\s+(?P<ag>\"[^\"\n]{1,128}\"|'[^'\n]{1,128}'"
    r"|[^\s\"'-][^\s\"']{0,127})"
    r"|idevicebackup2\s+(?:-\S+\s+)*encryption\s+on\s+(?P<ah>[^\s\"'-]\S{0,127})"
    r"|hsw-cli\s+unlock\s+(?P<ai>[^\s\"'-]\S{0,127})"
    # chpass(1) -p ENCPASS (an encrypted password, crackable offline); oathtool(1)'s KEY
    # (the shared secret every code derives from), the first argument after its options
    r"|chpass\s+(?:-\w\s+\S+\s+)*-p\s+(?P<ak>[^\s\"'-]\S{3,127})"
    r"|oathtool(?:\s+(?:--now\s+\"[^\"\n]*\"|--?[\w-]+(?:=\S+)?))*\s+"
    r"(?P<al>\"[^\"\n]{4,128}\"|'[^'\n]{4,128}'|[^\s\"'-]\S{3,127})"
    r"|(?:username\s+\S{1,64}(?:\s+privilege\s+\d{1,2})?|enable)\s+secret\s+"
    r"(?:[0-9]\s+)?(?P<aj>(?=[^\s\"']*[\d$./])[^\s\"']{1,128})"  # a digit or a hash's $
    # a user name option, then -P: where a -u can start, no \b alternative above can
    # (a space or the line's start before a '-', against a word's first letter), so it
    # comes last, and the alternatives above share one \b (tested once a place)
    r"|(?:\s|^)(?:-u|-U|--username|--user)[ =]\S{1,64}"
    r"(?:\s+-{1,2}[A-Za-z][\w-]*(?:[ =](?!-)\S+)?){0,4}?"
    r"\s+-P[ =](?P<l>\"[^\"]{1,128}\"|'[^']{1,128}'|[^\s\"'-][^\s\"']{0,127})"
    # a Java system property or a Gradle project property that names a credential:
    # mvn -Dpassword=X, java -Ddb.password=X, gradle -PmavenPassword=X
    r"|(?:\s|^)-[DP][\w.-]{0,60}(?i:password|passwd|secret|token|api[._-]?key|credentials?)"
    r"[\w.-]{0,30}=(?P<z>\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|[^\s\"']{1,256})"
)
# (gh auth login --with-token reads the token from standard input, gh's manual)
_CLI_EXTRA_KEYWORDS = ("redis-cli", "valkey-cli", "keydb-cli", "--password-stdin", "--stdin",
                       "--key-file", "<<<",
                       "--with-token", "chpasswd",
                       "openssl",
                       "htpasswd", "ldap", "smbclient", "rpcclient", "smbmap", "smbget",
                       "mount.cifs", "rabbitmqctl", "lftp", "net use", "net user", "sqlplus",
                       "sqlldr",
                       "expdp", "impdp", "rman", "dgmgrl", "jdbc:oracle:", " -p ", "mc alias",
                       "mc config host", "vault login", "| sudo", "|sudo",
                       "set-initial-password", "doctl", "| argon2", "|argon2", "sudo argon2",
                       "pass insert", "passage insert", "-stdin", "unrar", "rar ", "plink",
                       "pscp", "psftp",
                       "freerdp", "snmp", "wpa_passphrase", " -d", " -p", "hydra", "medusa",
                       "schtasks", "rclone config", "airdecap-ng", "stegsnow", "olevba",
                       "openttd", "cryptcat", "sic ", "idevicebackup2", "hsw-cli", "username ",
                       "enable secret", "chpass", "oathtool")


# Per-tool forms kept out of _CLI_EXTRA's one regex, which runs on every line with " -p" or
# " -d": each of these is tried only where its own keyword is (a rule of its own)
_CLI_TOOLS = (
    # Vertica's vsql -w; pdftk's user_pw/owner_pw/input_pw; DB2's CONNECT TO db USER u USING
    # pw (and ATTACH TO node ...); unixODBC's isql DSN USER PASSWORD (positional)
    r"\bvsql\b[^\n|;&]{0,120}?\s-w\s+(?P<ar>\"[^\"\n]{1,128}\"|'[^'\n]{1,128}'|[^\s\"'-][^\s\"']{0,127})"
    r"|\bpdftk\b[^\n|;&]{0,200}?\s(?:user_pw|owner_pw|input_pw)\s+(?:[A-Z]=)?"
    r"(?P<as>[^\s\"'-][^\s\"']{0,127})"
    r"|(?i:(?:connect|attach)\s+to\s+\S+\s+user\s+\S+\s+using)\s+"
    r"(?P<at>\"[^\"\n]{1,128}\"|'[^'\n]{1,128}'|[^\s\"';][^\s\"';]{0,127})"
    r"|\bisql\s+(?:-[a-z0-9]+\s+)*(?!-)[\w.-]{1,64}\s+(?!-)[^\s\"']{1,64}\s+"
    r"(?P<au>(?!-)[^\s\"']{1,128})(?=\s*$|\s+-)"
)


@check("cli_extra")
def _cli_extra(m: re.Match[str], text: str) -> tuple[int, int, str] | None:
    name = next(k for k, v in m.groupdict().items() if v is not None)
    val = m.group(name)
    core = val.strip("\"'")
    start = m.start(name) + val.index(core) if core else m.start(name)
    if _value_named(core) or core.startswith(("$", "%", "<")) or core.isdigit():
        return None
    return start, start + len(core), "command-line credential"



# after "set " (on the lowercased line): options, then a name that says credential
_SET_TAIL = (r"\s*(?:-[a-z]{1,4}\s+)*[\w.:/@-]{0,80}?(?:pass|pwd|secret|token|api_?key|credential)"
             r"[\w.:/@-]{0,80}\s")

COMMAND_LINES: tuple[Rule, ...] = (
    Rule(
        "cli-user-pass", "command-line credential",
        r"(?:\s|^)(?:-u|--user|--proxy-user|-U|-a|--auth|--(?:proxy|http|basic)-auth)[ =]"
        r"['\"]?[^\s:'\"]{0,64}:"
        r"(?P<s>[^\s'\"@]{3,128})",
        keywords=("-u", "--user", "--proxy-user", "-a ", "-a=", "--auth", "-auth"),
        keyword_tails=tuple((k, r"[ =]['\"]?[^\s:'\"]{0,64}:[^\s'\"@]{3}")
                            for k in ("-u", "--user", "--proxy-user", "--auth", "-auth"))
        + tuple((k, r"['\"]?[^\s:'\"]{0,64}:[^\s'\"@]{3}") for k in ("-a ", "-a=")),
        group="s", check="cli_user_pass", priority=1,
        doc="curl(1) -u user:password (and -u :token, an empty user), httpie -a/--auth "
            "user:password, wpscan --proxy-auth/--http-auth user:password",
    ),
    Rule(
        "cli-password-option", "command-line credential",
        r"(?:\s|^)(?:--?(?i:password|passwd|passphrase|pass|pwd|token|api-key|apikey|secret|auth-token"
        r"|(?<=-)auth"
        r"|client-secret|storepass|keypass|srcstorepass|deststorepass|srckeypass|destkeypass"
        r"|access-token|with-token\s*<<<|opw|upw)"
        r"|--(?!no-)(?:[a-z0-9]+[-_]){1,3}(?:password|passwd|pass|pwd|token|secret|key|bearer"
        r"|authorization|mnemonic)"
        r"|--(?:secret|access|api|private)[-_]key"
        # Go's flag package takes one dash as two (-db-password X, -api-token=X)
        r"|-(?:[a-z0-9]+[-_]){1,3}(?:password|passwd|pwd|token|secret)"
        r"|(?<=sshpass )-p|-P(?=\S{6}))(?:[ =]|(?<=sshpass -p))"  # sshpass(1): -pX, -p"X"
        r"(?P<s>\"[^\"]{1,128}\"|'[^']{1,128}'|[^\s\"']{1,128})",
        keywords=("--pass", "-pass", "--pwd", "-token", "-api-key", "-apikey", "--secret",
                  "--auth ", "--auth=",
                  "storepass", "keypass", "--auth-token", "--with-token", "--client-secret",
                  "--access-token", "sshpass -p", "--", " -", "-opw", "-upw"),
        keyword_tails=(("--", r"(?!no-)(?:[a-z0-9]+[-_]){1,3}(?:password|passwd|pass|pwd|token"
                              r"|secret|key|bearer|authorization|mnemonic)[ =]"
                              r"|(?:secret|access|api|private)[-_]key[ =]"),
                       (" -", r"(?:[a-z0-9]+[-_]){1,3}(?:password|passwd|pwd|token|secret)[ =]")),
        check="cli_value", priority=1,
        doc="mysql(1), keytool, sshpass(1), gh, vault CLI options; nomad/consul -token X, "
            "netlify --auth X, nuget -ApiKey X; --db-password X, "
            "--secret-key X, s3cmd --secret_key=X, curl(1) --oauth2-bearer X, PowerShell's "
            "-Password X (parameter names ignore case), iwctl/gpg --passphrase X; poppler's "
            "-opw/-upw (pdfinfo, pdffonts, pdftotext...); --sugarsync-authorization X, "
            "--internxt-mnemonic X (rclone's backend flags); Go's single-dash -db-password X",
    ),
    Rule(
        "cli-pascal-password", "command-line credential",
        r"\s-[A-Za-z][a-zA-Z]{1,30}(?:Password|Passphrase|Secret|Token)(?::|\s+)"
        r"(?P<s>\"[^\"]{1,128}\"|'[^']{1,128}'|[^\s\"'$(-][^\s\"']{0,127})",
        keywords=(" -",),  # a dash after a space, then the name (lowered) and its separator
        keyword_tails=((" -", r"[a-z]{1,30}(?:password|passphrase|secret|token)[:\s]"),),
        check="cli_value", priority=1,
        doc="a parameter named in Pascal case after a single dash, as PowerShell's cmdlets and "
            "Windows tools name them: repair-bde -RecoveryPassword X, New-ADUser "
            "-AccountPassword X, -ClientSecret X; and in lower camel case, as Java and Go "
            "tools name theirs (-apiToken X, -dbPassword X)",
    ),
    Rule(
        "cli-user-then-p", "command-line credential",
        r"(?:\s|^)(?:-u|-l|--username|--user|--login)[ =](?!-)\S{1,64}"
        r"(?:\s+-{1,2}[A-Za-z][\w-]*(?:[ =](?!-)\S+)?){0,4}?"
        r"\s+-p[ =](?P<s>\"[^\"]{1,128}\"|'[^']{1,128}'|[^\s\"'-][^\s\"']{0,127})",
        keywords=(" -p ",), keyword_tails=((" -p ", r"[^\s-]"),), check="cli_value", priority=1,
        doc="docker login -u USER -p PASSWORD, az login -u ID -p SECRET, choco -u U -p P, "
            "instaloader -l LOGIN -p P, atuin register -u U -e E -p P (up to four options "
            "between)",
    ),
    Rule(
        "cli-mysql-p", "command-line credential",
        r"(?<![A-Za-z0-9_-])(?:mysql|mysqldump|mysqladmin|mariadb)\b[^|;&\n]{0,80}?\s-p"
        r"(?P<s>[^\s\"'-][^\s\"']{3,127}|\"[^\"\n]{4,128}\"|'[^'\n]{4,128}')",
        keywords=("mysql", "mariadb"),
        keyword_tails=tuple((k, r"[^|;&\n]{0,80}?\s-p[^\s-]") for k in ("mysql", "mariadb")),
        group="s", check="cli_value", priority=1,
        doc="mysql(1): -pPASSWORD or -p'PASSWORD' (no space; the shell removes the quotes)",
    ),
    Rule(
        "cli-extra", "command-line credential", _CLI_EXTRA,
        keywords=_CLI_EXTRA_KEYWORDS, check="cli_extra", priority=1,
        keyword_tails=(*((k, r"[\w.-]{0,60}(?:password|passwd|secret|token|api[._-]?key"
                             r"|credential)") for k in (" -d", " -p")),
                       ("username ", r"\S{1,64}(?:\s+privilege\s+\d{1,2})?\s+secret\s"),
                       ("sic ", r"[^\n|;&]{0,120}?\s-k\s")),
        doc="redis-cli(1) -a, docker/podman login --password-stdin, openssl(1) -pass/-k, "
            "htpasswd(1) -b, ldapsearch(1) -w, smbclient(1) -U user%pass, rabbitmqctl, "
            "lftp -u user,pass, net use /user:, sqlplus user/pass@db, sqlcmd/mosquitto -P, "
            "neo4j-admin set-initial-password, doctl auth init -t, unrar -p, plink/pscp -pw, "
            "xfreerdp /p:, snmpwalk -A/-X, wpa_passphrase, java -D/gradle -P properties, "
            "hydra/medusa -p, schtasks /rp, rclone config create KEY VALUE, valkey-cli -a, "
            "argon2/pass insert/openssl passwd -stdin reading an echo, rar -hp, airdecap-ng "
            "-p, stegsnow -p, olevba -p, openttd -p, cryptcat/sic -k, idevicebackup2 "
            "encryption on X, hsw-cli unlock X, Cisco username/enable secret X, chpass -p, "
            "oathtool KEY; here-strings (--password-stdin <<< X, chpasswd <<< u:X, "
            "cryptsetup --key-file=- <<< X)",
    ),
    Rule(
        "cli-tools", "command-line credential", _CLI_TOOLS,
        keywords=("vsql", "pdftk", " user ", "isql "), check="cli_extra", priority=1,
        keyword_tails=((" user ", r"\S{1,64}\s+using\s+\S"),  # DB2's CONNECT TO db USER u USING
                       ("isql ", r"(?:-[a-z0-9]+\s+)*[\w.-]{1,64}\s+\S{1,64}\s+\S")),
        doc="Vertica's vsql -w X, pdftk user_pw/owner_pw X, DB2's CONNECT TO db USER u USING X "
            "(and ATTACH TO), unixODBC's isql DSN USER X",
    ),
    Rule(
        "cli-samba-user", "command-line credential",
        r"(?:\s|^)(?:-U\s*|--user[ =]|user=)(?!-)[^\s%\"']{1,64}%(?P<s>[^\s\"'%]{1,128})",
        keywords=("-u", "--user", "user="),
        keyword_tails=(("-u", r"\s*[^\s%\"']{1,64}%[^\s\"'%]"),
                       ("--user", r"[ =][^\s%\"']{1,64}%[^\s\"'%]"),
                       ("user=", r"[^\s%\"']{1,64}%[^\s\"'%]")),
        check="cli_value", priority=1,
        doc="Samba's -U/--user USER%PASSWORD, the same in every Samba tool (smbclient(1), "
            "rpcclient(1), smbcacls(1), smbget(1), net(8)) and mount.cifs user=USER%PASSWORD",
    ),
    Rule(
        "windows-user-password", "command-line credential",
        r"(?:\s|^)/[uU](?::|\s+)(?!/)\S{1,64}(?:\s+/\w{1,12}(?::\S+|\s+(?![/-])\S+)?){0,4}?"
        r"\s+/[pP](?::|\s+)(?P<s>\"[^\"\n]{1,128}\"|[^\s\"/*][^\s\"]{0,127})",
        keywords=("/u ", "/u:"), check="cli_value", priority=1,
        doc="Windows' remote options /u DOMAIN\\USER /p PASSWORD (tasklist, taskkill, systeminfo, "
            "eventcreate, getmac, gpresult, openfiles, driverquery; /p * prompts)",
    ),
    Rule(
        "impacket-target", "command-line credential",
        # impacket's target, [[domain/]username[:password]@]<target>, after one of its
        # scripts (NAME.py, or impacket-NAME as distributions package them)
        # (its options, each with or without a value, may come first; prose may not)
        r"\b(?:[A-Za-z]\w*\.py|impacket-[a-z]+)(?:\s+-[\w-]{1,30}(?:\s+(?!-)[^\s:@]{1,128})?){0,8}"
        r"\s+(?:[\w.-]{1,64}[/\\])?[^\s:/@\\-][^\s:/@\\]{0,63}:(?P<t>[^\s@:]{3,128})(?=@|\s|$)",
        keywords=(".py", "impacket-"),
        keyword_tails=((".py", r"\s"), ("impacket-", r"[a-z]+\s")),
        check="cli_extra", priority=1,
        doc="impacket's examples (GetADUsers.py, getTGT.py, smbclient.py, mssqlclient.py, "
            "reg.py...): DOMAIN/USER:PASSWORD@TARGET, DOMAIN/USER:PASSWORD, USER:PASSWORD@TARGET",
    ),
    Rule(
        "oracle-easy-connect", "command-line credential",
        r"(?<![\w$#./])[\w$#.]{1,64}/(?P<s>[^\s@/\\\"']{1,128})@//[\w.-]",
        keywords=("@//",), check="cli_value", priority=1,
        doc="Oracle's Easy Connect with credentials: user/password@//host:port/service "
            "(sqlplus, SQLcl, connect strings in scripts)",
    ),
    Rule(
        "cli-config-set", "secret assignment",
        r"(?:^|[\s;&|])(?:set(?:\s+-[A-Za-z]{1,4})*|setx|config(?:ure)?\s+set|secret\s+set"
        r"|poetry\s+config)\s+(?P<name>[A-Za-z_/.@:][\w.:/@-]{0,80})\s+(?:(?:--body|-b)[ =])?"
        r"(?P<s>\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|[^\s\"'(<$%{-][^\s\"']{0,255})",
        keywords=("set ", "setx ", "poetry config"),
        keyword_tails=tuple((k, _SET_TAIL) for k in ("set ", "setx ", "poetry config")),
        check="config_set", priority=1,
        doc="fish set -x NAME VALUE, setx NAME VALUE, npm/yarn/aws config set NAME VALUE, "
            "gh secret set NAME --body VALUE, poetry config pypi-token.X VALUE",
    ),
    Rule(
        "cli-basic-pair", "command-line credential",
        r"\bhttp-basic\.[\w.-]{1,60}\s+[^\s\"']{1,64}\s+(?P<s>[\"']?[^\s\"'-][^\s\"']{2,127}[\"']?)",
        keywords=("http-basic.",), check="cli_value", priority=1,
        doc="poetry config http-basic.REPO USER PASSWORD",
    ),
    Rule(
        "cli-passphrase", "command-line credential",
        r"(?:(?<![\w-])ssh-keygen\b[^|;&\n]{0,80}?\s-[NP]\s+|(?<![\w-])gpg2?\b[^|;&\n]{0,80}?\s"
        r"--passphrase[ =]|(?<![\w-])(?:un)?zip\b[^|;&\n]{0,60}?\s-P\s+"
        r"|(?<![\w-])7za?\s[^|;&\n]{0,60}?\s-p(?=[^\s-]))(?P<s>\"[^\"]{1,128}\"|'[^']{1,128}'|[^\s\"'-][^\s\"']{0,127})",
        keywords=("ssh-keygen", "gpg", "zip", "7z"), check="cli_value", priority=1,
        # what the regex needs after "7z" (in hex ids) and "zip" (gzip, .zip), lowered, over
        # twice the span (lowering may write a character as two: İ): every match starts at
        # its own keyword, which the regex spells case-sensitively, so the gate drops none
        keyword_tails=(("7z", r"a?\s[^|;&\n]{0,120}?\s-p(?=[^\s-])"),
                       ("zip", r"\b[^|;&\n]{0,120}?\s-p\s+")),
        doc="ssh-keygen(1) -N/-P passphrase, gpg(1) --passphrase, zip(1)/unzip(1) -P, "
            "7z -pPASSWORD",
    ),
    Rule(
        "powershell-plain-secure-string", "password assignment",
        r"(?i:ConvertTo-SecureString)\s+(?:-String\s+)?\\?(?P<q>[\"'])(?P<s>[^\"'\\\n]{4,256})"
        r"\\?(?P=q)",
        keywords=("convertto-securestring",), group="s", check="pair_value", priority=1,
        doc="https://learn.microsoft.com/powershell/module/microsoft.powershell.security/"
            "convertto-securestring (with -AsPlainText the password in clear; without it an "
            "encrypted standard string, which opens for its user or key)",
    ),
    Rule(
        "cli-secret-value", "command-line credential",
        r"(?<![\w-])(?:gh\s+secret\s+set\s+\S+\s+(?:--body|-b)[ =]"
        r"|az\s+keyvault\s+secret\s+set\b[^|;&\n]{0,160}?\s--value[ =]"
        r"|aws\s+secretsmanager\s+(?:create-secret|put-secret-value|update-secret)\b[^|;&\n]{0,160}?"
        r"\s--secret-string[ =]"
        r"|aws\s+ssm\s+put-parameter\b(?=[^|;&\n]*SecureString)[^|;&\n]{0,160}?\s--value[ =]"
        r"|security\s+(?:unlock|create)-keychain\b[^|;&\n]{0,60}?\s-p\s+"
        r"|security\s+add-(?:generic|internet)-password\b[^|;&\n]{0,200}?\s-w\s+)"
        r"(?P<s>\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|[^\s\"'$<{(-][^\s\"']{0,255})",
        keywords=("secret set", "secretsmanager", "put-parameter", "unlock-keychain",
                  "create-keychain", "add-generic-password", "add-internet-password"),
        check="cli_value", priority=1,
        doc="a value handed to a secret store: gh secret set NAME --body X, az keyvault secret "
            "set --value X, aws secretsmanager create-secret --secret-string X, aws ssm "
            "put-parameter --type SecureString --value X; macOS security(1) unlock-keychain "
            "-p X, create-keychain -p X, add-generic-password -w X",
    ),
    Rule(
        "config-directive", "password assignment",
        r"(?:^\s*|(?i:\bconfig\s+set)\s+)(?:requirepass|masterauth|bindpw|rootpw|auth_pass"
        r"|masterpassword)\s+"
        r"(?P<s>\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|[^\s\"'#][^\s\"']{0,255})\s*(?:#.*)?$",
        keywords=("requirepass", "masterauth", "bindpw", "rootpw", "auth_pass",
                  "masterpassword"),
        check="cli_value", priority=1,
        doc="redis.conf requirepass/masterauth, ldap.conf/nslcd.conf bindpw, slapd.conf "
            "rootpw, keepalived auth_pass: a directive, a space, the password (redis-cli "
            "CONFIG SET requirepass X sets it at run time)",
    ),
    Rule(
        "named-directive", "password assignment",
        r"^\s*(?P<name>(?![Bb]ypass\s|[Cc]ompass\s|[Ss]urpass\s|[Tt]respass\s|[Oo]verpass\s"
        r"|[Uu]nderpass\s|[Ee]ncompass\s)[A-Za-z][A-Za-z0-9_.-]{0,40}(?i:pass(?:word|wd|phrase)?|pwd"
        r"|secret))\s+(?P<s>[^\s=:#\[(<{$%][^\s]{3,127})\s*$",
        keywords=("pass", "pwd", "secret"),
        keyword_tails=tuple((k, r"[a-z]{0,6}\s+[^\s=:#\[(<{$%]\S{3,127}\s*$")
                            for k in ("pass", "pwd", "secret")),
        check="config_set", priority=1,
        doc="any other directive whose name ends in a password's or a secret's word, alone on "
            "its line with its value (AuthPass X, SMTPAuthPassword X, offlineimap's remotepass "
            "X); a letters-only value is prose (Password required), and bypass, compass... are "
            "no password's names",
    ),
)
