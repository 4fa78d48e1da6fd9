"""memgit lint as a user runs it: real drives, real git, the real command line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import git, memgit, refused

BAD_SOURCE = "- Click [source: javascript:alert(1); added: 2026-09-03]\n"


def test_clean_drive_exits_zero(new_drive) -> None:
    d = new_drive({"people.md": "- Joe leads [source: https://example.com/s/1]\n"})
    proc = memgit("lint", cwd=d)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b""


def test_violations_grouped_by_file_with_hint(new_drive) -> None:
    d = new_drive({"a.md": BAD_SOURCE, "b.md": "- x [added: 2026-02-30]\n- y [status: z]\n"})
    proc = memgit("lint", cwd=d)
    assert proc.returncode == 1
    out = proc.stdout.decode()
    assert "a.md:1: MG101 source-scheme:" in out
    assert "b.md:1: MG102 date-invalid:" in out and "b.md:2: MG107 value-invalid:" in out
    assert out.index("a.md:1") < out.index("b.md:1") < out.index("b.md:2")
    assert "  hint: " in out
    assert "3 errors" in proc.stderr.decode()


def test_json_output(new_drive) -> None:
    d = new_drive({"a.md": BAD_SOURCE})
    proc = memgit("lint", "--json", cwd=d)
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert [(v["code"], v["name"], v["path"], v["line"]) for v in data] == \
        [("MG101", "source-scheme", "a.md", 1)]
    assert data[0]["hint"] and data[0]["severity"] == "error"


def test_rev_reads_the_commit_not_the_work_tree(new_drive) -> None:
    d = new_drive({"a.md": BAD_SOURCE})
    (d / "a.md").write_text("- fixed [source: imported:unknown]\n")
    assert memgit("lint", cwd=d).returncode == 0
    proc = memgit("lint", "--rev", "HEAD", "--json", cwd=d)
    assert proc.returncode == 1, proc.stderr
    assert [v["code"] for v in json.loads(proc.stdout)] == ["MG101"]
    assert memgit("lint", "--rev", "HEAD~1", cwd=d).returncode == 0
    bad = memgit("lint", "--rev", "no-such-rev", cwd=d)
    assert bad.returncode == 2 and b"unknown revision" in bad.stderr
    refused(bad, "MG004")


def test_cached_judges_what_is_staged(new_drive) -> None:
    d = new_drive()
    (d / "MEMORY.md").write_text("# Memory\n\n- ok [source: imported:unknown]\n\n## Index\n")
    git("add", "MEMORY.md", cwd=d)
    (d / "MEMORY.md").write_text("# Memory\n\n" + BAD_SOURCE + "\n## Index\n")
    assert memgit("lint", "--cached", cwd=d).returncode == 0
    assert memgit("lint", cwd=d).returncode == 1


def test_fix_regenerates_index_and_nothing_else(new_drive) -> None:
    d = new_drive({"b.md": "- b\n", "a/x.md": "- x [source: javascript:1]\n"}, index=False)
    before_b = (d / "b.md").read_bytes()
    proc = memgit("lint", "--json", cwd=d)
    assert proc.returncode == 1, proc.stderr
    assert {v["code"] for v in json.loads(proc.stdout)} == {"MG502", "MG101"}
    proc = memgit("lint", "--fix", cwd=d)
    assert proc.returncode == 1  # MG101 is not fixed: --fix touches only the Index
    assert (d / "MEMORY.md").read_text() == "# Memory\n\n## Index\n- [[a/x]]\n- [[b]]\n"
    assert (d / "b.md").read_bytes() == before_b
    assert b"MG502" not in proc.stdout
    assert b"a/x.md:1: MG101 source-scheme" in proc.stdout  # it reported what remains


def test_select_and_paths(new_drive) -> None:
    d = new_drive({"a.md": BAD_SOURCE, "b.md": "- x [added: 2026-02-30]\n"})
    proc = memgit("lint", "--select", "MG102", "--json", cwd=d)
    assert proc.returncode == 1, proc.stderr
    assert [v["code"] for v in json.loads(proc.stdout)] == ["MG102"]
    proc = memgit("lint", "a.md", "--json", cwd=d)
    assert proc.returncode == 1, proc.stderr
    assert [v["path"] for v in json.loads(proc.stdout)] == ["a.md"]
    assert memgit("lint", "--select", "MG999", cwd=d).returncode == 2
    assert "unknown rule code(s): MG999" in refused(memgit("lint", "--select", "MG999", cwd=d),
                                                    "MG001")


def test_strict_turns_link_warnings_into_errors(new_drive) -> None:
    d = new_drive({"a.md": "- see [[nowhere]]\n"})
    lax = memgit("lint", cwd=d)
    assert lax.returncode == 0 and b"MG503 link-missing (warning)" in lax.stdout
    assert memgit("lint", "--strict", cwd=d).returncode == 1


def test_symlink_is_reported_not_followed(new_drive, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("- db postgres://app:Sup3rS3cretPw@db.internal/app\n")
    d = new_drive()
    (d / "link.md").symlink_to(outside)
    proc = memgit("lint", "--json", cwd=d)
    assert proc.returncode == 1, proc.stderr
    found = {v["code"] for v in json.loads(proc.stdout)}
    assert "MG202" in found and "MG401" not in found


def test_bad_input_errors(new_drive, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    proc = memgit("lint", cwd=plain)
    assert proc.returncode == 2 and b"not a git repository" in proc.stderr
    assert b"MG002" in proc.stderr
    d = new_drive({"bad.md": b"- caf\xe9\n", "nul.md": b"- a\x00b\n"})
    (d / "MEMORY.md").unlink()
    proc = memgit("lint", "--json", cwd=d)
    assert proc.returncode == 1, proc.stderr
    assert {v["code"] for v in json.loads(proc.stdout)} == {"MG301", "MG302", "MG501"}
    assert (d / "bad.md").read_bytes() == b"- caf\xe9\n"  # nothing changed without --fix
    fix = memgit("lint", "--fix", cwd=d)
    assert fix.returncode == 2 and b"MEMORY.md is missing" in fix.stderr
    refused(fix, "MG004")
    policy = tmp_path / "p.yaml"
    policy.write_text("limits: {files: many}\n")
    proc = memgit("lint", "--policy", str(policy), cwd=d)
    assert proc.returncode == 2 and b"MG003" in proc.stderr and b"limits.files" in proc.stderr


def test_invalid_utf8_memory_is_not_rewritten_by_fix(new_drive) -> None:
    d = new_drive({"a.md": "- a\n"})
    (d / "MEMORY.md").write_bytes(b"# M\xff\n\n## Index\n")
    proc = memgit("lint", "--fix", cwd=d)
    assert proc.returncode == 2 and b"not valid UTF-8" in proc.stderr
    refused(proc, "MG004")
    assert (d / "MEMORY.md").read_bytes() == b"# M\xff\n\n## Index\n"


def test_policy_option_amr(new_drive, tmp_path: Path) -> None:
    d = new_drive({"q.sql": "select 1;\n"})
    assert memgit("lint", cwd=d).returncode == 1
    amr = tmp_path / "amr.yaml"
    amr.write_text("profile: amr\n")
    assert memgit("lint", "--policy", str(amr), cwd=d).returncode == 0
    assert memgit("-C", str(d), "lint", "--policy", str(amr)).returncode == 0


# --- real memory folders under profile amr (issue 12) -------------------------------------

REALWORLD = Path(__file__).parents[1] / "data" / "realworld"
SAMPLES = sorted(p for p in REALWORLD.glob("*/*") if p.is_dir())
# What the Agent Memory Repo spec itself asks and these folders do not all give: a root
# MEMORY.md (MG501: not AMR folders), one line per entry (MG105: wrapped list items),
# links to files the trimmed samples leave out (MG503) or written with .md (MG504),
# lines written twice (MG108, a warning), and the secret gate's call on mem0's 32-hex
# "hash" values (MG401, docs/compat.md)
TRUE_FINDINGS = {"MG501", "MG105", "MG503", "MG504", "MG108", "MG401"}


def test_real_memory_folders_raise_no_false_alarm_under_amr(tmp_path: Path) -> None:
    """The issue's false alarms, gone: no id clash for repeated lines (MG103), no closed
    keys or values (MG106, MG107), no source form refused (MG101), no transcript read
    into a note about transcription or Key: value bullets (MG305), no front matter or
    code read as entries (every entry is a list item markdown-it-py finds: test_format)."""
    from memgit.git.repository import open_drive
    from memgit.policy.lint import lint_worktree
    from memgit.policy.settings import policy_from_mapping

    amr = policy_from_mapping({"profile": "amr"})
    found: dict[str, set[str]] = {}
    for sample in SAMPLES:
        path = tmp_path / f"{sample.parent.name}-{sample.name}"
        shutil.copytree(sample, path)
        git("init", "-q", "-b", "main", cwd=path)
        drive = open_drive(path)
        codes = {v.code for v in lint_worktree(drive.git_dir, drive.workdir, amr)}
        found[f"{sample.parent.name}/{sample.name}"] = codes
    assert len(found) == 30
    assert {name: codes - TRUE_FINDINGS for name, codes in found.items()} == \
        {name: set() for name in found}
    assert "MG108" in found["cline/csv-date-expander"]  # it repeats lines: now a warning
