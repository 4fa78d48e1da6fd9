"""Line breaks (issue 10, class 1): a character that CommonMark or ``str.splitlines()``
reads as a line end, but memgit's one splitter does not, could hide a second entry inside
what memgit judges as one line. memgit refuses such bytes (MG307), so the parser, the
policy, the purge and every other reader see the same lines. docs/security.md says why.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from memgit.format import entries as fmt
from memgit.policy.judge import check_blob
from memgit.policy.registry import PurgeRegistry
from memgit.policy.settings import Policy
from tests.conftest import memgit
from tests.receive_support import Drive, base_files, entry, people_text, ulid_like

# every line end of str.splitlines() but LF and CRLF (Python's documented list)
BREAKS = {"cr": "\r", "vt": "\x0b", "ff": "\x0c", "fs": "\x1c", "gs": "\x1d", "rs": "\x1e",
          "nel": "\x85", "ls": "\u2028", "ps": "\u2029"}
HIDDEN_SOURCE = entry("A second entry", ulid_like(71), source="javascript:alert(1)")


def hiding(sep: str, second: str = HIDDEN_SOURCE) -> str:
    """One line for memgit, two bullets for splitlines (and for CommonMark with CR)."""
    return entry("A harmless entry", ulid_like(70)) + sep + second


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_readers_disagree_on_these_characters(name: str) -> None:
    """The premise: splitlines() sees two lines; CommonMark too for a lone CR."""
    sep = BREAKS[name]
    text = hiding(sep) + "\n"
    assert len(text.splitlines()) == 2
    assert len(fmt.split_lines(text)) == 1
    items = sum(t.type == "list_item_open" for t in MarkdownIt("commonmark").parse(text))
    assert items == (2 if sep == "\r" else 1)


@pytest.mark.parametrize("name", sorted(BREAKS))
@pytest.mark.parametrize("profile", ["drive", "amr"])
def test_policy_refuses_a_hidden_line_in_both_profiles(name: str, profile: str) -> None:
    policy = Policy() if profile == "drive" else Policy(profile="amr", extensions=(),
                                                         strict_drive_rules=False)
    data = ("# People\n\n" + hiding(BREAKS[name]) + "\n").encode()
    codes = [v.code for v in check_blob("people.md", data, policy).violations]
    assert "MG307" in codes


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_a_push_hiding_a_refused_source_is_refused(tmp_path: Path, name: str) -> None:
    drive = Drive(tmp_path, files=base_files())
    before = drive.main()
    pushed = drive.build(({"people.md": people_text(hiding(BREAKS[name]))}, "hide a line"))
    result = drive.push("refs/heads/work")
    assert result.refused_by_hook, result.stderr
    assert "MG307" in result.codes()
    assert drive.main() == before and not drive.has_object(pushed[0])


@pytest.mark.parametrize("name", ["cr", "ls", "ps", "ff", "nel"])
def test_a_push_hiding_a_purged_text_is_refused(tmp_path: Path, name: str) -> None:
    from memgit.policy.registry import registry_key

    drive = Drive(tmp_path, files=base_files())
    purged = "Zora's door code is 4471"
    PurgeRegistry.append(drive.git_dir, [("m-01jd3xk8q7c9v2n4r6t0000099",
                                          registry_key(purged))], "2026-01-05")
    before = drive.main()
    line = hiding(BREAKS[name], entry(purged, ulid_like(72)))
    drive.build(({"people.md": people_text(line)}, "hide a purged text"))
    result = drive.push("refs/heads/work")
    assert result.refused_by_hook and "MG307" in result.codes(), result.stderr
    assert drive.main() == before


def test_lint_and_the_precommit_path_refuse_it_too(new_drive) -> None:
    work = new_drive({"people.md": "# People\n\n" + hiding("\u2028") + "\n"})
    proc = memgit("lint", cwd=work)
    assert proc.returncode == 1
    assert b"people.md:3: MG307 line-break" in proc.stdout, proc.stdout


def test_the_writer_never_writes_one(new_drive) -> None:
    work = new_drive()
    proc = memgit("remember", "first part\u2028- second part\rthird", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert memgit("lint", cwd=work).returncode == 0
    text = (work / "notes.md").read_bytes().decode()
    assert not any(sep in text for sep in BREAKS.values())
    assert "first part - second part third" in text


@given(st.text(alphabet=st.sampled_from(list("ab- [x]:\n\r") + list(BREAKS.values()))))
def test_what_memgit_accepts_reads_the_same_everywhere(text: str) -> None:
    """Text without a stray break: memgit's lines are splitlines' lines, and CommonMark's
    line ends (LF, CRLF, CR) fall exactly where memgit's do."""
    if fmt.stray_line_break(text) >= 0:
        assert any(sep in text for sep in BREAKS.values())
        return
    assert [c for c, _e in fmt.split_lines(text)] == text.splitlines()
    assert "".join(c + e for c, e in fmt.split_lines(text)) == text
