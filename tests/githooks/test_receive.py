"""pre-receive over file://: real pushes into real bare drives with memgit's hooks.

Every bad push must be refused with its rule code, leave the server's main where it
was, and leave none of its objects in the repository; every good push must land.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memgit.policy.judge import text_digest
from tests.receive_support import (
    MAIN,
    Change,
    Drive,
    base_files,
    entry,
    git,
    memory,
    ulid_like,
)

BASE_PATHS = ["people.md", "projects/payments.md"]
SECRET = "ghp_" + "Zq8Lm3Nx7Rt2Vb6Kw9Yp4Hd1Fs5Jc0Ga8Ue3"  # a GitHub token shape


@pytest.fixture
def drive(tmp_path: Path) -> Drive:
    return Drive(tmp_path, files=base_files())


def with_topic(path: str, text: str) -> dict[str, Change]:
    """Add a topic file and list it in the Index."""
    return {path: text, "MEMORY.md": memory([*BASE_PATHS, path],
                                            [entry("The drive is for tests", ulid_like(4))])}


def people(*lines: str) -> dict[str, Change]:
    """people.md with extra lines appended."""
    text = str(base_files()["people.md"]) + "".join(line + "\n" for line in lines)
    return {"people.md": text}


def assert_refused(drive: Drive, result, code: str, before: str, pushed: list[str],
                   src: str = "refs/heads/work") -> None:
    assert result.refused_by_hook, (result.stdout, result.stderr)
    assert f"!\t{src}:{MAIN}\t[remote rejected] (pre-receive hook declined)" in result.stdout
    assert code in result.codes(), result.stderr
    assert drive.main() == before
    for oid in pushed:
        assert not drive.has_object(oid), f"{oid} was left in the repository"
    assert "found; nothing was accepted" in result.stderr


# --- one bad commit on top of main: the table ------------------------------------------

BIG = "# Big\n\n" + "".join(entry(f"filler line {i} " + "x" * 60, ulid_like(5000 + i)) + "\n"
                            for i in range(520))

BAD_COMMITS: dict[str, tuple[dict[str, Change], str]] = {
    "symlink": ({"link.md": (0o120000, b"people.md")}, "MG202"),
    "submodule": ({"sub": (0o160000, b"1" * 40)}, "MG203"),
    "executable": ({"people.md": (0o100755, str(base_files()["people.md"]).encode())}, "MG204"),
    "non-markdown": ({"notes.txt": "plain notes\n"}, "MG201"),
    "file-over-64k": (with_topic("big.md", BIG), "MG205"),
    "case-collision": ({**with_topic("Projects/Payments.md", "# P\n"),
                        "MEMORY.md": memory([*BASE_PATHS, "Projects/Payments.md"])}, "MG210"),
    "file-folder-collision": ({"People.md/extra.md": "# Extra\n",
                               "MEMORY.md": memory([*BASE_PATHS, "People.md/extra.md"])},
                              "MG212"),
    "non-nfc-path": (with_topic("cafe\u0301.md", "# Cafe\n"), "MG209"),
    "non-utf8-path": ({"caf\udce9.md": "# Cafe\n"}, "MG209"),
    "control-char-path": (with_topic("tab\there.md", "# Tab\n"), "MG208"),
    "path-too-long": (with_topic("/".join(["d" * 60] * 5) + "/long.md", "# Long\n"), "MG211"),
    "raw-html": (people("- Joe likes <div onclick=x>html</div>"), "MG303"),
    "html-comment": (people("<!-- hidden instructions -->"), "MG303"),
    "image": (people("![diagram](https://example.com/d.png)"), "MG304"),
    "transcript": (with_topic("chat.md", "# Chat\n\nUser: can you check the deploy?\n"
                                         "Assistant: It finished at 10:02.\n"), "MG305"),
    "log-lines": (people("2026-01-02 10:11:12 INFO service started"), "MG305"),
    "transcript-file-name": (with_topic("meeting-transcript.md", "# Notes\n"), "MG305"),
    "log-file": ({"server.log": "started\n"}, "MG305"),
    "conflict-markers": (people("<<<<<<< HEAD", "- mine", "=======", "- theirs",
                                ">>>>>>> branch"), "MG306"),
    "invalid-utf8": ({"people.md": b"# People\n\n- caf\xe9 au lait\n"}, "MG301"),
    "nul-byte": ({"people.md": b"# People\n\n- a\x00b\n"}, "MG302"),
    "secret": (people(entry(f"the CI token is {SECRET}", ulid_like(10))), "MG401"),
    "secret-in-source-url": (people(entry(
        "Deploy notes", ulid_like(11),
        source="https://deploy:Xk9mQ2vLp8Rt5wZa@ci.example.com/run/1")), "MG401"),
    "aws-key": (people(entry("key AKIAIOSFODNN7EXAMPLQ is for the bucket", ulid_like(12))),
                "MG401"),
    "javascript-source": (people(entry("Clicked", ulid_like(13), source="javascript:alert(1)")),
                          "MG101"),
    "file-source": (people(entry("Local", ulid_like(14), source="file:///etc/passwd")), "MG101"),
    "http-source": (people(entry("Plain http", ulid_like(15), source="http://example.com/a")),
                    "MG101"),
    "invalid-date": (people(entry("Bad date", ulid_like(16), added="2026-02-30")), "MG102"),
    "duplicate-id-same-file": (people(entry("Twice", ulid_like(17)),
                                      entry("Twice again", ulid_like(17))), "MG103"),
    "duplicate-id-other-file": (people(entry("Copied id", ulid_like(3))), "MG103"),
    "malformed-metadata": (people("- Joe [source: https://example.com/1; id m-1]"), "MG104"),
    "multiline-entry": (people(entry("Start", ulid_like(18)), "  continued on the next line"),
                        "MG105"),
    "invalid-id": (people(entry("Bad id", "no spaces allowed")), "MG106"),
    "invalid-status": (people("- Pending [source: imported:unknown; status: maybe]"), "MG107"),
    "stale-index": ({"new-topic.md": "# New\n"}, "MG502"),
    "memory-missing": ({"MEMORY.md": None}, "MG501"),
    "protected-path": ({"twin/profile.md": "# Twin\n"}, "MG601"),
}


@pytest.mark.parametrize("case", sorted(BAD_COMMITS))
def test_bad_commit_is_refused(drive: Drive, case: str) -> None:
    changes, code = BAD_COMMITS[case]
    before = drive.main()
    pushed = drive.build((changes, f"bad: {case}"))
    result = drive.push("refs/heads/work")
    assert_refused(drive, result, code, before, pushed)
    assert f"commit {pushed[0][:10]} bad: {case}" in result.stderr


def test_a_secret_is_never_echoed(drive: Drive) -> None:
    before = drive.main()
    pushed = drive.build((people(entry(f"token {SECRET}", ulid_like(20))), f"oops {SECRET}"))
    result = drive.push("refs/heads/work")
    assert_refused(drive, result, "MG401", before, pushed)
    assert SECRET not in result.stderr + result.stdout
    assert SECRET[4:20] not in result.stderr
    assert "oops <redacted: GitHub token>" in result.stderr  # the subject held it too
    assert "people.md:5: MG401 secret" in result.stderr


# --- history rules ---------------------------------------------------------------------


def test_secret_added_and_removed_inside_one_push_is_refused(drive: Drive) -> None:
    before = drive.main()
    clean = str(base_files()["people.md"])
    pushed = drive.build(
        (people(entry("harmless", ulid_like(30))), "first"),
        (people(entry("harmless", ulid_like(30)), entry(f"key {SECRET}", ulid_like(31))),
         "middle adds a key"),
        ({"people.md": clean}, "tip removes it"),
    )
    result = drive.push("refs/heads/work")
    assert_refused(drive, result, "MG401", before, pushed)
    assert f"commit {pushed[1][:10]} middle adds a key" in result.stderr
    assert result.stderr.count("MG401") == 1  # reported once, where it was added


def test_protected_change_in_a_middle_commit_is_refused(drive: Drive) -> None:
    before = drive.main()
    pushed = drive.build(({"twin/x.md": "# x\n"}, "add twin"), ({"twin/x.md": None}, "undo"))
    result = drive.push("refs/heads/work")
    assert_refused(drive, result, "MG601", before, pushed)
    # the undo touches twin/ as well
    assert result.stderr.count("MG601 protected-path") == 2


def test_push_to_another_branch_is_refused(drive: Drive) -> None:
    pushed = drive.build((people(entry("fine", ulid_like(40))), "fine"))
    result = drive.push("refs/heads/work", "refs/heads/other")
    assert result.refused_by_hook
    assert "MG602" in result.codes()
    assert drive.ref("refs/heads/other") is None
    assert not drive.has_object(pushed[0])


def test_lightweight_tag_is_refused(drive: Drive) -> None:
    result = drive.push(MAIN, "refs/tags/v1")
    assert result.refused_by_hook
    assert "MG602" in result.codes()
    assert drive.ref("refs/tags/v1") is None


def test_annotated_tag_is_refused(drive: Drive) -> None:
    drive.sync_client()
    git("tag", "-a", "-m", "release", "v2", MAIN, cwd=drive.client)
    tag = git("rev-parse", "v2", cwd=drive.client).stdout.decode().strip()
    result = drive.push("refs/tags/v2", "refs/tags/v2")
    assert result.refused_by_hook
    assert "MG602" in result.codes()
    assert drive.ref("refs/tags/v2") is None
    assert not drive.has_object(tag)


def test_main_pointing_at_a_tag_object_is_refused(drive: Drive) -> None:
    before = drive.sync_client()
    git("tag", "-a", "-m", "not a commit", "v3", MAIN, cwd=drive.client)
    result = drive.push("refs/tags/v3", MAIN, "--force")
    assert result.refused_by_hook
    assert "refs/heads/main would point at a tag, not a commit" in result.stderr
    assert "MG602" in result.codes(), result.stderr
    assert drive.main() == before


def test_delete_of_main_is_refused(drive: Drive) -> None:
    before = drive.main()
    result = drive.push("", MAIN)
    assert result.refused_by_hook
    assert "MG603" in result.codes()
    assert drive.main() == before


def test_force_push_is_refused(drive: Drive) -> None:
    before = drive.main()
    parent = git("rev-parse", f"{before}^", cwd=drive.git_dir).stdout.decode().strip()
    pushed = drive.build((people(entry("rewritten", ulid_like(41))), "rewrite"), parent=parent)
    result = drive.push("refs/heads/work", MAIN, "--force")
    assert_refused(drive, result, "MG604", before, pushed)


def test_201_commits_are_refused(drive: Drive) -> None:
    before = drive.main()
    commits = [(people(entry(f"fact {i}", ulid_like(1000 + i))), f"c{i}") for i in range(201)]
    pushed = drive.build(*commits)
    result = drive.push("refs/heads/work")
    assert_refused(drive, result, "MG605", before, pushed[-1:])
    assert "201 new commits, at most 200" in result.stderr


def test_two_refs_one_bad_nothing_lands(drive: Drive) -> None:
    before = drive.main()
    good = drive.build((people(entry("good", ulid_like(50))), "good"))
    proc = git("push", "--porcelain", drive.url, f"{good[0]}:{MAIN}", f"{good[0]}:refs/heads/x",
               cwd=drive.client, check=False)
    assert proc.returncode != 0
    out = proc.stdout.decode()
    assert out.count("pre-receive hook declined") == 2  # both refs refused together
    assert "MG602" in proc.stderr.decode()
    assert drive.main() == before
    assert drive.ref("refs/heads/x") is None
    assert not drive.has_object(good[0])


def test_atomic_push_with_a_bad_ref_lands_nothing(drive: Drive) -> None:
    before = drive.main()
    good = drive.build((people(entry("atomic", ulid_like(52))), "atomic"))
    proc = git("push", "--porcelain", "--atomic", drive.url, f"{good[0]}:{MAIN}",
               f"{good[0]}:refs/tags/t1", cwd=drive.client, check=False)
    assert proc.returncode != 0
    assert "MG602" in proc.stderr.decode()
    assert drive.main() == before
    assert drive.ref("refs/tags/t1") is None
    assert not drive.has_object(good[0])


# --- purge registry -------------------------------------------------------------------


def purge(drive: Drive, entry_id: str, text: str) -> None:
    from memgit.policy.registry import PurgeRegistry

    PurgeRegistry.append(drive.git_dir, [(entry_id, text_digest(text))], "2026-01-05")


def test_purged_id_is_refused(drive: Drive) -> None:
    purge(drive, ulid_like(60), "Something removed for good")
    before = drive.main()
    pushed = drive.build((people(entry("Different words", ulid_like(60))), "back"))
    result = drive.push("refs/heads/work")
    assert_refused(drive, result, "MG606", before, pushed)


def test_purged_text_under_a_new_id_is_refused(drive: Drive) -> None:
    purge(drive, ulid_like(61), "Joe's home address is 1 Main Street")
    before = drive.main()
    pushed = drive.build((people(entry("joe's   HOME address is 1 main street", ulid_like(62))),
                          "back again"))
    result = drive.push("refs/heads/work")
    assert_refused(drive, result, "MG607", before, pushed)


# --- drives at the limits --------------------------------------------------------------


def limit_files(count: int, size: int) -> dict[str, Change]:
    """``count`` topic files of about ``size`` bytes each plus a current MEMORY.md."""
    files: dict[str, Change] = {}
    n = 0
    for i in range(count):
        lines = [f"# Topic {i}", ""]
        length = 12
        while length < size:
            line = entry(f"topic {i} fact {n} about the team and its plans", ulid_like(10**6 + n))
            lines.append(line)
            length += len(line) + 1
            n += 1
        files[f"topics/t{i:03d}.md"] = "\n".join(lines) + "\n"
    files["MEMORY.md"] = memory(list(files))
    return files


def test_drive_over_2_mib_is_refused(tmp_path: Path) -> None:
    drive = Drive(tmp_path, files=limit_files(40, 52_000))  # ~2.0 MiB
    before = drive.main()
    paths = [f"topics/t{i:03d}.md" for i in range(40)] + ["topics/more.md"]
    pushed = drive.build(({"topics/more.md": "# More\n\n" + "".join(f"- padding {i}\n"
                                                                    for i in range(6000)),
                           "MEMORY.md": memory(paths)}, "grow past 2 MiB"))
    result = drive.push("refs/heads/work")
    assert_refused(drive, result, "MG206", before, pushed)


def test_257_files_are_refused(tmp_path: Path) -> None:
    drive = Drive(tmp_path, files=limit_files(255, 40))  # 256 files with MEMORY.md
    before = drive.main()
    paths = [f"topics/t{i:03d}.md" for i in range(255)] + ["topics/z.md"]
    pushed = drive.build(({"topics/z.md": "# Z\n", "MEMORY.md": memory(paths)}, "file 257"))
    result = drive.push("refs/heads/work")
    assert_refused(drive, result, "MG207", before, pushed)


def test_a_line_written_twice_lands_with_a_warning(drive: Drive) -> None:
    """Two id-less lines with the same words share their derived id: a repeated line
    (MG108, a warning), not an id clash (MG103, issue 12)."""
    pushed = drive.build(({"projects/payments.md": str(base_files()["projects/payments.md"])
                           + "- same words [source: imported:unknown]\n",
                           "people.md": str(base_files()["people.md"])
                           + "- same words [source: imported:unknown]\n"}, "twice"))
    result = drive.push("refs/heads/work")
    assert result.returncode == 0, result.stderr
    assert drive.main() == pushed[-1]
    assert "projects/payments.md:4: MG108 line-repeated (warning): the same line is also at " \
        "people.md:" in result.stderr


def test_near_limit_push_lands_with_a_warning_and_an_event(tmp_path: Path) -> None:
    drive = Drive(tmp_path, files=limit_files(210, 40))
    paths = [f"topics/t{i:03d}.md" for i in range(210)] + ["topics/new.md"]
    pushed = drive.build(({"topics/new.md": "# New\n", "MEMORY.md": memory(paths)}, "one more"))
    result = drive.push("refs/heads/work")
    assert result.returncode == 0, result.stderr
    assert drive.main() == pushed[-1]
    assert "MG290 near-limit (warning): 212 of 256 files" in result.stderr
    counts = drive.event_counts()
    assert counts["near_limit"] == 1
    assert counts["push_accepted"] == 1


# --- good pushes -------------------------------------------------------------------------


@pytest.mark.slow
def test_good_pushes_land(drive: Drive) -> None:
    """Fifteen valid pushes in a row, each landing on the server's main."""
    base = base_files()
    mem_entries = [entry("The drive is for tests", ulid_like(4))]
    steps: list[tuple[str, dict[str, Change]]] = [
        ("add an entry", people(entry("Mia joined in May", ulid_like(70)))),
        ("add a topic", {"decisions.md": "# Decisions\n\n" + entry("Use Postgres",
                                                                   ulid_like(71)) + "\n",
                         "MEMORY.md": memory([*BASE_PATHS, "decisions.md"], mem_entries)}),
        ("edit an entry", {"decisions.md": "# Decisions\n\n" + entry("Use Postgres 16",
                                                                     ulid_like(71)) + "\n"}),
        ("all source forms", people(
            entry("From a session", ulid_like(72), source="/?session=abc-1"),
            entry("From a tool", ulid_like(73), source="claude-code:session/42"),
            entry("Observed", ulid_like(74), source="memgit:observation/m-1"),
            entry("Imported", ulid_like(75), source="imported:unknown"))),
        ("delete an entry", {"people.md": base["people.md"]}),
        ("nested folder", {"areas/eng/oncall.md": "# Oncall\n\n- Rota is weekly\n",
                           "MEMORY.md": memory([*BASE_PATHS, "decisions.md",
                                                "areas/eng/oncall.md"], mem_entries)}),
        ("code fence with html", people("```html", "<div>kept as code</div>",
                                        "- not an entry", "```")),
        ("inline code", people(entry("Wrap it in `<div>` tags", ulid_like(76)))),
        ("nfc unicode path", {"café.md": "# Café\n",
                              "MEMORY.md": memory([*BASE_PATHS, "decisions.md",
                                                   "areas/eng/oncall.md", "café.md"],
                                                  mem_entries)}),
        ("the word password", people(entry("Rotate the database password every month",
                                           ulid_like(77)))),
        ("move an entry between files", {
            "people.md": base["people.md"],
            "decisions.md": "# Decisions\n\n" + entry("Use Postgres 16", ulid_like(71)) + "\n"
            + entry("Mia joined in May", ulid_like(70)) + "\n"}),
        ("rename a topic", {"decisions.md": None,
                            "choices.md": "# Decisions\n\n" + entry("Use Postgres 16",
                                                                    ulid_like(71)) + "\n",
                            "MEMORY.md": memory([*BASE_PATHS, "choices.md",
                                                 "areas/eng/oncall.md", "café.md"],
                                                mem_entries)}),
        ("delete a topic", {"café.md": None,
                            "MEMORY.md": memory([*BASE_PATHS, "choices.md",
                                                 "areas/eng/oncall.md"], mem_entries)}),
        ("index description", {"MEMORY.md": memory(
            [*BASE_PATHS, "choices.md", "areas/eng/oncall.md"], mem_entries).replace(
            "- [[people]]", "- [[people]] who is who")}),
        ("id-less entry", people("- Standup is at 10 [source: imported:unknown]")),
    ]
    landed = 0
    for message, changes in steps:
        pushed = drive.build((changes, message))
        result = drive.push("refs/heads/work")
        assert result.returncode == 0, (message, result.stderr)
        assert drive.main() == pushed[-1], message
        landed += 1
    assert landed == 15
    assert drive.event_counts()["push_accepted"] == 15


