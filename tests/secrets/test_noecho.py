"""Every detected secret is reported by kind only: no message, log or JSON output of
lint, pre-receive or the writer contains the value (real CLI, real pushes)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from tests.conftest import git, memgit
from tests.receive_support import Drive, base_files, entry, people_text, ulid_like

PW = "Xk9fQ2mLp0Zr7Tb4Wq1e"
SECRETS = {
    "GitHub token": "ghp_Zq8tW3mBHk2pL9xVn4RsT7yQ1uEo6cJa5dFg",
    "password assignment": PW,
    "password in URL": "Hk2pL9xVn4RsT7yQ",
    "command-line credential": "Vn4RsT7yQ1uEo6cJ",
    "HTTP Basic credentials": base64.b64encode(b"deploy:" + PW.encode()).decode(),
    "password hash": "$6$Zq8tW3mB$Hk2pL9xVn4RsT7yQ1uEo6cJa5dFg8iKm0bNw3zXv.Yr",
    "Acme ticket secret": "ACME-2041-QKZRWT",
}
LINES = [
    f"- the deploy token is {SECRETS['GitHub token']}",
    f"- **Password:** {PW}",
    f"- DB is postgres://app:{SECRETS['password in URL']}@db.internal/app",
    f"- run `curl -u deploy:{SECRETS['command-line credential']} https://ci.internal`",
    f"- header Authorization: Basic {SECRETS['HTTP Basic credentials']}",
    f"- shadow line root:{SECRETS['password hash']}:19000:0:99999:7:::",
    f"- ticket {SECRETS['Acme ticket secret']} is ready",
]
POLICY = ("secrets:\n  mode: fast\n  extra_rules:\n"
          "    - {id: acme, kind: Acme ticket secret, regex: 'ACME-\\d{4}-[A-Z]{6}',"
          " keywords: [acme-]}\n")


def fragments(secret: str) -> list[str]:
    """The value and any 8-character piece of it."""
    return [secret] + [secret[i: i + 8] for i in range(0, max(1, len(secret) - 7), 4)]


def assert_no_secret(text: str) -> None:
    for kind, secret in SECRETS.items():
        for piece in fragments(secret):
            assert piece not in text, (kind, piece)


def test_lint_text_and_json_name_kinds_only(new_drive) -> None:
    drive = new_drive({"ops.md": "# Ops\n\n" + "\n".join(LINES) + "\n"})
    (Path(drive) / "memgit.yaml").write_text(POLICY)
    text = memgit("lint", "--policy", str(Path(drive) / "memgit.yaml"), cwd=drive)
    assert text.returncode == 1
    out = text.stdout.decode() + text.stderr.decode()
    assert out.count("MG401") == len(LINES)
    for kind in SECRETS:
        assert kind in out
    assert_no_secret(out)
    data = memgit("lint", "--json", "--policy", str(Path(drive) / "memgit.yaml"), cwd=drive)
    report = data.stdout.decode()
    found = json.loads(report)
    assert len([v for v in found if v["code"] == "MG401"]) == len(LINES)
    assert_no_secret(report + data.stderr.decode())


def test_pre_receive_refusal_names_kinds_only(tmp_path: Path) -> None:
    drive = Drive(tmp_path, files=base_files(), policy=POLICY)
    before = drive.main()
    lines = [entry(line[2:], ulid_like(40 + i)) for i, line in enumerate(LINES)]
    drive.build(({"people.md": people_text(*lines)}, "add ops facts"))
    result = drive.push("refs/heads/work")
    assert result.refused_by_hook and drive.main() == before
    assert result.stderr.count("MG401") == len(LINES)
    for kind in SECRETS:
        assert kind in result.stderr
    assert_no_secret(result.stdout + result.stderr)


@pytest.mark.parametrize("line", LINES)
def test_writer_skip_names_the_kind_only(tmp_path: Path, line: str) -> None:
    bare = tmp_path / "drive.git"
    assert memgit("init", "--bare", str(bare)).returncode == 0
    (bare / "memgit.yaml").write_text(POLICY)
    for args in ((), ("--json",)):
        proc = memgit("-C", str(bare), "remember", *args, line[2:])
        out = proc.stdout.decode() + proc.stderr.decode()
        assert proc.returncode == 1, out
        assert "credential" in out
        assert_no_secret(out)
    log = git("log", "--format=%B", "main", cwd=bare).stdout.decode()
    assert_no_secret(log)
