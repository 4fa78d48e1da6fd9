"""Which file each imported line goes to: topic files kept under the file limit.

A source note may hold more than one drive file can (``limits.file_bytes``, 64 KiB
by default). Its lines fill the topic file up to :data:`FILL` of the limit (the file's
size in the drive counted first), then ``<topic>-part-2.md``, ``-part-3.md``, ...:
each part stays under the limit with room for the writes that come later, and the
Index lists every part as it lists every topic file. Lines keep their order: a part
is never filled again once a later part was started.

A topic already named ``<stem>-part-N.md`` continues the chain of ``<stem>.md`` from
part N (a plan's topics are laid out already; laying them out again on an unchanged
drive gives the same files). MEMORY.md, which every session loads, keeps room for the
Index lines of the files the import adds. A line the writer will skip as a duplicate
of the drive's takes no room.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from memgit.format import entries as fmt
from memgit.policy.settings import Policy

FILL = 0.75  # of limits.file_bytes: a part's share, the rest is room for later writes
_PART_RE = re.compile(r"(.+)-part-(\d{1,6})\.md\Z")


def split_name(topic: str) -> tuple[str, int]:
    """(the chain's first file, the part number) of a topic: ``a/b-part-3.md`` ->
    (``a/b.md``, 3); ``a/b.md`` -> (``a/b.md``, 1)."""
    m = _PART_RE.match(topic)
    if m and int(m.group(2)) >= 2:
        return m.group(1) + ".md", int(m.group(2))
    return topic, 1


def part_name(first: str, part: int) -> str:
    """The file of part ``part`` of the chain that starts at ``first``."""
    return first if part == 1 else f"{first[:-3]}-part-{part}.md"


def header_bytes(path: str) -> int:
    """About what the writer puts in a new topic file before its first line (a title)."""
    return len(path.encode()) + 4


class Layout:
    """Places lines in files of at most ``FILL * file_bytes``, given the drive's sizes."""

    def __init__(self, policy: Policy, sizes: Mapping[str, int], fill: float = FILL) -> None:
        self.budget = int(policy.file_bytes * fill)
        self.sizes = {fmt.fold_path(path): size for path, size in sizes.items()}
        self.paths = set(sizes)
        self.part: dict[str, int] = {}  # chain -> the part being filled

    def place(self, lines: Sequence[tuple[str, str, bool]]) -> list[str]:
        """The file of each ``(topic, line, skipped)``, in order (see the module
        docstring); MEMORY.md's lines are placed last, knowing the new files."""
        out = [""] * len(lines)
        memory = {n for n, (topic, _, _) in enumerate(lines)
                  if split_name(topic)[0] == fmt.MEMORY_FILE}
        for n in range(len(lines)):
            if n not in memory:
                out[n] = self._put(*lines[n])
        index = sum(len(f"- [[{p[:-3]}]]\n".encode()) for p in self.paths
                    if p.endswith(".md") and not fmt.is_reserved(p))
        for n in sorted(memory):
            out[n] = self._put(*lines[n], reserve=index)
        return out

    def _put(self, topic: str, line: str, skipped: bool, reserve: int = 0) -> str:
        first, part = split_name(topic)
        part = max(part, self.part.get(first, 1))
        cost = 0 if skipped else len(line.encode()) + 1
        while True:
            path = part_name(first, part)
            empty = header_bytes(path)
            size = self.sizes.get(fmt.fold_path(path), empty)
            room = reserve if path == fmt.MEMORY_FILE else 0  # MEMORY.md holds the Index
            # an empty part takes even a line larger than its share: it cannot be split
            if size + cost + room <= self.budget or size <= empty:
                break
            part += 1
        self.part[first] = part
        self.sizes[fmt.fold_path(path)] = size + cost
        self.paths.add(path)
        return path
