"""What a damaged state database still holds intact is carried over (memgit.state.salvage).

The repairs themselves run through real processes in test_repair.py; here the rules of
what may be carried together, and the meta keys the module names without importing."""

from __future__ import annotations

from memgit.state import salvage
from memgit.state import vectors as vector_rows

ALL = set(salvage.INDEX_TABLES | salvage.VECTOR_TABLES | {"meta", "events", "tokens"})


def test_vector_meta_keys_are_the_vectors_modules_own() -> None:
    assert salvage.VECTOR_META == (vector_rows.MODEL_KEY, vector_rows.DIMENSION_KEY,
                                   vector_rows.STAMP_KEY, vector_rows.DONE_KEY)


def test_damaged_vectors_leave_everything_else() -> None:
    assert salvage._carried(ALL, {"vectors"}) == ALL - {"vectors"}


def test_a_damaged_part_of_the_index_drops_the_index_and_its_vectors() -> None:
    for part in sorted(salvage.INDEX_TABLES):
        assert salvage._carried(ALL, {part}) == {"meta", "events", "tokens"}, part


def test_without_meta_the_index_cannot_be_trusted() -> None:
    assert salvage._carried(ALL, {"meta"}) == {"events", "tokens"}


def test_an_index_missing_a_table_is_not_carried() -> None:
    assert salvage._carried(ALL - {"facts_fts_idx"}, set()) == {"meta", "events", "tokens"}


def test_what_the_repair_says() -> None:
    assert salvage.outcome([], []) == "rebuilt from the drive"
    assert salvage.outcome(["meta"], ["vectors"]) == \
        "every table carried over but the vectors (embedded again in the background)"
    assert salvage.outcome(["meta"], ["facts", "facts_fts_data", "vectors", "tokens"]) == (
        "every table carried over but the recall index (rebuilt from the drive) and the "
        "vectors (embedded again in the background) and the tokens table")
