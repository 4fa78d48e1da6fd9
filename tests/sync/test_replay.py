"""Entry operations (memgit.sync.replay): computing them between trees, applying them anywhere."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memgit.format import entries as fmt
from memgit.sync.replay import (
    AddEntry,
    DeleteEntry,
    EditEntry,
    EntryConflictError,
    MoveEntry,
    SetLayout,
    apply_replay_ops,
    compute_ops,
    entry_map,
    op_dict,
)

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

PATHS = ["a.md", "b.md", "dir/c.md", "notes.sql"]
WORDS = ["alpha", "beta", "gamma", "delta", "joe", "likes", "tea", "ships", "on", "friday"]


def drive_tree(files: dict[str, str]) -> dict[str, str]:
    """A tree in the drive format: MEMORY.md's Index current."""
    out = dict(files)
    out[fmt.MEMORY_FILE] = fmt.regenerate_index_section(out[fmt.MEMORY_FILE], list(out))
    return out


texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
bullets = st.sampled_from(["- ", "* ", "  - "])
text_lines = st.one_of(
    st.just(""),
    st.sampled_from(["## Work", "## Home", "### Notes", "Some prose here.", "```", "- [[a]]"]),
    texts.map(lambda t: "Prose: " + t),
)


@st.composite
def entry_line(draw: st.DrawFn, entry_id: str | None) -> str:
    bullet = draw(bullets)
    text = draw(texts)
    if entry_id is not None:
        return f"{bullet}{text} [source: imported:unknown; added: 2026-01-02; id: {entry_id}]"
    if draw(st.booleans()):
        return f"{bullet}{text} [source: claude-code:session/{draw(st.integers(1, 3))}]"
    return f"{bullet}{text}"


@st.composite
def trees(draw: st.DrawFn, ids: list[str], idless: bool = True) -> dict[str, str]:
    """A drive tree; explicit ids are drawn from ``ids`` without repeats; with
    ``idless`` also bullets without an id (whose ids may repeat across files)."""
    chosen = draw(st.lists(st.sampled_from(ids), unique=True, max_size=len(ids)))
    paths = draw(st.lists(st.sampled_from(PATHS), unique=True, max_size=3))
    files: dict[str, list[str]] = {fmt.MEMORY_FILE: [draw(st.sampled_from(
        ["# Memory", "# Memory: Joe"])), ""]}
    for p in paths:
        files[p] = [draw(st.sampled_from(["# Topic", "# Other topic", "Intro"]))]
    names = list(files)
    for entry_id in chosen:
        where = draw(st.sampled_from(names))
        files[where].append(draw(entry_line(entry_id)))
    for _ in range(draw(st.integers(0, 6))):
        where = draw(st.sampled_from(names))
        pos = draw(st.integers(0, len(files[where])))
        line = draw(st.one_of(text_lines, entry_line(None)) if idless else text_lines)
        files[where].insert(pos, line)
    out: dict[str, str] = {}
    for name, lines in files.items():
        if name == fmt.MEMORY_FILE:
            lines = [ln for ln in lines if ln != "```"]  # keep the Index outside a fence
        eol = draw(st.sampled_from(["\n", "\n", "\n", "\r\n"]))
        text = eol.join(lines)
        out[name] = text + ("" if draw(st.integers(0, 5)) == 0 else eol)
    return drive_tree(out)


@st.composite
def tree_pairs(draw: st.DrawFn) -> tuple[dict[str, str], dict[str, str]]:
    ids = [fmt.new_id(1_700_000_000_000 + i) for i in range(8)]
    return draw(trees(ids)), draw(trees(ids))


def has_conflict_marker(tree: dict[str, str]) -> bool:
    return any(line.startswith(("<<<<<<<", "=======", ">>>>>>>"))
               for text in tree.values() for line in text.splitlines())


@SETTINGS
@given(tree_pairs())
def test_diff_applied_gives_target(pair: tuple[dict[str, str], dict[str, str]]) -> None:
    a, b = pair
    ops = compute_ops(a, b)
    result = apply_replay_ops(a, ops)
    assert result.tree == b
    assert result.conflicts == []
    # Told which paths changed (as a git tree diff would), the same result.
    changed = [p for p in set(a) | set(b) if a.get(p) != b.get(p)]
    assert apply_replay_ops(a, compute_ops(a, b, changed)).tree == b


