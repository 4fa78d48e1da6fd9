"""policy.working: the rules on working memory keys, values and files (in process)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from memgit.format.entries import parse_entry
from memgit.policy.registry import PurgeRegistry
from memgit.policy.settings import Policy
from memgit.policy.working import (
    MAX_VALUE_BYTES,
    Scope,
    check_key,
    check_scope,
    check_value,
    judge_file,
    key_name,
    name_key,
    parse_json,
    parse_value,
    split_path,
    value_id,
    value_line,
)

POLICY = Policy()
FAKE_KEY = "AKIAZ3MBQX7TQW4RWNB2"  # synthetic, of the real shape
SET_AT = "2026-12-04T05:00:00.000Z"
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)


def codes(violations: list) -> list[str]:  # type: ignore[type-arg]
    return [v.code for v in violations]


@given(JSON)
def test_a_value_line_is_one_entry_line_that_gives_the_value_back(value: object) -> None:
    line = value_line(value, "w-" + "a" * 32, SET_AT)
    assert line.endswith(b"\n") and line.count(b"\n") == 1 and line.isascii()
    parsed = parse_value(line)
    assert parsed is not None and parsed.value == value
    assert parsed.id == "w-" + "a" * 32 and parsed.set_at == SET_AT
    # purge finds it as an entry by its id (purge removes entry lines by id)
    entry = parse_entry(line.decode().rstrip("\n"))
    assert entry is not None and entry.id == "w-" + "a" * 32


@given(st.text(min_size=1, max_size=40))
def test_key_names_keep_utf8_order(key: str) -> None:
    try:
        key.encode()
    except UnicodeEncodeError:
        return
    assert name_key(key_name(key)) == key
    other = key + "a"
    assert (key_name(key) < key_name(other)) == (key.encode() < other.encode())


def test_keys_and_scopes() -> None:
    assert check_key("plan/step", POLICY) == [] and check_key("k" * 256, POLICY) == []
    assert codes(check_key("", POLICY)) == ["MG701"]
    assert codes(check_key("k" * 257, POLICY)) == ["MG701"]
    assert codes(check_key("a\u2028b", POLICY)) == ["MG701"]
    refused = check_key(f"key {FAKE_KEY}", POLICY)
    assert codes(refused) == ["MG401"] and FAKE_KEY not in refused[0].message
    assert check_scope("agent-1", "team.a") == []
    assert codes(check_scope("..", None)) == ["MG704"]
    assert codes(check_scope("a", "x/y")) == ["MG704"]


def test_values() -> None:
    assert check_value({"a": [1, 2.5, None, True]}, POLICY) == []
    assert codes(check_value(float("nan"), POLICY)) == ["MG702"]
    assert codes(check_value("x" * (MAX_VALUE_BYTES - 2), POLICY)) == []
    assert codes(check_value("x" * (MAX_VALUE_BYTES - 1), POLICY)) == ["MG703"]
    # 64 KiB of JSON as UTF-8, not of the stored \\u escapes
    assert codes(check_value("é" * (MAX_VALUE_BYTES // 2 - 1), POLICY)) == []
    for hidden in ({"nested": {"deep": [f"key={FAKE_KEY}"]}}, {FAKE_KEY: 1},
                   f"first line\naws {FAKE_KEY}"):
        refused = check_value(hidden, POLICY)
        assert codes(refused) == ["MG401"] and FAKE_KEY not in refused[0].message
    assert codes(parse_json("{bad")[1]) == ["MG702"]
    assert codes(parse_json("Infinity")[1]) == ["MG702"]
    assert parse_json('{"a": 1}') == ({"a": 1}, [])


def test_files_of_the_working_ref() -> None:
    scope = Scope("planner", "core")
    name = key_name("goal")
    path = f"{scope.path}/{key_name('a')}/{name}"  # bucket named by a key at or before it
    assert split_path(path) == (scope, "goal")
    assert split_path(f"agents/x/{key_name('k')}/{key_name('k')}") == (Scope("x"), "k")
    for bad in ("notes.md", f"agents/x/{name}", f"agents/x/zz/{name}",
                f"agents/x/{key_name('z')}/{name}",  # the bucket sorts after the key
                f"agents/../{name}/{name}", f"teams/t/x/a/{name}/{name}"):
        assert split_path(bad) is None, bad
        assert codes(judge_file(bad, b"", POLICY, None)) == ["MG705"]
    good = value_line({"step": 1}, value_id(scope, "goal"), SET_AT)
    assert judge_file(path, good, POLICY, None) == []
    assert judge_file(path, b"", POLICY, None) == []  # what a purge leaves
    assert codes(judge_file(path, b"- 1 [id: m-1; set: now]\n", POLICY, None)) == ["MG705"]
    secret = value_line(f"aws {FAKE_KEY}", value_id(scope, "goal"), SET_AT)
    assert codes(judge_file(path, secret, POLICY, None)) == ["MG401"]
    registry = PurgeRegistry()
    registry.ids.add(value_id(scope, "goal"))
    assert codes(judge_file(path, good, POLICY, registry)) == ["MG606"]
    assert json.loads(good.decode()[2:good.decode().index(" [id:")]) == {"step": 1}
