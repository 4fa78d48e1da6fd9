"""File and folder names are content (issue 10, classes 3, 9 and 11).

* a possible credential in any name of a path refuses it (MG402), at any depth, in a
  push, in lint and in the writer's ``--topic`` (refused before anything is written);
* reserved (questions.md, twin/, imports/) and protected (twin/) paths match in any
  letter case, with the fold of the collision rule (MG213, MG601);
* C1 control characters (MG208) and invisible characters: zero-width, bidi controls,
  soft hyphen, BOM, variation selectors (MG214) are refused in names, in both profiles.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import git, memgit, memgit_ok
from tests.receive_support import Drive, base_files, entry, memory, ulid_like

GITHUB = "ghp_" + "Zq8Lm3Nx7Rt2Vb6Kw9Yp4Hd1Fs5Jc0Ga8Ue3"
AWS = "AKIA" + "Z7Q3XKD5JH2LMN4P"
BASE_PATHS = ["people.md", "projects/payments.md"]
AMR = "profile: amr\n"


def add_file(path: str, text: str = "# Topic\n") -> dict:
    """A new file, listed in the Index when the drive profile wants it."""
    return {path: text, "MEMORY.md": memory([*BASE_PATHS, path],
                                            [entry("The drive is for tests", ulid_like(4))])}


def push(tmp_path: Path, changes: dict, policy: str | None = None):
    drive = Drive(tmp_path, files=base_files(), policy=policy)
    before = drive.main()
    pushed = drive.build((changes, "add a file"))
    return drive, before, pushed, drive.push("refs/heads/work")


# --- secrets in names (class 3) ------------------------------------------------------------

SECRET_PATHS = {
    "imports-file": f"imports/{GITHUB}.md",
    "root-file": f"{GITHUB}.md",
    "folder": f"notes/{AWS}/keys.md",
    "deep-folder": f"a/b/{GITHUB}/c.md",
    "file-with-words": f"deploy-{AWS}-notes.md",
    # found by the names' scan (a '/' read as a space), not by a scan of the whole path:
    # the messages quote the path (and MG502 the Index's link to it) the same way
    "glued-folder": f"k{GITHUB}/a.md",
}


@pytest.mark.parametrize("case", sorted(SECRET_PATHS))
def test_a_token_in_a_name_refuses_the_push(tmp_path: Path, case: str) -> None:
    path = SECRET_PATHS[case]
    drive, before, pushed, result = push(tmp_path, add_file(path))
    assert result.refused_by_hook, result.stderr
    assert "MG402" in result.codes()
    assert GITHUB not in result.stderr and AWS not in result.stderr
    assert "<redacted:" in result.stderr  # the path is shown, the token is not
    assert drive.main() == before and not drive.has_object(pushed[0])


@pytest.mark.parametrize("topic", [GITHUB, f"projects/{AWS}", f"{GITHUB}/notes"])
def test_the_writer_refuses_such_a_topic_before_writing(new_drive, topic: str) -> None:
    work = new_drive()
    head = git("rev-parse", "HEAD", cwd=work).stdout
    proc = memgit("remember", "Mia joined the platform team", "--topic", topic, "--json",
                  cwd=work)
    assert proc.returncode == 1
    result = json.loads(proc.stdout)
    assert result["status"] == "unchanged"
    assert [s["reason"] for s in result["skipped"]] == ["topic-invalid"]
    assert "MG402" in result["skipped"][0]["detail"]
    assert GITHUB.encode() not in proc.stdout and AWS.encode() not in proc.stdout
    assert git("rev-parse", "HEAD", cwd=work).stdout == head
    assert not list(work.rglob("*ghp_*")) and not list(work.rglob("*AKIA*"))


def test_lint_finds_a_token_in_a_folder_name(new_drive) -> None:
    work = new_drive({f"imports/{GITHUB}.md": "# Receipt\n"})
    proc = memgit("lint", "--json", cwd=work)
    assert proc.returncode == 1, proc.stderr
    found = json.loads(proc.stdout)
    assert "MG402" in {v["code"] for v in found}
    assert GITHUB.encode() not in proc.stdout + proc.stderr


# --- reserved and protected paths in any case (class 9) --------------------------------------


@pytest.mark.parametrize("topic", ["QUESTIONS", "Questions.md", "Twin/x", "TWIN/profile",
                                   "Imports/receipt", "IMPORTS/a/b"])
def test_reserved_topics_match_in_any_case(new_drive, topic: str) -> None:
    work = new_drive()
    proc = memgit("remember", "Mia joined the platform team", "--topic", topic, "--json",
                  cwd=work)
    assert proc.returncode == 1, proc.stdout
    skipped = json.loads(proc.stdout)["skipped"]
    assert [s["reason"] for s in skipped] == ["topic-reserved"]
    assert "MG213" in skipped[0]["detail"]
    # the board still works: nothing took the place of questions.md
    asked = memgit("ask", "Who owns billing?", cwd=work)
    assert asked.returncode == 0, asked.stderr
    assert b"Who owns billing?" in memgit_ok("ask", "--list", cwd=work).stdout


@pytest.mark.parametrize("path", ["TWIN/a.md", "Twin/profile.md", "tWiN/x/y.md"])
def test_protected_paths_match_in_any_case(tmp_path: Path, path: str) -> None:
    drive, before, _pushed, result = push(tmp_path, add_file(path))
    assert result.refused_by_hook and "MG601" in result.codes(), result.stderr
    assert drive.main() == before


# --- invisible and control characters in names (class 11) -----------------------------------

INVISIBLE = {"c1-csi": "\x9b", "c1-nel": "\x85", "rlo": "\u202e", "lri": "\u2066",
             "zwsp": "\u200b", "zwj": "\u200d", "soft-hyphen": "\u00ad", "bom": "\ufeff",
             "word-joiner": "\u2060", "variation-selector": "\ufe0f", "tag": "\U000e0041",
             "hangul-filler": "\u3164"}


@pytest.mark.parametrize("profile", ["drive", "amr"])
@pytest.mark.parametrize("case", sorted(INVISIBLE))
def test_invisible_characters_in_names_are_refused(tmp_path: Path, case: str,
                                                   profile: str) -> None:
    char = INVISIBLE[case]
    path = f"notes/sec{char}rets.md" if case != "rlo" else f"notes/report{char}dm.exe.md"
    drive, before, _pushed, result = push(tmp_path, add_file(path),
                                          AMR if profile == "amr" else None)
    assert result.refused_by_hook, result.stderr
    assert result.codes() & {"MG208", "MG214"}, result.stderr
    assert drive.main() == before
    assert char not in result.stderr  # printed escaped
    assert ("notes/report" if case == "rlo" else "notes/sec") in result.stderr  # the path is named


@pytest.mark.parametrize("case", ["zwsp", "rlo", "c1-csi"])
def test_the_writer_refuses_such_a_topic(new_drive, case: str) -> None:
    work = new_drive()
    proc = memgit("remember", "Mia joined the platform team", "--topic",
                  f"team{INVISIBLE[case]}notes", "--json", cwd=work)
    assert proc.returncode == 1
    assert [s["reason"] for s in json.loads(proc.stdout)["skipped"]] == ["topic-invalid"]
    assert {"MG208", "MG214"} & set(json.loads(proc.stdout)["skipped"][0]["detail"].split())
