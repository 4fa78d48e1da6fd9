"""Answering a question from a drive: the read path, recall by words, by meaning or
both, and the context packet an agent loads.

Owns: ``read_path`` (queued writes retried and the recall index repaired before
every read; the front door ``recall``), ``hybrid`` (lexical, semantic and hybrid
modes and their fusion), ``context`` (the packet under a token budget), ``defaults``
(the modes, the default limit and budget, written once).
May import: write, index, embeddings, policy, state, format, git and below.
"""