def test_multi_commit_push_and_merge_land(drive: Drive) -> None:
    chain = drive.build(*[(people(*[entry(f"fact {j}", ulid_like(200 + j))
                                    for j in range(i + 1)]), f"step {i}") for i in range(10)])
    result = drive.push("refs/heads/work")
    assert result.returncode == 0, result.stderr
    assert drive.main() == chain[-1]
    # a merge: two branches from main, each adding a file, merged
    base = drive.sync_client()
    mem = [entry("The drive is for tests", ulid_like(4))]
    left = drive.build(({"left.md": "# L\n", "MEMORY.md": memory([*BASE_PATHS, "left.md"], mem)},
                        "left"), ref="refs/heads/left")[0]
    right = drive.build(({"right.md": "# R\n",
                          "MEMORY.md": memory([*BASE_PATHS, "right.md"], mem)}, "right"),
                        ref="refs/heads/right")[0]
    tree = _merge_tree(drive, base, {"left.md": "# L\n", "right.md": "# R\n",
                                     "MEMORY.md": memory([*BASE_PATHS, "left.md", "right.md"],
                                                         mem)})
    merge = git("commit-tree", tree, "-p", left, "-p", right, "-m", "merge",
                cwd=drive.client).stdout.decode().strip()
    result = drive.push(merge)
    assert result.returncode == 0, result.stderr
    assert drive.main() == merge


