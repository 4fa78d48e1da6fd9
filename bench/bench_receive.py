"""What memgit's server hooks add to a push, measured side by side in one run.

A drive at the limits (256 files, about 2 MiB, bench/drivegen.py) is cloned into four
bare repositories that differ only in what is installed:

* ``plain``     nothing (``git init --bare``);
* ``defences``  git's own checks memgit turns on (receive.fsckObjects,
                receive.denyNonFastForwards, receive.denyDeletes);
* ``pre``       defences + memgit's pre-receive;
* ``full``      defences + pre-receive + post-receive (what ``memgit init --bare`` and
                ``memgit install-hooks --server`` install; post-receive counts the push
                and reindexes in a detached process, after the client has its answer);
* ``capped``    full, with caps in memgit.yaml (limits.max_entries and max_age_days, which
                the drive is under): pre-receive counts the tip's entries from the census
                post-receive keeps (memgit.policy.census), so this is what the caps cost a push.

Each round builds one commit (one new entry in one topic file) and pushes it over
file:// to all four, in rotating order; after a push to ``full`` the round waits
(untimed) for its background work, so it never runs during another push. The
figure that matters is ``full`` against ``plain``: what memgit's hooks, both of
them, add to a push as the client feels it (target: at most 60 ms, issue 28; issue 9
asked for 150). Then a 200-commit push goes to fresh copies. The pre-receive reports its phases
(MEMGIT_HOOK_TIMING=1); interpreter start and imports are timed on their own.
Figures go to docs/performance.md.

    python bench/bench_receive.py [--rounds 15] [--commits 200] [--json] [--compare SRC]

``--compare SRC`` adds two variants, ``pre@SRC`` and ``full@SRC``: the same hooks of
the memgit in the folder SRC (another checkout's ``src``), pushed to in the same rounds
and rotation, so two versions of the hooks are compared side by side in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from drivegen import entry_line, topic_files  # noqa: E402

from memgit.format import entries as fmt  # noqa: E402
from memgit.githooks.install import (
    ASK_CALL,
    HOOK_CALL,
    SERVER_CONFIG,
    hook_argv,
    import_paths,
    install_hooks_into,
)
from memgit.githooks.post_receive import wait_for_background  # noqa: E402

VARIANTS = ("plain", "defences", "pre", "full", "capped")
CAPS_POLICY = "limits: {max_entries: 20000, max_age_days: 3650}\n"  # caps the drive is under
TARGET_MS = 60  # what both hooks may add to a one-commit push (issue 28; issue 9: 150)


def git(*args: str, cwd: Path | None = None, input: bytes | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True,
                          env={**os.environ, **(env or {})})
    if proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {proc.stderr.decode(errors='replace')}")
    return proc


def fast_import(repo: Path, parent: str | None, commits: list[dict[str, str]]) -> str:
    out = bytearray()
    for n, files in enumerate(commits, start=1):
        out += b"commit refs/heads/main\n"
        out += b"committer Bench <bench@example.com> %d +0000\n" % (1_767_000_000 + n)
        out += b"data 7\nbench\n\n"
        if n == 1 and parent:
            out += b"from %s\n" % parent.encode()
        for path, text in files.items():
            data = text.encode()
            out += b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data)
    git("fast-import", "--quiet", "--force", cwd=repo, input=bytes(out))
    return git("rev-parse", "refs/heads/main", cwd=repo).stdout.decode().strip()


def make_seed(root: Path) -> tuple[Path, dict[str, str]]:
    topics = topic_files()
    files = dict(topics)
    files["MEMORY.md"] = fmt.regenerate_index_section("# Memory: bench\n\n## Index\n",
                                              [*topics, "MEMORY.md"])
    seed = root / "seed.git"
    git("init", "-q", "--bare", "-b", "main", str(seed))
    fast_import(seed, None, [files])
    return seed, files


def render_hook_at(src: str, name: str) -> str:
    """Hook ``name`` as the memgit in folder ``src`` writes it (its own install module: a
    hook script's program changes between versions), importing from ``src`` first."""
    paths = [src, *import_paths()[1:]]
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from memgit.githooks.install import "
            "render_hook; print(render_hook(sys.argv[2], sys.executable, paths=sys.argv[3:]), "
            "end='')")
    return subprocess.run([sys.executable, "-c", code, src, name, *paths], check=True,
                          capture_output=True, text=True).stdout


