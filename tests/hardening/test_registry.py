"""Nothing forgotten comes back (issue 10, classes 5 to 8).

* one normalisation (``registry.purge_key``: NFKC, no invisible characters, case-folded,
  whitespace collapsed) decides "the same text" for the writer, pre-receive, lint and
  purge, and registries written before it keep working;
* a commit message quoting a purged text is refused, and a purge scrubs every text the
  registry knows, not only its own;
* a file a push takes from an old commit (a merge, an octopus) is checked against the
  registry when it is new at the tip;
* a sync client deletes the entries its server purged from its own index.

Every purge here is the real ``memgit purge`` command on a real bare drive.
"""

from __future__ import annotations

import json
import sqlite3
import unicodedata
from pathlib import Path

import pytest

from memgit.policy.judge import text_digest
from tests.conftest import git, memgit, memgit_ok
from tests.receive_support import MAIN, Drive, base_files, entry, people_text, ulid_like

TARGET = ulid_like(500)
TEXT = "Zoë's café door code is 4471 since March"
VARIANTS = {
    "nfd": unicodedata.normalize("NFD", TEXT),
    "upper": TEXT.upper(),
    "spaces": TEXT.replace(" ", "   "),
    "zwsp-in-word": TEXT.replace("door", "do\u200bor"),
    "soft-hyphen": TEXT.replace("code", "co\u00adde"),
    "word-joiner": TEXT.replace("March", "Ma\u2060rch"),
    "bidi-mark": "\u200e" + TEXT,
    "nbsp": TEXT.replace(" ", "\u00a0"),
    "full-width-digits": TEXT.replace("4471", "\uff14\uff14\uff17\uff11"),
    "full-width-letters": TEXT.replace("door", "\uff44\uff4f\uff4f\uff52"),
    "bom-inside": TEXT.replace("code", "c\ufeffode"),
}


def purge_cli(git_dir: Path, *ids: str):
    proc = memgit("purge", *ids, "--repo", str(git_dir), "--yes")
    assert proc.returncode == 0, proc.stderr.decode()
    return proc


@pytest.fixture
def purged(tmp_path: Path) -> Drive:
    """A server drive whose history held TEXT (entry TARGET), purged with memgit purge."""
    files = base_files()
    files["people.md"] = people_text(entry(TEXT, TARGET))
    drive = Drive(tmp_path, files=files)
    git("fetch", "-q", str(drive.git_dir), f"{MAIN}:{MAIN}", cwd=drive.client)
    # the entry leaves the head in a later commit, then the purge removes it from history
    drive.build(({"people.md": people_text()}, "forget it"), ref=MAIN)
    assert drive.push(MAIN).returncode == 0
    purge_cli(drive.git_dir, TARGET)
    git("fetch", "-q", "--force", str(drive.git_dir), f"+{MAIN}:{MAIN}", cwd=drive.client)
    return drive


def push_people(drive: Drive, *lines: str, message: str = "add"):
    before = drive.main()
    drive.build(({"people.md": people_text(*lines)}, message))
    return before, drive.push("refs/heads/work")


# --- class 5: one normalisation ----------------------------------------------------------


@pytest.mark.parametrize("case", sorted(VARIANTS))
def test_a_variant_of_a_purged_text_is_refused(purged: Drive, case: str) -> None:
    variant = VARIANTS[case]
    before, result = push_people(purged, entry(variant, ulid_like(501)))
    assert result.refused_by_hook, result.stderr
    assert "MG607" in result.codes()
    assert purged.main() == before
    proc = memgit("-C", str(purged.git_dir), "remember", variant, "--json")
    assert proc.returncode == 1, proc.stderr  # nothing written: everything was skipped
    skipped = json.loads(proc.stdout)["skipped"]
    assert [s["reason"] for s in skipped] == ["purged"], proc.stdout


def test_other_texts_still_land(purged: Drive) -> None:
    before, result = push_people(purged, entry("Zoë's café door code changed", ulid_like(502)))
    assert result.returncode == 0, result.stderr
    assert purged.main() != before


