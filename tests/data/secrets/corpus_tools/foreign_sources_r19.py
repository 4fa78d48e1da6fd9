"""Round 19 (issue 29): a thirteenth foreign set, split once by source unit into a tuning
two-thirds and a held-out third: how command-line manuals for people write a credential
on a command line, in English and in the languages they are translated into.

    python tests/data/secrets/corpus_tools/foreign_sources_r19.py --split-only  # units.json
    python tests/data/secrets/corpus_tools/foreign_sources_r19.py               # ../foreign_r19/

Source (a mirror brought by the ``fetch`` tool; origins ``repository@commit:path:line`` on
every line). It was not used by an earlier round, and it is not an independent set:

* tldr-pages/tldr (community-written help pages for command-line tools, CC-BY-4.0):
  ``pages*/<platform>/<command>.md``, English and 40 translations. A page is a title, a
  description (``> …``) and examples: a description line (``- Connect with a password:``)
  and a command in backticks whose parameters are ``{{placeholders}}``.

**Units** are commands: a page's file name (``mysql``), all its platforms and languages
together, so one command's pages fall in one part. Pages were chosen mechanically, by a
pattern fixed before any page was read: a placeholder whose name holds a credential's word
(``{{password}}``, ``{{api_token}}``, ``{{passwort}}``, ``{{mot_de_passe}}``…; the words in
``_CRED_PLACEHOLDER``), found with ``git grep -l`` (file names only). The split was made from
the unit names alone (sorted, shuffled with seed 2919, every third unit held out) and
committed before any page was read.

**Lines** (labels fixed before any page was read; the author's placeholders are the
source's own annotation of what each argument is):

* A command (a line in backticks) is written twice. As the page has it, placeholders and
  all (``sshpass -p {{password}} ssh {{user}}@{{hostname}}``): a negative, since template
  syntax holds no value. And rendered: an option placeholder ``{{[-p|--password]}}`` becomes
  one of its forms (the short or the long one, by the line's origin), an alternation its
  first choice, a credential-named placeholder a synthetic value of its kind (a password:
  ``foreign_sources.synthetic_password``; a token, secret or API key: 40 random letters and
  digits), and any other placeholder its own text (``user``, ``path/to/file``). A rendered
  command with a credential's value is a positive (the author says a credential goes
  there); without one it is a negative (every value on it is a name the author wrote).
* A credential-named placeholder is one whose words include a password's word (in the
  pages' languages), ``token``, ``secret``, an API, access or secret key, and none of the
  words that make it name something else (a path, a file, a name, an id, a length, a user,
  a URL, a type, a hash…: ``_NOT_VALUE``); ``{{user:password}}`` renders its user as text
  and its password as a value.
* A description line (``> …``, ``- …:``) is a negative: prose about a command, in 41
  languages. One whose text the labelling policy reads a value in is left out (counted).
* Left out, counted: a title line, a line shorter than 8 characters, a rendered command
  with braces left over.

**Label fixes** made after the tuning part was first scored (from its lines, applied to both
parts; the held-out part was counted once before them and once at the end): a placeholder
is no credential's value when it is an alternation (``{{pass|fail}}``, ``{{PASS,FAIL}}``), a
path or a file, a quoted text or a sentence, a record of three fields or more
(``{{user:encrypted_password:uid:gid:...}}``), a one-time code (``{{one_time_password}}`` in
the pages' languages), or the choice of an option that names a kind (``--secrets-provider
{{passphrase}}``); the password word is matched as a word (``passato``, ``passive`` and
Italian ``parola_chiave`` are not passwords); a user's word in the pages' languages
(``nazwa_użytkownika``) makes a placeholder name a user; ``{{user%password}}`` is Samba's pair;
and a rendered command with a literal password in a URL (``postgres://user:pass@host``) is a
positive, as the decision table says, except tldr's optional part (``user[:password]``), and
a template whose placeholder wraps a URL's literal password is left out.
"""

from __future__ import annotations

import functools
import random
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import foreign_sources as r5  # noqa: E402
import foreign_sources_r14 as r14  # noqa: E402
import late_sources  # noqa: E402

OUT = HERE.parent / "foreign_r19"
SEED = 2919
TLDR = "tldr-pages/tldr"
# a placeholder whose name holds a credential's word, in the pages' languages
_CRED_WORDS = (r"pass|pwd|token|secret|api[_ -]?key|access[_ -]?key|auth|cred|kennwort"
               r"|mot_de_passe|contrase|senha|wachtwoord|пароль|密码|密碼|パスワード|비밀번호"
               r"|hasło|haslo|parola|salasana|adgangskode|lösenord|passord|heslo|jelszó|şifre|sifre")
_CRED_PLACEHOLDER = r"\{\{[^}]*(" + _CRED_WORDS + r")[^}]*\}\}"  # POSIX ERE (git grep -E)

