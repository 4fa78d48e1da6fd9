"""An adversary's sweep of a server drive and of `memgit serve` (branch hostile42).

Every byte that enters a drive or a server is judged; nothing a message, page or log
prints echoes a secret. This script pushes, as an attacker would (`--no-verify`, raw
git plumbing), synthetic credentials hidden in every place a push can carry them, and
inputs that are awkward but harmless, to a real `memgit init --bare` drive with its real
hooks, then to `memgit serve` over HTTP with a write token. For each case it prints one
row: refused or accepted, the MG codes of the refusal, and whether any output line
(the client's `remote:` lines, `memgit audit`, `recall`, `info`, serve's log, dashboard
pages and /metrics) holds 8 or more consecutive characters of the secret (or of the
encoded form that was pushed). It ends by looking for every secret in every object of
the server drive and in its git directory's plain files.

    PYTHONPATH=src python bench/hostile_sweep.py [--keep] [--only NAME...] [--no-serve]

Exit 0 when every row says what it should (`verdict` ok), 1 otherwise. Needs git,
openssl (for a PEM key) and, for the serve part, memgit[serve]. The cases already in
the older hostile script (token in body, file, folder, commit subject, branch name, a
symlink to /etc/passwd, raw HTML, invalid UTF-8 content, ANSI escapes, 3 MiB random,
round 8/9 password forms) are not repeated here.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import re
import shutil
import socket
import string
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

RNG = random.Random(42)
ALNUM = string.ascii_letters + string.digits
MEMGIT = [sys.executable, "-m", "memgit"]


def _b62(n: int, width: int) -> str:
    out = ""
    while n:
        n, r = divmod(n, 62)
        out = (string.digits + string.ascii_uppercase + string.ascii_lowercase)[r] + out
    return out.rjust(width, "0")


def github_token() -> str:
    """A ghp_ token of the real shape: 30 random characters and their CRC32 in base 62."""
    body = "".join(RNG.choice(ALNUM) for _ in range(30))
    return "ghp_" + body + _b62(zlib.crc32(body.encode()), 6)


GH = github_token()
GH2 = github_token()
AWS_ID = "AKIA" + "".join(RNG.choice(string.ascii_uppercase + "234567") for _ in range(16))
AWS_SECRET = "".join(RNG.choice(ALNUM + "/+") for _ in range(40))
PW = "Qv7" + "".join(RNG.choice(ALNUM) for _ in range(13))  # 16 characters
PW_NAME = "Zr4" + "".join(RNG.choice(ALNUM) for _ in range(13))  # the known miss's own
PW_URL = f"postgres://deploy:{PW}@db.internal.example.com:5432/app"


def pem_key() -> str:
    out = subprocess.run(
        ["openssl", "genpkey", "-algorithm", "ed25519"], capture_output=True, text=True, check=True
    ).stdout
    return out.strip()


PEM = pem_key()
PEM_BODY = PEM.splitlines()[1]


def entry(text: str, n: int = 1) -> str:
    return f"- {text} [source: https://example.com/sessions/{n}; added: 2026-12-01]\n"


@dataclass
class Case:
    name: str
    stage: Callable[[Ctx], None]
    needles: list[str] = field(default_factory=list)  # secret forms; empty: harmless
    expect: str = "refused"  # or "accepted", or "either"
    refspecs: list[str] = field(default_factory=lambda: ["HEAD:refs/heads/main"])
    force: bool = False
    message: str = "add a fact"
    known: str = ""  # a documented known miss: accepted is the expected outcome


@dataclass
class Ctx:
    work: Path  # the clone
    env: dict[str, str]
    extra_refspecs: list[str] = field(default_factory=list)
    message: str | None = None
    author: tuple[str, str] | None = None
    committer: tuple[str, str] | None = None
    skip_commit: bool = False
    skip_add: bool = False  # the case staged index entries no file backs (`add -A` drops them)

    def git(self, *args: str, input: bytes | None = None, env: dict | None = None) -> str:
        e = dict(self.env, **(env or {}))
        r = subprocess.run(["git", *args], cwd=self.work, env=e, input=input, capture_output=True)
        if r.returncode:
            raise RuntimeError(f"git {args}: {r.stderr.decode(errors='replace')}")
        return r.stdout.decode(errors="replace").strip()

    def write(self, rel: str, data: str | bytes) -> None:
        p = self.work / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data.encode() if isinstance(data, str) else data)

    def append(self, rel: str, data: str) -> None:
        p = self.work / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "ab") as f:
            f.write(data.encode())


def run(
    cmd: list[str], cwd: Path, env: dict[str, str], input: bytes | None = None, timeout: float = 600
) -> tuple[int, str]:
    r = subprocess.run(cmd, cwd=cwd, env=env, input=input, capture_output=True, timeout=timeout)
    return r.returncode, (r.stdout + r.stderr).decode("utf-8", errors="replace")


INVISIBLE_ESCAPES = re.compile(
    r"\\u(?:200[b-f]|00ad|2060|feff|202[a-e]|206[6-9])|\\xad", re.IGNORECASE
)
INVISIBLE = re.compile("[\u200b-\u200f\u00ad\u2060\ufeff\u202a-\u202e\u2066-\u2069]")


def remote_lines(out: str) -> str:
    """What the server said: the client's `remote:` lines (git itself prints the refs the
    client named, secret or not; that is the client's own echo, not the server's)."""
    return "\n".join(line for line in out.splitlines() if line.startswith("remote:"))


def echoes(text: str, needles: list[str]) -> list[str]:
    """The 8-character pieces of any needle that appear in text (invisibles removed)."""
    hay = [text, INVISIBLE.sub("", INVISIBLE_ESCAPES.sub("", text))]
    hits = []
    for n in needles:
        for i in range(0, max(1, len(n) - 7)):
            piece = n[i : i + 8]
            if len(piece) == 8 and any(piece in h for h in hay):
                hits.append(piece)
                break
    return hits


# ---------------------------------------------------------------- the cases


def good_commit(c: Ctx) -> str:
    """A harmless commit on top of origin/main, returns its id."""
    c.append("topics/build.md", entry(f"harmless fact {RNG.randrange(10**9)}"))
    run(MEMGIT + ["lint", "--fix"], c.work, c.env)
    c.git("add", "-A")
    c.git("commit", "-q", "--no-verify", "-m", "a harmless fact")
    return c.git("rev-parse", "HEAD")


def tag_name(c: Ctx) -> None:
    good_commit(c)
    c.git("tag", f"rel-{GH}")
    c.skip_commit = True
    c.extra_refspecs = [f"refs/tags/rel-{GH}:refs/tags/rel-{GH}"]


def tag_message(c: Ctx) -> None:
    good_commit(c)
    c.git(
        "tag",
        "-a",
        "v1",
        "-m",
        f"release\n\naws_access_key_id={AWS_ID}\naws_secret_access_key={AWS_SECRET}\n",
    )
    c.skip_commit = True
    c.extra_refspecs = ["refs/tags/v1:refs/tags/v1"]


def tagger_name(c: Ctx) -> None:
    good_commit(c)
    c.git("tag", "-a", "v2", "-m", "release", env={"GIT_COMMITTER_NAME": GH})
    c.skip_commit = True
    c.extra_refspecs = ["refs/tags/v2:refs/tags/v2"]


def tag_of_a_blob(c: Ctx) -> None:
    blob = c.git("hash-object", "-w", "--stdin", input=entry(f"token {GH}").encode())
    c.git("tag", "blobtag", blob)
    c.skip_commit = True
    c.extra_refspecs = ["refs/tags/blobtag:refs/tags/blobtag"]


def tag_of_a_tree(c: Ctx) -> None:
    blob = c.git("hash-object", "-w", "--stdin", input=entry(f"token {GH}").encode())
    tree = c.git("mktree", input=f"100644 blob {blob}\tx.md\n".encode())
    c.git("update-ref", "refs/tags/treetag", tree)
    c.skip_commit = True
    c.extra_refspecs = ["refs/tags/treetag:refs/tags/treetag"]


def note_ref(c: Ctx) -> None:
    head = good_commit(c)
    c.git("notes", "add", "-m", f"deploy with {GH}", head)
    c.skip_commit = True
    c.extra_refspecs = ["HEAD:refs/heads/main", "refs/notes/commits:refs/notes/commits"]


def author_name(c: Ctx) -> None:
    c.append("topics/build.md", entry("the build uses make"))
    c.author = (f"ci {GH}", "ci@example.com")


def committer_email(c: Ctx) -> None:
    c.append("topics/build.md", entry("the build uses ninja"))
    c.committer = ("ci", f"{AWS_ID}@example.com")


def message_body(c: Ctx) -> None:
    c.append("topics/build.md", entry("the database is postgres"))
    c.message = "x" * 300 + f"\n\nconnect with {PW_URL}\n"


def extra_header(c: Ctx) -> None:
    """A commit object with a header git does not know (and one in `encoding`)."""
    head = good_commit(c)
    raw = c.git("cat-file", "commit", head)
    hdr, _, msg = raw.partition("\n\n")
    obj = f"{hdr}\nx-deploy-token {GH}\n\n{msg}\n"
    new = c.git("hash-object", "-t", "commit", "-w", "--stdin", "--literally", input=obj.encode())
    c.git("reset", "-q", "--hard", new)
    c.skip_commit = True


def gpgsig_header(c: Ctx) -> None:
    head = good_commit(c)
    raw = c.git("cat-file", "commit", head)
    hdr, _, msg = raw.partition("\n\n")
    sig = (
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n "
        + f"{AWS_ID} {AWS_SECRET}"
        + "\n -----END PGP SIGNATURE-----"
    )
    new = c.git(
        "hash-object", "-t", "commit", "-w", "--stdin", input=f"{hdr}\n{sig}\n\n{msg}\n".encode()
    )
    c.git("reset", "-q", "--hard", new)
    c.skip_commit = True


def emphasis(c: Ctx) -> None:
    c.append("topics/build.md", entry(f"the CI token is **{GH}**"))


def link_target(c: Ctx) -> None:
    c.append(
        "topics/build.md", entry(f"see [the dashboard](https://ci.example.com/?access_token={GH})")
    )


def html_comment(c: Ctx) -> None:
    c.append("topics/build.md", f"<!-- {GH} -->\n")


def footnote(c: Ctx) -> None:
    c.append(
        "topics/build.md", entry("the deploy token is in the footnote[^1]") + f"\n[^1]: {GH}\n"
    )


def ref_definition(c: Ctx) -> None:
    c.append("topics/build.md", entry("the database is [db][db]") + f"\n[db]: {PW_URL}\n")


def front_matter(c: Ctx) -> None:
    c.write(
        "topics/fm.md",
        f"---\ntitle: build\naws_secret_access_key: {AWS_SECRET}\n---\n" + entry("front matter"),
    )


def zero_width(c: Ctx) -> None:
    split = "\u200b".join(GH[i : i + 6] for i in range(0, len(GH), 6))
    c.append("topics/build.md", entry(f"the token is {split}"))


def soft_hyphen(c: Ctx) -> None:
    split = "\u00ad".join(GH[i : i + 5] for i in range(0, len(GH), 5))
    c.append("topics/build.md", entry(f"token {split}"))


PW_ENC = "".join(f"%{ord(ch):02X}" if i % 3 == 0 else ch for i, ch in enumerate(PW))


def url_encoded(c: Ctx) -> None:
    c.append(
        "topics/build.md",
        entry(f"connect to postgres://deploy:{PW_ENC}@db.internal.example.com/app"),
    )


GH_URLENC = urllib.parse.quote(GH, safe="").replace("_", "%5F")


def url_encoded_token(c: Ctx) -> None:
    c.append("topics/build.md", entry(f"call https://api.example.com/x?token={GH_URLENC}"))


B64 = base64.b64encode(f"deploy:{PW}".encode()).decode()


def basic_auth(c: Ctx) -> None:
    c.append("topics/build.md", entry(f"the webhook sends Authorization: Basic {B64}"))


def base64_prose(c: Ctx) -> None:
    c.append("topics/build.md", entry(f"the backup credentials are {B64} in base64"))


def table_cell(c: Ctx) -> None:
    c.append("topics/build.md", f"\n| service | token |\n|---|---|\n| ci | {GH} |\n")


def code_fence(c: Ctx) -> None:
    c.append(
        "topics/build.md",
        f"\n```ini\n[default]\naws_access_key_id = {AWS_ID}\n"
        f"aws_secret_access_key = {AWS_SECRET}\n```\n",
    )


def pem_fenced(c: Ctx) -> None:
    c.append("topics/build.md", f"\n```\n{PEM}\n```\n")


def pem_bare(c: Ctx) -> None:
    c.write("topics/key.md", PEM + "\n")


def html_attribute(c: Ctx) -> None:
    c.append(
        "topics/build.md",
        f'<img alt="status" src="https://deploy:{PW}@ci.example.com/badge.svg">\n',
    )


def heading(c: Ctx) -> None:
    c.append("topics/build.md", f"## token {GH}\n")


def source_meta(c: Ctx) -> None:
    c.append(
        "topics/build.md",
        f"- a fact [source: https://ci.example.com/?token={GH}; added: 2026-12-01]\n",
    )


def id_meta(c: Ctx) -> None:
    c.append(
        "topics/build.md",
        f"- a fact [source: https://example.com/s/1; added: 2026-12-01; id: {GH}]\n",
    )


def index_description(c: Ctx) -> None:
    run(MEMGIT + ["lint", "--fix"], c.work, c.env)
    text = (c.work / "MEMORY.md").read_text()
    c.write("MEMORY.md", text.replace("- [[topics/build]]", f"- [[topics/build]] token {GH}"))


def dir_name_aws(c: Ctx) -> None:
    c.write(f"topics/{AWS_ID}/a.md", entry("a fact"))


def file_name_url(c: Ctx) -> None:
    c.write(f"topics/deploy:{PW_NAME}@db.md", entry("a fact"))


def rtl_override(c: Ctx) -> None:
    c.append("topics/build.md", entry("the admin is \u202eevil\u202c bob"))


def rtl_text(c: Ctx) -> None:  # harmless: Hebrew and Arabic text
    c.append("topics/build.md", entry("the team in Haifa says שלום, in Cairo مرحبا"))


def homoglyph_id(c: Ctx) -> None:
    c.append(
        "topics/build.md",
        "- a fact [source: https://example.com/s/1; added: 2026-12-01; "
        "id: m-01jd3xk8q7c9v2n4r6t8w0y1z\u04301]\n",
    )


def nul_byte(c: Ctx) -> None:
    c.append("topics/build.md", "- nul \x00 here [source: https://example.com/s/1]\n")


def invalid_utf8_name(c: Ctx) -> None:
    """A name with the byte 0xE9 (Latin-1 e acute), not UTF-8; the Index lists it."""
    blob = c.git("hash-object", "-w", "--stdin", input=entry("a fact about bed").encode())
    subprocess.run(
        [
            b"git",
            b"update-index",
            b"--add",
            b"--cacheinfo",
            b"100644," + blob.encode() + b",topics/b\xe9d.md",
        ],
        cwd=c.work,
        env=c.env,
        check=True,
    )
    memory = (c.work / "MEMORY.md").read_bytes().rstrip(b"\n") + b"\n- [[topics/b\xe9d]]\n"
    c.write("MEMORY.md", memory)
    c.git("add", "MEMORY.md")
    c.skip_add = True


def crlf(c: Ctx) -> None:  # harmless
    c.write("topics/crlf.md", entry("windows line ends").replace("\n", "\r\n"))


def long_line(c: Ctx) -> None:
    c.write("topics/long.md", "- " + "word " * 210000 + "\n")


def long_line_secret(c: Ctx) -> None:
    c.write("topics/long2.md", "- " + "word " * 100000 + f"token {GH} " + "word " * 100 + "\n")


def symlink_out(c: Ctx) -> None:
    os.symlink("../../../../../../etc", c.work / "topics" / "etc")


def symlink_md_rel(c: Ctx) -> None:
    os.symlink("../../srv.git/config", c.work / "topics" / "cfg.md")


def gitlink(c: Ctx) -> None:
    head = c.git("rev-parse", "HEAD")
    c.git("update-index", "--add", "--cacheinfo", f"160000,{head},topics/sub")
    c.skip_add = True


def gitmodules(c: Ctx) -> None:
    c.write(".gitmodules", '[submodule "x"]\n\tpath = x\n\turl = ../../../etc\n')


def exec_mode(c: Ctx) -> None:
    c.write("topics/run.md", entry("an executable entry"))
    os.chmod(c.work / "topics" / "run.md", 0o755)


def gitattributes(c: Ctx) -> None:
    c.write(".gitattributes", "*.md filter=evil ident\n")


def gitattributes_md(c: Ctx) -> None:
    c.write("topics/.gitattributes", "*.md filter=evil ident\n")


def lfs_pointer(c: Ctx) -> None:
    c.write(
        "topics/lfs.md",
        "version https://git-lfs.github.com/spec/v1\n"
        "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n",
    )


def many_files(c: Ctx) -> None:
    for i in range(4000):
        c.write(f"tiny/f{i:05d}.md", entry(f"tiny fact {i}", i))


def side_branch_secret(c: Ctx) -> None:
    c.append("topics/build.md", entry(f"token {GH}"))
    c.extra_refspecs = ["HEAD:refs/heads/feature"]


def force_rewrite(c: Ctx) -> None:
    c.git("reset", "-q", "--hard", "HEAD~1")
    c.append("topics/build.md", entry("rewritten history"))


def delete_main(c: Ctx) -> None:
    c.skip_commit = True
    c.extra_refspecs = [":refs/heads/main"]


def protected_ref(ref: str) -> Callable[[Ctx], None]:
    def stage(c: Ctx) -> None:
        good_commit(c)
        c.skip_commit = True
        c.extra_refspecs = [f"HEAD:{ref}"]

    return stage


def replace_ref(c: Ctx) -> None:
    """refs/replace/<main's tip> -> a commit holding a secret: clients that fetch it see it."""
    tip = c.git("rev-parse", "HEAD")
    c.append("topics/build.md", entry(f"token {GH}"))
    c.git("add", "-A")
    c.git("commit", "-q", "--no-verify", "-m", "replacement")
    new = c.git("rev-parse", "HEAD")
    c.git("reset", "-q", "--hard", tip)
    c.git("update-ref", f"refs/replace/{tip}", new)
    c.skip_commit = True
    c.extra_refspecs = [f"refs/replace/{tip}:refs/replace/{tip}"]


