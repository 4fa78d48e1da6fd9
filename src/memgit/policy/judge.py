"""The drive policy: what may land. The one implementation of every rule.

The rules come in shapes callers can cache: ``check_path`` (a tree entry), ``check_blob``
(a file's bytes, cacheable by blob id), ``check_tree`` (a whole tree from paths, sizes and
blob facts), and for a push ``check_update``, ``check_push_size``, ``check_change`` and
``check_commit``. Each violation has a stable code, and messages never contain a detected
secret: every value quoted goes through :func:`quote`. The settings and the purge registry
are re-exported here, so callers ask this one module.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memgit.format import entries as fmt
from memgit.git.modes import MODE_COMMIT, MODE_EXEC, MODE_FILE, MODE_LINK
from memgit.policy.codes import RULES
from memgit.policy.registry import (
    PURGE_JOURNAL,
    PurgeLock,
    PurgeRegistry,
    lease_seconds,
    legacy_key,
)
from memgit.policy.settings import Policy
from memgit.safe_text import printable

ERROR = "error"
WARNING = "warning"

# A first push to an empty server drive brings an existing history: its tip is judged by
# every rule, its older commits only by these, what a clone of any old commit would
# receive or do (docs/server.md, "Moving an existing history onto a server drive"):
# credentials (in content, names and commits), purged entries, unsafe, hidden or
# clashing paths, symlinks, submodules, the protected twin/, objects missing from the push.
HISTORY_RULES = frozenset({"MG202", "MG203", "MG208", "MG209", "MG210", "MG211", "MG212",
                           "MG214", "MG401", "MG402", "MG403", "MG601", "MG606", "MG607",
                           "MG608"})

KNOWN_KEYS = ("source", "added", "id", "status", "scope", "memory_type", "kind",
              "parent", "supersedes")
STATUS_VALUES = ("active", "proposed", "rejected", "open", "resolved")
KIND_VALUES = ("question", "answer")
_ID_KEYS = ("id", "parent", "supersedes")  # values that must be ids (drive profile)
_OWN_ID_KEY = ("id",)  # under amr only memgit's own key
ID_RE = fmt.ID_RE

_SOURCE_RES = (
    re.compile(r"https://[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::\d{1,5})?(?:[/?#]\S*)?\Z"),
    re.compile(r"/\?session=[A-Za-z0-9._~%-]+\Z"),
    re.compile(r"[a-z][a-z0-9-]*:(?:session|observation)/[A-Za-z0-9._~%-]+\Z"),
    re.compile(r"imported:unknown\Z"),
    # what memgit import writes: the tool, the source file (percent-encoded), the line
    re.compile(r"imported:[a-z][a-z0-9-]*/[A-Za-z0-9._~%/-]+(?:#L[0-9]{1,9})?\Z"),
)
# Under profile amr every source is allowed but these (what browsers would run or open
# locally); tabs and line breaks inside a scheme are ignored by URL parsers, so they are
# removed before comparing.
DANGEROUS_SCHEMES = ("javascript", "data", "vbscript", "file")
_SCHEME_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_HTML_RE = re.compile(
    r"<!--|<(?:[A-Za-z][A-Za-z0-9-]*)(?:\s[^<>]*)?/?>|</[A-Za-z][A-Za-z0-9-]*\s*>")
_IMAGE_RE = re.compile(r"!\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])")
_SPEAKER_RE = re.compile(
    r"[ \t]*(?:[-*>][ \t]+)?(?:\*\*)?(User|Assistant|Human|AI|System|Model|Bot)(?:\*\*)?[ \t]*:"
    r"(?:\*\*)?[ \t]*(.*)", re.I)
_SENTENCE_END = (".", "?", "!", "…", "。", "？", "！")
_LOG_RE = re.compile(
    r"[ \t]*(?:[-*][ \t]+)?\[?(?:\d{4}-\d{2}-\d{2}[T ])?\d{2}:\d{2}:\d{2}(?:[.,]\d+)?"
    r"(?:Z|[+-]\d{2}:?\d{2})?\]?[ \t]")
_CONFLICT_RE = re.compile(r"(?:<{7}|>{7})(?: |\Z)")
_GROUPISH_RE = re.compile(r"\[[^\[\]]*\b(?:" + "|".join(KNOWN_KEYS) + r")\s*:[^\[\]]*\]\s*\Z", re.I)
# a log's extension (.log, .log.1, a .log/ folder) or the word transcript(s), not
# "transcription" (a note about speech-to-text is no transcript)
_LOG_NAME_RE = re.compile(r"\.log(?:\.|/|\Z)|(?<![a-z0-9])transcripts?(?![a-z])")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # C0, DEL and C1


@dataclass(frozen=True)
class Violation:
    """One finding of the policy: a rule code, where it is, and what a reader is told."""

    code: str
    path: str = ""
    line: int = 0
    message: str = ""
    severity: str = ERROR
    commit: str = ""

    @property
    def name(self) -> str:
        return RULES[self.code][0]

    @property
    def hint(self) -> str:
        return RULES[self.code][1]

    def as_dict(self, policy: Policy | None = None) -> dict[str, Any]:
        """The violation as JSON values, path and message quoted (:func:`quote`)."""
        out = asdict(self)
        out["path"], out["message"] = quote(self.path, policy), quote(self.message, policy)
        out["name"] = self.name
        out["hint"] = self.hint
        return out

    def format(self, policy: Policy | None = None) -> str:
        """One line for a terminal: path and message quoted, control characters escaped
        (``policy``: the drive's, whose extra secret rules the quoting uses)."""
        where = quote(self.path, policy) if self.path else "(drive)"
        if self.line:
            where += f":{self.line}"
        return printable(f"{where}: {self.code} {self.name}: {quote(self.message, policy)}")


# --- single values -----------------------------------------------------------------


def quote(value: str, policy: Policy | None = None) -> str:
    """``value`` fit to quote in a message: each possible credential in it replaced by
    ``<redacted: KIND>`` (memgit.secrets.redact, with the drive's extra rules). Every
    message that quotes a value (lint, pre-commit, pre-receive, the writer, sync,
    purge) passes it through here."""
    if not value:
        return value
    from memgit.secrets import redact

    rules = policy.secret_rules if policy is not None else ()
    out = redact(value, rules)
    # a path's names are judged as words (MG402: _name_secret), so they are quoted so too
    return redact(out, rules, as_words=True) if "/" in out else out


def source_allowed(source: str, policy: Policy | None = None) -> bool:
    """The drive profile's forms (docs/spec.md, section 1, plus memgit import's
    ``imported:TOOL/PATH#LN``); under profile amr any source but a dangerous scheme."""
    if policy is not None and not policy.strict_drive_rules:
        return source_scheme(source) not in DANGEROUS_SCHEMES
    return any(r.match(source) for r in _SOURCE_RES)


def source_scheme(source: str) -> str:
    """The URL scheme of a source, lowercased, as a browser reads it (tabs, line breaks
    and leading blanks or control characters ignored); ``""`` when it has none."""
    cleaned = re.sub(r"[\t\r\n]", "", source).lstrip("".join(map(chr, range(33))))
    m = _SCHEME_RE.match(cleaned)
    return m.group(1).lower() if m else ""


def source_names_agent(source: str | None) -> bool:
    """Does a source say who wrote the entry (``require_source``, MG109)? Any allowed
    source but the writer's anonymous default (``memgit:...``) and ``imported:unknown``
    (``imported:TOOL/PATH#LN``, what memgit import writes, names the tool and file)."""
    return bool(source) and source_allowed(source or "") \
        and not (source or "").startswith("memgit:") and source != "imported:unknown"


text_key = legacy_key  # the comparison form of an entry text (normalisation 1)


def text_digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text_key(text).encode()).hexdigest()


