"""What pre-receive knows of the files a push leaves as they were: the entry ids each of
their blobs holds, kept by blob id in the state database (memgit.state.blob_ids).

pre-receive must know which old files hold an id the push adds (MG103, MG108 across
files). Without knowledge it reads every old file (a drive at the limits: 255 files, 2
MB, about 20 ms of git inflating deltas on every push) and parses those a byte test
picks. A blob id is the hash of the content, so ids computed for a blob once hold for
every later push that keeps the blob: a child of the warm judge records, once the push
has its answer, the ids of every Markdown blob it read or judged, and the next push reads
only what no earlier push recorded. A hook in its own process neither reads nor writes
the record (either would cost its push: it reads the old files as before).

Invariant: an old file is judged with the push exactly when the ids it holds (recorded,
or parsed now) meet the push's new ids; a recorded blob is never read for that question.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memgit.format.entries import MEMORY_FILE
from memgit.githooks import hook_io

if TYPE_CHECKING:
    from memgit.state import Connection

_SALT: list[str] = []


def ids_salt() -> str:
    """A digest of the parser that computes an entry's id (format.entries and
    format.blocks' source): ids recorded by another parser are not used."""
    if not _SALT:
        import hashlib

        from memgit.format import blocks, entries

        digest = hashlib.sha256()
        for module in (entries, blocks):
            with open(module.__file__ or "", "rb") as fh:
                digest.update(fh.read())
        _SALT.append(digest.hexdigest()[:16])
    return _SALT[0]


def recordable(path: str) -> bool:
    """A Markdown file other than MEMORY.md: only Markdown holds entries
    (memgit.policy.judge.check_blob) and their ids depend on nothing but the content,
    while MEMORY.md (its Index section) is parsed by its path and is always read."""
    return path.endswith(".md") and path != MEMORY_FILE


def recorded(git_dir: Path, oids: Sequence[str]) -> set[str]:
    """Which of ``oids`` have their ids recorded; none when the database cannot be read
    (the push is judged by reading, as without a record), and none in a hook's own
    process (it reads the old files as hooks of version 4 did, and pays no database)."""
    if not oids or hook_io.AFTER_ANSWER is None:
        return set()
    from memgit.state import blob_ids

    found = _ask(git_dir, lambda conn, salt: blob_ids.recorded(conn, salt, oids))
    return found if found is not None else set()


def holding(git_dir: Path, oids: Sequence[str], ids: Iterable[str]) -> set[str] | None:
    """Which of the recorded ``oids`` hold one of ``ids``; None when the database cannot be
    read (the caller then reads those blobs like the others)."""
    if not oids:
        return set()
    from memgit.state import blob_ids

    return _ask(git_dir, lambda conn, salt: blob_ids.holding(conn, salt, oids, ids))


def _ask(git_dir: Path, query: Callable[[Connection, str], set[str]]) -> set[str] | None:
    """``query`` on the process's connection to the drive's state database (one open for
    both of a push's questions)."""
    from memgit import state

    try:
        return query(state.connection(git_dir), ids_salt())
    except (state.Error, OSError):
        return None


def record_after_answer(git_dir: Path, learned: Mapping[str, Iterable[str]],
                        unparsed: Sequence[tuple[str, str, bytes]]) -> None:
    """Record ``learned`` (blob id -> ids) and the ids of the ``unparsed`` blobs ((blob
    id, path, content), parsed then), once the push has its answer; only in a child of
    the warm judge (a hook's own process records nothing)."""
    if hook_io.AFTER_ANSWER is None or not (learned or unparsed):
        return
    hook_io.after_answer(lambda: _record(git_dir, learned, unparsed))


def _record(git_dir: Path, learned: Mapping[str, Iterable[str]],
             unparsed: Sequence[tuple[str, str, bytes]]) -> None:
    from memgit import state
    from memgit.policy.census import no_secret_scan
    from memgit.policy.judge import check_blob
    from memgit.policy.settings import policy_from_mapping
    from memgit.state import blob_ids

    rows = {oid: tuple(ids) for oid, ids in learned.items()}
    if unparsed:
        plain = policy_from_mapping({})  # which lines are entries does not depend on it
        for oid, path, data in unparsed:
            facts = check_blob(path, data, plain, scan=no_secret_scan)
            rows[oid] = tuple(entry_id for entry_id, _line in facts.ids)
    try:
        conn = state.connect(git_dir)
        try:
            blob_ids.write(conn, ids_salt(), rows.items())
        finally:
            conn.close()
    except (state.Error, OSError) as exc:  # the hook's output is closed: the log says it
        from memgit.safe_text import append_log_line

        append_log_line(os.path.join(git_dir, "memgit", "post-receive.log"),
                        f"could not record the ids of old files: {exc}")
