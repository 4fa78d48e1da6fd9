"""The drive format: Markdown lines, entries and their metadata, ids, links and the
``## Index`` section of MEMORY.md; the CommonMark block structure under them.

Owns: ``entries`` (lines, entries, metadata, ids, links, the Index section),
``blocks`` (code blocks, front matter and every other block of a file).
May import: safe_text only. Parsing then serialising a line gives back its bytes.
"""