EARLIER = r14.EARLIER + tuple(f"{d}/{p}.jsonl"
                              for d in ("foreign_r14", "foreign_r15", "foreign_r16", "foreign_r17",
                                        "foreign_r18")
                              for p in ("tuning", "heldout"))
SOURCE = "tldr pages"
FAMILY = "command manual"

LEFT_OUT: Counter[str] = Counter()
_PART = ["tune"]


def _pages_with_credentials() -> list[str]:
    """The pages (paths) with a credential-named placeholder: ``git grep -l``, names only."""
    gitdir = r5.MIRROR / TLDR.replace("/", "+") / "repo"
    out = subprocess.run(["git", "--git-dir", str(gitdir), "grep", "-l", "-i", "-E",
                          _CRED_PLACEHOLDER, "HEAD", "--", "pages*/*.md"],
                         capture_output=True, check=True).stdout.decode()
    return sorted(line.removeprefix("HEAD:") for line in out.splitlines())


def unit_files() -> dict[str, tuple[str, list[str]]]:
    """unit -> (repository, its pages): a command's pages of every platform and language."""
    units: dict[str, tuple[str, list[str]]] = {}
    for path in _pages_with_credentials():
        stem = path.rsplit("/", 1)[1].removesuffix(".md")
        units.setdefault("tldr:" + stem, (TLDR, []))[1].append(path)
    return units


# ---- a placeholder's kind -----------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}")
_PASSWORD_WORD = re.compile(
    r"(?i)(?<![a-z])(?:pass(?:w(?:or)?d|wort|ord|phrase|code|key)?|pwd|pw)(?![a-z])|kennwort"
    r"|mot_de_passe|mot de passe|contrase|senha|wachtwoord|пароль|密码|密碼|パスワード|비밀번호"
    r"|hasło|haslo|parolă|salasana|adgangskode|lösenord|heslo|jelszó|şifre|sifre")
_TOKEN_WORD = re.compile(r"(?i)token|secret|api[_ -]?key|access[_ -]?key|secret[_ -]?key")
# words that make a credential-named placeholder name something else than its value (a
# path, a file, a name, a length, a user, a one-time code...), in the pages' languages
_NOT_VALUE = re.compile(
    r"(?i)path|file|name|(?<![a-z])ids?(?![a-z])|length|len(?![a-z])|user|url|uri|type|prompt"
    r"|env|var|command|dir|folder|policy|hint|store|vault|manager|algorithm|method|mode"
    r"|fingerprint|profile|scope|count|size|format|label|hash|salt|provider|server|service"
    r"|header|expir|ttl|field|option|flag|stdin|source|location|descri|public|role|permission"
    r"|level|generator|strength|min|max|reset|account|host|port|domain|email|mail|number"
    r"|index|slot|key_?id|keyid|ssid|output|input|schema|table|template|request"
    r"|one.?time|otp|2fa|mfa|(?<![a-z])code(?![a-z])|одноразов|일회용|一次性|ワンタイム"
    r"|datei|pfad|länge|nom|chemin|fichier|longueur|ruta|archivo|nombre|longitud|caminho|arquivo"
    r"|nome|comprimento|lunghezza|bestand|naam|lengte|имя|путь|файл|длина|文件|路径|名|长度"
    r"|benutzer|utilisateur|usuario|utente|gebruiker|użytkownik|uživatel|kullanıcı|пользовател"
    r"|用户|使用者|ユーザー|사용자|उपयोगकर्ता"
    r"|ファイル|パス|名前|長さ|파일|경로|이름|길이")


_OPTION = re.compile(r"^\[(.+)\]$")


def _value_kind(content: str) -> str:
    """"password" or "token" for a placeholder that stands for a credential's value, ""
    for any other (a name, a path, an option)."""
    if _OPTION.match(content) or _NOT_VALUE.search(content) or re.search(r"[|,]", content) or \
            re.search(r"[/\\\"'`$]|^[.~]|\.\w{1,5}$", content) or len(content.split()) > 3 or \
            content.count(":") >= 2:
        return ""  # an alternation, a path or a file, a quoted text, a sentence, a record
    if _PASSWORD_WORD.search(content):
        return "password"
    return "token" if _TOKEN_WORD.search(content) else ""


def _token(seed: str) -> str:
    rng = random.Random("tok:" + seed)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(rng.choice(alphabet) for _ in range(40))


def render(command: str, seed: str) -> tuple[str, list[tuple[int, str, str]]]:
    """The command with every placeholder filled (see the module's docstring), and where
    each credential's value went: (column, value, kind)."""
    long_form = random.Random("form:" + seed).random() < 0.5
    out: list[str] = []
    values: list[tuple[int, str, str]] = []
    at = 0
    for n, m in enumerate(_PLACEHOLDER.finditer(command)):
        out.append(command[at:m.start()])
        content = m.group(1)
        option = _OPTION.match(content)
        if option:
            forms = option.group(1).split("|")
            text = forms[-1] if long_form else forms[0]
        elif _pair(content):
            user, sep, secret_name = _pair(content)
            value = _fill(secret_name, f"{seed}:{n}")
            out.append(user.split("|")[0] + sep)
            values.append((len("".join(out)), value, _value_kind(secret_name)))
            text = value
        elif _value_kind(content) and not _OPTION_OF_KIND.search(command[:m.start()]):
            text = _fill(content, f"{seed}:{n}")
            values.append((len("".join(out)), text, _value_kind(content)))
        else:
            text = content.split("|")[0]
        out.append(text)
        at = m.end()
    out.append(command[at:])
    return "".join(out), values


