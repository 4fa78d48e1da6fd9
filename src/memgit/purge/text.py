"""What a purge removes and how it is found again: entry lines by id, purged texts in commit
and tag messages, and the check that no object still holds them (:func:`verify_purged`,
which accounts for every object of the repository). Pure byte and text work, plus the one
``cat-file`` reader for the objects it must read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from memgit.errors import RepoError, UsageError
from memgit.format import entries as fmt
from memgit.git.plumbing import all_object_names
from memgit.git.raw import ObjectReader
from memgit.policy.registry import PurgeRegistry, purge_key
from memgit.policy.settings import Policy

Progress = Callable[[str, int, int], None]
"""Called with (phase, done, total) while a purge runs."""

PURGED = b"[purged]"
_TAG_SIGNATURES = (b"-----BEGIN PGP SIGNATURE-----", b"-----BEGIN SSH SIGNATURE-----",
                   b"-----BEGIN SIGNED MESSAGE-----")


def no_progress(phase: str, done: int, total: int) -> None:
    return None


@dataclass(frozen=True)
class Removed:
    """One removed line: the entry id and its text."""

    entry_id: str
    text: str


def remove_entry_lines(data: bytes, ids: frozenset[str], needles: Iterable[str]
                       ) -> tuple[bytes, list[Removed]] | None:
    """``data`` without the lines that are entries whose id is in ``ids``.

    The definition is path-independent and line-based: decode as UTF-8 (bytes
    that are not UTF-8 kept as they are), parse like ``format.parse_document``
    does for a topic file (bullets in code blocks or front matter are not entries),
    drop each entry line whose ``.id`` is purged, with its line terminator.
    ``needles`` are strings every such line must contain (explicit ids, texts
    of id-less entries): only lines holding one are parsed, unless the file
    may hold code or front matter, which needs the whole document. None when
    nothing changes.
    """
    text = data.decode("utf-8", "surrogateescape")
    spans: list[tuple[int, int, Removed]] = []  # (start, end with eol, what)
    if fmt.needs_block_reader(text):
        pos = 0
        for line in fmt.parse_document("", text).lines:
            end = pos + len(line.content) + len(line.eol)
            entry = line.entry
            if entry is not None and entry.id in ids:
                spans.append((pos, end, Removed(entry.id, entry.text)))
            pos = end
    else:
        lines: dict[int, tuple[int, str]] = {}  # start -> (end, content), as split_lines cuts
        for needle in needles:
            at = text.find(needle)
            while at >= 0:
                start, end, content = fmt.line_around(text, at)
                lines[start] = (end, content)
                at = text.find(needle, at + len(needle))
        for start, (end, content) in sorted(lines.items()):
            entry = fmt.parse_entry(content)
            if entry is not None and entry.id in ids:
                spans.append((start, end, Removed(entry.id, entry.text)))
    if not spans:
        return None
    kept: list[str] = []
    pos = 0
    for start, end, _what in spans:
        kept.append(text[pos:start])
        pos = end
    kept.append(text[pos:])
    return "".join(kept).encode("utf-8", "surrogateescape"), [s[2] for s in spans]


def scrub_message(message: bytes, texts: list[bytes]) -> bytes:
    """Each purged text found verbatim becomes ``[purged]``, longest texts first.

    ``texts`` must already be sorted by (-len, text) (see ``longest_first``).
    """
    for text in texts:
        if text in message:
            message = message.replace(text, PURGED)
    return message


def scrub_registered(message: bytes, registry: PurgeRegistry) -> bytes:
    """Each stretch of ``message`` that the registry knows as a purged text (any
    normal form, any earlier purge) becomes ``[purged]``."""
    if not registry:
        return message
    text = message.decode("utf-8", "surrogateescape")
    spans = registry.quoted(text)
    for start, end in reversed(spans):
        text = text[:start] + PURGED.decode() + text[end:]
    return text.encode("utf-8", "surrogateescape") if spans else message


def longest_first(texts: Iterable[str]) -> list[bytes]:
    raw = {t.encode("utf-8", "surrogateescape") for t in texts if t}
    return sorted(raw, key=lambda t: (-len(t), t))


def key_words(texts: Iterable[str]) -> list[bytes] | None:
    """A prefilter for "holds an entry whose purge key is one of these", for ASCII files
    (where the purge key is the lower-cased text): the longest ASCII word of each key,
    to look for in the lower-cased bytes. None when some key has no ASCII word."""
    out: set[bytes] = set()
    for text in texts:
        ascii_words = [w for w in purge_key(text).split() if w.isascii()]
        if not ascii_words:
            return None
        out.add(max(ascii_words, key=len).encode())
    return sorted(out)


def strip_tag_signature(message: bytes) -> bytes:
    """A tag message without the signature git appends to it."""
    cut = len(message)
    for marker in _TAG_SIGNATURES:
        at = message.find(b"\n" + marker)
        if at >= 0:
            cut = min(cut, at + 1)
        elif message.startswith(marker):
            cut = 0
    return message[:cut]


# --- the verification ----------------------------------------------------------------------


class Checker:
    """What "a purged entry survived" means, for one object's content."""

    def __init__(self, ids: list[str], needles: list[str], texts: list[str],
                 registry: PurgeRegistry | None = None) -> None:
        self.ids = frozenset(ids)
        self.registry = registry or PurgeRegistry()
        self.needles = list(needles)  # every purged line holds one (ids, id-less texts)
        self.needle_bytes = [n.encode("utf-8", "surrogateescape") for n in needles]
        self.texts = longest_first(texts)
        self.keys = {purge_key(t) for t in texts}
        # One search per distinct 16-byte head stands for all texts starting with it
        # (the versions of an edited entry mostly share their beginning).
        self.heads = sorted({t[:16] for t in self.texts})
        self.quoting: dict[bytes, bool] = {}  # message -> quotes a purged text (memo)

    def problems(self, oid: str, kind: str, data: bytes, *, ids: bool = True) -> list[str]:
        out: list[str] = []
        if kind == "blob":
            if ids and any(n in data for n in self.needle_bytes) and \
                    remove_entry_lines(data, self.ids, self.needles) is not None:
                out.append(f"blob {oid} (an entry with a purged id)")
            if any(h in data for h in self.heads):
                for entry_id in _entries_with_texts(data, self.texts, self.keys):
                    out.append(f"blob {oid} (entry {entry_id} holds a purged text: "
                               "purge it too)")
        elif kind in ("commit", "tag"):
            message = data.partition(b"\n\n")[2]  # as split_object(data)[1]
            quotes = self.quoting.get(message)
            if quotes is None:
                quotes = self.quoting[message] = any(t in message for t in self.texts) or \
                    bool(self.registry.quoted(message.decode("utf-8", "surrogateescape")))
            if quotes:
                out.append(f"{kind} {oid} (its message quotes a purged text)")
        return out

    def kept_blobs(self, git_dir: Path, oids: list[str], progress: Progress) -> list[str]:
        """Search blobs already cleared of purged ids for entries holding a purged text."""
        out: list[str] = []
        heads = self.heads
        for done, (oid, (_kind, data)) in enumerate(
                zip(oids, ObjectReader(git_dir).stream(oids), strict=True), start=1):
            for head in heads:
                if head in data:
                    out += self.problems(oid, "blob", data, ids=False)
                    break
            if done % 2000 == 0:
                progress("checking kept files", done, len(oids))
        return out