def _merge_tree(drive: Drive, base: str, changes: dict[str, Change]) -> str:
    commit = drive.build((changes, "tree only"), parent=base, ref="refs/heads/tmp")[0]
    return git("rev-parse", f"{commit}^{{tree}}", cwd=drive.client).stdout.decode().strip()


def test_merge_of_a_stale_index_is_refused(drive: Drive) -> None:
    base = drive.sync_client()
    left = drive.build(({"left.md": "# L\n", "MEMORY.md": memory(
        [*BASE_PATHS, "left.md"], [entry("The drive is for tests", ulid_like(4))])}, "left"),
        ref="refs/heads/left")[0]
    right = drive.build(({"right.md": "# R\n", "MEMORY.md": memory(
        [*BASE_PATHS, "right.md"], [entry("The drive is for tests", ulid_like(4))])}, "right"),
        ref="refs/heads/right")[0]
    # the merge keeps both files but left's MEMORY.md: right.md is not in the Index
    tree = _merge_tree(drive, left, {"right.md": "# R\n"})
    merge = git("commit-tree", tree, "-p", left, "-p", right, "-m", "bad merge",
                cwd=drive.client).stdout.decode().strip()
    result = drive.push(merge)
    assert_refused(drive, result, "MG502", base, [merge], src=merge)