def wikilink(c: Ctx) -> None:
    c.append("topics/build.md", entry(f"see [[{GH}]]"))


def backslash_escape(c: Ctx) -> None:  # Markdown renders ghp\_... as ghp_...
    c.append("topics/build.md", entry("CI uses " + GH.replace("_", "\\_")))


def html_entity(c: Ctx) -> None:  # and ghp&#95;... too
    c.append("topics/build.md", entry("CI uses " + GH.replace("_", "&#95;")))


def html_entity_all(c: Ctx) -> None:
    c.append("topics/build.md", entry("CI uses " + "".join(f"&#{ord(ch)};" for ch in GH)))


def push_option(c: Ctx) -> None:
    good_commit(c)
    c.skip_commit = True
    c.extra_refspecs = ["-o", f"token={GH}", "HEAD:refs/heads/main"]


def memory_title(c: Ctx) -> None:
    text = (c.work / "MEMORY.md").read_text()
    c.write("MEMORY.md", text.replace("# Memory", f"# Memory {GH}", 1))


def harmless(c: Ctx) -> None:
    c.append("topics/build.md", entry("the build uses make and takes four minutes"))


CASES: list[Case] = [
    Case("baseline harmless entry", harmless, expect="accepted"),
    Case("tag name (ghp)", tag_name, [GH]),
    Case("annotated tag message (AWS pair)", tag_message, [AWS_ID, AWS_SECRET]),
    Case("tagger name (ghp)", tagger_name, [GH]),
    Case("tag of a bare blob (ghp)", tag_of_a_blob, [GH]),
    Case("tag of a bare tree (ghp)", tag_of_a_tree, [GH]),
    Case("note ref refs/notes/commits (ghp)", note_ref, [GH]),
    Case("author name (ghp)", author_name, [GH]),
    Case("committer email (AWS id)", committer_email, [AWS_ID]),
    Case("message body after 300-char subject (pw URL)", message_body, [PW]),
    Case("unknown commit header (ghp)", extra_header, [GH]),
    Case("gpgsig header (AWS pair)", gpgsig_header, [AWS_ID, AWS_SECRET]),
    Case("**emphasis** (ghp)", emphasis, [GH]),
    Case("link target query (ghp)", link_target, [GH]),
    Case("HTML comment (ghp)", html_comment, [GH]),
    Case("footnote definition (ghp)", footnote, [GH]),
    Case("reference link definition (pw URL)", ref_definition, [PW]),
    Case("front matter (AWS secret)", front_matter, [AWS_SECRET]),
    Case("zero-width split (ghp)", zero_width, [GH]),
    Case("soft-hyphen split (ghp)", soft_hyphen, [GH]),
    Case("URL-encoded password in URL", url_encoded, [PW, PW_ENC]),
    Case("URL-encoded ghp in query", url_encoded_token, [GH, GH_URLENC]),
    Case("Basic base64(user:pass)", basic_auth, [PW, B64]),
    Case("base64(user:pass) in prose", base64_prose, [PW, B64]),
    Case("table cell (ghp)", table_cell, [GH]),
    Case("code fence (AWS pair)", code_fence, [AWS_ID, AWS_SECRET]),
    Case("PEM key in a fence", pem_fenced, [PEM_BODY]),
    Case("PEM key, bare file", pem_bare, [PEM_BODY]),
    Case("HTML attribute (pw URL)", html_attribute, [PW]),
    Case("heading (ghp)", heading, [GH]),
    Case("source metadata (ghp)", source_meta, [GH]),
    Case("id metadata (ghp)", id_meta, [GH]),
    Case("Index description in MEMORY.md (ghp)", index_description, [GH]),
    Case("directory name (AWS id)", dir_name_aws, [AWS_ID]),
    Case(
        "file name user:pw@host (known miss)",
        file_name_url,
        [PW_NAME],
        known="user:password@host without a scheme: docs/security.md",
    ),
    Case("1 MB line with a ghp inside", long_line_secret, [GH]),
    Case("ghp in a side branch's commit", side_branch_secret, [GH]),
    Case("refs/replace/<tip> -> secret commit", replace_ref, [GH]),
    Case("[[wikilink]] target (ghp)", wikilink, [GH]),
    Case("backslash-escaped ghp\\_ (Markdown renders _)", backslash_escape, [GH]),
    Case("HTML entity ghp&#95; (rendered _)", html_entity, [GH]),
    Case("every character an HTML entity", html_entity_all, [GH], expect="either"),
    Case("push option -o token=ghp", push_option, [GH], expect="either"),
    Case("MEMORY.md title (ghp)", memory_title, [GH]),
    Case("RTL override in an entry", rtl_override, expect="either"),
    Case("Hebrew/Arabic text (harmless)", rtl_text, expect="accepted"),
    Case("homoglyph (Cyrillic) in an id", homoglyph_id),
    Case("NUL byte", nul_byte),
    Case("invalid UTF-8 file name", invalid_utf8_name),
    Case("CRLF file (harmless)", crlf, expect="accepted"),
    Case("1 MB line", long_line),
    Case("symlink to /etc (dir)", symlink_out),
    Case("symlink .md into the server's git dir", symlink_md_rel),
    Case("gitlink (submodule entry)", gitlink),
    Case(".gitmodules", gitmodules),
    Case("mode 100755 .md", exec_mode),
    Case(".gitattributes filter/ident", gitattributes),
    Case("topics/.gitattributes", gitattributes_md),
    Case("LFS pointer .md (plain text without .gitattributes)", lfs_pointer, expect="either"),
    Case("4000 tiny files", many_files, expect="either"),
    Case("force-push rewriting history", force_rewrite, force=True),
    Case("delete main", delete_main),
    Case("push to refs/memgit/purged", protected_ref("refs/memgit/purged")),
    Case("push to refs/memgit/registry/digests", protected_ref("refs/memgit/registry/digests")),
    Case("push to refs/meta/config", protected_ref("refs/meta/config"), expect="either"),
    Case("push to refs/heads/memgit/x", protected_ref("refs/heads/memgit/x"), expect="either"),
]


