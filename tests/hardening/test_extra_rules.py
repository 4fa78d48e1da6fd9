"""A drive's own secret rules (``secrets: {extra_rules: [...]}``) judge commits, names and
identities, and redact what messages quote (issue 10, classes 2-4, with issue 11's
extra rules).

The token format below is one no built-in rule knows: each case pushes or writes the
same thing to a drive without the extra rule (it lands, or is shown as it is) and to a
drive with it (refused, and never echoed), so the extra rule is what decides.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import git, memgit
from tests.receive_support import Drive, base_files, entry, memory, people_text, ulid_like

TICKET = "ACME-2041-QKZRWT"  # an organisation's own secret format (synthetic)
RULES = ("secrets:\n  extra_rules:\n    - {id: acme-ref, kind: Acme ticket secret, "
         "regex: 'ACME-\\d{4}-[A-Z]{6}', keywords: [acme-]}\n")
GOOD = {"people.md": people_text(entry("Mia joined the platform team", ulid_like(80)))}
BASE_PATHS = ["people.md", "projects/payments.md"]


def named_file(path: str) -> dict:
    return {path: "# Topic\n", "MEMORY.md": memory([*BASE_PATHS, path],
                                                    [entry("The drive is for tests",
                                                           ulid_like(4))])}


# (changes, message, author) of the pushed commit; where the ticket is; the rule code
PUSHES = {
    "subject": (GOOD, f"close {TICKET}", None, "MG403"),
    "body": (GOOD, f"Add Mia\n\nsee {TICKET}\n", None, "MG403"),
    "author-email": (GOOD, "Add Mia", f"Test Agent <{TICKET}@example.com>", "MG403"),
    "file-name": (named_file(f"notes/{TICKET}.md"), "add notes", None, "MG402"),
}


@pytest.mark.parametrize("case", sorted(PUSHES))
def test_the_drive_rules_judge_commits_and_names(tmp_path: Path, case: str) -> None:
    changes, message, author, code = PUSHES[case]
    plain = Drive(tmp_path / "plain", files=base_files())
    pushed = plain.build((changes, message), author=author)
    assert plain.push("refs/heads/work").returncode == 0  # no built-in rule knows it
    assert plain.main() == pushed[-1]
    ruled = Drive(tmp_path / "ruled", files=base_files(), policy=RULES)
    before = ruled.main()
    pushed = ruled.build((changes, message), author=author)
    result = ruled.push("refs/heads/work")
    assert result.refused_by_hook, result.stderr
    assert code in result.codes()
    assert "possible credential: Acme ticket secret" in result.stderr
    assert TICKET not in result.stderr + result.stdout
    assert ruled.main() == before and not ruled.has_object(pushed[0])


def test_a_refused_subject_is_shown_redacted_with_the_drive_rules(tmp_path: Path) -> None:
    ruled = Drive(tmp_path, files=base_files(), policy=RULES)
    pushed = ruled.build((GOOD, f"close {TICKET} today"))
    result = ruled.push("refs/heads/work")
    assert result.refused_by_hook and "MG403" in result.codes(), result.stderr
    assert f"commit {pushed[0][:10]} close <redacted: Acme ticket secret> today" \
        in result.stderr
    assert TICKET not in result.stderr + result.stdout


def test_lint_quotes_with_the_drive_rules(new_drive) -> None:
    files = {"people.md": f"# People\n\n- see [[{TICKET}]] for the runbook\n"}
    plain = new_drive(files)
    shown = memgit("lint", cwd=plain)
    assert shown.returncode == 0, shown.stderr  # MG503 is a warning
    assert b"MG503" in shown.stdout and TICKET.encode() in shown.stdout
    work = new_drive(files)
    (work / ".git" / "memgit.yaml").write_text(RULES)
    text = memgit("lint", cwd=work)
    assert text.returncode == 1, text.stderr  # the drive's rule: an error
    assert b"people.md:3: MG401 secret: possible credential: Acme ticket secret" in text.stdout
    assert b"[[<redacted: Acme ticket secret>]] points at a file" in text.stdout, text.stdout
    as_json = memgit("lint", "--json", cwd=work)
    assert as_json.returncode == 1, as_json.stderr
    assert {"MG401", "MG503"} <= {v["code"] for v in json.loads(as_json.stdout)}
    assert TICKET.encode() not in text.stdout + text.stderr + as_json.stdout


def test_the_writer_judges_its_message_and_identity_with_the_drive_rules(new_drive) -> None:
    work = new_drive()
    (work / ".git" / "memgit.yaml").write_text(RULES)
    proc = memgit("remember", "Mia joined the platform team", "-m", f"close {TICKET}",
                  "--json", cwd=work)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert any("commit message was not used" in w and "MG403" in w for w in result["warnings"])
    log = git("log", "-1", "--format=%B", cwd=work).stdout.decode()
    assert TICKET not in log and log.startswith("memgit: write")
    head = git("rev-parse", "HEAD", cwd=work).stdout
    git("config", "user.email", f"{TICKET}@example.com", cwd=work)
    refused = memgit("remember", "Mia leads the migration", cwd=work)
    assert refused.returncode == 1 and b"MG007" in refused.stderr, refused.stderr
    assert b"the commit identity is refused" in refused.stderr
    assert TICKET.encode() not in refused.stdout + refused.stderr
    assert git("rev-parse", "HEAD", cwd=work).stdout == head  # nothing was written