# --- paths ------------------------------------------------------------------------

def check_path(path: str, mode: int, policy: Policy) -> list[Violation]:
    """Rules on one tree entry that need no content."""
    out: list[Violation] = []
    parts = path.split("/")
    if (path.startswith("/") or any(p in ("", ".", "..") for p in parts)
            or any(p.lower() == ".git" for p in parts) or _CONTROL_RE.search(path)):
        out.append(Violation("MG208", path, 0, "the path is not a clean relative path"))
    invisible = fmt.INVISIBLE_RE.search(path)
    if invisible is not None:
        out.append(Violation("MG214", path, 0, "the path holds an invisible character "
                             f"(U+{ord(invisible.group()):04X})"))
    kind = _name_secret(path, policy)
    if kind:
        out.append(Violation("MG402", path, 0, f"a file or folder name holds a possible "
                             f"credential: {kind}"))
    # undecodable bytes arrive as surrogate escapes (the server side decodes names so)
    if unicodedata.normalize("NFC", path) != path or any("\udc80" <= c <= "\udcff"
                                                          for c in path):
        out.append(Violation("MG209", path, 0, "the path is not NFC-normalised UTF-8"))
    if len(path.encode("utf-8", "surrogateescape")) > policy.path_bytes:
        out.append(Violation("MG211", path, 0,
                             f"the path is longer than {policy.path_bytes} bytes"))
    if mode in (MODE_FILE, MODE_EXEC) and is_ci_file(path, policy):
        return out  # the forge's CI files: no file-type rules; protected (check_change)
    if mode == MODE_LINK:
        out.append(Violation("MG202", path, 0, "symbolic links are not allowed"))
    elif mode == MODE_COMMIT:
        out.append(Violation("MG203", path, 0, "submodules are not allowed"))
    elif mode == MODE_EXEC and policy.strict_drive_rules:
        out.append(Violation("MG204", path, 0, "the file is executable (mode 100755)"))
    if mode in (MODE_FILE, MODE_EXEC) and policy.extensions \
            and not path.endswith(policy.extensions):
        out.append(Violation("MG201", path, 0,
                             f"only {', '.join(policy.extensions)} files may be stored"))
    if policy.strict_drive_rules and _is_transcript_name(path):
        out.append(Violation("MG305", path, 0, "the file name says it is a log or transcript"))
    return out


