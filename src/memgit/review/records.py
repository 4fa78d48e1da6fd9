"""What a drive's history records besides its files' lines (memgit audit): the message and
the people of every commit and annotated tag, the name of every path of every tree, and
the name of every ref.

Each is judged by the rule pre-receive and ``memgit check`` apply
(memgit.policy.judge: ``check_commit`` for messages and people, MG403 and MG607;
``check_path``'s MG402 for names, a ref's name judged as a path's), so the audit and the
server cannot disagree. Objects come from :func:`memgit.review.history.history_listing`
(every object reachable from a ref) and are read through one ``git cat-file``; each tree
is read once and its names judged under the first path git gives it. A finding names
the object and the rule, never the value.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memgit.errors import RepoError
from memgit.git.modes import MODE_FILE
from memgit.git.plumbing import git_plumbing
from memgit.git.raw import ObjectReader, commit_headers, commit_text, split_object, tree_entries
from memgit.policy.judge import Violation, check_commit, check_path
from memgit.policy.registry import PurgeRegistry
from memgit.policy.settings import Policy

NAME_RULES = ("MG402",)  # what check_path says about a name's content: a credential
MESSAGE, PEOPLE, PATH, REF = "message", "people", "path", "ref"


@dataclass(frozen=True)
class Recorded:
    """One violation in what history records."""

    code: str  # the policy's rule: MG402, MG403, MG607
    part: str  # MESSAGE, PEOPLE (of a commit or tag), PATH or REF
    detail: str  # the policy's message (never the value)
    severity: str  # the policy's: error or warning
    oid: str = ""  # the commit or tag; "" for a path or a ref
    object_type: str = ""  # "commit" or "tag"; "" for a path or a ref
    name: str = ""  # the path or the ref (quote it before showing it); "" otherwise


def _tag_text(raw: bytes) -> tuple[str, list[tuple[str, str]]]:
    """An annotated tag's message and its tagger, as check_commit takes them."""
    headers, message = split_object(raw)
    people = [("tagger", h[len(b"tagger "):].decode("utf-8", "replace"))
              for h in headers if h.startswith(b"tagger ")]
    return message.decode("utf-8", "replace"), people


def _said(oid: str, kind: str, raw: bytes, policy: Policy,
          registry: PurgeRegistry) -> Iterator[Recorded]:
    """The violations of one commit's or tag's message and people."""
    message, people = commit_text(raw) if kind == "commit" else _tag_text(raw)
    if kind == "commit":  # and its other headers, as pre-receive judges them
        people += commit_headers(raw)
    for part, found in ((MESSAGE, check_commit(message, [], policy, registry)),
                        (PEOPLE, check_commit("", people, policy))):
        for v in found:
            yield Recorded(v.code, part, v.message, v.severity, oid, kind)


def _names(prefix: str, raw: bytes, oid_bytes: int, policy: Policy,
           seen: set[str]) -> Iterator[Recorded]:
    """The violations of the names of one tree's entries (full paths under ``prefix``)."""
    for mode, name, _oid in tree_entries(raw, oid_bytes):
        path = name.decode("utf-8", "surrogateescape")
        path = f"{prefix}/{path}" if prefix else path
        if path in seen:
            continue
        seen.add(path)
        for v in _name_rules(check_path(path, int(mode, 8), policy)):
            yield Recorded(v.code, PATH, v.message, v.severity, name=path)


def _name_rules(found: list[Violation]) -> list[Violation]:
    return [v for v in found if v.code in NAME_RULES]


def name_refused(path: str, policy: Policy) -> bool:
    """Does the name rule (MG402) refuse ``path``: may it be shown only redacted?"""
    return bool(_name_rules(check_path(path, MODE_FILE, policy)))


def _ref_names(git_dir: Path, policy: Policy) -> list[Recorded]:
    """The violations of the refs' names (judged as a path's names are)."""
    proc = git_plumbing(git_dir, "for-each-ref", "--format=%(refname)")
    if proc.returncode != 0:
        raise RepoError("git for-each-ref failed: " + proc.stderr.decode(errors="replace"),
                        "check the drive with git fsck")
    out = []
    for ref in proc.stdout.decode("utf-8", "surrogateescape").splitlines():
        out += [Recorded(v.code, REF, v.message, v.severity, name=ref)
                for v in _name_rules(check_path(ref, MODE_FILE, policy))]
    return out


def recorded(git_dir: Path, policy: Policy, registry: PurgeRegistry,
             listing: dict[str, str]) -> list[Recorded]:
    """Every violation in what the history of ``git_dir`` records besides its files'
    lines; ``listing``: memgit.review.history.history_listing."""
    out: list[Recorded] = []
    seen: set[str] = set()
    reader = ObjectReader(git_dir)
    try:
        types = reader.info_many(listing)
        wanted = [o for o, t in types.items() if t is not None and t[0] != "blob"]
        for oid, got in reader.iter_many(wanted):
            if got is None:
                continue
            kind, raw = got
            if kind == "tree":
                out += _names(listing[oid], raw, len(oid) // 2, policy, seen)
            elif kind in ("commit", "tag"):
                out += _said(oid, kind, raw, policy, registry)
    finally:
        reader.close()
    return out + _ref_names(git_dir, policy)
