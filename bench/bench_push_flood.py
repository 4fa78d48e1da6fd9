"""What a hostile push costs the server: many commits, each rewriting many files with
new text (issue 10, class 13). The drive is made by ``memgit init --bare`` (memgit's
hooks), the push is a real ``git push`` over file://, and the time is the push's wall
time and the CPU time of the hook processes (children of git).

    python bench/bench_push_flood.py [--commits 200] [--files 30] [--kib 60]

Run it once per code tree to compare (``PYTHONPATH=OTHER/src python bench/...``): the
hooks run the memgit that the script imports. Figures go to docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def git(*args: str, cwd: Path, input: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True)


def flood_stream(parent: str, commits: int, files: int, size: int) -> bytes:
    """fast-import input: ``commits`` commits on ``parent``, each rewriting ``files``
    topic files with about ``size`` bytes of new entries (and listing them in the Index)."""
    from memgit.format import entries as fmt

    paths = [f"flood/topic{n:02d}.md" for n in range(files)]
    memory = fmt.regenerate_index_section("# Memory\n\n## Index\n", [*paths, fmt.MEMORY_FILE])
    out = bytearray()
    for c in range(1, commits + 1):
        out += b"commit refs/heads/flood\nmark :%d\n" % c
        out += b"committer Flood <f@example.com> %d +0000\n" % (1_767_000_000 + c)
        out += b"data 6\nflood\n"
        out += b"from %s\n" % parent.encode() if c == 1 else b"from :%d\n" % (c - 1)
        if c == 1:
            data = memory.encode()
            out += b"M 100644 inline MEMORY.md\ndata %d\n%s\n" % (len(data), data)
        for n, path in enumerate(paths):
            lines = [f"- flood fact {c}.{n}.{i} about the quarterly numbers "
                     f"[source: imported:unknown; id: m-{c:05d}x{n:03d}x{i:05d}]\n"
                     for i in range(size // 100)]
            data = (f"# Topic {n}\n\n" + "".join(lines)).encode()
            out += b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data)
    return bytes(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commits", type=int, default=200)
    ap.add_argument("--files", type=int, default=30)
    ap.add_argument("--kib", type=int, default=60)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from memgit.drives.create import create_drive

    with tempfile.TemporaryDirectory(prefix="memgit-flood-") as tmp:
        root = Path(tmp)
        server = root / "server.git"
        create_drive(server, bare=True)
        client = root / "client.git"
        git("clone", "-q", "--bare", str(server), str(client), cwd=root)
        parent = git("rev-parse", "main", cwd=client).stdout.decode().strip()
        stream = flood_stream(parent, args.commits, args.files, args.kib * 1024)
        imported = git("fast-import", "--quiet", cwd=client, input=stream)
        if imported.returncode != 0:
            raise SystemExit(imported.stderr.decode(errors="replace"))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        proc = git("push", "--porcelain", server.as_uri(), "refs/heads/flood:refs/heads/main",
                   cwd=client)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        codes = sorted({w for w in proc.stderr.decode(errors="replace").split()
                        if w.startswith("MG") and w[2:].isdigit()})
        import memgit

        result = {"memgit": str(Path(memgit.__file__).parent), "commits": args.commits,
                  "files": args.files, "kib": args.kib, "pack_mib": round(len(stream) / 2**20, 1),
                  "refused": proc.returncode != 0, "codes": codes,
                  "wall_s": round(wall, 2), "cpu_s": round(cpu, 2)}
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