def check_topic(path: str, policy: Policy, *, reserved_ok: bool = False) -> list[Violation]:
    """May a client write put entries into ``path``? The path rules, and no reserved
    path (twin/, imports/, questions.md) unless the caller is the one that owns it."""
    out = [v for v in check_path(path, MODE_FILE, policy) if v.severity == ERROR]
    if not reserved_ok and fmt.is_reserved(path):
        out.append(Violation("MG213", path, 0,
                             f"{quote(path, policy)} is reserved for memgit's own use"))
    return out


def _is_transcript_name(path: str) -> bool:
    return _LOG_NAME_RE.search(path.lower()) is not None


@functools.lru_cache(maxsize=4096)
def _name_secret(path: str, policy: Policy) -> str:
    """The kind of a possible credential in a path's names ("" when none): the names are
    scanned as words of one line, so a token cut by a '/' is not seen."""
    kinds = secret_kinds(path.replace("/", " "), policy)
    return kinds[0] if kinds else ""


# --- blobs --------------------------------------------------------------------------


@dataclass
class BlobFacts:
    """What the tree rules need to know of one blob, plus its own violations.

    Cacheable by blob id together with the path's Markdown-ness.
    """

    violations: list[Violation] = field(default_factory=list)
    text: str | None = None  # decoded content, None when not text
    ids: list[tuple[str, int]] = field(default_factory=list)  # (entry id, line)
    explicit: set[int] = field(default_factory=set)  # lines whose id is written out
    links: list[tuple[str, int]] = field(default_factory=list)  # (target, line)
    texts: list[tuple[str, int]] = field(default_factory=list)  # (entry text, line)
    oldest: str = ""  # the earliest valid added date of its entries (for the caps)


SecretFilter = Callable[[int, str], bool]
"""Called with (line number, line content): True when the line must be secret-scanned."""


def check_blob(path: str, data: bytes, policy: Policy, *,
               scan: SecretFilter | None = None) -> BlobFacts:
    """Every rule that needs only this file's bytes.

    ``scan`` narrows the secret scan (pre-receive scans only lines new in the
    push); by default every line is scanned. Violations carry ``path``.
    """
    facts = BlobFacts()
    out = facts.violations
    is_markdown = path.endswith(".md")
    if b"\x00" in data:
        line = data.count(b"\n", 0, data.index(b"\x00")) + 1
        out.append(Violation("MG302", path, line, "the file contains a NUL byte"))
        return facts
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        if is_markdown or policy.strict_drive_rules:
            out.append(Violation("MG301", path, line,
                                 f"invalid UTF-8 at byte {exc.start}"))
        else:  # an other-file of profile amr may hold any bytes: its text is still scanned
            _check_secrets(path, data.decode("utf-8", "replace"), facts, scan, policy)
        return facts
    facts.text = text
    if is_markdown:
        stray = fmt.stray_line_break(text)
        if stray >= 0:
            out.append(Violation("MG307", path, text.count("\n", 0, stray) + 1,
                                 f"U+{ord(text[stray]):04X} reads as a line break to "
                                 "CommonMark or str.splitlines() but not to memgit"))
        control = fmt.control_character(text)
        if control >= 0:
            out.append(Violation("MG308", path, text.count("\n", 0, control) + 1,
                                 f"U+{ord(text[control]):04X} is a control character"))
        _check_markdown(path, text, policy, facts)
    _check_secrets(path, text, facts, scan, policy)
    return facts


