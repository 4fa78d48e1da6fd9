"""memgit serve under load, side by side with nginx + fcgiwrap + git http-backend, and the
dashboard's page times on a drive at the limits (issue 25).

    python bench/bench_serve.py load  [--clients 16] [--runs 5] [--seed-files 64]
    python bench/bench_serve.py pages [--repeat 20]

``load``: one root of ``--clients`` drives (``memgit serve --create``, memgit's hooks), each
seeded with topic files by a real push; then rounds of ``--clients`` concurrent agents,
each cloning its own drive and pushing one new entry (a real ``git clone`` and ``git
push``, memgit's pre-receive judging it), through memgit serve (a write token per drive)
and through nginx + fcgiwrap (as many CGI children as clients) on the *same* drives,
the two servers alternated round by round. Reported per server and run: the round's wall
time, operations per second, and p50/p95 of clone and push times.

``pages``: a drive at the policy's limits (255 topic files, about 2 MiB, about 13,000
entries: bench/drivegen.py), pushed through its hooks into a served root; each dashboard
page is fetched ``--repeat`` times after one warm-up: p50, p95 and max in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE), str(HERE.parent / "src")]

from drivegen import make_full_drive, topic_files  # noqa: E402
from tests.serve_support import ServeServer, memgit_cli  # noqa: E402
from tests.servers import HttpGitServer, git_client_env  # noqa: E402


def git(*args: str, cwd: Path | None = None, env: dict[str, str]) -> float:
    """Run git; its wall time in seconds (raises when it fails)."""
    started = time.perf_counter()
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args[:2])} failed: {proc.stderr[-800:]}")
    return time.perf_counter() - started


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def seed(root: Path, names: list[str], files: int, env: dict[str, str], work: Path) -> None:
    """Push ``files`` topic files into each drive through its hooks (file://)."""
    from memgit.format import entries as fmt

    topics = topic_files(files, 6000)
    for name in names:
        checkout = work / f"seed-{name.replace('/', '-')}"
        git("clone", "-q", (root / f"{name}.git").as_uri(), str(checkout), env=env)
        for path, text in topics.items():
            (checkout / path).parent.mkdir(parents=True, exist_ok=True)
            (checkout / path).write_text(text)
        memory = (checkout / "MEMORY.md").read_text()
        (checkout / "MEMORY.md").write_text(
            fmt.regenerate_index_section(memory, [*topics, "MEMORY.md"]))
        git("add", "-A", cwd=checkout, env=env)
        git("commit", "-q", "-m", "seed", cwd=checkout, env=env)
        git("push", "-q", "origin", "main", cwd=checkout, env=env)


def agent(url: str, work: Path, n: int, env: dict[str, str]) -> tuple[float, float]:
    """Clone, add one entry, push: (clone seconds, push seconds)."""
    clone = git("clone", "-q", url, str(work), env=env)
    topic = work / "area00" / "topic000.md"
    topic.write_text(topic.read_text() + f"- Load test fact {n} [source: imported:unknown; "
                     f"id: m-load{n:021d}]\n")
    git("commit", "-q", "-am", f"fact {n}", cwd=work, env=env)
    push = git("push", "-q", "origin", "main", cwd=work, env=env)
    return clone, push


def round_of(urls: list[str], work: Path, start: int, env: dict[str, str]) -> dict[str, float]:
    with ThreadPoolExecutor(len(urls)) as pool:
        began = time.perf_counter()
        results = list(pool.map(lambda i: agent(urls[i], work / f"a{i}", start + i, env),
                                range(len(urls))))
        wall = time.perf_counter() - began
    clones = [c for c, _p in results]
    pushes = [p for _c, p in results]
    return {"wall_s": wall, "ops_per_s": 2 * len(urls) / wall,
            "clone_p50_s": statistics.median(clones), "clone_p95_s": pct(clones, 0.95),
            "push_p50_s": statistics.median(pushes), "push_p95_s": pct(pushes, 0.95)}


def load(args: argparse.Namespace) -> dict[str, object]:
    base = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    env = git_client_env(base / "client-home")
    serve = ServeServer(base / "serve")
    names = [f"team{i:02d}/drive" for i in range(args.clients)]
    for name in names:
        serve.create(name)
    seed(serve.root, names, args.seed_files, env, base)
    tokens = {n: serve.token(n, "write")["token"] for n in names}
    nginx = HttpGitServer(base / "nginx")
    nginx.root = serve.root  # the same drives
    nginx.children = args.clients
    rows: dict[str, list[dict[str, float]]] = {"serve": [], "nginx": []}
    counter = 0
    with serve:
        nginx.start()
        try:
            for run in range(args.runs):
                order = ("serve", "nginx") if run % 2 == 0 else ("nginx", "serve")
                for kind in order:
                    urls = [serve.url(n, tokens[n]) if kind == "serve" else nginx.url(n)
                            for n in names]
                    work = base / f"run{run}-{kind}"
                    rows[kind].append(round_of(urls, work, counter, env))
                    counter += len(names)
                    print(kind, run, json.dumps({k: round(v, 3)
                                                 for k, v in rows[kind][-1].items()}),
                          file=sys.stderr)
        finally:
            nginx.stop()
    return {"clients": args.clients, "seed_files": args.seed_files, "runs": rows}


PAGES = ("/", "/bench/full", "/bench/full/topics/area00/topic000.md",
         "/bench/full/search?q=payments+launch+owner", "/bench/full/entries/m-"
         + "0" * 21 + "00042", "/bench/full/questions", "/bench/full/dreams",
         "/bench/full/mounts", "/metrics")


def grow_history(checkout: Path, commits: int, env: dict[str, str]) -> None:
    """``commits`` more commits, each editing one entry's text in place (the entry the
    page asks for every tenth time, else an entry of another topic file), pushed through
    the hooks 200 at a time (the policy's push limit)."""
    topics = sorted(checkout.glob("area*/topic*.md"))
    for done in range(0, commits, 200):
        for n in range(done, min(commits, done + 200)):
            path = topics[0] if n % 10 == 0 else topics[(n * 7919) % len(topics)]
            lines = path.read_text().splitlines(keepends=True)
            wanted = "id: m-" + "0" * 24 + "42]" if n % 10 == 0 else "id: m-"
            i = next(i for i, line in enumerate(lines) if wanted in line)
            lines[i] = lines[i].replace(" number ", f" (rev {n}) number ", 1)
            path.write_text("".join(lines))
            git("commit", "-q", "-am", f"edit {n}", cwd=checkout, env=env)
        git("push", "-q", "served", "HEAD:main", cwd=checkout, env=env)


def pages(args: argparse.Namespace) -> dict[str, object]:
    base = Path(tempfile.mkdtemp(prefix="bench-pages-"))
    env = git_client_env(base / "client-home")
    serve = ServeServer(base / "serve")
    bare = serve.root / "bench" / "full.git"
    memgit_cli("init", "--bare", "--empty", str(bare))  # the first push brings the history
    checkout = base / "full"
    make_full_drive(checkout, files=254)  # 255 files with MEMORY.md; questions.md is 256th
    subprocess.run(["git", "remote", "add", "served", bare.as_uri()], cwd=checkout,
                   check=True, env=env)
    git("push", "-q", "served", "HEAD:main", cwd=checkout, env=env)
    if args.history:
        grow_history(checkout, args.history, env)
    memgit_cli("-C", str(bare), "ask", "Who owns the payments launch?")
    info = json.loads(memgit_cli("-C", str(bare), "info", "--json").stdout)
    out: dict[str, object] = {"entries": info["entries"], "files": info["files"],
                              "drive_bytes": info["drive_bytes"], "commits": args.history + 2,
                              "pages": {}}
    with serve:
        for path in PAGES:
            status, _h, body = serve.request(path)  # warm-up (imports, caches)
            assert status == 200, (path, status, body[:300])
            times = []
            for _ in range(args.repeat):
                began = time.perf_counter()
                status, _h, body = serve.request(path)
                times.append((time.perf_counter() - began) * 1000)
                assert status == 200
            out["pages"][path] = {"p50_ms": round(statistics.median(times), 1),  # type: ignore[index]
                                  "p95_ms": round(pct(times, 0.95), 1),
                                  "max_ms": round(max(times), 1), "bytes": len(body)}
            print(path, out["pages"][path], file=sys.stderr)  # type: ignore[index]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    lo = sub.add_parser("load")
    lo.add_argument("--clients", type=int, default=16)
    lo.add_argument("--runs", type=int, default=5)
    lo.add_argument("--seed-files", type=int, default=64)
    pa = sub.add_parser("pages")
    pa.add_argument("--repeat", type=int, default=20)
    pa.add_argument("--history", type=int, default=0,
                    help="commits of edits on top of the drive (the history page's cost)")
    args = ap.parse_args()
    result = load(args) if args.what == "load" else pages(args)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