# an option whose value names a kind or a choice (``--secrets-provider {{passphrase}}``,
# ``--auth-type {{...}}``): the placeholder after it is that choice, not a credential
_OPTION_OF_KIND = re.compile(r"-[\w-]*(?:provider|type|mode|method|status|scheme|kind)\s*$")


def _pair(content: str) -> tuple[str, str, str] | None:
    """(user, separator, password) of ``{{user:password}}`` (curl's and the URL's form) or
    ``{{user%password}}`` (Samba's ``-U user%password``), when only its second half names a
    credential."""
    for sep in (":", "%"):
        if sep in content:
            user, secret = content.rsplit(sep, 1)
            if _value_kind(secret) and not _value_kind(user) and "|" not in content:
                return user, sep, secret
    return None


def _fill(content: str, seed: str) -> str:
    return r5.synthetic_password(seed) if _value_kind(content) == "password" else _token(seed)


# ---- a page's lines ---------------------------------------------------------------------

_COMMAND = re.compile(r"^`(?P<c>.+)`\s*$")


def page(unit: str, path: str) -> Iterator[dict]:
    """The records of one page (the module's docstring says how each line is labelled)."""
    text = r5._text(TLDR, path)
    if text is None:
        LEFT_OUT[_PART[0] + ": a page that is not UTF-8"] += 1
        return
    commit = r5._commit(TLDR)
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        origin = f"{TLDR}@{commit}:{path}:{number}"
        common = {"family": FAMILY, "source": SOURCE, "unit": unit, "origin": origin}
        command = _COMMAND.match(line)
        if command:
            yield from _command(command.group("c"), origin, common)
        elif line.startswith(("> ", "- ")):
            prose = line[2:].strip()
            if r5.policy_value(prose):
                LEFT_OUT[_PART[0] + ": a description the labelling policy reads a value in"] += 1
                continue
            yield from late_sources._negative(prose, **common)
        elif line:
            LEFT_OUT[_PART[0] + ": a title line"] += 1


_URL_WHY = ("a password in a URL: only template syntax exempts it (decision table: "
            "postgres://user:pass@host is flagged)")


def _command(command: str, origin: str, common: dict) -> Iterator[dict]:
    url = r5._URL_PW.search(command)
    if url and any(m.start() < url.start(1) < m.end() for m in _PLACEHOLDER.finditer(command)) \
            and not r5._template(url.group(1)):
        LEFT_OUT[_PART[0] + ": a template whose placeholder wraps a URL's literal password"] += 1
    else:
        yield from late_sources._negative(command, **common)  # as written: a template
    rendered, values = render(command, origin)
    if "{{" in rendered or "}}" in rendered:
        LEFT_OUT[_PART[0] + ": a rendered command with braces left over"] += 1
        return
    url = r5._URL_PW.search(rendered)
    if not values and url and not r5._template(url.group(1)) and len(url.group(1)) >= 3 and \
            not url.group(1).endswith("]"):  # user[:password]: the pages' optional part
        values = [(url.start(1), url.group(1), "password")]
        common = {**common, "relabel": _URL_WHY}
    if not values:
        yield from late_sources._negative(rendered, **common)
        return
    start, secret, kind = values[0]
    if not 0 < len(rendered) <= 500:
        LEFT_OUT[_PART[0] + ": a command longer than 500 characters"] += 1
        return
    yield {"line": rendered, "label": "pos", "secret": secret, "start": start,
           "kind": f"command line ({kind})", **common}


def records_of(unit: str, repo: str, paths: list[str]) -> Iterator[dict]:
    """A unit's records; an error while reading a held-out unit is counted by its type only
    (its message could quote the unit's text)."""
    _PART[0] = r14.part_of(OUT).get(unit, "tune")
    for path in paths:
        yield from r5.read_guarded(functools.partial(page, unit, path), _PART[0], LEFT_OUT, "page")


_NOTE = ("Lines labelled mechanically by foreign_sources_r19.py from the pages' own "
         "placeholders (a credential-named placeholder filled with a synthetic value is a "
         "positive); no line is relabelled against a source verdict. The held-out part's "
         "are counted, not listed.")


def main() -> None:
    r5.build_and_report(unit_files(), records_of, OUT, SEED, EARLIER, _NOTE, (LEFT_OUT,))


if __name__ == "__main__":
    main()
