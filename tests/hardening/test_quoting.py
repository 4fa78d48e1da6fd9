"""No message echoes a secret, no output lets a memory drive the terminal (issue 10,
class 4).

Every value a message quotes (a source scheme, a date, an id, a link target, a path, a
ref) passes through ``policy.quote``: a possible credential in it is shown as
``<redacted: KIND>``, in lint's text and JSON, in pre-receive's refusal and in the
writer's reports. Entry text printed by recall, lint and ask --list has its control
characters (ESC, BEL, OSC, C1) escaped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import memgit, memgit_ok
from tests.receive_support import Drive, base_files, entry, memory, people_text, ulid_like

GITHUB = "ghp_" + "Zq8Lm3Nx7Rt2Vb6Kw9Yp4Hd1Fs5Jc0Ga8Ue3"
GITLAB = "glpat-" + "Xk9mQ2vLp8Rt5wZaBc3D"

# a drive file whose lines break one rule each, with a token as the value quoted
QUOTED = {
    "MG101": entry("Clicked a link", ulid_like(30), source=f"{GITHUB}:x/1"),
    "MG102": entry("A date", ulid_like(31), added=GITHUB),
    "MG103": entry("Same id twice", GITHUB) + "\n" + entry("Same id again", GITHUB),
    "MG503": f"- see [[{GITLAB}]] for the runbook",
}


def tokens_absent(data: bytes | str) -> None:
    text = data.decode(errors="replace") if isinstance(data, bytes) else data
    for token in (GITHUB, GITLAB):  # not even a part of one (a value cut short)
        for start in range(0, len(token) - 10, 3):
            assert token[start:start + 10] not in text, token[start:start + 10]


@pytest.mark.parametrize("code", sorted(QUOTED))
def test_lint_quotes_no_token(new_drive, code: str) -> None:
    work = new_drive({"people.md": "# People\n\n" + QUOTED[code] + "\n"})
    text = memgit("lint", cwd=work)
    assert text.returncode == 1, text.stderr  # an error: the token itself is MG401 there
    assert f"MG{code[2:]}".encode() in text.stdout, text.stdout
    assert b"<redacted:" in text.stdout
    tokens_absent(text.stdout + text.stderr)
    as_json = memgit("lint", "--json", cwd=work)
    assert as_json.returncode == text.returncode, as_json.stderr
    found = json.loads(as_json.stdout)
    assert code in {v["code"] for v in found}
    tokens_absent(as_json.stdout + as_json.stderr)


@pytest.mark.parametrize("code", ["MG101", "MG102", "MG103"])
def test_pre_receive_quotes_no_token(tmp_path: Path, code: str) -> None:
    drive = Drive(tmp_path, files=base_files())
    drive.build(({"people.md": people_text(QUOTED[code])}, "add"))
    result = drive.push("refs/heads/work")
    assert result.refused_by_hook and code in result.codes(), result.stderr
    tokens_absent(result.stderr + result.stdout)


def test_paths_and_refs_are_quoted(tmp_path: Path) -> None:
    drive = Drive(tmp_path, files=base_files())
    path = f"notes/\t{GITHUB}.md"  # MG208 and MG402 both name this path
    drive.build(({path: "# N\n", "MEMORY.md": memory(["people.md", "projects/payments.md",
                                                      path])}, "add"))
    result = drive.push("refs/heads/work")
    assert result.refused_by_hook and "MG208" in result.codes(), result.stderr
    tokens_absent(result.stderr)
    other = drive.push("refs/heads/work", f"refs/heads/{GITLAB}")
    assert other.refused_by_hook and "MG602" in other.codes(), other.stderr
    assert "refs/heads/<redacted: GitLab" in other.stderr  # the ref is named, quoted
    tokens_absent(other.stderr)


def test_the_writer_quotes_no_token(new_drive) -> None:
    work = new_drive({"people.md": "# People\n\n" + entry("Known", ulid_like(33)) + "\n"})
    proc = memgit("forget", GITHUB, cwd=work)
    tokens_absent(proc.stdout + proc.stderr)
    # the writer ran and skipped the id, quoting it redacted (not a silent exit)
    assert proc.returncode == 1, proc.stderr
    assert b"skipped #1 <redacted: GitHub token>: not-found (no entry <redacted: GitHub " \
        b"token> in the drive)" in proc.stdout, proc.stdout
    proc = memgit("edit", GITLAB, "new text", cwd=work)
    tokens_absent(proc.stdout + proc.stderr)
    assert proc.returncode == 1, proc.stderr
    assert b"skipped #1 <redacted: GitLab token>: not-found" in proc.stdout, proc.stdout


# --- terminal escapes ---------------------------------------------------------------------

ESCAPES = {"csi": "\x1b[2J\x1b[31mred", "osc": "\x1b]0;owned\x07", "bel": "ring\x07",
           "c1-csi": "\x9b31m", "osc-8-link": "\x1b]8;;https://evil.example\x1b\\click"}


@pytest.mark.parametrize("case", sorted(ESCAPES))
def test_recall_and_ask_escape_control_characters(new_drive, case: str) -> None:
    """A file that holds them anyway (committed past the hooks; the policy refuses them,
    MG308) is recalled with them escaped; the writer drops them from what it is given."""
    payload = ESCAPES[case]
    work = new_drive({"notes.md": "# Notes\n\n- Zanzibar fact " + payload + " end\n"})
    out = memgit_ok("recall", "Zanzibar", cwd=work).stdout.decode()
    assert "Zanzibar fact" in out
    assert not any(c in out for c in "\x1b\x07\x9b"), repr(out)
    assert "\\x1b" in out or "\\x07" in out or "\\x9b" in out
    assert memgit("remember", f"Yucatan fact {payload} end", cwd=work).returncode == 0
    assert not any(c in (work / "notes.md").read_text().split("Yucatan")[1]
                   for c in "\x1b\x07\x9b")
    assert memgit("ask", f"Quokka question {payload}?", cwd=work).returncode == 0
    listed = memgit_ok("ask", "--list", cwd=work).stdout.decode()
    assert "Quokka question" in listed
    assert not any(c in listed for c in "\x1b\x07\x9b"), repr(listed)


def test_lint_escapes_what_it_quotes_from_entry_text(new_drive) -> None:
    work = new_drive({"people.md": "# People\n\n- see [[runbook\x9b2J\x07]] here\n"})
    proc = memgit("lint", cwd=work)
    assert proc.returncode == 1, proc.stderr  # MG308 for the controls; MG503 a warning
    out = proc.stdout.decode()
    assert "MG503" in out and "MG308" in out, out
    assert "\x9b" not in out and "\x07" not in out and "\\x9b2J\\x07" in out


def test_dream_shows_what_a_model_proposed_escaped_and_redacted(new_drive) -> None:
    """The dream report quotes model-given values (unknown keys, ids, a kept id): escape
    sequences are escaped and tokens redacted, in the text report and in JSON."""
    from tests.dream_support import chat_server, make_dream_drive

    path = make_dream_drive(new_drive)
    for server in chat_server():
        server.answer({"merges": [], f"\x1b]0;{GITHUB}\x07": [],
                       "contradictions": [{"ids": ["tools-slack", "tools-jira"],
                                           "keep": f"x\x1b[2J {GITLAB}"}]})
        proc = memgit("dream", "--dry-run", "--base-url", server.url, "--model-name", "m",
                      cwd=path)
        assert proc.returncode == 0, proc.stderr
        out = proc.stdout.decode()
        assert "ignored key \\x1b]0;<redacted: GitHub token>\\x07" in out, out
        assert "keep x\\x1b[2J <redacted: GitLab" in out, out
        assert "\x1b" not in out and "\x07" not in out
        tokens_absent(proc.stdout + proc.stderr)
        server.answer({"merges": [], f"k {GITHUB}": []})
        as_json = memgit("dream", "--dry-run", "--json", "--base-url", server.url,
                         "--model-name", "m", cwd=path)
        assert as_json.returncode == 0, as_json.stderr
        assert json.loads(as_json.stdout)["report"]["ignored_keys"] == [
            "k <redacted: GitHub token>"]
        tokens_absent(as_json.stdout + as_json.stderr)
