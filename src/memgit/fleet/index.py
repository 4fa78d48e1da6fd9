"""The fleet index: what census, find and forget read so they need not open every drive.

The embedded index (``ROOT/.memgit-fleet/index.sqlite``) is always kept: post-receive
updates a drive's row after each accepted push (:func:`update_after_push`), and census
repairs every row whose drive changed since it was written (:meth:`FleetIndex.refresh`:
a drive's *fingerprint* is the ``stat`` of its ref files, its policy file and its state
database, so finding the stale rows of 10,000 drives reads no object and no database).

With ``memgit fleet index ROOT --url postgresql://...`` the same rows also go to a
PostgreSQL database, which several hosts' roots share (each row names its *origin*,
host and root); census, find and forget then read it. When it cannot be reached the
commands say so and read the embedded index, which stays current either way.

A drive is described by what ``memgit info`` computes (memgit.drives.info.drive_info:
the read path's catch-up first) and by its entry versions (memgit.fleet.history).
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from memgit.errors import FleetError, MemgitError
from memgit.fleet.history import Read, Version, read_versions
from memgit.fleet.store import DriveRecord, PostgresStore, SQLiteStore, Store
from memgit.git.roots import Repo, check_root, fleet_dir, root_of, walk

INDEX_FILE = "index.sqlite"
SETTINGS_FILE = "settings.json"
BATCH = 200  # drives per index transaction while census rebuilds
Progress = Callable[[int, int], None]


def _no_progress(_done: int, _total: int) -> None:
    pass


# --- settings ---------------------------------------------------------------------------


@dataclass
class Settings:
    """``ROOT/.memgit-fleet/settings.json``: this root's origin and the PostgreSQL URL."""

    origin: str
    url: str = ""

    @classmethod
    def load(cls, root: Path) -> Settings:
        path = fleet_dir(root) / SETTINGS_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(f"{socket.gethostname()}:{root}")
        except (OSError, ValueError) as exc:
            raise FleetError(f"cannot read {path}: {exc}",
                             "fix or delete it (memgit fleet index --url sets it again)"
                             ) from exc
        return cls(str(data.get("origin") or f"{socket.gethostname()}:{root}"),
                   str(data.get("url") or ""))

    def save(self, root: Path) -> None:
        """Written private (0600): the URL may hold a password."""
        path = fleet_dir(root, create=True) / SETTINGS_FILE
        tmp = path.with_name(f"{SETTINGS_FILE}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"origin": self.origin, "url": self.url}, fh)
        os.replace(tmp, path)


def shown_url(url: str) -> str:
    """A PostgreSQL URL fit to print: no password, no query (it may carry one)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = (f"{parts.username}@" if parts.username else "") + host + \
        (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def open_postgres(url: str) -> PostgresStore:
    if not url.startswith(("postgresql://", "postgres://")):
        raise FleetError("the fleet index URL must start with postgresql://",
                         "memgit fleet index ROOT --url postgresql://USER@HOST:5432/DB")
    return PostgresStore(url, shown_url(url))


# --- describing a drive ------------------------------------------------------------------


_FINGERPRINT_FILES = ("packed-refs", "config", "memgit.yaml", "memgit-purge.lock",
                      "memgit/state.sqlite", "memgit/state.sqlite-wal")


def fingerprint(path: Path) -> str:
    """What changes whenever anything census shows of the drive may have changed: the
    branch files (git replaces a loose ref's file on every update), packed-refs, the
    config and policy, the purge lock and the state database; ``stat`` calls only,
    relative to the drive's folder held open (a census of 10,000 drives makes 90,000)."""
    parts = []
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return "|".join(["-"] * len(_FINGERPRINT_FILES) + ["no-heads"])
    try:
        for name in _FINGERPRINT_FILES:
            try:
                st = os.stat(name, dir_fd=fd)
                parts.append(f"{st.st_mtime_ns}.{st.st_size}.{st.st_ino}")
            except OSError:
                parts.append("-")
        try:
            heads = os.open("refs/heads", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        except OSError:
            parts.append("no-heads")
        else:
            try:
                with os.scandir(heads) as it:  # leaves the descriptor open
                    for entry in sorted(it, key=lambda e: e.name):
                        st = entry.stat(follow_symlinks=False)
                        parts.append(f"{entry.name}={st.st_mtime_ns}.{st.st_ino}")
            finally:
                os.close(heads)
    finally:
        os.close(fd)
    return "|".join(parts)


def describe(repo: Repo, origin: str, known_tips: Sequence[str] = ()
             ) -> tuple[DriveRecord, Read | None]:
    """A repository's census record and its entry versions (None unless a drive)."""
    from memgit import state

    record = DriveRecord(origin, repo.name, str(repo.path), "error")
    read = None
    try:
        if repo.checkout:
            record.status, record.reason = "not_drive", "a checkout (work tree), not a bare " \
                "repository: a fleet serves bare repositories"
        else:
            read = _describe_drive(repo, record, known_tips)
    except (MemgitError, OSError, ValueError) as exc:
        record.status = "error"
        record.reason = exc.message if isinstance(exc, MemgitError) else \
            f"{type(exc).__name__}: {exc}"
        read = None
    except Exception as exc:  # noqa: BLE001 - a damaged repository (pygit2, sqlite)
        record.status, record.reason, read = "error", f"{type(exc).__name__}: {exc}", None
    finally:
        state.close_connections()  # a checkpoint on close moves the database's stat
    record.fingerprint = fingerprint(repo.path)
    record.updated = state.utc_now()
    return record, read


def _describe_drive(repo: Repo, record: DriveRecord, known_tips: Sequence[str]) -> Read | None:
    from memgit import state
    from memgit.drives.info import drive_info
    from memgit.errors import NotADriveError
    from memgit.git.repository import open_drive, require_drive
    from memgit.policy.settings import POLICY_KEY, drive_policy, policy_path
    from memgit.state import counters
    from memgit.state import dream as dream_runs

    drive = open_drive(repo.path)
    if drive.workdir is not None:
        record.status, record.reason = "not_drive", "a checkout, not a bare repository"
        return None
    policy = drive_policy(drive)
    try:
        require_drive(drive, policy.branch_ref)
    except NotADriveError as exc:
        record.status, record.reason = "not_drive", exc.message
        return None
    info = drive_info(drive, policy)
    conn = state.connection(drive.git_dir)
    last = dream_runs.runs(conn, limit=1)
    window = policy.dream().window
    record.status = "drive"
    record.head = info["head"] or ""
    record.kind = policy.kind
    record.timezone = _policy_timezone(policy_path(None, drive.git_dir,
                                                   drive.config_value(POLICY_KEY)))
    record.dream_window = f"{window[0]}-{window[1]}"
    record.entries = info["entries"]
    record.drive_bytes, record.drive_bytes_limit = info["drive_bytes"], policy.drive_bytes
    record.files, record.files_limit = info["files"], policy.files
    record.cap_entries, record.max_entries = info["caps"]["entries"], policy.max_entries
    record.near_limit = policy.near_limit
    record.last_push = counters.updated(conn, "push_accepted") or ""
    record.pending_writes = info["pending_writes"]
    record.last_dream_day = last[0].day if last else ""
    record.last_dream_status = last[0].status if last else ""
    record.index_health = "repaired" if info["index_repaired"] else "current"
    read = read_versions(drive.git_dir, record.head, known_tips, policy.extensions)
    record.tips = " ".join(read.tips)
    return read


def _policy_timezone(path: Path | None) -> str:
    """The ``timezone`` memgit.yaml sets, "" when it sets none (the server's then)."""
    if path is None:
        return ""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return ""  # find_policy has read it already; an unreadable file failed there
    value = data.get("timezone") if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""


def _describe_one(args: tuple[Repo, str, tuple[str, ...]]) -> tuple[DriveRecord, Read | None]:
    return describe(*args)


# --- the index --------------------------------------------------------------------------


@dataclass
class Refresh:
    """What a refresh did: repositories seen, rows rewritten and removed."""

    repositories: int = 0
    described: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    shared_synced: int = 0


class FleetIndex:
    """The index of one root: the embedded store, and the shared one when configured."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = check_root(root)
        fleet_dir(self.root, create=True)
        self.settings = Settings.load(self.root)
        self.origin = self.settings.origin
        self.embedded = SQLiteStore(fleet_dir(self.root) / INDEX_FILE)
        self._shared: PostgresStore | None = None
        self.warning = ""

    def shared(self) -> PostgresStore | None:
        """The PostgreSQL store when configured and reachable (else None, with
        :attr:`warning` saying why)."""
        if not self.settings.url or self.warning:
            return None
        if self._shared is None:
            try:
                self._shared = open_postgres(self.settings.url)
            except FleetError as exc:
                self.warning = f"{exc.message}; reading the embedded index of this root"
                return None
        return self._shared

    def reader(self) -> Store:
        """Where census, find and forget read: PostgreSQL when configured and reachable."""
        return self.shared() or self.embedded

    def close(self) -> None:
        self.embedded.close()
        if self._shared is not None:
            self._shared.close()

    def refresh(self, *, jobs: int = 1, force: bool = False,
                names: Iterable[str] | None = None, progress: Progress = _no_progress
                ) -> Refresh:
        """Bring the rows of this root up to date: describe the repositories that are
        new or changed (all with ``force``; only ``names`` when given), drop those that
        left the root, then copy to PostgreSQL every row it lacks."""
        repos = list(walk(self.root))
        wanted = set(names) if names is not None else None
        known = {n: r for (_o, n), r in self.embedded.drives(self.origin).items()}
        stale = [r for r in repos if (wanted is None or r.name in wanted)
                 and (force or r.name not in known
                      or known[r.name].fingerprint != fingerprint(r.path))]
        done = Refresh(len(repos))
        progress(0, len(stale))
        for batch in _described(stale, self.origin, known, jobs, progress):
            self.embedded.put(batch)
            done.described.extend(record.name for record, _read in batch)
        if wanted is None:
            present = {r.name for r in repos}
            done.removed = sorted(n for n in known if n not in present)
            self.embedded.remove(self.origin, done.removed)
        done.shared_synced = self.sync_shared(removed=done.removed)
        return done

    def sync_shared(self, removed: Sequence[str] = ()) -> int:
        """Copy to PostgreSQL the rows of this root it does not hold as they are here."""
        shared = self.shared()
        if shared is None:
            return 0
        theirs = {n: r.fingerprint for (_o, n), r in shared.drives(self.origin).items()}
        ours = self.embedded.drives(self.origin)
        copy = [r for (_o, n), r in ours.items() if theirs.get(n) != r.fingerprint]
        for start in range(0, len(copy), BATCH):
            shared.put([(r, self.versions_of(r) if r.status == "drive" else None)
                        for r in copy[start:start + BATCH]])
        gone = [n for n in theirs if (self.origin, n) not in ours] + list(removed)
        shared.remove(self.origin, sorted(set(gone)))
        if len(copy) >= BATCH:
            shared.analyze()  # the planner's statistics, before autovacuum's next round
        return len(copy)

    def versions_of(self, record: DriveRecord) -> Read:
        """A drive's versions as the embedded index holds them (for copying)."""
        hits = self.embedded.versions(record.origin, record.name)
        versions = [Version(h.entry_id, h.path, h.text, h.source, h.added, h.at_head)
                    for h in hits]
        return Read(versions, {(v.entry_id, v.digest) for v in versions if v.at_head},
                    record.tips.split(), True)

    def put(self, items: Sequence[tuple[DriveRecord, Read | None]]) -> None:
        """Store described drives in the embedded index and, when reachable, PostgreSQL."""
        self.embedded.put(items)
        shared = self.shared()
        if shared is not None:
            shared.put([(r, self.versions_of(r) if r.status == "drive" else None)
                        for r, _read in items])

    def redescribe(self, names: Iterable[str]) -> None:
        """Describe these drives again now, reading their whole history (after a forget
        or a purge changed them)."""
        repos = {r.name: r for r in walk(self.root)}
        items = [describe(repos[n], self.origin) for n in names if n in repos]
        self.put(items)


def _described(stale: list[Repo], origin: str, known: dict[str, DriveRecord], jobs: int,
               progress: Progress) -> Iterable[list[tuple[DriveRecord, Read | None]]]:
    """Batches of described repositories, ``jobs`` processes at a time."""
    work = [(r, origin, tuple(known[r.name].tips.split()) if r.name in known else ())
            for r in stale]
    if jobs <= 1 or len(work) < 2:
        results: Iterable[tuple[DriveRecord, Read | None]] = map(_describe_one, work)
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(max_workers=jobs,
                                   mp_context=multiprocessing.get_context("fork"))
        results = pool.map(_describe_one, work, chunksize=8)
    batch: list[tuple[DriveRecord, Read | None]] = []
    done = 0
    for item in results:
        batch.append(item)
        done += 1
        if len(batch) >= BATCH:
            progress(done, len(work))
            yield batch
            batch = []
    progress(done, len(work))
    if batch:
        yield batch
    if jobs > 1 and len(work) >= 2:
        pool.shutdown()


def update_after_push(git_dir: str | os.PathLike[str]) -> bool:
    """post-receive's part (``memgit fleet index --drive``, which post-receive's detached
    process runs): describe this one drive again in the index of the fleet it belongs
    to, if any; the cost does not grow with the number of drives in the root. False
    outside a fleet."""
    root = root_of(git_dir)
    if root is None:
        return False
    index = FleetIndex(root)
    try:
        path = Path(os.path.abspath(git_dir))
        name = path.relative_to(root).as_posix()
        known = index.embedded.drives(index.origin).get((index.origin, name))
        item = describe(Repo(name, path), index.origin,
                        known.tips.split() if known is not None else ())
        index.put([item])
        if index.warning:
            raise FleetError(index.warning, "memgit fleet census copies the rows once the "
                             "PostgreSQL index is reachable again")
    finally:
        index.close()
    return True
