"""The entry census of a drive for its caps (limits.max_entries, limits.max_age_days).

pre-receive parses only the blobs a push brings; the files already there are counted from
``<git dir>/memgit/census``, one line per blob of the head (rewritten by post-receive's
detached work). Blob ids name contents, so a line never goes stale, and a blob the file
does not know is read and parsed: the count is always exact. Hook-safe: no pygit2, no
database.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from memgit.git.modes import MODE_EXEC, MODE_FILE
from memgit.git.plumbing import git_plumbing
from memgit.git.raw import ObjectReader
from memgit.policy.judge import BlobFacts, Violation, check_blob, check_caps, counts_toward_caps
from memgit.policy.settings import Policy

CENSUS_FILE = "census"
Tally = tuple[int, str]  # (entries, earliest valid added date or "")


def census_path(git_dir: Path) -> Path:
    return Path(git_dir) / "memgit" / CENSUS_FILE


def no_secret_scan(_number: int, _content: str) -> bool:
    """A ``check_blob`` secret filter that scans no line (the blob was judged already)."""
    return False


def read_census(git_dir: Path) -> dict[str, Tally]:
    """blob id -> (entries, earliest added) from the census file; {} when absent or
    unreadable (the blobs are parsed instead)."""
    try:
        text = census_path(git_dir).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return {}
    out: dict[str, Tally] = {}
    for line in text.splitlines():
        parts = line.split(" ")
        if len(parts) == 3 and parts[1].isdigit():
            out[parts[0]] = (int(parts[1]), "" if parts[2] == "-" else parts[2])
    return out


def tally(facts: BlobFacts) -> Tally:
    return len(facts.ids), facts.oldest


def combine(tallies: Iterable[Tally]) -> Tally:
    items = list(tallies)
    return sum(n for n, _o in items), min((o for _n, o in items if o), default="")


def push_cap_warnings(git_dir: Path, policy: Policy, rows: Iterable[tuple[str, int, str]],
                      known: Mapping[tuple[str, str], BlobFacts],
                      read: Callable[[list[str]], Mapping[str, bytes]]) -> list[Violation]:
    """pre-receive: the caps' warnings for a pushed tip whose tree is ``rows`` (path,
    mode, blob id). ``known`` holds the facts of the blobs the push brought (already
    parsed); the others come from the census file, else are read with ``read`` and
    parsed. Nothing is read when the policy sets no cap."""
    if not (policy.max_entries or policy.max_age_days):
        return []
    cached = read_census(git_dir)
    tallies: list[Tally] = []
    missing: list[tuple[str, str]] = []
    for path, mode, oid in rows:
        if mode not in (MODE_FILE, MODE_EXEC) or not counts_toward_caps(path):
            continue
        facts = known.get((oid, path))
        if facts is not None:
            tallies.append(tally(facts))
        elif oid in cached:
            tallies.append(cached[oid])
        else:
            missing.append((path, oid))
    if missing:
        contents = read([oid for _p, oid in missing])
        tallies.extend(tally(check_blob(path, contents[oid], policy, scan=no_secret_scan))
                       for path, oid in missing)
    return check_caps(*combine(tallies), policy)


def update_census(git_dir: Path, policy: Policy) -> int:
    """Rewrite the census file for the branch head (post-receive, after the reindex);
    parses only blobs the old file does not know. Returns the blobs listed; does
    nothing (0) when the policy sets no cap."""
    if not (policy.max_entries or policy.max_age_days):
        return 0
    proc = git_plumbing(git_dir, "ls-tree", "-r", "-z", "--full-tree", policy.branch_ref)
    if proc.returncode != 0:
        return 0
    wanted: dict[str, str] = {}
    for record in proc.stdout.split(b"\0"):
        meta, _tab, raw_path = record.partition(b"\t")
        fields = meta.split(b" ")
        path = raw_path.decode("utf-8", "surrogateescape")
        if len(fields) == 3 and fields[1] == b"blob" and counts_toward_caps(path):
            wanted[fields[2].decode()] = path
    old = read_census(git_dir)
    lines: list[str] = []
    with ObjectReader(git_dir) as reader:
        new = {oid: path for oid, path in wanted.items() if oid not in old}
        for oid, got in reader.read_many(list(new)).items():
            if got is not None:
                old[oid] = tally(check_blob(new[oid], got[1], policy, scan=no_secret_scan))
    for oid in sorted(wanted):
        if oid in old:
            entries, oldest = old[oid]
            lines.append(f"{oid} {entries} {oldest or '-'}\n")
    target = census_path(git_dir)
    target.parent.mkdir(mode=0o700, exist_ok=True)
    tmp = target.with_name(f"{CENSUS_FILE}.{os.getpid()}.tmp")
    tmp.write_text("".join(lines), encoding="ascii")
    os.replace(tmp, target)  # atomic: pre-receive reads the old file or the new one
    return len(lines)