def _check_markdown(path: str, text: str, policy: Policy, facts: BlobFacts) -> None:
    doc = fmt.parse_document(path, text)
    out = facts.violations
    speaker_lines: list[tuple[int, str, str]] = []
    markers: list[int] = []
    separators: list[int] = []
    previous_entry = False
    for line in doc.lines:
        content = line.content
        number = line.number
        if _CONFLICT_RE.match(content):
            markers.append(number)
        elif content.rstrip() == "=======":
            separators.append(number)
        if line.in_code or line.in_front_matter:
            previous_entry = False
            continue
        for target in fmt.iter_links(content):
            facts.links.append((target, number))
        if policy.strict_drive_rules:
            prose = fmt.strip_code_spans(content)
            if "<" in prose and _HTML_RE.search(prose):
                out.append(Violation("MG303", path, number, "raw HTML is not allowed"))
            if "![" in prose and _IMAGE_RE.search(prose):
                out.append(Violation("MG304", path, number, "embedded images are not allowed"))
            sm = _SPEAKER_RE.match(content)
            if sm:
                speaker_lines.append((number, sm.group(1).lower(), sm.group(2)))
            if _LOG_RE.match(content):
                out.append(Violation("MG305", path, number,
                                     "the line looks like a timestamped log line"))
        entry = line.entry
        if entry is None:
            if previous_entry and content[:1] in (" ", "\t") and content.strip() \
                    and not line.in_index_section:
                out.append(Violation("MG105", path, number,
                                     "an indented continuation line follows an entry"))
            previous_entry = False
            continue
        previous_entry = True
        _check_entry(path, number, entry, facts, policy)
        if policy.require_source and not source_names_agent(entry.meta.get("source")):
            out.append(Violation("MG109", path, number, "the entry names no agent: give it a "
                                 "source such as TOOL:session/ID (remember --source)"))
    if policy.strict_drive_rules and is_transcript(speaker_lines):
        for number, speaker, _said in speaker_lines:
            out.append(Violation("MG305", path, number,
                                 f"a speaker turn ({speaker}:) of a transcript"))
    if markers:
        for number in sorted(markers + separators):
            out.append(Violation("MG306", path, number, "a merge-conflict marker line"))


def is_transcript(turns: Sequence[tuple[int, str, str]]) -> bool:
    """Whether speaker lines (line, speaker, what follows the colon) have a
    transcript's shape: turns of two or more speakers that alternate, and either every
    speaker speaks twice or a turn is a sentence. ``- User: alice`` next to
    ``- Model: v5`` is two key-value bullets, not a conversation."""
    speakers = [speaker for _n, speaker, _said in turns]
    if len(set(speakers)) < 2 or all(a == b for a, b in zip(speakers, speakers[1:],
                                                               strict=False)):
        return False
    counts = {s: speakers.count(s) for s in set(speakers)}
    if sum(1 for n in counts.values() if n >= 2) >= 2:
        return True
    return any(_is_sentence(said) for _n, _s, said in turns)


def _is_sentence(said: str) -> bool:
    words = said.strip().strip("*").split()
    return len(words) >= 5 or (len(words) >= 2 and said.rstrip(" *").endswith(_SENTENCE_END))