def test_unchanged_old_lines_are_not_rescanned(tmp_path: Path) -> None:
    """A line already on the server is not judged again; lines new in the push are."""
    seeded = dict(base_files())
    seeded["people.md"] = str(seeded["people.md"]) + entry(f"old token {SECRET}",
                                                          ulid_like(90)) + "\n"
    drive = Drive(tmp_path, files=seeded)
    pushed = drive.build(({"people.md": str(seeded["people.md"])
                           + entry("A new harmless line", ulid_like(91)) + "\n"}, "edit"))
    result = drive.push("refs/heads/work")
    assert result.returncode == 0, result.stderr
    assert drive.main() == pushed[0]
    # the old secret copied to a new file is new there: refused
    before = drive.main()
    bad = drive.build((with_topic("copy.md", "# Copy\n\n" + entry(f"old token {SECRET}",
                                                                  ulid_like(92)) + "\n"),
                       "copy the old line"))
    result = drive.push("refs/heads/work")
    assert_refused(drive, result, "MG401", before, bad)


def test_amr_profile_accepts_plain_agent_memory_repo_content(tmp_path: Path) -> None:
    files: dict[str, Change] = {
        "MEMORY.md": "# Memory: Joe\n\n- Joe leads the product team [source: "
                     "https://example.com/sessions/100; added: 2026-09-03]\n",
        "schema.sql": "create table facts (id int);\n",
        "notes/raw.txt": "User: plain notes are fine here\n",
    }
    drive = Drive(tmp_path, policy="profile: amr\n")
    pushed = drive.build((files, "plain AMR content"))
    result = drive.push("refs/heads/work")
    assert result.returncode == 0, result.stderr
    assert drive.main() == pushed[0]
    # the amr profile still refuses secrets and bad sources
    before = drive.main()
    bad = drive.build(({"schema.sql": f"-- token {SECRET}\n"}, "secret in sql"))
    result = drive.push("refs/heads/work")
    assert_refused(drive, result, "MG401", before, bad)


