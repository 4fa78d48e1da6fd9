"""Vectors for semantic recall: the embedders, a drive's vectors and filling them in
the background.

Owns: ``embedders`` (memgit's own embedders and the checks of what any embedder
returns), ``local`` (multilingual-e5-small in process), ``fastquery`` (its fast query
encoder), ``openai_api`` (any OpenAI-compatible endpoint), ``vectors`` (storage form,
nearest neighbours, rank fusion), ``embed`` (the configured embedder, embedding what
lacks a vector), ``fill`` (the background filler).
May import: policy, state, plugins, http_client and what is below them; never
index, write or recall (they call it).
"""
