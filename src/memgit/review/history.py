"""Credentials in a drive's history that today's secret gate would refuse (memgit audit).

Rules improve: a commit judged by last year's rules may hold a line today's would refuse.
Every blob reachable from any ref (``git rev-list --objects --all``: the blobs of every
commit with a path they had) is read once through one ``git cat-file --batch``, and each
distinct line of a Markdown file is scanned once with the drive policy's scanner
(policy.judge.secret_kinds). A finding names the entry id (what ``memgit purge`` takes),
the path and the kind of credential, never the text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memgit.errors import RepoError
from memgit.format import entries as fmt
from memgit.git.plumbing import git_plumbing
from memgit.git.raw import ObjectReader
from memgit.policy.judge import secret_kinds
from memgit.policy.settings import Policy


@dataclass(frozen=True)
class HistorySecret:
    entry_id: str  # "" when the line is no entry (a heading, prose)
    path: str
    kind: str
    at_head: bool


def history_listing(git_dir: Path) -> dict[str, str]:
    """object id -> the first name ``git rev-list --objects --all`` gives it, for every
    object reachable from a ref: a path for trees and blobs, the ref's name for an
    annotated tag, "" for a commit or a root tree."""
    listing = git_plumbing(git_dir, "rev-list", "--objects", "--all")
    if listing.returncode != 0:
        raise RepoError("git rev-list failed: " + listing.stderr.decode(errors="replace"),
                        "check the drive with git fsck")
    names: dict[str, str] = {}
    for raw in listing.stdout.decode("utf-8", "surrogateescape").splitlines():
        oid, _sp, name = raw.partition(" ")
        names.setdefault(oid, name)
    return names


def history_secrets(git_dir: Path, policy: Policy, head_blobs: set[str],
                    listing: dict[str, str] | None = None) -> list[HistorySecret]:
    """The lines of any commit's Markdown files the policy's scanner refuses today;
    ``head_blobs``: the blob ids of the branch head (a finding there is marked);
    ``listing``: :func:`history_listing`, when the caller has it already."""
    names = history_listing(git_dir) if listing is None else listing
    blobs = {oid: path for oid, path in names.items() if path.endswith(".md")}
    reader = ObjectReader(git_dir)
    seen: set[str] = set()
    out: list[HistorySecret] = []
    try:
        contents = reader.read_many(sorted(blobs))
    finally:
        reader.close()
    for oid, got in sorted(contents.items(), key=lambda item: blobs[item[0]]):
        if got is None or got[0] != "blob":
            continue
        text = got[1].decode("utf-8", "replace")
        for line, _eol in fmt.split_lines(text):
            if line in seen or not line.strip():
                continue
            seen.add(line)
            kinds = secret_kinds(line, policy)
            if not kinds:
                continue
            entry = fmt.parse_entry(line)
            out.append(HistorySecret(entry.id if entry is not None else "", blobs[oid],
                                     kinds[0], oid in head_blobs))
    return out
