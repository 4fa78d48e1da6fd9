"""memgit sync: replay N offline commits against a server that moved M commits meanwhile.

Run: python bench/bench_sync.py [--commits 100] [--server-commits 100]
                                [--transports file,http] [--batches 1,100] [--json]

Setup (once): a bare server drive made by ``memgit init --bare`` (memgit's
pre-receive hook runs on every push, as in production), two clones A and B.
A makes M commits (one entry each, spread over 10 topic files) and syncs them;
B, offline all along, makes N commits the same way. Then, for each transport
and batch size, a fresh copy of the server and of B is made and B runs
``sync(batch=...)``; every one of B's commits has to be replayed (the server
moved), so each becomes one new server commit.

Printed per run: wall time, time per commit, and where it went: ``push``
(``git push`` round trips including the server's pre-receive hook), ``replay``
(entry operations computed and applied, new trees and commits written),
``fetch`` and ``finish`` (moving the checkout to the server's head). The HTTP
transport is nginx + fcgiwrap + git http-backend from tests/servers.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

from memgit.drives.create import clone_drive, create_drive  # noqa: E402
from memgit.format import entries as fmt  # noqa: E402
from memgit.git.repository import open_drive  # noqa: E402
from memgit.sync.client import sync  # noqa: E402


def isolate_git(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    config = home / ".gitconfig"
    config.write_text("[user]\n\tname = Bench Agent\n\temail = bench@example.com\n"
                      "[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n")
    os.environ.update(GIT_CONFIG_GLOBAL=str(config), GIT_CONFIG_NOSYSTEM="1")


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def make_commits(work: Path, count: int, tag: str) -> None:
    for n in range(count):
        path = work / f"topics/t{n % 10}.md"
        text = path.read_text() if path.exists() else f"# Topic {n % 10}\n\n"
        line = fmt.format_entry(f"{tag} fact number {n} about the rollout", "imported:unknown",
                                "2026-01-02", fmt.new_id())
        path.parent.mkdir(exist_ok=True)
        path.write_text(text + line + "\n")
        memory = (work / fmt.MEMORY_FILE).read_text()
        paths = [str(p.relative_to(work)) for p in work.rglob("*.md") if ".git" not in p.parts]
        (work / fmt.MEMORY_FILE).write_text(fmt.regenerate_index_section(memory, paths))
        git("add", "-A", cwd=work)
        git("commit", "-q", "--no-verify", "-m", f"{tag} {n}", cwd=work)


def fill_drive(work: Path) -> None:
    """About 2 MiB in 255 topic files (bench/drivegen.py), kept under the file limit."""
    sys.path.insert(0, str(ROOT / "bench"))
    from drivegen import topic_files

    topics = topic_files(files=240, file_bytes=7800)
    for name, text in topics.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    memory = (work / fmt.MEMORY_FILE).read_text()
    (work / fmt.MEMORY_FILE).write_text(fmt.regenerate_index_section(memory, [fmt.MEMORY_FILE,
                                                                      *topics]))
    git("add", "-A", cwd=work)
    git("commit", "-q", "--no-verify", "-m", "full drive", cwd=work)


def prepare(base: Path, commits: int, server_commits: int,
            full: bool = False) -> tuple[Path, Path]:
    bare = base / "server.git"
    create_drive(bare, bare=True)
    a = clone_drive(bare.as_uri(), base / "a")
    if full:
        fill_drive(a)
        sync(open_drive(a))
    b = clone_drive(bare.as_uri(), base / "b")
    make_commits(a, server_commits, "server")
    sync(open_drive(a), batch=100)
    make_commits(b, commits, "offline")
    return bare, b


def run_once(bare: Path, b: Path, url: str | None, batch: int) -> dict[str, object]:
    if url is not None:
        git("remote", "set-url", "origin", url, cwd=b)
    started = time.perf_counter()
    report = sync(open_drive(b), batch=batch)
    wall = time.perf_counter() - started
    pushed = len(report.pushed)
    return {"pushed": pushed, "wall_s": round(wall, 3),
            "ms_per_commit": round(1000 * wall / max(pushed, 1), 1),
            "seconds": {k: round(v, 3) for k, v in report.seconds.items()},
            "races": report.races}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--commits", type=int, default=100)
    parser.add_argument("--server-commits", type=int, default=100)
    parser.add_argument("--transports", default="file,http")
    parser.add_argument("--batches", default="1,100")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--full-drive", action="store_true",
                        help="start from a drive near the 2 MiB limit (240 topic files)")
    parser.add_argument("--without-hooks", action="store_true",
                        help="remove the server's hooks (to see what the round trip itself costs)")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-sync-"))
    isolate_git(base / "home")
    results = []
    try:
        t0 = time.perf_counter()
        bare, b = prepare(base / "template", args.commits, args.server_commits,
                          args.full_drive)
        setup = time.perf_counter() - t0
        for transport in args.transports.split(","):
            server = None
            if transport == "http":
                from servers import HttpGitServer

                server = HttpGitServer(base / "http").start()
            try:
                for batch in (int(x) for x in args.batches.split(",")):
                    run_dir = Path(tempfile.mkdtemp(prefix=f"{transport}-{batch}-", dir=base))
                    if server is not None:
                        run_bare = server.repo_path(f"drive-{batch}")
                        url: str | None = server.url(f"drive-{batch}")
                    else:
                        run_bare = run_dir / "server.git"
                        url = run_bare.as_uri()
                    shutil.copytree(bare, run_bare, symlinks=True)
                    if args.without_hooks:
                        for hook in ("pre-receive", "post-receive"):
                            (run_bare / "hooks" / hook).unlink(missing_ok=True)
                    run_b = run_dir / "b"
                    shutil.copytree(b, run_b, symlinks=True)
                    row = {"transport": transport, "batch": batch,
                           "hooks": not args.without_hooks,
                           **run_once(run_bare, run_b, url, batch)}
                    results.append(row)
                    if not args.json:
                        s = row["seconds"]
                        assert isinstance(s, dict)
                        print(f"{transport:5} batch={batch:<3} "
                              f"{'' if row['hooks'] else '(no hooks) '}{row['pushed']} commits "
                              f"{row['wall_s']:7.2f} s  {row['ms_per_commit']:6.1f} ms/commit"
                              f"  push {s['push']:.2f} s  replay {s['replay']:.2f} s  "
                              f"fetch {s['fetch']:.2f} s  finish {s['finish']:.2f} s")
            finally:
                if server is not None:
                    server.stop()
        if args.json:
            print(json.dumps({"setup_s": round(setup, 2), "runs": results}, indent=2))
        else:
            print(f"(setup: {setup:.1f} s for {args.server_commits} server and "
                  f"{args.commits} offline commits)")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