@SETTINGS
@given(st.data())
def test_changed_paths_only_gives_the_same_ops(data: st.DataObject) -> None:
    """With explicit ids only, parsing just the changed files gives the same ops."""
    ids = [fmt.new_id(1_700_000_000_000 + i) for i in range(8)]
    a = data.draw(trees(ids, idless=False))
    b = data.draw(trees(ids, idless=False))
    changed = [p for p in set(a) | set(b) if a.get(p) != b.get(p)]
    assert compute_ops(a, b, changed) == compute_ops(a, b)


@SETTINGS
@given(tree_pairs())
def test_applying_to_the_result_is_idempotent(pair: tuple[dict[str, str], dict[str, str]]) -> None:
    a, b = pair
    ops = compute_ops(a, b)
    assert apply_replay_ops(b, ops).tree == b
    once = apply_replay_ops(a, ops).tree
    assert apply_replay_ops(once, ops).tree == b


@st.composite
def tree_triples(draw: st.DrawFn) -> tuple[dict[str, str], ...]:
    ids = [fmt.new_id(1_700_000_000_000 + i) for i in range(8)]
    return draw(trees(ids)), draw(trees(ids)), draw(trees(ids))


def entry_lines(tree: dict[str, str]) -> list[str]:
    return [e.id for path, text in tree.items() if path.endswith(".md")
            for _ln, e in fmt.parse_document(path, text).entries()]


@SETTINGS
@given(tree_triples(), st.sampled_from(["local", "server", "newest"]))
def test_applying_elsewhere_loses_and_duplicates_nothing(trio: tuple[dict[str, str], ...],
                                                        policy: str) -> None:
    """Ops a->b applied to an unrelated tree c: every entry of c the ops do not
    touch survives unchanged, every entry b added is there, no new duplicate."""
    a, b, c = trio
    ops = compute_ops(a, b)
    result = apply_replay_ops(c, ops, on_conflict=policy, when=1, theirs_when=lambda _k: 2).tree
    touched = {op.id for op in ops}
    before, after = entry_map(c), entry_map(result)
    for entry_id, value in before.items():
        if entry_id not in touched:
            assert after.get(entry_id) == value
    added = {op.id for op in ops if isinstance(op, AddEntry)}
    assert added <= set(after)
    ids = [i for i in entry_lines(result) if i.startswith("m-")]
    assert len(ids) == len(set(ids))
    assert not has_conflict_marker(result)


def _mutate(tree: dict[str, str], edits: dict[str, str], deletes: set[str],
            adds: list[tuple[str, str]]) -> dict[str, str]:
    """Change a tree by hand: edit/delete lines of given ids, append new entries."""
    out: dict[str, str] = {}
    for path, text in tree.items():
        lines = []
        for content, eol in fmt.split_lines(text):
            entry = fmt.parse_entry(content) if path.endswith(".md") else None
            entry_id = entry.id if entry is not None and entry.has_explicit_id else None
            if entry_id in deletes:
                continue
            if entry_id in edits:
                content = edits[entry_id]
            lines.append(content + eol)
        out[path] = "".join(lines)
    for path, line in adds:
        text = out.get(path, "")
        if path == fmt.MEMORY_FILE:  # before the Index: lines there are not entries
            head, sep, tail = text.partition("## Index")
            out[path] = head + line + "\n\n" + sep + tail
            continue
        if text and not text.endswith("\n"):
            text += "\n"
        out[path] = text + line + "\n"
    return drive_tree(out)


