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
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import foreign_sources as r5  # noqa: E402

OUT = HERE.parent / "foreign_r19"
SEED = 2919
TLDR = "tldr-pages/tldr"
# a placeholder whose name holds a credential's word, in the pages' languages
_CRED_WORDS = (r"pass|pwd|token|secret|api[_ -]?key|access[_ -]?key|auth|cred|kennwort"
               r"|mot_de_passe|contrase|senha|wachtwoord|пароль|密码|密碼|パスワード|비밀번호"
               r"|hasło|haslo|parola|salasana|adgangskode|lösenord|passord|heslo|jelszó|şifre|sifre")
_CRED_PLACEHOLDER = r"\{\{[^}]*(" + _CRED_WORDS + r")[^}]*\}\}"  # POSIX ERE (git grep -E)

LEFT_OUT: Counter[str] = Counter()


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


def main() -> None:
    r5.build_round(unit_files(), lambda *a: iter(()), OUT, SEED, ())


if __name__ == "__main__":
    main()