def test_policy_file_limits_are_used(tmp_path: Path) -> None:
    drive = Drive(tmp_path, files=base_files(), policy="limits: {push_commits: 2}\n")
    before = drive.main()
    pushed = drive.build(*[(people(entry(f"f{i}", ulid_like(300 + i))), f"c{i}")
                           for i in range(3)])
    result = drive.push("refs/heads/work")
    assert_refused(drive, result, "MG605", before, pushed[-1:])


def test_refusal_report_names_commit_path_line_code_hint_and_count(drive: Drive) -> None:
    pushed = drive.build((people(entry("Clicked", ulid_like(13), source="javascript:x"),
                                 entry("Bad date", ulid_like(16), added="2026-13-01")),
                          "two problems"))
    result = drive.push("refs/heads/work")
    assert result.refused_by_hook, result.stderr
    lines = [line.removeprefix("remote: ").rstrip() for line in result.stderr.splitlines()]
    assert f"commit {pushed[0][:10]} two problems" in lines
    assert "  people.md:5: MG101 source-scheme: source scheme 'javascript' is not allowed" \
        in lines
    assert any(line.startswith("    hint: use https://") for line in lines)
    assert "  people.md:6: MG102 date-invalid: added '2026-13-01' is not a real date" in lines
    assert "memgit: 2 errors, 0 warnings found; nothing was accepted (fix them and push again)" \
        in lines
    assert drive.event_counts()["push_refused"] == 1