def make_server(seed: Path, path: Path, variant: str) -> Path:
    """A bare clone of the seed with ``variant``'s setup (``pre@SRC``/``full@SRC``: the
    hooks of the memgit in folder SRC)."""
    base, _at, src = variant.partition("@")
    git("clone", "-q", "--bare", "--no-local", str(seed), str(path))
    if base != "plain":
        for key, value in SERVER_CONFIG.items():
            git("config", key, value, cwd=path)
    if base in ("pre", "full", "capped"):
        install_hooks_into(path, chain=False)
        if src:
            for name in ("pre-receive", "post-receive"):
                hook = path / "hooks" / name
                hook.write_text(render_hook_at(src, name))
                hook.chmod(0o755)
    if base == "pre":
        (path / "hooks" / "post-receive").unlink()
    if base == "capped":
        (path / "memgit.yaml").write_text(CAPS_POLICY)
    return path


def push(client: Path, server: Path, env: dict[str, str] | None = None
         ) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(["git", "push", "-q", server.as_uri(), "main:main"], cwd=client,
                          capture_output=True, env={**os.environ, **(env or {})})
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"push to {server.name} failed: {proc.stderr.decode()}")
    return elapsed, proc.stderr.decode(errors="replace")


def timing_phases(stderr: str) -> dict[str, float]:
    match = re.search(r"memgit: timing ms: (.*)", stderr)
    if not match:
        return {}
    return {k: float(v) for k, v in (p.split("=") for p in match.group(1).split())}


def run_process(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, env={}, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def startup_costs(runs: int) -> dict[str, float]:
    """Interpreter start and imports of the hook command (median seconds)."""
    python = sys.executable
    argv = hook_argv(python, import_paths())
    code = argv[-1].replace(HOOK_CALL, "")
    client = code[:code.index(ASK_CALL)] + ("from memgit.githooks.warm_client import identity, "
                                            "judge_key; judge_key(identity())")
    return {
        "hook script to the warm judge (both hooks, each)": run_process([*argv[:-1], client],
                                                                        runs),
        "python -I -S -c pass": run_process([python, "-I", "-S", "-c", "pass"], runs),
        "python -I -c pass (with site)": run_process([python, "-I", "-c", "pass"], runs),
        "+ import memgit.githooks.entry (both hooks)": run_process([*argv[:-1], code], runs),
        "+ import memgit.githooks.post_receive (post-receive, foreground)": run_process(
            [*argv[:-1], code + "import memgit.githooks.post_receive"], runs),
        "+ import memgit.githooks.receive (pre-receive)": run_process(
            [*argv[:-1], code + "import memgit.githooks.receive"], runs),
        "+ import memgit.secrets (first scan)": run_process(
            [*argv[:-1], code + "import memgit.githooks.receive; "
             "from memgit.secrets import scan_text; "
                               "scan_text('x')"], runs),
        "+ import pygit2 (post-receive, background)": run_process(
            [*argv[:-1], code + "import pygit2"], runs),
    }


def quantiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--startup-runs", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--compare", metavar="SRC", default=None,
                        help="also time the hooks of the memgit in folder SRC")
    args = parser.parse_args()
    other = str(Path(args.compare).resolve()) if args.compare else ""
    variants = VARIANTS + ((f"pre@{other}", f"full@{other}") if other else ())
    rng = random.Random(11)
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="bench-receive-") as tmp:
        root = Path(tmp)
        seed, files = make_seed(root)
        size = sum(len(t.encode()) for t in files.values())
        results["drive"] = {"files": len(files), "bytes": size}
        servers = {v: make_server(seed, root / f"v{n}.git", v) for n, v in enumerate(variants)}
        client = root / "client.git"
        git("clone", "-q", "--bare", str(seed), str(client))
        tip = git("rev-parse", "main", cwd=client).stdout.decode().strip()
        texts = {p: t for p, t in files.items() if p != "MEMORY.md"}
        wall: dict[str, list[float]] = {v: [] for v in variants}
        phases: list[dict[str, float]] = []
        other_phases: list[dict[str, float]] = []
        serial = 10**6
        for round_no in range(args.rounds + 2):
            path = rng.choice(sorted(texts))
            serial += 1
            texts[path] += entry_line(rng, serial)
            tip = fast_import(client, tip, [{path: texts[path]}])
            turn = round_no % len(variants)
            order = variants[turn:] + variants[:turn]
            for variant in order:
                env = {"MEMGIT_HOOK_TIMING": "1"} if variant.startswith("pre") else None
                elapsed, stderr = push(client, servers[variant], env)
                if variant.startswith(("full", "capped")):
                    wait_for_background(servers[variant])
                if round_no >= 2:  # two warm-up rounds
                    wall[variant].append(elapsed)
                    if variant == "pre":
                        phases.append(timing_phases(stderr))
                    elif variant.startswith("pre@"):
                        other_phases.append(timing_phases(stderr))
        one: dict[str, dict[str, float]] = {}
        for variant in variants:
            med, p90 = quantiles(wall[variant])
            one[variant] = {"median_ms": med * 1000, "p90_ms": p90 * 1000}
        results["one_commit"] = one
        results["pre_receive_phases_ms"] = {
            k: statistics.median(p.get(k, 0.0) for p in phases) for k in phases[0]
        } if phases and phases[0] else {}
        if other_phases and other_phases[0]:
            results["compared_pre_receive_phases_ms"] = {
                k: statistics.median(p.get(k, 0.0) for p in other_phases)
                for k in other_phases[0]}
        # the many-commit push, into fresh copies
        big = {v: make_server(seed, root / f"big-{v}.git", v) for v in ("defences", "pre",
                                                                         "full")}
        client2 = root / "client2.git"
        git("clone", "-q", "--bare", str(seed), str(client2))
        texts = {p: t for p, t in files.items() if p != "MEMORY.md"}
        commits = []
        for _ in range(args.commits):
            path = rng.choice(sorted(texts))
            serial += 1
            texts[path] += entry_line(rng, serial)
            commits.append({path: texts[path]})
        fast_import(client2, git("rev-parse", "main", cwd=client2).stdout.decode().strip(),
                    commits)
        many: dict[str, float] = {}
        many_phases: dict[str, float] = {}
        for variant, server in big.items():
            env = {"MEMGIT_HOOK_TIMING": "1"} if variant == "pre" else None
            elapsed, stderr = push(client2, server, env)
            if variant == "full":
                wait_for_background(server)
            many[variant] = elapsed * 1000
            if variant == "pre":
                many_phases = timing_phases(stderr)
        results["many_commits"] = {"commits": args.commits, "wall_ms": many,
                                   "pre_receive_phases_ms": many_phases}
        results["startup_ms"] = {k: v * 1000 for k, v in
                                 startup_costs(args.startup_runs).items()}
    results["load_average"] = os.getloadavg()
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    report(results)
    return 0