@st.composite
def disjoint_changes(draw: st.DrawFn):
    ids = [fmt.new_id(1_700_000_000_000 + i) for i in range(10)]
    a = draw(trees(ids))
    present = sorted(i for i in entry_map(a) if i.startswith("m-"))
    mine = draw(st.lists(st.sampled_from(present), unique=True)) if present else []
    split = draw(st.integers(0, len(mine)))
    sides = []
    fresh = iter(fmt.new_id(1_800_000_000_000 + i) for i in range(20))
    for part in (mine[:split], mine[split:]):
        edits, deletes = {}, set()
        for entry_id in part:
            if draw(st.booleans()):
                deletes.add(entry_id)
            else:
                edits[entry_id] = f"- edited {draw(texts)} [id: {entry_id}]"
        adds = [(draw(st.sampled_from([fmt.MEMORY_FILE, *a.keys()])),
                 f"- new {draw(texts)} [id: {next(fresh)}]")
                for _ in range(draw(st.integers(0, 2)))]
        # (a line added inside an open code fence would not be an entry)
        adds = [(p, line) for p, line in adds if p.endswith(".md") and "```" not in a[p]]
        sides.append(_mutate(a, edits, deletes, adds))
    return a, sides[0], sides[1]


@SETTINGS
@given(disjoint_changes())
def test_ops_on_different_ids_commute(case) -> None:
    a, b1, b2 = case
    ops1, ops2 = compute_ops(a, b1), compute_ops(a, b2)
    one_two = apply_replay_ops(apply_replay_ops(a, ops1).tree, ops2)
    two_one = apply_replay_ops(apply_replay_ops(a, ops2).tree, ops1)
    assert one_two.conflicts == [] and two_one.conflicts == []
    assert entry_map(one_two.tree) == entry_map(two_one.tree)
    # Both sides' changes are there: the edits, the deletes, the adds.
    m1, m2, m0 = entry_map(b1), entry_map(b2), entry_map(a)
    expected = {i: v for i, v in m0.items() if i in m1 and i in m2}
    for side in (m1, m2):
        expected.update({i: v for i, v in side.items() if i not in m0 or v != m0[i]})
    assert entry_map(one_two.tree) == expected


# --- conflicts, one by one -------------------------------------------------------------

BASE = drive_tree({
    "MEMORY.md": "# Memory\n\n- tea [id: m-1]\n- ships friday [id: m-2]\n\n## Index\n",
    "work.md": "# Work\n\n- standup at nine [id: m-3]\n",
})


def with_line(tree: dict[str, str], old: str, new: str | None) -> dict[str, str]:
    out = dict(tree)
    for path, text in tree.items():
        if old + "\n" in text:
            out[path] = text.replace(old + "\n", "" if new is None else new + "\n")
    return drive_tree(out)


@pytest.mark.parametrize("policy,mine_newer,winner", [
    ("local", False, "mine"), ("server", True, "theirs"),
    ("newest", True, "mine"), ("newest", False, "theirs"),
])
def test_edit_edit_conflict_follows_policy(policy: str, mine_newer: bool, winner: str) -> None:
    mine = with_line(BASE, "- tea [id: m-1]", "- green tea [id: m-1]")
    theirs = with_line(BASE, "- tea [id: m-1]", "- black tea [id: m-1]")
    result = apply_replay_ops(theirs, compute_ops(BASE, mine), on_conflict=policy,
                       when=200 if mine_newer else 100,
                       theirs_when=lambda key: 150 if key == "m-1" else None)
    expected = "- green tea [id: m-1]" if winner == "mine" else "- black tea [id: m-1]"
    assert entry_map(result.tree)["m-1"] == ("MEMORY.md", expected)
    assert [c.as_dict()["kind"] for c in result.conflicts] == ["edit-edit"]
    assert result.conflicts[0].winner == ("local" if winner == "mine" else "server")
    assert not has_conflict_marker(result.tree)


def test_fail_policy_raises_and_names_the_entry() -> None:
    mine = with_line(BASE, "- tea [id: m-1]", "- green tea [id: m-1]")
    theirs = with_line(BASE, "- tea [id: m-1]", "- black tea [id: m-1]")
    with pytest.raises(EntryConflictError) as info:
        apply_replay_ops(theirs, compute_ops(BASE, mine), on_conflict="fail")
    assert "m-1" in info.value.message and info.value.conflict.kind == "edit-edit"


@pytest.mark.parametrize("policy,kept", [("local", True), ("server", False)])
def test_edit_of_an_entry_deleted_on_the_server(policy: str, kept: bool) -> None:
    mine = with_line(BASE, "- tea [id: m-1]", "- green tea [id: m-1]")
    theirs = with_line(BASE, "- tea [id: m-1]", None)
    result = apply_replay_ops(theirs, compute_ops(BASE, mine), on_conflict=policy)
    entries = entry_map(result.tree)
    assert ("m-1" in entries) is kept
    if kept:
        assert entries["m-1"] == ("MEMORY.md", "- green tea [id: m-1]")
    assert set(entries) - {"m-1"} == {"m-2", "m-3"}