@dataclass
class Row:
    name: str
    outcome: str
    codes: str
    echo: str
    verdict: str
    note: str = ""


def echo_row(name: str, hits: list[str]) -> Row:
    """The row of a place searched for echoes (no push of its own): PROBLEM if any."""
    return Row(name, "-", "-", "yes" if hits else "no", "ok" if not hits else "PROBLEM",
               ",".join(hits))


def server_dump(srv: Path, env: dict[str, str]) -> str:
    """Every object of the server drive, decompressed, and its plain files."""
    r = subprocess.run(
        ["git", "-C", str(srv), "cat-file", "--batch-all-objects", "--batch", "--unordered"],
        capture_output=True,
        env=env,
    )
    text = r.stdout.decode("utf-8", errors="replace")
    for p in srv.rglob("*"):
        if p.is_file() and "objects" not in p.parts:
            try:
                text += p.read_bytes().decode("utf-8", errors="replace")
            except OSError:
                pass
    return text


def sweep_drive(base: Path, env: dict[str, str], only: list[str]) -> tuple[list[Row], dict]:
    srv = base / "srv.git"
    run(MEMGIT + ["init", "--bare", str(srv)], base, env)
    run(MEMGIT + ["clone", str(srv), "c"], base, env)
    work = base / "c"
    g = Ctx(work, env)
    g.git("config", "user.name", "A")
    g.git("config", "user.email", "a@example.com")
    g.git("config", "core.quotepath", "false")
    good_commit(g)
    g.git("push", "-q", "origin", "HEAD:main")
    rows: list[Row] = []
    outputs: dict[str, str] = {}
    for case in CASES:
        if only and not any(o.lower() in case.name.lower() for o in only):
            continue
        for ref in g.git(
            "for-each-ref", "--format=%(refname)", "refs/tags", "refs/notes", "refs/replace"
        ).splitlines():
            g.git("update-ref", "-d", ref)
        g.git("fetch", "-q", "origin")
        g.git("reset", "-q", "--hard", "origin/main")
        g.git("clean", "-qfdx")
        c = Ctx(work, env)
        case.stage(c)
        if not c.skip_commit:
            if not c.skip_add:
                run(MEMGIT + ["lint", "--fix"], work, env)
                c.git("add", "-A")
            e = {}
            if c.author:
                e.update(GIT_AUTHOR_NAME=c.author[0], GIT_AUTHOR_EMAIL=c.author[1])
            if c.committer:
                e.update(GIT_COMMITTER_NAME=c.committer[0], GIT_COMMITTER_EMAIL=c.committer[1])
            c.git(
                "commit",
                "-q",
                "--no-verify",
                "--allow-empty",
                "-m",
                c.message or case.message,
                env=e,
            )
        refspecs = c.extra_refspecs or case.refspecs
        cmd = (
            ["git", "push", "--porcelain"]
            + (["--force"] if case.force else [])
            + ["origin", *refspecs]
        )
        rc, out = run(cmd, work, env)
        outputs[case.name] = out
        codes = " ".join(sorted(set(re.findall(r"MG\d{3}", out))))
        accepted = rc == 0 and "[rejected]" not in out and "remote rejected" not in out
        hits = echoes(remote_lines(out), case.needles)
        rows.append(judge(case, accepted, codes, hits, out))
    return rows, {"srv": srv, "work": work}