def test_first_push_into_an_empty_repository(tmp_path: Path) -> None:
    from memgit.git.repository import open_drive
    from memgit.githooks.install import configure_server, install_server_hooks

    git_dir = tmp_path / "empty.git"
    git("init", "-q", "--bare", git_dir)
    drive_obj = open_drive(git_dir)
    install_server_hooks(drive_obj, chain=False)
    configure_server(drive_obj)
    client = tmp_path / "c.git"
    git("init", "-q", "--bare", client)
    good = [({"MEMORY.md": memory([])}, "first")]
    from tests.receive_support import fast_import

    first = fast_import(client, None, good)
    proc = git("push", "--porcelain", git_dir.as_uri(), f"{first[0]}:{MAIN}", cwd=client,
               check=False)
    assert proc.returncode == 0, proc.stderr
    bad = fast_import(client, None, [({"twin/a.md": "# a\n", "MEMORY.md": memory([])}, "x")],
                      ref="refs/heads/other")
    proc = git("push", "--porcelain", git_dir.as_uri(), f"{bad[0]}:refs/heads/new",
               cwd=client, check=False)
    assert proc.returncode != 0
    assert "pre-receive hook declined" in proc.stdout.decode()
    assert "MG602" in proc.stderr.decode() and "MG601" in proc.stderr.decode()