@pytest.mark.parametrize("policy,deleted", [("local", True), ("server", False)])
def test_delete_of_an_entry_edited_on_the_server(policy: str, deleted: bool) -> None:
    mine = with_line(BASE, "- ships friday [id: m-2]", None)
    theirs = with_line(BASE, "- ships friday [id: m-2]", "- ships monday [id: m-2]")
    result = apply_replay_ops(theirs, compute_ops(BASE, mine), on_conflict=policy)
    assert ("m-2" not in entry_map(result.tree)) is deleted


def test_layout_change_keeps_entries_the_server_added() -> None:
    mine = dict(BASE)
    mine["work.md"] = mine["work.md"].replace("# Work\n", "# Work and meetings\n\nIntro.\n")
    theirs = with_line(BASE, "- standup at nine [id: m-3]",
                       "- standup at nine [id: m-3]\n- retro on friday [id: m-4]")
    ops = compute_ops(BASE, mine)
    assert [type(op) for op in ops] == [SetLayout]
    result = apply_replay_ops(theirs, ops)
    assert result.tree["work.md"] == ("# Work and meetings\n\nIntro.\n\n"
                                      "- standup at nine [id: m-3]\n"
                                      "- retro on friday [id: m-4]\n")
    assert result.conflicts == []


def test_new_file_and_index_regenerated_on_a_moved_server() -> None:
    mine = drive_tree({**BASE, "home.md": "# Home\n\n- cat named Rex [id: m-9]\n"})
    theirs = drive_tree({**BASE, "trips.md": "# Trips\n"})
    result = apply_replay_ops(theirs, compute_ops(BASE, mine)).tree
    assert result["home.md"] == mine["home.md"] and "trips.md" in result
    assert fmt.index_section_is_current(result["MEMORY.md"], list(result))
    assert "- [[home]]" in result["MEMORY.md"] and "- [[trips]]" in result["MEMORY.md"]


def test_idless_edit_is_delete_plus_add_and_move_keeps_id() -> None:
    a = drive_tree({"MEMORY.md": "# Memory\n\n- plain line\n- kept [id: m-1]\n\n## Index\n",
                    "work.md": "# Work\n"})
    b = drive_tree({"MEMORY.md": "# Memory\n\n- plain line, edited\n\n## Index\n",
                    "work.md": "# Work\n- kept [id: m-1]\n"})
    ops = compute_ops(a, b)
    kinds = sorted((type(op).__name__, op.id) for op in ops if not isinstance(op, SetLayout))
    old_id = fmt.parse_entry("- plain line").id  # type: ignore[union-attr]
    new_id = fmt.parse_entry("- plain line, edited").id  # type: ignore[union-attr]
    assert kinds == sorted([("DeleteEntry", old_id), ("AddEntry", new_id),
                            ("MoveEntry", "m-1")])
    assert all(isinstance(op, AddEntry | DeleteEntry | MoveEntry | EditEntry | SetLayout)
               for op in ops)
    assert {"kind": "move", "path": "work.md", "id": "m-1", "from": "MEMORY.md"} in \
        [op_dict(op) for op in ops]
    assert apply_replay_ops(a, ops).tree == b


def test_removed_file_survives_when_the_server_added_to_it() -> None:
    mine = drive_tree({k: v for k, v in BASE.items() if k != "work.md"})
    theirs = with_line(BASE, "- standup at nine [id: m-3]",
                       "- standup at nine [id: m-3]\n- retro [id: m-4]")
    result = apply_replay_ops(theirs, compute_ops(BASE, mine))
    assert entry_map(result.tree) == {
        "m-1": ("MEMORY.md", "- tea [id: m-1]"),
        "m-2": ("MEMORY.md", "- ships friday [id: m-2]"),
        "m-4": ("work.md", "- retro [id: m-4]"),
    }
    assert [c.kind for c in result.conflicts] == ["file-removed"]
