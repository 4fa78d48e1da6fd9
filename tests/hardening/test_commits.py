"""Commit messages, authors and committers are content (issue 10, class 2).

A possible credential in any of them refuses the push (MG403), naming the commit and the
field or message line, never the value; the writer never makes such a commit: a message
that would be refused is replaced by the default subject (with a warning), an identity
that would be refused stops the write before anything is written.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import git, memgit, refused
from tests.receive_support import Drive, base_files, entry, people_text, ulid_like

GITHUB = "ghp_" + "Zq8Lm3Nx7Rt2Vb6Kw9Yp4Hd1Fs5Jc0Ga8Ue3"  # a GitHub token shape
SLACK = "xoxb-" + "2048123456-4096123456-Kq8Zm3Nx7Rt2Vb6Kw9Yp4Hd1"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dcQ7mR2x"
GOOD = {"people.md": people_text(entry("Mia joined the platform team", ulid_like(80)))}

# (message, author, committer) of a commit; each case puts a token somewhere else
CASES = {
    "subject": (f"add token {GITHUB}", None, "Test Agent <agent@example.com>"),
    "body-line": (f"Add Mia\n\nthe deploy key is {SLACK}\n", None,
                  "Test Agent <agent@example.com>"),
    "trailer": (f"Add Mia\n\nSigned-off-by: Test\nX-Token: {STRIPE}\n", None,
                "Test Agent <agent@example.com>"),
    "author-name": ("Add Mia", f"{GITHUB} <agent@example.com>",
                    "Test Agent <agent@example.com>"),
    "author-email": ("Add Mia", f"Test Agent <{GITHUB}@example.com>",
                     "Test Agent <agent@example.com>"),
    "committer-name": ("Add Mia", None, f"Bot {SLACK} <bot@example.com>"),
    "committer-email": ("Add Mia", None, f"Bot <{STRIPE}@example.com>"),
}
WHERE = {"subject": "line 1 of the commit message", "body-line": "line 3 of the commit message",
         "trailer": "line 4 of the commit message", "author-name": "the author name",
         "author-email": "the author email", "committer-name": "the committer name",
         "committer-email": "the committer email"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_token_in_a_commit_refuses_the_push(tmp_path: Path, case: str) -> None:
    drive = Drive(tmp_path, files=base_files())
    message, author, committer = CASES[case]
    before = drive.main()
    pushed = drive.build((GOOD, message), author=author, committer=committer)
    result = drive.push("refs/heads/work")
    assert result.refused_by_hook, result.stderr
    assert "MG403" in result.codes()
    assert f"MG403 secret-in-commit: {WHERE[case]} holds a possible credential" \
        in result.stderr
    assert f"commit {pushed[0][:10]}" in result.stderr  # the commit is named
    for token in (GITHUB, SLACK, STRIPE):
        assert token not in result.stderr + result.stdout
        assert token[5:20] not in result.stderr
    assert drive.main() == before and not drive.has_object(pushed[0])


def test_a_token_in_an_earlier_commit_of_the_push_is_found(tmp_path: Path) -> None:
    drive = Drive(tmp_path, files=base_files())
    later = {"people.md": people_text(entry("Mia joined the platform team", ulid_like(80)),
                                      entry("Mia leads the migration", ulid_like(81)))}
    pushed = drive.build((GOOD, f"first {GITHUB}"), (later, "second, clean"))
    result = drive.push("refs/heads/work")
    assert result.refused_by_hook and "MG403" in result.codes(), result.stderr
    assert f"commit {pushed[0][:10]}" in result.stderr


def test_clean_commits_still_land(tmp_path: Path) -> None:
    drive = Drive(tmp_path, files=base_files())
    pushed = drive.build((GOOD, "Add Mia\n\nThe token rotation is every Monday.\n"),
                         author="Ann Lee <ann@example.com>")
    assert drive.push("refs/heads/work").returncode == 0
    assert drive.main() == pushed[-1]


@pytest.mark.parametrize("token", [GITHUB, SLACK])
def test_the_writer_does_not_use_a_message_holding_a_token(new_drive, token: str) -> None:
    work = new_drive()
    proc = memgit("remember", "Mia joined the platform team", "-m", f"note {token}",
                  "--json", cwd=work)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] == "committed"
    assert any("commit message was not used" in w and "MG403" in w for w in result["warnings"])
    assert token not in proc.stdout.decode() + proc.stderr.decode()
    log = git("log", "-1", "--format=%B", cwd=work).stdout.decode()
    assert token not in log and log.startswith("memgit: write")


def test_the_writer_refuses_an_identity_holding_a_token(new_drive) -> None:
    work = new_drive()
    head = git("rev-parse", "HEAD", cwd=work).stdout
    git("config", "user.name", f"Agent {GITHUB}", cwd=work)
    proc = memgit("remember", "Mia joined the platform team", cwd=work)
    assert proc.returncode != 0
    assert b"MG403" in proc.stderr or b"identity" in proc.stderr, proc.stderr
    err = refused(proc, "MG007", status=1)  # the writer's refusal, not a crash
    assert "the commit identity is refused" in err and "possible credential" in err
    assert GITHUB.encode() not in proc.stdout + proc.stderr
    assert git("rev-parse", "HEAD", cwd=work).stdout == head  # nothing was written


# --- headers besides author and committer (hostile sweep, branch hostile42) ----------------
# git keeps a commit's other headers (gpgsig, mergetag, encoding and any it does not know)
# and every clone gets them: a token in an ``x-token`` header or inside a gpgsig block
# landed before pre-receive scanned them.

AWS_ID = "AKIA" + "Q7ZK3XW2MR5TN4PV"
AWS_SECRET = "wJ8rXu2Kp" + "Vn4Lz7Qs1Ty6Bm3Hc9Gd0Fa5Ej"


def _with_headers(drive: Drive, oid: str, extra: str) -> str:
    """The commit ``oid`` written again with ``extra`` header lines (raw, unchecked)."""
    raw = git("cat-file", "commit", oid, cwd=drive.client).stdout.decode()
    head, _sep, message = raw.partition("\n\n")
    new = git("hash-object", "-t", "commit", "-w", "--stdin", "--literally", cwd=drive.client,
              input=f"{head}\n{extra}\n\n{message}".encode()).stdout.decode().strip()
    git("update-ref", "refs/heads/work", new, cwd=drive.client)
    return new


HEADERS = {
    "unknown": (f"x-deploy-token {GITHUB}", "the unknown header"),
    "unknown-name": (f"{GITHUB} 1", "the unknown header"),
    "gpgsig-body": ("gpgsig -----BEGIN PGP SIGNATURE-----\n \n "
                    f"aws_access_key_id={AWS_ID} aws_secret_access_key={AWS_SECRET}\n"
                    " -----END PGP SIGNATURE-----", "the gpgsig header"),
    "gpgsig-comment": ("gpgsig -----BEGIN PGP SIGNATURE-----\n"
                       f" Comment: {SLACK}\n \n iQEzBAABCAAdFiEE\n =AbCd\n"
                       " -----END PGP SIGNATURE-----", "the gpgsig header"),
    "mergetag": ("mergetag object 0123456789012345678901234567890123456789\n type commit\n"
                 f" tag v1\n tagger T <t@example.com> 1767000000 +0000\n \n release {STRIPE}",
                 "the mergetag header"),
    "encoding": (f"encoding {GITHUB}", "the encoding header"),
}


@pytest.mark.parametrize("case", sorted(HEADERS))
def test_a_token_in_another_commit_header_refuses_the_push(tmp_path: Path, case: str) -> None:
    drive = Drive(tmp_path, files=base_files())
    before = drive.main()
    extra, where = HEADERS[case]
    new = _with_headers(drive, drive.build((GOOD, "Add Mia"))[0], extra)
    result = drive.push("refs/heads/work")
    assert result.refused_by_hook, result.stderr
    assert f"MG403 secret-in-commit: {where} holds a possible credential" in result.stderr
    for token in (GITHUB, SLACK, STRIPE, AWS_ID, AWS_SECRET):
        assert token[4:16] not in result.stderr
    assert drive.main() == before and not drive.has_object(new)


def _gpg_home(tmp_path: Path) -> dict[str, str]:
    """A GnuPG home with one signing key for t@example.com (no passphrase): its env."""
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    env = {"GNUPGHOME": str(home)}
    subprocess.run(["gpg", "-q", "--batch", "--passphrase", "", "--quick-gen-key",
                    "Test <t@example.com>", "rsa2048", "sign", "never"],
                   check=True, env={**os.environ, **env}, capture_output=True)
    return env


def _signed_chain(drive: Drive, tmp_path: Path, fmt: str, count: int) -> str:
    """``count`` commits on main, each signed (``fmt``: ssh or openpgp) by git itself."""
    env: dict[str, str] = {}
    if fmt == "ssh":
        key = tmp_path / "key"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)],
                       check=True)
        config = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={key}"]
    else:
        env = _gpg_home(tmp_path)
        config = ["-c", "user.signingkey=t@example.com"]
    tip = drive.sync_client()
    tree = git("rev-parse", f"{tip}^{{tree}}", cwd=drive.client).stdout.decode().strip()
    for number in range(count):
        tip = git(*config, "commit-tree", "-S", "-p", tip, "-m", f"signed {number}", tree,
                  cwd=drive.client, env=env).stdout.decode().strip()
    git("update-ref", "refs/heads/work", tip, cwd=drive.client)
    return tip


@pytest.mark.parametrize("fmt", ["ssh", "openpgp"])
def test_signed_commits_still_land(tmp_path: Path, fmt: str) -> None:
    """A signature's base64 reads as generated tokens to the scanner (about one armor line
    in eight); its armor is decoded, never scanned as text. Twelve signatures."""
    if shutil.which("ssh-keygen" if fmt == "ssh" else "gpg") is None:
        pytest.skip(f"no {fmt} signing tool")
    drive = Drive(tmp_path, files=base_files())
    tip = _signed_chain(drive, tmp_path, fmt, 12)
    assert "gpgsig" in git("cat-file", "commit", tip, cwd=drive.client).stdout.decode()
    result = drive.push("refs/heads/work")
    assert result.returncode == 0, result.stderr
    assert drive.main() == tip


def test_a_merge_of_a_signed_tag_still_lands(tmp_path: Path) -> None:
    """``git merge`` of a signed tag copies the tag, its signature armor included, into
    the merge's mergetag header: read as the tag's lines, the armor decoded."""
    if shutil.which("gpg") is None:
        pytest.skip("no gpg")
    drive = Drive(tmp_path, files=base_files())
    env = _gpg_home(tmp_path)
    work = tmp_path / "work"
    git("clone", "-q", drive.git_dir, work)
    git("config", "user.signingkey", "t@example.com", cwd=work)
    side = people_text(entry("Mia joined the platform team", ulid_like(80)))
    git("checkout", "-q", "-b", "side", cwd=work)
    (work / "people.md").write_text(side)
    git("commit", "-q", "--no-verify", "-am", "side", cwd=work)
    git("tag", "-s", "v1", "-m", "release v1", cwd=work, env=env)
    git("checkout", "-q", "main", cwd=work)
    (work / "projects" / "payments.md").write_text(
        str(base_files()["projects/payments.md"]) + entry("Launch moved to April", ulid_like(81))
        + "\n")
    git("commit", "-q", "--no-verify", "-am", "main", cwd=work)
    git("merge", "-q", "--no-ff", "--no-verify", "-m", "merge v1", "v1", cwd=work, env=env)
    assert "mergetag" in git("cat-file", "commit", "HEAD", cwd=work).stdout.decode()
    proc = git("push", "origin", "HEAD:main", cwd=work, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