def report(r: dict) -> None:
    one = r["one_commit"]
    drive = r["drive"]
    print(f"drive: {drive['files']} files, {drive['bytes']} bytes; "
          f"load average {r['load_average'][0]:.2f}")
    print("\n1-commit push over file:// (median / p90 ms)")
    print("| variant | median | p90 |")
    print("|---|---|---|")
    for v in one:
        print(f"| {v} | {one[v]['median_ms']:.0f} | {one[v]['p90_ms']:.0f} |")
    plain, defences = one["plain"]["median_ms"], one["defences"]["median_ms"]
    pre, full = one["pre"]["median_ms"], one["full"]["median_ms"]
    print(f"\npre-receive adds {pre - defences:.0f} ms (ratio {pre / plain:.1f}x plain); "
          f"post-receive adds {full - pre:.0f} ms; all of memgit {full - plain:.0f} ms "
          f"(ratio {full / plain:.1f}x)")
    verdict = "met" if full - plain <= TARGET_MS else "MISSED"
    print(f"both hooks over the no-hook push: {full - plain:.0f} ms "
          f"(target at most {TARGET_MS} ms: {verdict})")
    capped = one["capped"]["median_ms"]
    print(f"caps (counted from the census): {capped:.0f} vs {full:.0f} ms without "
          f"(ratio {capped / full:.2f})")
    print("pre-receive phases (median ms):", " ".join(
        f"{k}={v:.1f}" for k, v in r["pre_receive_phases_ms"].items()))
    for v in one:
        if "@" not in v:
            continue
        base = v.partition("@")[0]
        mine, theirs = one[base]["median_ms"], one[v]["median_ms"]
        print(f"{base} here vs {v}: {mine:.0f} vs {theirs:.0f} ms (ratio {mine / theirs:.2f}); "
              f"over plain: {mine - plain:.0f} vs {theirs - plain:.0f} ms")
    if "compared_pre_receive_phases_ms" in r:
        print("compared pre-receive phases (median ms):", " ".join(
            f"{k}={v:.1f}" for k, v in r["compared_pre_receive_phases_ms"].items()))
    many = r["many_commits"]
    print(f"\n{many['commits']}-commit push (ms): " + " ".join(
        f"{k}={v:.0f}" for k, v in many["wall_ms"].items()))
    print("pre-receive phases (ms):", " ".join(
        f"{k}={v:.1f}" for k, v in many["pre_receive_phases_ms"].items()))
    print("\nstartup (median ms):")
    for k, v in r["startup_ms"].items():
        print(f"  {k}: {v:.1f}")


if __name__ == "__main__":
    sys.exit(main())
