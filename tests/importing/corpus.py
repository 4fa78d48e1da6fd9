"""A large memory folder for import tests and bench/bench_import.py, made of real text.

``make_notes(folder, count, low, high)`` writes ``count`` basic-memory style notes of
``low``..``high`` bytes each (front matter, headings, list items, prose, code blocks).
Every block is taken from the basic-memory knowledge base in
tests/data/realworld/basic-memory/specs (origins in its ORIGIN.md) and made unique by a
suffix naming the note and the block, so no entry of the import is a repeat. Seeded:
the same arguments give the same folder.
"""

from __future__ import annotations

import random
from pathlib import Path

SPECS = Path(__file__).parents[1] / "data" / "realworld" / "basic-memory" / "specs"


def _blocks() -> tuple[list[str], list[str], list[str]]:
    """(list items, prose paragraphs, fenced code blocks) of the specs, one line each
    for items and prose."""
    items: list[str] = []
    prose: list[str] = []
    code: list[str] = []
    for path in sorted(SPECS.glob("*.md")):
        lines = path.read_text(encoding="utf-8").splitlines()
        fence: list[str] | None = None
        for line in lines:
            if line.startswith("```"):
                if fence is None:
                    fence = [line]
                else:
                    fence.append(line)
                    if 3 <= len(fence) <= 20:
                        code.append("\n".join(fence))
                    fence = None
                continue
            if fence is not None:
                fence.append(line)
            elif line.startswith("- ") and len(line) > 20 and "<" not in line:
                items.append(line[2:])
            elif line[:1].isalpha() and len(line) > 60 and "<" not in line:
                prose.append(line)
    return items, prose, code


def make_notes(folder: Path, count: int = 200, low: int = 40 * 1024, high: int = 120 * 1024,
               seed: int = 23) -> int:
    """Write the notes; returns the number of list items and paragraphs written."""
    rng = random.Random(seed)
    items, prose, code = _blocks()
    folder.mkdir(parents=True, exist_ok=True)
    written = 0
    for note in range(count):
        target = rng.randint(low, high)
        parts = [f"---\ntitle: Note {note}\ntype: note\npermalink: notes/note-{note}\n"
                 f"tags:\n- generated\n- spec\n---\n\n# Note {note}\n"]
        size = len(parts[0].encode())
        block = 0
        while size < target:
            block += 1
            if block % 12 == 1:
                text = f"\n## Section {block // 12 + 1}\n\n"
            elif block % 17 == 0:
                text = "\n" + rng.choice(code) + "\n\n"
            elif block % 5 == 0:
                text = f"\n{rng.choice(prose)} (note {note}, block {block})\n\n"
                written += 1
            else:
                text = f"- {rng.choice(items)} (note {note}, block {block})\n"
                written += 1
            parts.append(text)
            size += len(text.encode())
        (folder / f"note-{note:03d}.md").write_text("".join(parts), encoding="utf-8")
    return written