@pytest.mark.parametrize("case", ["exact", "upper", "nfd", "zwsp-in-word"])
def test_a_registry_written_before_normalisation_2_keeps_working(tmp_path: Path,
                                                                 case: str) -> None:
    """A version 1 registry line: ID SHA256(case-folded text) DATE, as the first purge
    wrote it. It still refuses its text, in more normal forms than before."""
    drive = Drive(tmp_path, files=base_files())
    (drive.git_dir / "memgit-purged").write_text(
        f"# written by memgit before normalisation 2\n{TARGET} {text_digest(TEXT)} 2026-01-05\n")
    variant = TEXT if case == "exact" else VARIANTS[case]
    before, result = push_people(drive, entry(variant, ulid_like(503)))
    assert result.refused_by_hook and "MG607" in result.codes(), result.stderr
    before, result = push_people(drive, entry("Something else", TARGET))
    assert "MG606" in result.codes(), result.stderr
    assert result.refused_by_hook and drive.main() == before
    before, result = push_people(drive, entry("Something else", ulid_like(504)),
                                 message=f"note: {variant}")
    assert "MG607" in result.codes(), result.stderr
    assert result.refused_by_hook and drive.main() == before


# --- class 6: commit messages ---------------------------------------------------------------

MESSAGES = {
    "subject": TEXT,
    "subject-with-prefix": f"Remember: {TEXT}",
    "body-line": f"Add a fact\n\n{TEXT}\n",
    "mid-sentence": f"Add a fact\n\nJoe said that {TEXT.lower()} and left.\n",
    "quoted-with-period": f'Add a fact\n\nQuote: "{TEXT}."\n',
    "trailer": f"Add a fact\n\nNote: {TEXT}\nSigned-off-by: Test\n",
    "variant": f"Add a fact\n\n{VARIANTS['nfd'].upper()}\n",
}


@pytest.mark.parametrize("case", sorted(MESSAGES))
def test_a_message_quoting_a_purged_text_is_refused(purged: Drive, case: str) -> None:
    before, result = push_people(purged, entry("A clean fact", ulid_like(505)),
                                 message=MESSAGES[case])
    assert result.refused_by_hook, result.stderr
    assert "MG607" in result.codes()
    assert "of the commit message quotes a purged text" in result.stderr
    assert purged.main() == before


