"""Obsidian vaults: wiki links, embeds, callouts, attachments.

* A wiki link ``[[Note]]``, ``[[folder/Note|shown]]``, ``[[Note#Heading]]`` to a note of
  the vault becomes a drive cross-link to that note's topic, its text read the same
  (``[[Notes/Note|Note]]``; a heading or block anchor moves into the shown text, since a
  drive link names a file). A note resolves the way Obsidian resolves it: by its path
  from the vault root, else by its name (the shortest path when several notes share
  it). A link to nothing in the vault is left as it was (lint warns: MG503).
* A paragraph that only embeds (``![[Note]]``, ``![[photo.jpg|200]]``) is structure: an
  embedded note is imported as its own topic, an attachment is left out. An embed
  inside a sentence becomes ``(attachment NAME, not imported)`` or a link to the note.
* A callout's marker (``> [!tip]- Title``) reads as ``Tip: Title``; a block id at the
  end of a paragraph (`` ^b15695``) is dropped.
* Files that are not Markdown (images, PDFs, ``.canvas``, ``.base``) are attachments:
  listed in the plan and in the receipt, never written to the drive (a drive holds
  Markdown entries). ``.obsidian/`` (settings) and ``.trash/`` are not read.

Wiki links inside code spans are text and stay as they are.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from memgit.format import entries as fmt

SKIPPED_FOLDERS = (".obsidian/", ".trash/")
ATTACHMENT = "attachment (left out: a drive holds Markdown entries only)"
_WIKI_RE = re.compile(r"(!?)\[\[([^\[\]|#^]*)((?:#\^?)[^\[\]|]*)?(?:\|([^\[\]]*))?\]\]")
_EMBEDS_ONLY_RE = re.compile(r"(?:!\[\[[^\[\]]+\]\]\s*)+\Z")
_CALLOUT_RE = re.compile(r"\[!([A-Za-z][\w-]*)\][+-]?\s*")
_BLOCK_ID_RE = re.compile(r"\s+\^[A-Za-z0-9-]+\Z")


def is_setting(rel: str) -> bool:
    """``.obsidian/`` and ``.trash/``: the vault's settings and bin, never memory."""
    return any(rel.startswith(folder) or f"/{folder}" in rel for folder in SKIPPED_FOLDERS)


class Vault:
    """The vault's notes by path and by name, for resolving wiki links to topics."""

    def __init__(self, topics: Mapping[str, str]) -> None:
        """``topics``: source path of each note -> its drive topic."""
        self.by_path: dict[str, str] = {}
        by_name: dict[str, list[tuple[int, str, str]]] = {}
        for rel, topic in topics.items():
            stem = _stem(rel)
            self.by_path[stem.casefold()] = topic
            name = stem.rsplit("/", 1)[-1].casefold()
            by_name.setdefault(name, []).append((rel.count("/"), rel, topic))
        self.by_name = {name: min(found)[2] for name, found in by_name.items()}

    def resolve(self, target: str) -> str | None:
        """The topic a link target names, or None when no note of the vault has it."""
        stem = _stem(target.strip().lstrip("/"))
        if not stem:
            return None
        found = self.by_path.get(stem.casefold())
        if found is None and "/" not in stem:
            found = self.by_name.get(stem.casefold())
        return found

    def rewrite(self, text: str) -> str:
        """``text`` with its wiki links pointing at drive topics (see the module docstring)."""
        if "[[" not in text:
            return text
        spans = fmt.code_spans(text)

        def replace(m: re.Match[str]) -> str:
            if any(start <= m.start() < end for start, end in spans):
                return m.group(0)
            bang, target, anchor, shown = m.groups()
            if not target.strip():
                return m.group(0)  # [[#Heading]]: a place in the same note
            topic = self.resolve(target)
            if topic is None:
                if bang:
                    return f"(attachment {_plain(target)}, not imported)"
                return m.group(0)
            label = shown if shown else target.strip() + (
                " > " + anchor.lstrip("#^") if anchor else "")
            link = topic[:-3]
            return f"[[{link}]]" if label == link else f"[[{link}|{_plain(label)}]]"

        return _WIKI_RE.sub(replace, text)

    def embed_only(self, text: str) -> str:
        """For a paragraph that only embeds: what it is (a reason), else ""."""
        if not _EMBEDS_ONLY_RE.match(text.strip()):
            return ""
        targets = [m.group(2) for m in _WIKI_RE.finditer(text)]
        if all(self.resolve(t) is not None for t in targets):
            return "embedded note (imported as its own topic)"
        return "embedded attachment (left out)"


def tidy(text: str) -> str:
    """A callout marker as a word (``[!tip]- Title`` -> ``Tip: Title``), a trailing block
    id dropped."""
    text = _BLOCK_ID_RE.sub("", text)
    m = _CALLOUT_RE.match(text)
    if m:
        rest = text[m.end():]
        text = m.group(1).capitalize() + (": " + rest if rest else "")
    return text


def _stem(path: str) -> str:
    return path[:-3] if path.endswith(".md") else path


def _plain(text: str) -> str:
    """A shown text fit for a link: no brackets or pipes, one line."""
    return " ".join(text.replace("[", "(").replace("]", ")").replace("|", "/").split())
