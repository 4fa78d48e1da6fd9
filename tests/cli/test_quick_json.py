"""quick_json.dumps writes what json.dumps(indent=2, ensure_ascii=False) writes, for any
JSON value (every code point in strings, floats of any size, nesting), and hands other
types to json."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from memgit.cli.quick_json import dumps

SCALARS = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True)
           | st.text(alphabet=st.characters(codec=None, exclude_categories=("Cs",))))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(), inner, max_size=4), max_leaves=20)


@settings(max_examples=600, deadline=None)
@given(VALUES)
def test_dumps_is_json_dumps(value: object) -> None:
    assert dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_every_control_character_quote_and_backslash() -> None:
    text = "".join(chr(i) for i in range(0x21)) + '"\\\x7f\u2028\u00e9\U0001f600'
    value = [{"text": text, text: [1.5, -0.0, 1e300, float("inf"), float("-inf")]}, [], {}]
    assert dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_other_types_go_to_json() -> None:
    class Name(str):
        pass

    value = {1: (True, None), "n": Name("x"), "t": (1, 2)}
    assert dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)
    assert dumps([{}]) == "[\n  {}\n]"  # a literal the comparison above cannot fake