def test_the_writer_does_not_use_such_a_message(purged: Drive) -> None:
    proc = memgit("-C", str(purged.git_dir), "remember", "A clean fact", "-m",
                  f"Remember {TEXT}", "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] == "committed", proc.stdout
    assert any("MG607" in w for w in result["warnings"])
    log = git("log", "-1", "--format=%B", MAIN, cwd=purged.git_dir).stdout.decode()
    assert "door code" not in log
    assert log.startswith("memgit: write") and result["added"][0]["id"] in log  # this write


def test_a_purge_scrubs_every_registered_text(purged: Drive) -> None:
    """A message that quotes an earlier purge's text (landed before pre-receive refused
    such messages: written here straight into the server) is scrubbed by the next purge."""
    other = ulid_like(506)
    drive = purged
    drive.build(({"people.md": people_text(entry("Lunch is at noon", other))},
                 f"Add lunch\n\nAlso: {TEXT}\nand {VARIANTS['upper']}\n"), ref=MAIN)
    refusal = drive.push(MAIN)
    assert refusal.refused_by_hook and "MG607" in refusal.codes()  # pre-receive refuses it now...
    # ...so it goes in as it could before: fetched by the server, which runs no hook
    git("fetch", "-q", str(drive.client), f"{MAIN}:{MAIN}", cwd=drive.git_dir)
    assert TEXT.encode() in git("log", "--all", "--format=%B", cwd=drive.git_dir).stdout
    purge_cli(drive.git_dir, other)
    messages = git("log", "--all", "--format=%B", cwd=drive.git_dir).stdout.decode()
    assert "door code" not in messages.lower()
    assert "Also: [purged]\nand [purged]" in messages
    everything = git("cat-file", "--batch-all-objects", "--batch", cwd=drive.git_dir).stdout
    assert b"door code" not in everything.lower()


# --- class 7: merges bring old files back --------------------------------------------------


@pytest.fixture
def variant_in_history(tmp_path: Path):
    """A server whose old commit V holds a case and spacing variant of TEXT (entry 507,
    later deleted), then TEXT itself (TARGET), purged. V survives the purge: its entry
    has another id and not the purged bytes."""
    drive = Drive(tmp_path, files=base_files())
    git("fetch", "-q", str(drive.git_dir), f"{MAIN}:{MAIN}", cwd=drive.client)
    variant = entry(TEXT.upper().replace(" ", "  "), ulid_like(507))
    drive.build(({"people.md": people_text(variant)}, "add variant"),
                ({"people.md": people_text()}, "drop variant"),
                ({"people.md": people_text(entry(TEXT, TARGET))}, "add target"),
                ({"people.md": people_text()}, "forget target"), ref=MAIN)
    assert drive.push(MAIN).returncode == 0
    purge_cli(drive.git_dir, TARGET)
    git("fetch", "-q", "--force", str(drive.git_dir), f"+{MAIN}:{MAIN}", cwd=drive.client)
    old = git("log", "--format=%H", "--grep=^add variant", MAIN,
              cwd=drive.git_dir).stdout.decode().split()
    seed = git("log", "--format=%H", "--grep=^seed", MAIN, cwd=drive.git_dir).stdout.decode()
    return drive, old[0], seed.split()[0], variant


@pytest.mark.parametrize("shape", ["merge", "merge-old-first", "octopus"])
def test_a_merge_of_an_old_commit_cannot_bring_a_purged_text_back(variant_in_history,
                                                                  shape: str) -> None:
    drive, old, seed, variant = variant_in_history
    main = drive.main()
    changes = {"people.md": people_text(variant)}  # the same blob as in the old commit
    if shape == "merge":
        pushed = drive.build((changes, "merge old work"), parent=main, merge=[old])
    elif shape == "merge-old-first":
        pushed = drive.build((changes, "merge old work"), parent=old, merge=[main])
    else:
        pushed = drive.build((changes, "octopus"), parent=main, merge=[seed, old])
    parents = git("rev-list", "--parents", "-1", pushed[0], cwd=drive.client).stdout.split()
    assert len(parents) == (4 if shape == "octopus" else 3)
    result = drive.push("refs/heads/work")
    assert result.refused_by_hook, result.stderr
    assert "MG607" in result.codes()
    assert drive.main() == main


def test_a_merge_that_brings_nothing_purged_lands(variant_in_history) -> None:
    drive, old, _seed, _variant = variant_in_history
    main = drive.main()
    pushed = drive.build(({"people.md": people_text(entry("Merged fact", ulid_like(508)))},
                          "merge"), parent=main, merge=[old])
    assert drive.push("refs/heads/work").returncode == 0
    assert drive.main() == pushed[0]


# --- class 8: sync clients forget what the server purged ------------------------------------


def test_a_sync_client_deletes_purged_entries_from_its_index(tmp_path: Path) -> None:
    from memgit.drives.create import create_drive

    server = tmp_path / "server.git"
    create_drive(server, bare=True)
    work = tmp_path / "agent"
    assert memgit("clone", server.as_uri(), str(work)).returncode == 0
    secret_text = "Quillon keeps the spare key under the blue flowerpot"
    assert memgit("remember", secret_text, "--json", cwd=work).returncode == 0
    assert memgit("remember", "Lunch is at noon on Fridays", cwd=work).returncode == 0
    assert memgit("sync", cwd=work).returncode == 0
    hits = json.loads(memgit_ok("recall", "flowerpot", "--json", cwd=work).stdout)
    entry_id = hits[0]["id"]
    purge_cli(server, entry_id)
    proc = memgit("sync", "--json", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["forgotten"] == 1
    for _ in range(2):  # after the sync, and again after a rebuild of the index
        nothing = memgit("recall", "flowerpot", "--json", cwd=work)
        assert nothing.returncode == 1 and json.loads(nothing.stdout) == []  # no match
        state = work / ".git" / "memgit"
        files = [path for path in state.iterdir() if path.is_file()]
        assert state / "state.sqlite" in files  # the index was read, not missing
        for path in files:
            assert b"flowerpot" not in path.read_bytes(), path
        with sqlite3.connect(state / "state.sqlite") as conn:
            rows = conn.execute("SELECT count(*) FROM facts WHERE entry_id = ?",
                                (entry_id,)).fetchone()[0]
        assert rows == 0
        assert memgit("index", "--rebuild", cwd=work).returncode == 0
    assert json.loads(memgit_ok("recall", "Lunch", "--json", cwd=work).stdout)
    again = memgit("sync", "--json", cwd=work)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["forgotten"] == 0  # learned once