def _check_entry(path: str, number: int, entry: fmt.Entry, facts: BlobFacts,
                 policy: Policy) -> None:
    out = facts.violations
    if not entry.group:
        if _GROUPISH_RE.search(entry.body):
            out.append(Violation("MG104", path, number,
                                 "the trailing [...] is not a valid metadata group"))
    meta = entry.meta
    source = meta.get("source")
    if source is not None and not source_allowed(source, policy):
        scheme = source_scheme(source)
        message = (f"source scheme {quote(scheme, policy)[:40]!r} is not allowed" if scheme
                   else f"source {quote(source, policy)[:40]!r} has no scheme: it is not "
                   "a link or a label of an allowed form")
        out.append(Violation("MG101", path, number, message))
    added = meta.get("added")
    if added is not None and not fmt.is_valid_date(added):
        out.append(Violation("MG102", path, number,
                             f"added {quote(added, policy)[:40]!r} is not a real date"))
    elif added is not None and (not facts.oldest or added < facts.oldest):
        facts.oldest = added
    # id is memgit's own key (forget and purge name entries by it); parent, supersedes,
    # status and kind have memgit's meanings only in the drive profile: under amr keys
    # and values are open, as the Agent Memory Repo spec says
    for key in _ID_KEYS if policy.strict_drive_rules else _OWN_ID_KEY:
        value = meta.get(key)
        if value is not None and not ID_RE.match(value):
            out.append(Violation("MG106", path, number, f"{key} is not a valid id"))
    status = meta.get("status")
    if status is not None and status not in STATUS_VALUES and policy.strict_drive_rules:
        out.append(Violation("MG107", path, number,
                             f"status must be one of {', '.join(STATUS_VALUES)}"))
    kind = meta.get("kind")
    if kind is not None and kind not in KIND_VALUES and policy.strict_drive_rules:
        out.append(Violation("MG107", path, number, "kind must be question or answer"))
    if meta.get("id"):
        facts.explicit.add(number)
    facts.ids.append((entry.id, number))
    facts.texts.append((entry.text, number))


_MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")  # CommonMark: a backslash before ASCII punctuation


def as_rendered(line: str) -> str:
    """The line as a reader of the rendered Markdown sees it: invisible characters (Unicode
    Cf and the other default-ignorables) dropped, HTML character references decoded
    (``&#103;&#104;...``), backslash escapes of punctuation undone (``ghp\\_``)."""
    seen = fmt.INVISIBLE_RE.sub("", line)
    if "&" in seen:
        import html

        seen = fmt.INVISIBLE_RE.sub("", html.unescape(seen))
    if "\\" in seen:
        seen = _MD_ESCAPE.sub(r"\1", seen)
    return seen


def _scan_visible(scanner: Callable[..., list[Any]], line: str, policy: Policy) -> list[Any]:
    """The line's findings; when it has none, those of the line as it renders
    (:func:`as_rendered`). A soft hyphen or a zero-width space every few characters, or
    a token written as HTML character references, hides it from every rule while every
    reader (a browser, a Markdown viewer, an agent that strips them, a copy and paste)
    sees it whole (hostile sweep, branch hostile42)."""
    found = scanner(line, policy.secret_rules)
    if not found and ("&" in line or "\\" in line or fmt.INVISIBLE_RE.search(line)):
        seen = as_rendered(line)
        if seen != line:
            found = scanner(seen, policy.secret_rules)
    return list(found)


def secret_kinds(line: str, policy: Policy) -> list[str]:
    """The kinds of possible credentials in one line (never the secret itself)."""
    from memgit.secrets import scan_text, scan_text_deep

    scanner = scan_text_deep if policy.deep_secrets else scan_text
    return [f.kind for f in _scan_visible(scanner, line, policy)]


def _check_secrets(path: str, text: str, facts: BlobFacts, scan: SecretFilter | None,
                   policy: Policy) -> None:
    from memgit.secrets import scan_text, scan_text_deep

    scanner = scan_text_deep if policy.deep_secrets else scan_text
    for number, (content, _eol) in enumerate(fmt.split_lines(text), start=1):
        if scan is not None and not scan(number, content):
            continue
        for finding in _scan_visible(scanner, content, policy):
            facts.violations.append(Violation(
                "MG401", path, number, f"possible credential: {finding.kind}"))
            break


# --- trees --------------------------------------------------------------------------


@dataclass(frozen=True)
class TreeItem:
    """A file of a pushed tree: its path, git mode and size."""

    path: str
    mode: int
    size: int


