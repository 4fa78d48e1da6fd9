"""Helpers for the pre-receive tests: real bare drives with memgit's hooks, commits
built with ``git fast-import`` (one process for many commits, any mode or path),
and real ``git push`` runs whose porcelain output and server refs are checked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memgit.format import entries as fmt
from tests.conftest import git  # noqa: F401 - the tests import it from here too

MAIN = "refs/heads/main"
ZERO = "0" * 40

# a path's new content: bytes/str (mode 100644), None (delete), or (mode, bytes);
# a gitlink is (0o160000, b"<40 hex>")
Change = bytes | str | None | tuple[int, bytes]


def entry(text: str, entry_id: str | None = None, *, source: str = "https://example.com/s/1",
          added: str = "2026-01-02") -> str:
    meta = f"source: {source}; added: {added}"
    if entry_id:
        meta += f"; id: {entry_id}"
    return f"- {text} [{meta}]"


def ulid_like(n: int) -> str:
    """A valid, unique ``m-`` id for test entries."""
    return f"m-01jd3xk8q7c9v2n4r6t{n:07d}"


def memory(paths: Sequence[str], entries: Sequence[str] = (), title: str = "Test") -> str:
    """MEMORY.md with ``entries`` and an Index that is current for ``paths``."""
    body = f"# Memory: {title}\n\n" + "".join(e + "\n" for e in entries)
    if entries:
        body += "\n"
    return fmt.regenerate_index_section(body + "## Index\n", [*paths, fmt.MEMORY_FILE])


def _quote(path: str) -> bytes:
    """A fast-import path, C-quoted so any byte survives."""
    raw = path.encode("utf-8", "surrogateescape")
    out = bytearray(b'"')
    for b in raw:
        if b in (0x22, 0x5C):
            out += b"\\" + bytes([b])
        elif b < 0x20 or b >= 0x7F:
            out += b"\\%03o" % b
        else:
            out.append(b)
    return bytes(out + b'"')


def fast_import(repo: Path, parent: str | None, commits: Sequence[tuple[Mapping[str, Change],
                                                                      str]],
                ref: str = "refs/heads/work", *, author: str | None = None,
                committer: str = "Test Agent <agent@example.com>",
                merge: Sequence[str] = ()) -> list[str]:
    """Create a chain of commits on ``parent`` (None: a root commit); return their ids.

    ``author``/``committer`` are "Name <email>"; ``merge`` adds parents to the first commit
    (a merge, or an octopus with several)."""
    stream = bytearray()
    stamp = 1_767_000_000
    for number, (changes, message) in enumerate(commits, start=1):
        msg = message.encode()
        stream += b"commit %s\nmark :%d\n" % (ref.encode(), number)
        if author is not None:
            stream += b"author %s %d +0000\n" % (author.encode(), stamp + number)
        stream += b"committer %s %d +0000\n" % (committer.encode(), stamp + number)
        stream += b"data %d\n%s\n" % (len(msg), msg)
        if number == 1:
            if parent:
                stream += b"from %s\n" % parent.encode()
            stream += b"".join(b"merge %s\n" % m.encode() for m in merge)
        else:
            stream += b"from :%d\n" % (number - 1)
        for path, change in changes.items():
            qpath = _quote(path)
            if change is None:
                stream += b"D %s\n" % qpath
                continue
            if isinstance(change, tuple):
                mode, data = change
            else:
                mode, data = 0o100644, change.encode() if isinstance(change, str) else change
            if mode == 0o160000:
                stream += b"M 160000 %s %s\n" % (data, qpath)
                continue
            stream += b"M %o inline %s\ndata %d\n%s\n" % (mode, qpath, len(data), data)
    if parent is None:
        # fast-import would continue an existing ref; a root commit needs a fresh one
        git("update-ref", "-d", ref, cwd=repo, check=False)
    git("fast-import", "--quiet", "--force", cwd=repo, input=bytes(stream))
    out = git("rev-list", "--reverse", f"-{len(commits)}", ref, cwd=repo).stdout.decode()
    return out.split()


@dataclass
class PushResult:
    returncode: int
    stdout: str
    stderr: str

    @property
    def refused_by_hook(self) -> bool:
        return self.returncode != 0 and "pre-receive hook declined" in self.stdout

    def codes(self) -> set[str]:
        import re

        return set(re.findall(r"\b(MG\d{3}) [a-z0-9-]+", self.stderr))


class Drive:
    """A bare server drive (memgit's hooks installed) and a bare client to build in."""

    def __init__(self, root: Path, *, files: Mapping[str, Change] | None = None,
                 policy: str | None = None, url: str | None = None,
                 git_dir: Path | None = None, env: Mapping[str, str] | None = None) -> None:
        """A new drive ``root/server.git`` (or ``git_dir``: made by ``memgit init --bare``
        when it does not exist, else given memgit's hooks). ``url`` and ``env`` are what
        a client pushes with."""
        from memgit.drives.create import create_drive

        self.git_dir = git_dir or root / "server.git"
        if not self.git_dir.exists():
            create_drive(self.git_dir, bare=True)
        else:
            from memgit.git.repository import open_drive
            from memgit.githooks.install import configure_server, install_server_hooks

            server = open_drive(self.git_dir)
            install_server_hooks(server, chain=False)
            configure_server(server)
            if self.ref(MAIN) is None:
                fast_import(self.git_dir, None, [({"MEMORY.md": memory([])}, "create")],
                            ref=MAIN)
        if policy is not None:
            (self.git_dir / "memgit.yaml").write_text(policy)
        if files:
            # existing content, written straight into the server (no push, no hook)
            fast_import(self.git_dir, self.main(), [(files, "seed")], ref=MAIN)
        root.mkdir(parents=True, exist_ok=True)
        self.client = root / "client.git"
        git("clone", "-q", "--bare", self.git_dir, self.client)
        self.url = url or self.git_dir.as_uri()
        self.env = dict(env or {})

    def main(self) -> str:
        return git("rev-parse", MAIN, cwd=self.git_dir).stdout.decode().strip()

    def ref(self, ref: str) -> str | None:
        proc = git("rev-parse", "--verify", "-q", ref, cwd=self.git_dir, check=False)
        return proc.stdout.decode().strip() or None

    def has_object(self, oid: str) -> bool:
        return git("cat-file", "-e", oid, cwd=self.git_dir, check=False).returncode == 0

    def sync_client(self) -> str:
        git("fetch", "-q", "--force", self.git_dir, f"{MAIN}:{MAIN}", cwd=self.client)
        return self.main()

    def build(self, *commits: tuple[Mapping[str, Change], str], parent: str | None = "main",
              ref: str = "refs/heads/work", **options: Any) -> list[str]:
        """Commits on top of the server's main (or ``parent``), in the client
        (``options``: author, committer, merge of :func:`fast_import`)."""
        base = self.sync_client() if parent == "main" else parent
        return fast_import(self.client, base, list(commits), ref=ref, **options)

    def push(self, src: str, dst: str = MAIN, *options: str,
             env: Mapping[str, str] | None = None, url: str | None = None) -> PushResult:
        proc = git("push", "--porcelain", *options, url or self.url, f"{src}:{dst}",
                   cwd=self.client, check=False, env={**self.env, **(env or {})})
        return PushResult(proc.returncode, proc.stdout.decode(errors="replace"),
                          proc.stderr.decode(errors="replace"))

    def event_counts(self) -> dict[str, int]:
        """The drive's counters, once the background work of every push so far is done."""
        from memgit.githooks.post_receive import wait_for_background
        from memgit.state import events

        assert wait_for_background(self.git_dir)
        return events.counts(self.git_dir)


def base_files(extra_entries: int = 0) -> dict[str, Change]:
    """A small valid drive: MEMORY.md, people.md, projects/payments.md."""
    people = "# People\n\n" + entry("Joe leads the product team", ulid_like(1)) + "\n" + \
        entry("Ana owns the billing service", ulid_like(2)) + "\n"
    payments = "# Payments\n\n" + entry("Launch is planned for March", ulid_like(3)) + "\n" + \
        "".join(entry(f"Payments fact {i}", ulid_like(100 + i)) + "\n"
                for i in range(extra_entries))
    paths = ["people.md", "projects/payments.md"]
    return {
        "MEMORY.md": memory(paths, [entry("The drive is for tests", ulid_like(4))]),
        "people.md": people,
        "projects/payments.md": payments,
    }


def people_text(*lines: str) -> str:
    """people.md of :func:`base_files` with ``lines`` appended."""
    return str(base_files()["people.md"]) + "".join(line + "\n" for line in lines)