def judge(case: Case, accepted: bool, codes: str, hits: list[str], out: str) -> Row:
    outcome = "accepted" if accepted else "refused"
    ok = case.expect in (outcome, "either") and not hits and "MG000" not in codes
    note = ""
    if "MG000" in codes:
        note = "internal error"
    elif hits:
        note = "echo: " + ",".join(hits)
    elif case.known and outcome == "accepted":
        ok, note = True, "known miss: " + case.known
    elif case.expect not in (outcome, "either"):
        note = f"expected {case.expect}"
    return Row(
        case.name, outcome, codes or "-", "yes" if hits else "no", "ok" if ok else "PROBLEM", note
    )


def after_checks(base: Path, env: dict[str, str], srv: Path) -> list[Row]:
    """audit, recall and info on the server drive and a fresh clone; the server's objects."""
    needles = [GH, GH2, AWS_ID, AWS_SECRET, PW, PEM_BODY, B64]
    rows = []
    clone = base / "fresh"
    run(MEMGIT + ["clone", str(srv), str(clone)], base, env)
    for label, cmd, cwd in [
        ("memgit audit (server)", MEMGIT + ["audit"], srv),
        ("memgit info (server)", MEMGIT + ["info"], srv),
        ("memgit recall token (clone)", MEMGIT + ["recall", "token"], clone),
        ("memgit recall fact (clone)", MEMGIT + ["recall", "fact", "--limit", "50"], clone),
        ("memgit audit (clone)", MEMGIT + ["audit"], clone),
        ("memgit lint (clone)", MEMGIT + ["lint"], clone),
    ]:
        rc, out = run(cmd, cwd, env)
        hits = echoes(out, needles)
        rows.append(
            Row(
                label,
                f"rc={rc}",
                " ".join(sorted(set(re.findall(r"MG\d{3}", out)))) or "-",
                "yes" if hits else "no",
                "ok" if not hits and "MG000" not in out else "PROBLEM",
                ",".join(hits),
            )
        )
    hits = echoes(server_dump(srv, env), needles)
    rows.append(echo_row("server objects and files", hits))
    return rows


