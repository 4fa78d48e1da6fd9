"""memgit serve's parts in process: an entry's history from real git commits, names and
paths, token checks (expiry, revocation, wrong secrets), the pages' redaction."""

from __future__ import annotations

import os
from contextlib import closing
from pathlib import Path

import pytest

from tests.conftest import commit_all, git

LINE = "- {text} [source: https://example.com/s/1; added: 2026-01-02; id: m-kite]\n"


def test_history_follows_an_entry_through_edits_moves_and_its_removal(new_drive) -> None:  # type: ignore[no-untyped-def]
    from memgit.serve.history import entry_history

    work = new_drive({"birds.md": "# Birds\n\n" + LINE.format(text="Kites hover")})
    (work / "birds.md").write_text("# Birds\n\n" + LINE.format(text="Red kites hover"))
    commit_all(work, "edit")
    (work / "birds.md").write_text("# Birds\n")
    (work / "raptors.md").write_text("# Raptors\n\n" + LINE.format(text="Red kites hover"))
    commit_all(work, "move")
    git_dir = str(work / ".git")
    versions = entry_history(git_dir, "refs/heads/main", "m-kite", path="raptors.md")
    assert [v.change for v in versions] == ["moved", "edited", "added"]
    assert versions[1].before == "Kites hover" and versions[1].after == "Red kites hover"
    assert versions[0].path == "raptors.md" and versions[2].path == "birds.md"
    assert versions[0].subject == "move" and versions[0].author == "Test Agent"
    (work / "raptors.md").write_text("# Raptors\n")
    commit_all(work, "remove")
    gone = entry_history(git_dir, "refs/heads/main", "m-kite")
    assert [v.change for v in gone] == ["removed", "moved", "edited", "added"]
    assert gone[0].after is None and gone[0].before == "Red kites hover"
    assert entry_history(git_dir, "refs/heads/main", "m-nothing") == []
    assert entry_history(git_dir, "refs/heads/main", "--output=/tmp/x") == []  # not an id


def test_a_deterministic_id_is_followed_by_its_text(new_drive) -> None:  # type: ignore[no-untyped-def]
    from memgit.format import entries as fmt
    from memgit.serve.history import entry_history

    work = new_drive({"notes.md": "- Owls hunt at night [source: imported:unknown]\n"})
    entry = fmt.parse_entry("- Owls hunt at night [source: imported:unknown]")
    assert entry is not None and entry.id.startswith("entry-")
    versions = entry_history(str(work / ".git"), "refs/heads/main", entry.id,
                             text=entry.text)
    assert [v.change for v in versions] == ["added"] and versions[0].after == entry.text


def test_names_and_drive_folders(tmp_path: Path) -> None:
    from memgit.serve.paths import drive_dir, list_drives, parse_name

    for bad in ("..", "a/..", "../a", "a/b/c", "a/.b", ".a/b", "a/b\x00", "a/b\n", "a/ b",
                "a/b.git.git", "a/" + "b" * 65, "a/b.lock", ""):
        assert parse_name(bad) is None, bad
    assert parse_name("joe/notes.git") == "joe/notes" == parse_name("joe/notes")
    root = tmp_path / "root"
    (root / "joe").mkdir(parents=True)
    git("init", "-q", "--bare", str(root / "joe" / "notes.git"))
    outside = tmp_path / "outside.git"
    git("init", "-q", "--bare", str(outside))
    (root / "joe" / "link.git").symlink_to(outside)
    (root / "ann").symlink_to(root / "joe")
    (root / "joe" / "plain.git").mkdir()  # not a repository
    name = parse_name("joe/notes")
    assert name is not None and drive_dir(root, name) == root / "joe" / "notes.git"
    for other in ("joe/link", "ann/notes", "joe/plain", "joe/missing"):
        found = parse_name(other)
        assert found is not None and drive_dir(root, found) is None, other
    assert list_drives(root) == ["joe/notes"]


def test_token_checks(tmp_path: Path) -> None:
    from memgit.serve import tokens
    from memgit.serve.paths import parse_name
    from memgit.state import tokens as rows

    name = parse_name("joe/notes")
    assert name is not None
    made = tokens.add(tmp_path, name, "read", name="ci")
    checker = tokens.Checker(tmp_path)
    grant = checker.check(made.text, 0.0)
    assert grant is not None and grant.may_read(name) and not grant.may_write(name)
    other = parse_name("joe/other")
    assert other is not None and not grant.may_read(other)
    assert checker.check(made.text[:-1] + ("A" if made.text[-1] != "A" else "B"), 0.0) is None
    assert checker.check("mgt_short_x", 0.0) is None and checker.check("", 0.0) is None
    # an expired token: its row says so (written as a token made 2 days ago for 1 day)
    old = tokens.add(tmp_path, name, "write", expires_days=1)
    conn = rows.connect(tmp_path)
    assert conn is not None
    with closing(conn):
        conn.execute("UPDATE tokens SET expires = '2000-01-01T00:00:00Z' WHERE id = ?",
                     (old.id,))
    assert checker.check(old.text, 100.0) is None
    assert {t["id"]: t["state"] for t in tokens.listing(tmp_path)}[old.id] == "expired"
    tokens.revoke(tmp_path, made.id)
    assert checker.check(made.text, 200.0) is None
    assert not tokens.any_usable(tmp_path)
    listed = tokens.listing(tmp_path)
    assert all("digest" not in t and "salt" not in t for t in listed)
    checker.close()
    with pytest.raises(Exception, match="revoked already"):
        tokens.revoke(tmp_path, made.id)
    assert oct(os.stat(rows.path_of(tmp_path)).st_mode & 0o777) == "0o600"


def test_pages_redact_what_the_gate_refuses_and_escape_the_rest() -> None:
    from memgit.policy.settings import Policy
    from memgit.serve.views import render

    secret = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    status, html = render("error.html", Policy(), 500, title="x", name="",
                          message=f"<b>queued write failed</b>: token {secret} \u202e")
    assert status == 500
    assert secret not in html and "&lt;redacted: " in html
    assert "&lt;b&gt;queued write failed&lt;/b&gt;" in html and "\\u202e" in html
    assert "\u202e" not in html
