"""What may land in working memory: keys, scopes, values and the layout of its ref.

Working memory (docs/working-memory.md) lives on its own ref, ``refs/memgit/working``,
never on the branch. Each value is one file at ``<scope>/<bucket>/<hex of the key's UTF-8>``
(buckets: working.layout)
holding one line: ``- <value as compact ASCII JSON> [id: w-...; set: <UTC time>]``. The
line is shaped like an entry so that ``memgit purge ID`` removes it from every commit
(purge removes entry lines by id in every file of every ref). This module is the one
implementation of the rules: the command line, the MCP tools and pre-receive call it;
it uses git plumbing only (pre-receive must not import pygit2).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memgit.format.entries import parse_entry
from memgit.git.plumbing import git_plumbing
from memgit.git.raw import ObjectReader
from memgit.policy import WORKING_REF
from memgit.policy.judge import Violation, secret_kinds
from memgit.policy.registry import PurgeRegistry
from memgit.policy.settings import Policy

MAX_KEY_CHARS = 256
MAX_VALUE_BYTES = 64 * 1024
# the longest value line: 64 KiB of JSON whose every character is \uXXXX-escaped, plus
# the bullet and the metadata group
MAX_STORED_BYTES = 6 * MAX_VALUE_BYTES + 256
DEFAULT_AGENT = "default"
LAYOUT = "a working memory file is agents/AGENT/BUCKET/KEYHEX or " \
         "teams/TEAM/agents/AGENT/BUCKET/KEYHEX"
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
_ID_RE = re.compile(r"w-[0-9a-f]{32}\Z")
_HEX_RE = re.compile(r"(?:[0-9a-f]{2})+\Z")
_SET_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\Z")
# keys: any text but control characters (C0, DEL, C1): a key is printed on one line
_CONTROL_RE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


@dataclass(frozen=True)
class Scope:
    """Whose working memory: an agent, optionally within a team."""

    agent: str
    team: str | None = None

    @property
    def path(self) -> str:
        """The folder of this scope in the working ref's tree (no trailing slash)."""
        base = f"agents/{self.agent}"
        return f"teams/{self.team}/{base}" if self.team else base

    def describe(self) -> str:
        return f"agent {self.agent}" + (f" of team {self.team}" if self.team else "")


@dataclass(frozen=True)
class Value:
    """One stored value: the JSON value, its id (what purge names) and when it was set."""

    value: Any
    id: str
    set_at: str


def refused(code: str, message: str, path: str = "") -> Violation:
    return Violation(code, path, 0, message)


def check_scope(agent: str, team: str | None) -> list[Violation]:
    """Agent and team names: letters, digits, '.', '_', '-', at most 64, not a path."""
    out = []
    for label, name in (("agent", agent), ("team", team)):
        if name is not None and not _NAME_RE.match(name):
            out.append(refused("MG704", f"the {label} name is not a name: use letters, "
                                        "digits, '.', '_' and '-' (at most 64), starting "
                                        "with a letter or digit"))
    return out


def check_key(key: str, policy: Policy) -> list[Violation]:
    """A key: 1 to 256 characters, no control character, no credential (never echoed)."""
    if not key:
        return [refused("MG701", "the key is empty")]
    if len(key) > MAX_KEY_CHARS:
        return [refused("MG701", f"the key has {len(key)} characters, at most "
                                 f"{MAX_KEY_CHARS}")]
    if _CONTROL_RE.search(key):
        return [refused("MG701", "the key holds a control character or a line break")]
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return [refused("MG701", "the key is not valid Unicode (a lone surrogate)")]
    kinds = secret_kinds(key, policy)
    if kinds:
        return [refused("MG401", f"the key holds a possible credential: {kinds[0]}")]
    return []


