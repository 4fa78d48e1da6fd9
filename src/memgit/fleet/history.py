"""A drive's entries at its head and in its history, read with git plumbing.

Every version of an entry (an id with a text) that any commit reachable from any ref
holds is a :class:`Version`; ``at_head`` says whether the branch head still holds it.
The fleet index stores them, so ``find --history`` and ``forget --purge`` know which
drives' histories still hold a text without reading every drive.

Incremental: the index remembers the ref tips it read; the next read lists only the
objects reachable from the refs now and not from those tips (``git rev-list --objects
--all --not TIPS``), so a push costs what it brought, whatever the drive's history or
the fleet's size. When a remembered tip is gone (a purge rewrote history) the whole
history is read again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from memgit.errors import RepoError
from memgit.format import entries as fmt
from memgit.git.plumbing import git_plumbing, refs_snapshot
from memgit.git.raw import ObjectReader


@dataclass(frozen=True)
class Version:
    """One entry version: the id, the file it is in, its text and metadata."""

    entry_id: str
    path: str
    text: str
    source: str
    added: str
    at_head: bool

    @property
    def digest(self) -> str:
        return text_digest(self.text)


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]


@dataclass
class Read:
    """What one read found: versions (all of history when ``full``, else the new ones),
    the head's (id, digest) pairs and the ref tips read."""

    versions: list[Version]
    head_keys: set[tuple[str, str]]
    tips: list[str]
    full: bool


def read_versions(git_dir: Path, head: str, known_tips: Iterable[str],
                  extensions: tuple[str, ...] = (".md",), *, head_only: bool = False) -> Read:
    """The versions at ``head`` and those history brought since ``known_tips`` (all of
    history when a known tip is gone or none is known; none with ``head_only``)."""
    tips = sorted({oid for _name, oid, _kind in refs_snapshot(git_dir)})
    known = sorted(set(known_tips))
    with ObjectReader(git_dir) as reader:
        full = not known or any(v is None for v in reader.info_many(known).values())
        head_files = _tree_files(git_dir, head, extensions)
        contents = reader.read_many(oid for _path, oid in head_files)
        head_versions = _parse(head_files, contents, at_head=True)
        head_keys = {(v.entry_id, v.digest) for v in head_versions}
        history = [] if head_only else _history_blobs(git_dir, [] if full else known,
                                                      extensions)
        new_blobs = [(p, o) for p, o in history if o not in contents]
        contents.update(reader.read_many(oid for _path, oid in new_blobs))
    seen = {(v.entry_id, v.digest) for v in head_versions}
    versions = list(head_versions)
    for version in _parse(new_blobs, contents, at_head=False):
        if (version.entry_id, version.digest) not in seen:
            seen.add((version.entry_id, version.digest))
            versions.append(version)
    return Read(versions, head_keys, tips, full)


def _tree_files(git_dir: Path, commit: str, extensions: tuple[str, ...]
                ) -> list[tuple[str, str]]:
    """(path, blob id) of the files of ``commit`` with one of ``extensions``."""
    proc = git_plumbing(git_dir, "ls-tree", "-r", "-z", "--full-tree", commit)
    if proc.returncode != 0:
        raise RepoError(f"git ls-tree {commit} failed in {git_dir}",
                        proc.stderr.decode("utf-8", "replace").strip())
    out = []
    for record in proc.stdout.split(b"\0"):
        meta, _tab, raw_path = record.partition(b"\t")
        fields = meta.split(b" ")
        path = raw_path.decode("utf-8", "surrogateescape")
        if len(fields) == 3 and fields[1] == b"blob" and path.endswith(extensions):
            out.append((path, fields[2].decode()))
    return out


def _history_blobs(git_dir: Path, exclude: list[str], extensions: tuple[str, ...]
                   ) -> list[tuple[str, str]]:
    """(path, blob id) of the blobs reachable from every ref and not from ``exclude``
    (``--filter=object:type=blob`` keeps rev-list's listing to blobs: each is named
    with the path it was first met at)."""
    args = ["rev-list", "--objects", "--all", "--filter=object:type=blob", "--stdin"]
    proc = git_plumbing(git_dir, *args, input="".join(f"^{t}\n" for t in exclude).encode())
    if proc.returncode != 0:
        raise RepoError(f"git rev-list failed in {git_dir}",
                        proc.stderr.decode("utf-8", "replace").strip())
    out = []
    for line in proc.stdout.split(b"\n"):
        oid, sep, raw_path = line.partition(b" ")
        path = raw_path.decode("utf-8", "surrogateescape")
        if sep and path.endswith(extensions):
            out.append((path, oid.decode()))
    return out


def _parse(files: list[tuple[str, str]], contents: dict, *, at_head: bool) -> list[Version]:
    out = []
    for path, oid in files:
        got = contents.get(oid)
        if got is None or got[0] != "blob":
            continue
        text = got[1].decode("utf-8", "surrogateescape")
        for _line, entry in fmt.parse_document(path, text).entries():
            out.append(Version(entry.id, path, entry.text, entry.get("source"),
                               entry.get("added"), at_head))
    return out