def check_tree(items: Sequence[TreeItem], facts: Mapping[str, BlobFacts], policy: Policy, *,
               strict: bool = False) -> list[Violation]:
    """Rules on the whole tree. ``facts`` maps each regular file's path to its BlobFacts."""
    out: list[Violation] = []
    paths = [i.path for i in items]
    path_set = set(paths)
    # sizes and counts
    total = 0
    for item in items:
        if item.mode not in (MODE_FILE, MODE_EXEC):
            continue
        total += item.size
        if item.size > policy.file_bytes:
            out.append(Violation("MG205", item.path, 0,
                                 f"{item.size} bytes, limit {policy.file_bytes}"))
        elif item.size > policy.file_bytes * policy.near_limit:
            out.append(Violation("MG290", item.path, 0,
                                 f"{item.size} of {policy.file_bytes} bytes", WARNING))
    if total > policy.drive_bytes:
        out.append(Violation("MG206", "", 0, f"{total} bytes, limit {policy.drive_bytes}"))
    elif total > policy.drive_bytes * policy.near_limit:
        out.append(Violation("MG290", "", 0, f"{total} of {policy.drive_bytes} bytes", WARNING))
    if len(items) > policy.files:
        out.append(Violation("MG207", "", 0, f"{len(items)} files, limit {policy.files}"))
    elif len(items) > policy.files * policy.near_limit:
        out.append(Violation("MG290", "", 0, f"{len(items)} of {policy.files} files", WARNING))
    out.extend(_collisions(paths, policy))
    # structure
    memory = facts.get(fmt.MEMORY_FILE)
    if fmt.MEMORY_FILE not in path_set:
        out.append(Violation("MG501", fmt.MEMORY_FILE, 0, "MEMORY.md is missing"))
    elif memory is not None and memory.text is not None:
        size = len(memory.text.encode())
        if size > policy.memory_bytes:
            out.append(Violation("MG505", fmt.MEMORY_FILE, 0,
                                 f"{size} bytes, keep it under {policy.memory_bytes}",
                                 ERROR if strict else WARNING))
        stale = fmt.index_section_difference(memory.text, paths) \
            if policy.strict_drive_rules else ""
        if stale:
            out.append(Violation("MG502", fmt.MEMORY_FILE, _index_section_line(memory.text),
                                 stale))
    # links and ids across files
    seen: dict[str, tuple[str, int]] = {}
    for path in sorted(facts):
        f = facts[path]
        for target, number in f.links:
            if target.endswith(".md"):
                out.append(Violation("MG504", path, number,
                                     f"[[{quote(target, policy)}]] is written with .md",
                                     ERROR if strict else WARNING))
            resolved = fmt.link_target_path(target, path_set)
            if resolved not in path_set:
                out.append(Violation("MG503", path, number, f"[[{quote(target, policy)}]] "
                                     "points at a file that does not exist",
                                     ERROR if strict else WARNING))
        for entry_id, number in f.ids:
            first = seen.get(entry_id)
            if first is None:
                seen[entry_id] = (path, number)
            elif number in f.explicit or first[1] in facts[first[0]].explicit:
                out.append(Violation("MG103", path, number, f"id {quote(entry_id, policy)} is "
                                     f"also used at {quote(first[0], policy)}:{first[1]}"))
            else:
                # two id-less lines with the same text, source and date share their
                # derived id: a repeated line, not two entries claiming one id
                out.append(Violation("MG108", path, number, "the same line is also at "
                                     f"{quote(first[0], policy)}:{first[1]}", WARNING))
    return out


def _index_section_line(memory_text: str) -> int:
    for number, (content, _e) in enumerate(fmt.split_lines(memory_text), start=1):
        if content.rstrip() == fmt.INDEX_HEADING:
            return number
    return 0


def _collisions(paths: Iterable[str], policy: Policy) -> list[Violation]:
    out: list[Violation] = []
    folded: dict[str, str] = {}
    folders: dict[str, str] = {}
    for path in sorted(paths):
        key = fmt.fold_path(path)
        if key in folded and folded[key] != path:
            out.append(Violation("MG210", path, 0, f"collides with "
                                 f"{quote(folded[key], policy)} when case-folded"))
        folded.setdefault(key, path)
        parts = key.split("/")
        for i in range(1, len(parts)):
            folders.setdefault("/".join(parts[:i]), "/".join(path.split("/")[:i]))
    for key, path in folded.items():
        if key in folders:
            out.append(Violation("MG212", path, 0, f"{quote(path, policy)} is a file and "
                                 f"{quote(folders[key], policy)}/ a folder"))
    return out


# --- pushes --------------------------------------------------------------------------