def test_git_fsck_refuses_a_dot_git_path_before_the_hook(drive: Drive) -> None:
    """receive.fsckObjects (set by memgit) stops trees git itself considers dangerous."""
    before = drive.sync_client()
    blob = git("hash-object", "-w", "--stdin", cwd=drive.client, input=b"[core]\n").stdout
    inner = git("mktree", cwd=drive.client,
                input=b"100644 blob " + blob.strip() + b"\tconfig\n").stdout.strip()
    memory_blob = git("rev-parse", f"{MAIN}:MEMORY.md", cwd=drive.client).stdout.strip()
    tree = git("mktree", cwd=drive.client, input=b"040000 tree " + inner + b"\t.GIT\n"
               + b"100644 blob " + memory_blob + b"\tMEMORY.md\n").stdout.decode().strip()
    commit = git("commit-tree", tree, "-p", before, "-m", "dot git", cwd=drive.client
                 ).stdout.decode().strip()
    result = drive.push(commit)
    assert result.returncode != 0
    assert "[remote rejected]" in result.stdout
    assert "hasDotgit: contains '.git'" in result.stderr
    assert drive.main() == before


def test_no_push_lands_while_a_purge_runs(drive: Drive) -> None:
    from memgit.policy.registry import PURGE_LOCK_FILE

    before = drive.main()
    pushed = drive.build((people(entry("Pushed during a purge", ulid_like(901))), "during"))
    lock = drive.git_dir / PURGE_LOCK_FILE
    lock.write_text("purge in progress\n")
    result = drive.push("refs/heads/work")
    assert_refused(drive, result, "MG610", before, pushed)
    lock.unlink()
    assert drive.push("refs/heads/work").returncode == 0
    assert drive.main() == pushed[-1]


# --- profile amr: bytes that are not UTF-8 are still scanned (issue 10, class 12) ----------


@pytest.mark.parametrize("data", [
    b"-- schema\n\xff\xfe\nSELECT 1; -- token " + SECRET.encode() + b"\n",
    b"\x80" + b"password=" + b"Xk9mQ2vLp8Rt5wZa" + b"\n",
    b"latin-1 caf\xe9\nexport AWS_KEY=AKIAZ7Q3XKD5JH2LMN4P\n",
])
def test_amr_scans_files_that_are_not_utf8(tmp_path: Path, data: bytes) -> None:
    drive = Drive(tmp_path, files=base_files(), policy="profile: amr\n")
    before = drive.main()
    pushed = drive.build(({"db/schema.sql": data}, "add a schema"))
    result = drive.push("refs/heads/work")
    assert_refused(drive, result, "MG401", before, pushed)
    assert SECRET not in result.stderr
    clean = drive.build(({"db/schema.sql": b"-- caf\xe9\nSELECT 1;\n"}, "clean"))
    assert drive.push("refs/heads/work").returncode == 0
    assert drive.main() == clean[-1]


