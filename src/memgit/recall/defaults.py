"""What recall and the context packet do when nobody says otherwise, written once.

It imports nothing, so the quick path may load it.
"""

MODES = ("hybrid", "lexical", "semantic")  # hybrid: words and meaning; lexical: words
DEFAULT_LIMIT = 5  # hits a recall returns
DEFAULT_BUDGET = 2000  # tokens of the context packet (estimated conservatively)