# ---------------------------------------------------------------- memgit serve


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


SERVE_CASES = [
    Case("serve: baseline harmless", harmless, expect="accepted"),
    Case("serve: ghp in body", lambda c: c.append("topics/build.md", entry(f"token {GH2}")), [GH2]),
    Case("serve: ghp in file name", lambda c: c.write(f"topics/{GH2}.md", entry("a fact")), [GH2]),
    Case("serve: AWS in commit body", message_body, [PW]),
    Case("serve: tag name (ghp)", tag_name, [GH]),
    Case("serve: pw URL in ref definition", ref_definition, [PW]),
]


def sweep_serve(base: Path, env: dict[str, str]) -> list[Row]:
    root = base / "root"
    root.mkdir()
    run(MEMGIT + ["serve", str(root), "--create", "joe/notes"], base, env)
    rc, out = run(
        MEMGIT + ["token", "add", "joe/notes", "--write", "--root", str(root), "--json"], base, env
    )
    token = json.loads(out[out.index("{") :])["token"]
    port = free_port()
    log = base / "serve.log"
    proc = subprocess.Popen(
        MEMGIT + ["serve", str(root), "--port", str(port), "--log", str(log)],
        cwd=base,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    rows: list[Row] = []
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).read()
                break
            except OSError:
                time.sleep(0.2)
        url = f"http://agent:{token}@127.0.0.1:{port}/joe/notes.git"
        work = base / "sc"
        rc, out = run(["git", "clone", "-q", url, str(work)], base, env)
        g = Ctx(work, env)
        g.git("config", "user.name", "A")
        g.git("config", "user.email", "a@example.com")
        g.git("config", "core.hooksPath", "/dev/null")
        own = [
            Case(
                "serve: its own write token in an entry",
                lambda c: c.append("topics/build.md", entry(f"CI clones with {token}")),
                [token.split("_", 2)[2]],
            ),
            Case(
                "serve: its own token as MEMGIT_TOKEN=",
                lambda c: c.append("topics/build.md", f"\n```\nMEMGIT_TOKEN={token}\n```\n"),
                [token.split("_", 2)[2]],
            ),
        ]
        for case in SERVE_CASES + own:
            g.git("fetch", "-q", "origin")
            g.git("reset", "-q", "--hard", "origin/main")
            g.git("clean", "-qfdx")
            for ref in g.git("for-each-ref", "--format=%(refname)", "refs/tags").splitlines():
                g.git("update-ref", "-d", ref)
            c = Ctx(work, env)
            case.stage(c)
            if not c.skip_commit:
                run(MEMGIT + ["lint", "--fix"], work, env)
                c.git("add", "-A")
                c.git("commit", "-q", "--no-verify", "-m", c.message or case.message)
            rc, out = run(
                ["git", "push", "--porcelain", "origin", *(c.extra_refspecs or case.refspecs)],
                work,
                env,
            )
            accepted = rc == 0 and "[rejected]" not in out and "remote rejected" not in out
            codes = " ".join(sorted(set(re.findall(r"MG\d{3}", out))))
            rows.append(judge(case, accepted, codes, echoes(remote_lines(out), case.needles), out))
        needles = [GH, GH2, PW, token.split("_")[-1]]
        pages = {}
        for path in [
            "/",
            "/joe/notes",
            "/joe/notes?q=token",
            "/joe/notes?q=" + GH2,
            "/metrics",
            "/joe/notes/" + GH2,
            f"/{token}/notes.git/info/refs",
        ]:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
                    pages[path] = r.read().decode(errors="replace")
            except urllib.error.HTTPError as e:
                pages[path] = f"HTTP {e.code} " + e.read().decode(errors="replace")
        for path, body in pages.items():
            hits = echoes(body, [n for n in needles if n not in path])
            rows.append(
                Row(
                    f"serve page {path[:40]}",
                    body[:8] if body.startswith("HTTP") else "200",
                    "-",
                    "yes" if hits else "no",
                    "ok" if not hits else "PROBLEM",
                    ",".join(hits),
                )
            )
    finally:
        proc.terminate()
        try:
            console = proc.communicate(timeout=10)[0].decode(errors="replace")
        except subprocess.TimeoutExpired:
            proc.kill()
            console = proc.communicate()[0].decode(errors="replace")
    logtext = log.read_text(errors="replace") if log.exists() else ""
    hits = echoes(logtext + console, [GH, GH2, PW, token.split("_")[-1]])
    rows.append(echo_row("serve log + console", hits))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument(
        "--only", nargs="*", default=[], help="run the cases whose name holds one of these"
    )
    ap.add_argument("--no-serve", action="store_true")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="hostile_sweep."))
    if os.environ.get("PYTHONPATH"):  # the hooks run in the server's git directory
        os.environ["PYTHONPATH"] = os.pathsep.join(
            str(Path(p).resolve()) for p in os.environ["PYTHONPATH"].split(os.pathsep)
        )
    env = dict(
        os.environ,
        XDG_DATA_HOME=str(base / "xdg"),
        GIT_TERMINAL_PROMPT="0",
        GIT_CONFIG_NOSYSTEM="1",
        HOME=str(base),
        GIT_NO_REPLACE_OBJECTS="1",
    )
    env.pop("GIT_DIR", None)
    rows, st = sweep_drive(base, env, args.only)
    if not args.only:
        rows += after_checks(base, env, st["srv"])
        if not args.no_serve:
            rows += sweep_serve(base, env)
    w = max(len(r.name) for r in rows)
    print(f"{'case':{w}}  {'outcome':9} {'codes':22} echo verdict")
    for r in rows:
        print(f"{r.name:{w}}  {r.outcome:9} {r.codes:22} {r.echo:4} {r.verdict} {r.note}")
    if args.keep:
        print("kept:", base)
    else:
        shutil.rmtree(base, ignore_errors=True)
    return 0 if all(r.verdict == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