# --- resource limits (issue 10, class 13) ----------------------------------------------------


def flood(drive: Drive, commits: int, files: int, size: int, *, secret: bool = True) -> list[str]:
    """``commits`` commits, each rewriting ``files`` topic files of about ``size`` bytes of
    new text (with a token in each, which only a read of the content would find)."""
    paths = [f"flood/t{n:02d}.md" for n in range(files)]
    memory_text = memory([*BASE_PATHS, *paths], [entry("The drive is for tests", ulid_like(4))])
    out = []
    for c in range(commits):
        changes: dict[str, Change] = {"MEMORY.md": memory_text} if c == 0 else {}
        for n, path in enumerate(paths):
            body = "".join(f"- fact {c}.{n}.{i} " + "x" * 50 + "\n" for i in range(size // 64))
            token = f"- key {SECRET}\n" if secret else ""
            changes[path] = f"# T{n}\n\n" + body + token
        out.append((changes, f"flood {c}"))
    return drive.build(*out)


def test_a_push_over_push_bytes_is_refused_before_its_content_is_read(tmp_path: Path) -> None:
    drive = Drive(tmp_path, files=base_files(), policy="limits: {push_bytes: 300000}\n")
    before = drive.main()
    pushed = flood(drive, commits=10, files=5, size=8000)
    result = drive.push("refs/heads/work")
    assert_refused(drive, result, "MG611", before, pushed)
    assert "MG611 push-too-large" in result.stderr and "per push" in result.stderr
    assert "MG401" not in result.codes()  # refused on sizes: no file was read
    small = flood(drive, commits=1, files=2, size=8000, secret=False)
    assert drive.push("refs/heads/work").returncode == 0
    assert drive.main() == small[-1]


def test_push_bytes_defaults_to_a_multiple_of_the_drive_limit(tmp_path: Path) -> None:
    from memgit.policy.settings import PUSH_BYTES_FACTOR, Policy

    assert Policy().push_limit == PUSH_BYTES_FACTOR * Policy().drive_bytes
    drive = Drive(tmp_path, files=base_files(), policy="limits: {drive_bytes: 100000}\n")
    before = drive.main()
    pushed = flood(drive, commits=4, files=4, size=30000)  # ~480 KB > 4 x 100 KB
    result = drive.push("refs/heads/work")
    assert_refused(drive, result, "MG611", before, pushed)


def dead_pid() -> int:
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(proc.stdout)  # that process has exited


@pytest.mark.parametrize("lock", ["dead-process", "past-lease", "old-format-past-lease"])
def test_a_stale_purge_lock_does_not_block_pushes(drive: Drive, lock: str) -> None:
    import socket

    from memgit.policy.registry import PURGE_LOCK_FILE

    path = drive.git_dir / PURGE_LOCK_FILE
    if lock == "dead-process":
        path.write_text(f"{dead_pid()} {socket.gethostname()} 2026-11-30T00:00:00+00:00\n")
        git("config", "memgit.purgeLease", "999999999", cwd=drive.git_dir)
    elif lock == "past-lease":  # a live process, but on another host: only the lease tells
        path.write_text("1 build-host-7 2026-01-01T00:00:00+00:00\n")
    else:
        path.write_text("4242 2026-01-01T00:00:00+00:00\n")
    pushed = drive.build((people(entry("Pushed after a killed purge", ulid_like(902))), "p"))
    result = drive.push("refs/heads/work")
    assert result.returncode == 0, result.stderr
    assert drive.main() == pushed[-1]
    assert "MG610 purge-running (warning)" in result.stderr and "is ignored" in result.stderr


def test_a_live_purge_lock_holds_within_its_lease(drive: Drive) -> None:
    import socket

    from memgit.policy.registry import PURGE_LOCK_FILE

    (drive.git_dir / PURGE_LOCK_FILE).write_text(
        f"1 {socket.gethostname()} 2026-11-30T00:00:00+00:00\n")  # pid 1 is alive
    git("config", "memgit.purgeLease", "999999999", cwd=drive.git_dir)
    before = drive.main()
    pushed = drive.build((people(entry("Pushed during a purge", ulid_like(903))), "p"))
    assert_refused(drive, drive.push("refs/heads/work"), "MG610", before, pushed)
