"""The recall index: the SQLite cache of a drive's entries, rebuilt from the branch head
and searched by words. (Not the ``## Index`` section of MEMORY.md, which is
format.entries', nor git's staging area.)

Owns: ``reindex`` (every entry of the head as a row; incremental or full; entries
that leave are retired, not deleted), ``search`` (the FTS5 expression of a question,
ranked hits, retrievals counted; imports sqlite3 and nothing heavy).
May import: policy, state, format, git and what is below them; never the writer.
"""
