"""Many agents, one server drive: N agents x K rounds of ``memgit remember`` + ``memgit
sync``, all at once, against one drive made by ``memgit init --bare`` (memgit's hooks),
over file:// and over smart HTTP (nginx + fcgiwrap + git http-backend, tests/servers.py).

    python bench/bench_contention.py [--agents 4,8,16,32] [--rounds 5]
                                     [--transports file,http] [--repeat 1] [--json]
                                     [--retry-seconds S] [--control]

Every agent is a checkout made by ``memgit clone`` and every command is the real
command line in its own process (tests/contention_support.py). For each transport the
run starts with one agent alone (K rounds: the single-agent p95 the ratio is taken
against), then each N. Reported per row: syncs that failed, p50/p95/max of the sync
wall times, races lost and retried, entries on the server after one final sync per
agent against the N x K written, how many checkouts then hold every entry, and
``git fsck`` of the server. The machine's load average is printed with each row:
figures are only comparable within one run. Results go to docs/sync.md.
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
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from tests.contention_support import (  # noqa: E402
    clone_agents,
    entry_ids,
    final_syncs,
    memgit_command,
    percentile,
    run_agents,
)
from tests.servers import HttpGitServer, git_client_env  # noqa: E402


def make_server(transport: str, name: str, base: Path, http: HttpGitServer | None,
                env: Mapping[str, str]) -> tuple[Path, str]:
    """A server drive made by ``memgit init --bare``: (its folder, the URL agents use)."""
    if transport == "http":
        assert http is not None
        path = http.repo_path(name)
        url = http.url(name)
    else:
        path = base / f"{name}.git"
        url = path.as_uri()
    proc = memgit_command("init", "--bare", str(path), cwd=base, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"memgit init --bare failed: {proc.stderr}")
    return path, url


def one_run(transport: str, agents: int, rounds: int, base: Path,
            http: HttpGitServer | None, env: Mapping[str, str],
            control: bool = False, retry_seconds: float | None = None) -> dict[str, object]:
    """N agents x K rounds against a fresh server drive, then the final syncs and checks.
    ``control``: every agent has a server drive of its own (the same work, no race)."""
    work = base / f"{transport}-{agents}-{time.monotonic_ns()}"
    work.mkdir()
    server, url = make_server(transport, work.name, work, http, env)
    checkouts = clone_agents(url, work, agents, env)
    if retry_seconds is not None:  # the budget each agent's sync gets (memgit.sync.retry)
        for checkout in checkouts:
            subprocess.run(["git", "config", "memgit.syncRetrySeconds", f"{retry_seconds:g}"],
                           cwd=checkout, check=True, env=env)
    if control:
        for n, checkout in enumerate(checkouts[1:], start=2):
            _own, own_url = make_server(transport, f"{work.name}-own{n}", work, http, env)
            subprocess.run(["git", "remote", "set-url", "origin", own_url], cwd=checkout,
                           check=True, env=env)
            memgit_command("sync", cwd=checkout, env=env)  # adopt the new server's history
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    runs = run_agents(checkouts, rounds, env)
    wall = time.perf_counter() - started
    finals = final_syncs(checkouts, env)
    on_server = entry_ids(server)
    complete = sum(1 for c in checkouts if entry_ids(c) == on_server)
    if control:  # each server holds its own agent's entries
        on_server = set().union(*(entry_ids(c) for c in checkouts))
        complete = agents
    fsck = subprocess.run(["git", "fsck", "--strict", "--no-progress"], cwd=server,
                          capture_output=True, text=True)
    times = [r.seconds for r in runs]
    phases: dict[str, float] = {}
    for r in runs:
        for name, value in r.phases:
            phases[name] = phases.get(name, 0.0) + value
    ok = max(1, sum(1 for r in runs if r.returncode == 0))
    errors = sorted({r.error for r in runs if r.returncode != 0})
    row: dict[str, object] = {
        "control": control,
        "transport": transport, "agents": agents, "rounds": rounds, "syncs": len(runs),
        "failed": sum(1 for r in runs if r.returncode != 0),
        "failed_final": sum(1 for r in finals if r.returncode != 0),
        "races": sum(r.races for r in runs),
        "p50_s": round(percentile(times, 0.50), 2), "p95_s": round(percentile(times, 0.95), 2),
        "max_s": round(max(times), 2), "wall_s": round(wall, 1),
        "entries": len(on_server), "expected": agents * rounds,
        "checkouts_complete": complete, "fsck_ok": fsck.returncode == 0,
        "load": [round(load_before, 1), round(os.getloadavg()[0], 1)],
        "errors": errors[:3],
        "mean_phase_s": {k: round(v / ok, 2) for k, v in sorted(phases.items())},
    }
    shutil.rmtree(work, ignore_errors=True)
    return row


def show(row: Mapping[str, object], single_p95: float | None) -> str:
    ratio = ""
    if single_p95 and row["agents"] != 1:
        ratio = f"  p95/single {float(row['p95_s']) / single_p95:4.1f}x"  # type: ignore[arg-type]
    where = f"{row['transport']}{' own drives' if row['control'] else ''}"
    errors = f"  errors: {row['errors']}" if row["errors"] else ""
    return (f"{where:4} N={row['agents']:<3} K={row['rounds']} "
            f"failed {row['failed']}/{row['syncs']} (final {row['failed_final']})  "
            f"p50 {row['p50_s']:6.2f} s  p95 {row['p95_s']:6.2f} s  max {row['max_s']:6.2f} s"
            f"{ratio}  races {row['races']}  entries {row['entries']}/{row['expected']}  "
            f"checkouts complete {row['checkouts_complete']}/{row['agents']}  "
            f"fsck {'ok' if row['fsck_ok'] else 'FAILED'}  wall {row['wall_s']} s  "
            f"load {row['load']}  mean phases {row['mean_phase_s']}{errors}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", default="4,8,16,32")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--transports", default="file,http")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--control", action="store_true",
                        help="also run each N with one server drive per agent (no race): "
                             "what the same work costs on this machine without contention")
    parser.add_argument("--retry-seconds", type=float, default=None,
                        help="each agent's sync budget (git config memgit.syncRetrySeconds); "
                             "default: memgit's")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-contention-"))
    env = git_client_env(base / "home")
    env["GIT_CONFIG_GLOBAL"] = str(base / "home" / ".gitconfig")
    rows: list[dict[str, object]] = []
    try:
        for transport in args.transports.split(","):
            http = HttpGitServer(base / "http").start() if transport == "http" else None
            try:
                for _ in range(args.repeat):
                    single = one_run(transport, 1, args.rounds, base, http, env,
                                     retry_seconds=args.retry_seconds)
                    rows.append(single)
                    single_p95 = float(single["p95_s"])  # type: ignore[arg-type]
                    if not args.json:
                        print(show(single, None), flush=True)
                    for n in (int(x) for x in args.agents.split(",")):
                        for control in (False, True) if args.control else (False,):
                            row = one_run(transport, n, args.rounds, base, http, env, control,
                                          args.retry_seconds)
                            row["single_p95_s"] = single_p95
                            rows.append(row)
                            if not args.json:
                                print(show(row, single_p95), flush=True)
            finally:
                if http is not None:
                    http.stop()
        if args.json:
            print(json.dumps(rows, indent=2))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