def verify_purged(git_dir: Path, checker: Checker, known: dict[str, bool] | None = None,
                  problems: list[str] | None = None, *,
                  progress: Progress = no_progress) -> int:
    """Account for every object in the repository (loose and packed, reachable or
    not) and fail loudly if a purged entry survived: an entry line with a purged
    id, an entry whose text is a purged text, or a commit or tag message quoting
    one. An object id is its content's hash, so ``known`` (id -> clean) vouches
    for objects this run has already checked; every other object is read now.
    Returns the number of objects in the repository."""
    bad = list(problems or [])
    known = known or {}
    listed = all_object_names(git_dir)  # no types: read below for the few that need one
    oids: list[str] = []
    survived: list[str] = []
    for oid in listed:
        state = known.get(oid)
        if state is None:
            oids.append(oid)
        elif not state:
            survived.append(oid)
    if survived:
        with ObjectReader(git_dir) as reader:
            for oid, found in reader.info_many(survived).items():
                kind = found[0] if found is not None else "object"
                bad.append(f"{kind} {oid} (an old object that held purged data survived)")
    for done, (oid, (kind_bytes, data)) in enumerate(
            zip(oids, ObjectReader(git_dir).stream(oids), strict=True), start=1):
        if kind_bytes != b"tree":  # a tree holds names and ids only
            bad += checker.problems(oid, kind_bytes.decode(), data)
        if done % 20000 == 0:
            progress("verifying", done, len(oids))
    if bad:
        raise RepoError("VERIFICATION FAILED: purged data is still in the repository: "
                        + "; ".join(bad[:10]) + (" ..." if len(bad) > 10 else ""),
                        "look for .keep packs or a concurrent writer; purge the ids named; "
                        "see docs/purge.md")
    return len(listed)


def _entries_with_texts(data: bytes, texts: list[bytes], keys: set[str]) -> list[str]:
    """Ids of entries in ``data`` whose text is one of ``texts`` (compared as purge keys)."""
    out: list[str] = []
    text = data.decode("utf-8", "surrogateescape")
    for needle in texts:
        if needle not in data:
            continue
        for _line, entry in fmt.parse_document("", text).entries():
            if purge_key(entry.text) in keys:
                out.append(entry.id)
        break
    return out


def check_ids(ids: Iterable[str], policy: Policy | None = None) -> list[str]:
    """The ids to purge, stripped and each once; UsageError when none, or one is not an id."""
    out = list(dict.fromkeys(i.strip() for i in ids))
    if not out:
        raise UsageError("no entry ids given", "name the ids to purge: memgit purge ID...")
    bad = [i for i in out if not fmt.ID_RE.match(i)]
    if bad:
        raise UsageError(f"not an entry id: {quote(', '.join(map(repr, bad)), policy)}",
                         "ids look like m-01jd3xk8q7c9v2n4r6t8w0y1z3 or entry-0123456789abcdef")
    return out


def quote(value: str, policy: Policy | None = None) -> str:
    """policy.judge.quote, imported only when a refusal quotes something."""
    from memgit.policy.judge import quote as judge_quote

    return judge_quote(value, policy)