def check_update(ref: str, old: str, new: str, policy: Policy, *, fast_forward: bool,
                 new_commits: int, target_kind: str = "commit") -> list[Violation]:
    """Rules on one ref update of a push (``target_kind``: what ``new`` names). The ref
    is quoted only in a refusal: an accepted push pays no secret scan for it."""
    if ref != policy.branch_ref:
        return [Violation("MG602", "", 0, f"{quote(ref, policy)} may not be updated; "
                          f"only {policy.branch_ref}")]
    if set(new) == {"0"}:
        return [Violation("MG603", "", 0, f"{quote(ref, policy)} may not be deleted")]
    if target_kind != "commit":
        return [Violation("MG602", "", 0, f"{quote(ref, policy)} would point at a "
                          f"{target_kind}, not a commit")]
    out: list[Violation] = []  # from here on ref is the policy's own branch
    if set(old) != {"0"} and not fast_forward:
        out.append(Violation("MG604", "", 0, f"the update of {ref} is not a fast-forward"))
    if new_commits > policy.push_commits:
        out.append(Violation("MG605", "", 0,
                             f"{new_commits} new commits, at most {policy.push_commits} per push"))
    return out


def check_change(changed_paths: Iterable[str], policy: Policy) -> list[Violation]:
    """Rules on the set of paths a commit adds, modifies or deletes (protected prefixes
    match in any letter case, with the fold of the collision rule)."""
    protected = tuple(fmt.fold_path(p) for p in policy.protected + policy.ci_files)
    return [Violation("MG601", p, 0, f"{quote(p, policy)} is protected")
            for p in changed_paths if fmt.fold_path(p).startswith(protected)]


def is_ci_file(path: str, policy: Policy) -> bool:
    """One of the forge's CI files (``ci_files``, matched like ``protected``)."""
    return bool(policy.ci_files) and fmt.fold_path(path).startswith(
        tuple(fmt.fold_path(p) for p in policy.ci_files))


def check_push_size(new_bytes: int, policy: Policy) -> list[Violation]:
    """The bytes of new content a push asks memgit to read (counted from sizes alone)."""
    if new_bytes > policy.push_limit:
        return [Violation("MG611", "", 0, f"{new_bytes} bytes of new content, at most "
                          f"{policy.push_limit} per push")]
    return []


def check_commit(message: str, people: Sequence[tuple[str, str]], policy: Policy,
                 registry: PurgeRegistry | None = None) -> list[Violation]:
    """Rules on what a commit says besides its tree: its message and ``people``
    ((field, value) such as ("author name", "Ann")), scanned with the drive's secret
    rules. Violations name the field and the message line, never the value."""
    out: list[Violation] = []
    said: set[str] = set()
    for label, value in people:
        if label in said:  # one per field: a header's lines share their label
            continue
        kinds = secret_kinds(value, policy)
        if kinds:
            said.add(label)
            out.append(Violation("MG403", "", 0, f"the {label} holds a possible credential: "
                                 f"{kinds[0]}"))
    for number, (content, _eol) in enumerate(fmt.split_lines(message), start=1):
        kinds = secret_kinds(content, policy)
        if kinds:
            out.append(Violation("MG403", "", 0, f"line {number} of the commit message holds "
                                 f"a possible credential: {kinds[0]}"))
    if registry:
        lines = sorted({message.count("\n", 0, start) + 1
                        for start, _end in registry.quoted(message)})
        for number in lines:
            out.append(Violation("MG607", "", 0, f"line {number} of the commit message quotes "
                                 "a purged text"))
    return out


def check_purged(path: str, facts: BlobFacts, registry: PurgeRegistry) -> list[Violation]:
    """Entries whose id or text is in the purge registry (under any normalisation it used)."""
    if not registry:
        return []
    out: list[Violation] = []
    for entry_id, number in facts.ids:
        if entry_id in registry.ids:
            out.append(Violation("MG606", path, number, f"entry {quote(entry_id)} was purged"))
    for text, number in facts.texts:
        if registry.holds_text(text):
            out.append(Violation("MG607", path, number, "the entry's text was purged"))
    return out


def check_not_purging(git_dir: Path, lease: float | None = None) -> list[Violation]:
    """No push lands while a purge rewrites history and prunes.

    ``git prune --expire=now`` would delete the objects of a push that git has
    moved out of quarantine but not yet referenced, so pushes wait for the purge.
    A lock left by a purge whose process is gone (same host), or older than the
    lease (``lease``, default memgit.purgeLease), no longer holds: a warning.
    """
    lock = PurgeLock.read(git_dir)
    interrupted = (git_dir / PURGE_JOURNAL).exists()
    if lock is None and not interrupted:
        return []
    if lease is None:
        from memgit.git.plumbing import config_get
        from memgit.policy.registry import LEASE_CONFIG

        lease = lease_seconds(config_get(git_dir, LEASE_CONFIG))
    stale = lock.stale(lease) if lock is not None else "no lock"
    if interrupted and stale:
        # killed between moving refs and recording the ids: the registry would not yet
        # refuse the purged texts (purge.resume)
        return [Violation("MG610", "", 0, "a purge was killed before it recorded what it "
                          "purged: run memgit purge --resume --yes on this drive, then "
                          "push again")]
    if lock is None:
        return []
    if stale:
        return [Violation("MG610", "", 0, f"a purge lock ({lock.describe()}) is ignored: "
                          f"{stale}", WARNING)]
    return [Violation("MG610", "", 0, f"a purge is running on this drive "
                      f"({lock.describe()})")]


