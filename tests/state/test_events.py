"""Event counters and the Prometheus text (real SQLite, real CLI)."""

from __future__ import annotations

import multiprocessing
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memgit.format import entries as fmt
from memgit.git.repository import init_bare
from memgit.state import events
from tests.conftest import ROOT, memgit

CTX = multiprocessing.get_context("fork")
SAMPLE_RE = re.compile(r'(memgit_[a-z_]+)\{drive="((?:[^"\\]|\\.)*)"(?:,event="([a-z_]+)")?\} '
                       r"(\d+)\Z")


def parse_samples(text: str) -> dict[tuple[str, str, str], int]:
    """Every sample of a Prometheus text; fails on a line that is neither sample nor comment."""
    out: dict[tuple[str, str, str], int] = {}
    for line in text.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            continue
        m = SAMPLE_RE.match(line)
        assert m is not None, line
        out[(m.group(1), m.group(2), m.group(3) or "")] = int(m.group(4))
    return out


def test_record_and_counts(tmp_path: Path) -> None:
    assert events.counts(tmp_path) == dict.fromkeys(events.EVENTS, 0)
    assert events.record(tmp_path, "push_accepted") is True
    events.record(tmp_path, "push_accepted", 2)
    events.record(tmp_path, "purge")
    counts = events.counts(tmp_path)
    assert counts["push_accepted"] == 3 and counts["purge"] == 1 and counts["commit"] == 0


def _count(path: str) -> None:
    for _ in range(40):
        events.record(Path(path), "push_refused")


def test_concurrent_counts_are_not_lost(tmp_path: Path) -> None:
    procs = [CTX.Process(target=_count, args=(str(tmp_path),)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0] * 4
    assert events.counts(tmp_path)["push_refused"] == 160


def test_record_never_raises(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert events.record(blocker, "commit") is False  # git_dir is a file: no database


def test_record_repairs_a_damaged_database(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "memgit").mkdir()
    damaged = b"\x00not sqlite\xff" * 512
    (tmp_path / "memgit" / "state.sqlite").write_bytes(damaged)
    assert events.record(tmp_path, "push_accepted") is True  # kept aside, rebuilt, counted
    kept = list((tmp_path / "memgit").glob("state.sqlite.damaged-*"))
    assert [k.read_bytes() for k in kept] == [damaged]
    assert "memgit: warning: the state database was damaged" in capsys.readouterr().err


def test_importing_events_does_not_load_pygit2() -> None:
    code = ("import sys, memgit.state.events; "
            "print(any(m.startswith('pygit2') for m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT / "src")})
    assert proc.returncode == 0 and proc.stdout.strip() == "False", proc.stderr


def test_prometheus_text_format() -> None:
    text = events.prometheus([
        ('/srv/a "b"\\c', {"commit": 3, "purge": 0}, {"pending_writes": 1}),
        ("/srv/d", {"commit": 1, "purge": 2}, {"pending_writes": 0}),
    ])
    assert text.endswith("\n")
    lines = text.splitlines()
    assert lines[0].startswith("# HELP memgit_events_total ")
    assert lines[1] == "# TYPE memgit_events_total counter"
    assert "# TYPE memgit_pending_writes gauge" in lines
    samples = parse_samples(text)
    assert samples[("memgit_events_total", '/srv/a \\"b\\"\\\\c', "commit")] == 3
    assert samples[("memgit_events_total", "/srv/d", "purge")] == 2
    assert samples[("memgit_pending_writes", "/srv/d", "")] == 0
    # each metric's TYPE line comes before all of its samples
    assert lines.index("# TYPE memgit_pending_writes gauge") < min(
        i for i, ln in enumerate(lines) if ln.startswith("memgit_pending_writes{"))


def test_cli_metrics_for_several_drives_and_textfile_output(tmp_path: Path) -> None:
    drives = []
    for name in ("a.git", "b.git"):
        init_bare(tmp_path / name, {"MEMORY.md": fmt.initial_memory().encode()}, "Create")
        drives.append(tmp_path / name)
    events.record(drives[0], "push_accepted", 5)
    out = tmp_path / "textfile" / "memgit.prom"
    out.parent.mkdir()
    proc = memgit("metrics", str(drives[0]), str(drives[1]), "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    samples = parse_samples(out.read_text())
    assert samples[("memgit_events_total", str(drives[0].resolve()), "push_accepted")] == 5
    assert samples[("memgit_events_total", str(drives[1].resolve()), "push_accepted")] == 0
    assert samples[("memgit_files", str(drives[1].resolve()), "")] == 1
    assert [p.name for p in out.parent.iterdir()] == ["memgit.prom"]  # no temporary left
    proc = memgit("-C", str(drives[0]), "metrics")
    assert proc.returncode == 0
    assert set(parse_samples(proc.stdout.decode())) == {
        k for k in samples if k[1] == str(drives[0].resolve())}
    # a folder that is not there is the user's error, said with the option, not a crash
    proc = memgit("metrics", str(drives[0]), "-o", str(tmp_path / "missing" / "m.prom"))
    assert proc.returncode == 2 and b"MG001" in proc.stderr and b"give -o a file" in proc.stderr
    assert not (tmp_path / "missing").exists()