def _strings(value: Any) -> Iterable[str]:
    """Every string of a JSON value (object keys included), depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for k, item in value.items():
            yield k
            yield from _strings(item)


def encode_value(value: Any) -> str:
    """The stored form of a value: compact JSON, ASCII only (one line, whatever it holds)."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def parse_json(text: str) -> tuple[Any, list[Violation]]:
    """Read a value given as JSON text; a violation when it is not JSON."""
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        return None, [refused("MG702", f"the value is not JSON (line {exc.lineno}, column "
                                       f"{exc.colno})")]
    except (ValueError, RecursionError):
        return None, [refused("MG702", "the value is not JSON (NaN, Infinity, or nested "
                                       "too deeply)")]
    return value, []


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def check_value(value: Any, policy: Policy) -> list[Violation]:
    """A value: JSON of at most 64 KiB (its compact form) holding no credential."""
    try:
        text = encode_value(value)
    except (ValueError, TypeError, RecursionError):
        return [refused("MG702", "the value is not JSON (NaN, Infinity or a type JSON "
                                 "does not have)")]
    size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())
    if size > MAX_VALUE_BYTES:
        return [refused("MG703", f"the value is {size} bytes of JSON, at most "
                                 f"{MAX_VALUE_BYTES} (64 KiB)")]
    # scanned as a person reads it: the whole compact JSON, then each string's lines
    for piece in [json.dumps(value, ensure_ascii=False, separators=(",", ":")),
                  *(line for s in _strings(value) for line in s.splitlines()), text]:
        kinds = secret_kinds(piece, policy)
        if kinds:
            return [refused("MG401", f"the value holds a possible credential: {kinds[0]}")]
    return []


def key_name(key: str) -> str:
    """The file name of a key: the hex of its UTF-8 bytes. Hex keeps byte order, so git's
    tree order (byte order of names) is the keys' ascending UTF-8 order."""
    return key.encode("utf-8").hex()


def name_key(name: str) -> str | None:
    """The key a file name stands for; None when the name is not one."""
    if not _HEX_RE.match(name):
        return None
    try:
        return bytes.fromhex(name).decode("utf-8")
    except UnicodeDecodeError:
        return None


def value_id(scope: Scope, key: str, generation: int = 0) -> str:
    """A key's id: the same for every value it takes, so one purge removes them all; a
    later generation when the registry already holds the first (a purged key)."""
    seed = f"{scope.path}\0{key}\0{generation}" if generation else f"{scope.path}\0{key}"
    return "w-" + hashlib.sha256(seed.encode()).hexdigest()[:32]


def value_line(value: Any, value_id: str, set_at: str) -> bytes:
    """The file content for a value (see the module docstring)."""
    return f"- {encode_value(value)} [id: {value_id}; set: {set_at}]\n".encode()


def parse_value(data: bytes) -> Value | None:
    """The value a file holds; None for an empty file (a purged value) or anything else
    that is not a value line."""
    text = data.decode("utf-8", errors="replace").rstrip("\n")
    if not text or "\n" in text:
        return None
    entry = parse_entry(text)
    if entry is None or not entry.group:
        return None
    meta = entry.meta
    try:
        value = json.loads(entry.text)
    except ValueError:
        return None
    return Value(value, meta.get("id", "").strip(), meta.get("set", "").strip())


def judge_file(path: str, data: bytes, policy: Policy,
               registry: PurgeRegistry | None) -> list[Violation]:
    """The rules on one file of the working ref: its path is a scope and a key, its content
    one value line (or empty: a purged value) with a valid id and time and a value the
    rules above accept; an id or text purged from the drive may not return."""
    found = split_path(path)
    if found is None:
        return [refused("MG705", LAYOUT, path)]
    out = check_key(found[1], policy)
    if not data or out:
        return out
    parsed = parse_value(data)
    if parsed is None or not _ID_RE.match(parsed.id) or not _SET_RE.match(parsed.set_at):
        return [refused("MG705", "not a working memory value line "
                                 "(- JSON [id: w-...; set: TIME])", path)]
    out = check_value(parsed.value, policy)
    if registry and parsed.id in registry.ids:
        out.append(refused("MG606", f"{parsed.id} was purged from the drive", path))
    elif registry and registry.holds_text(encode_value(parsed.value)):
        out.append(refused("MG607", "this value was purged from the drive", path))
    return [Violation(v.code, path, 1, v.message) for v in out]


