"""The context packet: what it holds, and that it never exceeds its budget."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memgit.drives.create import create_drive
from memgit.git.repository import open_drive
from memgit.recall import context as ctx
from memgit.write.ops import NewFact
from memgit.write.writer import commit_facts
from tests.conftest import memgit

FACTS = [NewFact("Joe leads the product team", "https://example.com/s/1", "people"),
         NewFact("The payments launch is on 2026-03-01", "https://example.com/s/2",
                 "projects/payments"),
         NewFact("Staging runs on the blue cluster", "https://example.com/s/3", "infra"),
         NewFact("Ana owns the billing runbook", "https://example.com/s/4", "people")]


def drive_with(path: Path, facts: list[NewFact]):
    create_drive(path, bare=False)
    drive = open_drive(path)
    if facts:
        result = commit_facts(drive, facts, (), "facts")
        assert result.status == "committed", result
    return drive


def test_the_packet_has_title_index_and_entries_with_ids(tmp_path: Path) -> None:
    drive = drive_with(tmp_path / "d", FACTS)
    from memgit.recall.read_path import recall

    recall(drive, "billing runbook")  # counted: Ana's entry becomes the most retrieved
    packet = ctx.build_packet(drive, 2000)
    lines = packet.text.splitlines()
    assert lines[0].startswith("# Memory (memgit drive at ")
    assert "## Index" in lines and "- [[people]]" in lines
    assert lines[lines.index("## Most retrieved") + 1].startswith("- Ana owns the billing")
    ids = {e.id for e in packet.entries}
    assert len(ids) == 4 and all(f"id: {i}" in packet.text for i in ids)
    assert lines[-1] == "(Nothing left out.)"
    assert packet.tokens == ctx.estimate_tokens(packet.text) <= 2000


def test_query_hits_come_first_and_what_is_left_out_is_said(tmp_path: Path) -> None:
    drive = drive_with(tmp_path / "d", FACTS)
    packet = ctx.build_packet(drive, 130, "staging cluster")
    assert packet.entries[0].reason == "query"
    assert packet.entries[0].text == "Staging runs on the blue cluster"
    assert packet.omitted_entries > 0
    assert packet.text.splitlines()[-1].startswith("(Left out: ")
    assert f"{packet.omitted_entries} of 4 entries" in packet.text
    assert packet.tokens <= 130


def test_a_budget_too_small_for_anything_gives_an_empty_packet(tmp_path: Path) -> None:
    drive = drive_with(tmp_path / "d", FACTS)
    for budget in (0, 1, 5):
        packet = ctx.build_packet(drive, budget)
        assert packet.text == "" and packet.entries == [] and packet.tokens == 0
        assert packet.omitted_entries == 4


def test_the_command_prints_text_and_json(tmp_path: Path) -> None:
    drive = drive_with(tmp_path / "d", FACTS)
    proc = memgit("-C", str(drive.root), "context", "--budget", "300", "--json")
    assert proc.returncode == 0, proc.stderr.decode()
    data = json.loads(proc.stdout)
    assert data["tokens"] <= 300 and data["omitted"]["entries"] == 4 - len(data["entries"])
    text = memgit("-C", str(drive.root), "context", "--budget", "300")
    assert text.returncode == 0 and data["text"], text.stderr.decode()
    assert text.stdout.decode() == data["text"]


def test_an_empty_drive_has_a_packet_too(tmp_path: Path) -> None:
    drive = drive_with(tmp_path / "d", [])
    packet = ctx.build_packet(drive, 100)
    assert packet.entries == [] and packet.text.endswith("(Nothing left out.)\n")


# --- the budget, over generated drives and budgets -------------------------------------------

WORD = st.text(alphabet=st.characters(codec="utf-8", categories=("L", "N")), min_size=1,
               max_size=12)
TEXT = st.lists(WORD, min_size=1, max_size=12).map(" ".join)
TOPIC = st.sampled_from(["notes", "people", "projects/payments", "infra/k8s", "a/b/c"])


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(texts=st.lists(st.tuples(TEXT, TOPIC), min_size=0, max_size=30),
       budgets=st.lists(st.integers(min_value=0, max_value=3000), min_size=1, max_size=4),
       query=st.one_of(st.none(), TEXT))
def test_the_packet_never_exceeds_its_budget(texts, budgets, query) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        drive = drive_with(Path(tmp) / "d", [NewFact(t, None, topic) for t, topic in texts])
        for budget in budgets:
            packet = ctx.build_packet(drive, budget, query)
            assert ctx.estimate_tokens(packet.text) <= budget
            assert packet.tokens <= budget
            assert len(packet.entries) + packet.omitted_entries == packet.entries_total
            assert all(f"id: {e.id};" in packet.text for e in packet.entries)
            if packet.entries or packet.index_lines:
                assert packet.text.splitlines()[-1].startswith("(")


@given(st.lists(st.text(max_size=80).filter(lambda s: "\n" not in s), max_size=20))
def test_the_estimate_of_lines_bounds_the_estimate_of_the_text(lines: list[str]) -> None:
    whole = "".join(line + "\n" for line in lines)
    assert ctx.estimate_tokens(whole) <= sum(ctx.estimate_tokens(line + "\n") for line in lines)


def test_the_estimate_is_conservative_for_prose_and_ids() -> None:
    prose = "Joe leads the product team and reviews the payments launch every week."
    assert ctx.estimate_tokens(prose) >= len(prose) / 4
    assert ctx.estimate_tokens("m-01jd3xk8q7c9v2n4r6t8w0y1z3") == 14
    assert ctx.estimate_tokens("") == 0


def test_memory_outline_reads_title_and_index() -> None:
    title, lines = ctx.memory_outline("# Team memory\n\nIntro.\n\n## Index\n- [[people]] who\n"
                                      "- [[infra]]\n\n## Other\n- x\n")
    assert title == "Team memory" and lines == ["- [[people]] who", "- [[infra]]"]
    assert ctx.memory_outline("no headings\n") == ("Memory", [])


def test_packet_lines_show_control_and_invisible_characters_escaped() -> None:
    title, lines = ctx.memory_outline("# Team\x1b]0;owned\x07\n\n## Index\n"
                                      "- [[people]] \u202eevil\n")
    assert title == "Team\\x1b]0;owned\\x07"
    assert lines == ["- [[people]] \\u202eevil"]
    line = ctx.entry_line(ctx.PacketEntry("m-01x", "Ring \x07 and \x9b2J clear", "a\x1bb.md",
                                          "2026-12-01", "s", 0, "newest"))
    assert "\x1b" not in line and "\x07" not in line and "\x9b" not in line
    assert line == "- Ring \\x07 and \\x9b2J clear [id: m-01x; a\\x1bb.md; added 2026-12-01]"