def judge(items: Sequence[TreeItem], read: Callable[[str], bytes], policy: Policy, *,
          strict: bool = False, registry: PurgeRegistry | None = None,
          cache: dict[tuple[str, str], BlobFacts] | None = None,
          oids: Mapping[str, str] | None = None) -> list[Violation]:
    """Every rule that concerns one tree: paths, each file's content, the tree.

    ``read(path)`` returns a regular file's bytes. With ``cache`` and ``oids``
    (path -> blob id) a blob already judged is not read or judged again.
    """
    out: list[Violation] = []
    facts: dict[str, BlobFacts] = {}
    for item in items:
        out.extend(check_path(item.path, item.mode, policy))
        if item.mode not in (MODE_FILE, MODE_EXEC):
            continue
        key = (oids[item.path], item.path) if oids is not None and cache is not None else None
        blob_facts = cache.get(key) if key is not None and cache is not None else None
        if blob_facts is None:
            blob_facts = check_blob(item.path, read(item.path), policy)
            if key is not None and cache is not None:
                cache[key] = blob_facts
        facts[item.path] = blob_facts
        out.extend(blob_facts.violations)
        if registry:
            out.extend(check_purged(item.path, blob_facts, registry))
    out.extend(check_tree(items, facts, policy, strict=strict))
    out.extend(check_caps(*census(facts), policy))
    return sort_violations(out)


# --- caps (limits.max_entries, limits.max_age_days; memgit compact) -------------------

NEAR_LIMIT_CODES = ("MG290", "MG291")  # warnings the writer and pre-receive count as near_limit


def counts_toward_caps(path: str) -> bool:
    """The entries of topic files count toward the caps: not MEMORY.md (loaded whole,
    bounded by memory_bytes) and not the reserved paths (the board, twin/, imports/)."""
    return path.endswith(".md") and path != fmt.MEMORY_FILE and not fmt.is_reserved(path)


def census(facts: Mapping[str, BlobFacts]) -> tuple[int, str]:
    """(entries, earliest valid added date) of the topic files among ``facts``."""
    counted = [f for path, f in facts.items() if counts_toward_caps(path)]
    return sum(len(f.ids) for f in counted), min((f.oldest for f in counted if f.oldest),
                                                 default="")


def check_caps(entries: int, oldest: str, policy: Policy,
               today: str | None = None) -> list[Violation]:
    """Warnings, never errors (memgit compact acts on them): over a cap (MG291), or near
    limits.max_entries (MG290). ``today`` defaults to the date in the drive's time zone."""
    import datetime as _dt

    out: list[Violation] = []
    cap = policy.max_entries
    if cap and entries > cap:
        out.append(Violation("MG291", "", 0, f"{entries} entries in topic files, cap {cap} "
                             "(limits.max_entries)", WARNING))
    elif cap and entries > cap * policy.near_limit:
        out.append(Violation("MG290", "", 0, f"{entries} of {cap} entries (limits.max_entries)",
                             WARNING))
    if policy.max_age_days and oldest:
        if today is None and policy.timezone == "UTC":
            today = _dt.datetime.now(_dt.UTC).date().isoformat()  # no zoneinfo import
        elif today is None:
            import zoneinfo

            today = _dt.datetime.now(zoneinfo.ZoneInfo(policy.timezone)).date().isoformat()
        age = (_dt.date.fromisoformat(today) - _dt.date.fromisoformat(oldest)).days
        if age > policy.max_age_days:
            out.append(Violation("MG291", "", 0, f"an entry added {oldest} is {age} days old, "
                                 f"cap {policy.max_age_days} (limits.max_age_days)", WARNING))
    return out


def sort_violations(violations: Iterable[Violation]) -> list[Violation]:
    return sorted(violations, key=lambda v: (v.commit, v.path, v.line, v.code))