def split_path(path: str) -> tuple[Scope, str] | None:
    """The scope and key of a working memory file's path (``agents/AGENT/BUCKET/KEYHEX`` or
    ``teams/TEAM/agents/AGENT/BUCKET/KEYHEX``, working.layout); None when it is not one
    (a bucket must be hex naming a key at or before the file's)."""
    parts = path.split("/")
    if len(parts) == 4 and parts[0] == "agents":
        team, agent = None, parts[1]
    elif len(parts) == 6 and parts[0] == "teams" and parts[2] == "agents":
        team, agent = parts[1], parts[3]
    else:
        return None
    bucket, name = parts[-2], parts[-1]
    key = name_key(name)
    if key is None or name_key(bucket) is None or bucket > name or not _NAME_RE.match(agent) \
            or (team is not None and not _NAME_RE.match(team)):
        return None
    return Scope(agent, team), key


def judge_push(git_dir: Path, old: str, new: str, policy: Policy,
               registry: PurgeRegistry | None, reader: ObjectReader) -> list[Violation]:
    """pre-receive's rules on an update of the working ref: never deleted, only moved
    forward, every path of the new tip a scope and a key, every file the push brings a
    value the rules accept. Runs in pre-receive's quarantine: git's environment there
    makes the pushed objects readable and ``--not --all`` names what the drive had."""
    if set(new) == {"0"}:
        return [refused("MG603", f"{WORKING_REF} may not be deleted")]
    info = reader.info_many([new])[new]
    if info is None or info[0] != "commit":
        return [refused("MG602", f"{WORKING_REF} must point at a commit")]
    if set(old) != {"0"} and git_plumbing(git_dir, "merge-base", "--is-ancestor",
                                          old, new).returncode != 0:
        return [refused("MG604", f"the update of {WORKING_REF} is not a fast-forward")]
    out: list[Violation] = []
    listing = git_plumbing(git_dir, "ls-tree", "-r", "-z", "--full-tree", new)
    last = ("", "")  # ls-tree lists in tree order: per scope, buckets then files by name
    for row in listing.stdout.split(b"\0"):
        if not row:
            continue
        meta, _, raw_path = row.partition(b"\t")
        path = raw_path.decode("utf-8", "replace")
        if meta.split(b" ")[0] != b"100644" or split_path(path) is None:
            out.append(refused("MG705", LAYOUT + " (mode 100644)", path))
            continue
        scope_path, _, name = path.rpartition("/")
        scope_path = scope_path.rpartition("/")[0]
        if scope_path == last[0] and name <= last[1]:  # keys ascend across the buckets
            out.append(refused("MG705", "a key sorts before the bucket it is in", path))
        last = (scope_path, name)
    objects = git_plumbing(git_dir, "rev-list", "--objects", new, "--not", "--all")
    paths: dict[str, str] = {}
    for line in objects.stdout.decode("utf-8", "replace").splitlines():
        oid, _, path = line.partition(" ")
        if path and split_path(path) is not None:
            paths.setdefault(oid, path)
    sizes = reader.info_many(paths)
    for oid, size in sizes.items():  # refused unread: no value line is this long
        if size is not None and size[1] > MAX_STORED_BYTES:
            out.append(refused("MG703", f"a file of {size[1]} bytes, at most "
                                        f"{MAX_STORED_BYTES}", paths.pop(oid)))
    for oid, got in reader.read_many(paths).items():
        if got is not None and got[0] == "blob":
            out.extend(judge_file(paths[oid], got[1], policy, registry))
    return out
