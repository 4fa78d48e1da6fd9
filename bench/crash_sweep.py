"""Crash sweep: memgit commands SIGKILLed at random moments, then the next command's repair.

Run: python bench/crash_sweep.py [--trials N] [--seed S] [--only NAME ...] [--keep]
                                 [--src DIR] [--at-move SHARE]

For every command below, on real drives (a ``memgit init --bare`` server with its hooks
and ``memgit clone``d checkouts, entries made of real-looking sentences), each trial starts
the command as a real process (``python -m memgit``), sends SIGKILL after a random delay
spread over the command's whole run (its duration is measured first, on an unkilled run,
and updated with every run that ends on its own), then runs the next ordinary command
(the one named as ``repair``) and checks the invariants:

* ``git fsck --full`` is clean on the checkout and on the server;
* no git lock file (``*.lock`` outside memgit's own ``flock`` files in ``memgit/``,
  ``memgit-purge.lock``, ``memgit-checkout.json``) is left;
* the next write (``memgit remember``) and the next sync succeed;
* every write that printed its acknowledgement before the kill (its ``--json`` result
  with ``"status": "committed"`` or ``"queued"``) is on the branch and, after the sync, on
  the server; an acknowledged forget is gone; an acknowledged edit's text is there;
* recall works and matches the drive (the newest entry is found by its words, every id it
  returns is in the drive's head, ``info``'s ``entries`` equals the head's entries);
* ``memgit lint`` passes on the checkout and ``lint --rev main`` on the server;
* ``memgit info --json`` is sane (its head is the branch, nothing pending, indexed).

Commands: remember, edit, forget (checkout), remember-bare (the writer on the bare
server drive), sync (local commits waiting and new commits on the server), import (an
``import apply`` of a plan of a few hundred Markdown notes), purge (``purge ID --yes`` on
the server drive; repair: ``purge --resume``), dream (``dream --no-model``), index
(``index --rebuild``) and recall. A failing trial is printed with what failed; its drives
are made again so that one failure does not count twice. Figures go to docs/writer.md
("The crash sweep").
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"  # --src: another checkout's src (the figures before a fix)
PY = sys.executable

PEOPLE = ["Priya", "Tomasz", "Amara", "Lucía", "Kenji", "Oluwaseun", "Greta", "Mateo"]
THINGS = ["the staging cluster", "the billing dashboard", "the payments API",
          "the nightly backup job", "the onboarding email flow", "the search index",
          "the mobile release train", "the vendor contract", "the incident runbook",
          "the data warehouse schema", "the pricing page", "the CI runners",
          "the on-call rotation", "the SSO login"]
FACTS = [
    "{who} owns {thing} until the end of the quarter",
    "{thing} must be migrated before the {day} freeze",
    "{who} prefers small pull requests for {thing}",
    "{thing} broke last {day} because a certificate expired",
    "ask {who} before changing {thing}; it has undocumented consumers",
    "{thing} runs on Postgres 16 with logical replication to the reporting replica",
    "{who} said {thing} needs a load test above {n} requests per second",
    "the retry budget for {thing} is {n} attempts with exponential backoff",
    "{thing} is deployed on {day}s only, after the weekly review with {who}",
    "{who} keeps the runbook for {thing} in the ops wiki",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


def sentence(rng: random.Random, n: int) -> str:
    """A real-looking fact; ``n`` makes it unique (the writer skips duplicates)."""
    text = rng.choice(FACTS).format(who=rng.choice(PEOPLE), thing=rng.choice(THINGS),
                                    day=rng.choice(DAYS), n=rng.randint(2, 900))
    return f"{text[0].upper()}{text[1:]} (note {n})"


@dataclass
class World:
    base: Path
    server: Path
    a: Path  # the checkout the commands run in
    b: Path  # another agent's checkout (new commits on the server)
    env: dict[str, str]
    present: dict[str, str] = field(default_factory=dict)  # acknowledged id -> its text
    gone: set[str] = field(default_factory=set)  # acknowledged forgets and purges
    n: int = 0


@dataclass
class Tally:
    trials: int = 0
    killed: int = 0
    finished: int = 0  # ended before its kill
    left: int = 0  # kills that left something to repair (a lock, journal, lagging checkout)
    acknowledged: int = 0  # killed runs that had printed their acknowledgement
    failures: list[str] = field(default_factory=list)
    longest: float = 0.0


def run(world: World, args: list[str], cwd: Path, timeout: float = 300
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "memgit", *args], cwd=cwd, env=world.env,
                          capture_output=True, text=True, timeout=timeout)


def git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)


class Failure(Exception):
    pass


def ok(world: World, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    done = run(world, args, cwd)
    if done.returncode != 0:
        raise Failure(f"`memgit {' '.join(args)[:80]}` exit {done.returncode}: "
                      f"{(done.stderr or done.stdout).strip()[-500:]}")
    return done


def make_world(base: Path, name: str) -> World:
    if base.exists():
        shutil.rmtree(base)
    base.mkdir(parents=True)
    env = dict(os.environ, PYTHONPATH=str(SRC), XDG_DATA_HOME=str(base / "xdg"),
               PYTHONDONTWRITEBYTECODE="1", MEMGIT_DEBUG="1")
    world = World(base, base / "server.git", base / "a", base / "b", env)
    ok(world, ["init", "--bare", str(world.server)], base)
    # room for the imports' topic files
    (world.server / "memgit.yaml").write_text(
        "limits: {files: 20000, drive_bytes: 50000000, file_bytes: 1000000, push_commits: 2000}\n")
    ok(world, ["clone", world.server.as_uri(), str(world.a)], base)
    ok(world, ["clone", world.server.as_uri(), str(world.b)], base)
    for checkout in (world.a, world.b):
        shutil.copy(world.server / "memgit.yaml", checkout / ".git" / "memgit.yaml")
    return world


def remember(world: World, cwd: Path, rng: random.Random) -> str:
    world.n += 1
    text = sentence(rng, world.n)
    out = json.loads(ok(world, ["remember", "--json", text], cwd).stdout)
    entry_id: str = out["added"][0]["id"]
    world.present[entry_id] = text
    return entry_id


def head_entries(path: Path) -> dict[str, str]:
    """id -> text of every entry in ``main``'s tree (a checkout or a bare drive)."""
    sys.path.insert(0, str(ROOT / "src"))
    from memgit.format import entries as fmt

    names = git(["ls-tree", "-r", "--name-only", "main"], path).stdout.split()
    found: dict[str, str] = {}
    for name in names:
        if not name.endswith(".md"):
            continue
        text = git(["show", f"main:{name}"], path).stdout
        for _line, entry in fmt.parse_document(name, text).entries():
            found[entry.id] = entry.text
    return found


def leftovers(*roots: Path) -> list[str]:
    """Lock files, journals and temporary files a killed process could leave: every
    ``*.lock`` but memgit's ``flock`` files (``memgit/*.lock``, kept on purpose)."""
    found = []
    for root in roots:
        # os.walk, not rglob: a receive-pack the killed sync started may still be moving
        # its quarantine folder away meanwhile
        for folder, _dirs, files in os.walk(root):
            for name in files:
                rel = (Path(folder) / name).relative_to(root)
                if name.endswith(".lock") and "memgit" in rel.parts[:-1] and \
                        name != "memgit-purge.lock":
                    continue
                if (name.endswith(".lock") or name.endswith(".memgit-tmp")
                        or name in ("memgit-checkout.json", "memgit-purge.json")
                        or name.startswith("tmp_object") or name.startswith("tmp_pack")):
                    found.append(f"{root.name}/{rel}")
    return found


def check(world: World, rng: random.Random) -> None:
    """The invariants after a kill and its repair (raises Failure)."""
    for path in (world.a, world.server):
        fsck = git(["fsck", "--full", "--no-dangling"], path)
        if fsck.returncode != 0 or "error" in fsck.stderr or "missing" in fsck.stdout:
            raise Failure(f"git fsck --full in {path.name}: "
                          f"{fsck.stdout[-300:]}{fsck.stderr[-300:]}")
    # the next write and the next sync succeed
    newest = remember(world, world.a, rng)
    ok(world, ["sync"], world.a)
    ok(world, ["sync"], world.b)
    stale = leftovers(world.a / ".git", world.server)
    if stale:
        raise Failure(f"left after the next commands: {stale}")
    branch, server = head_entries(world.a), head_entries(world.server)
    lost = sorted(set(world.present) - set(branch))
    if lost:
        raise Failure(f"acknowledged entries lost on the branch: {lost[:5]}")
    lost = sorted(set(world.present) - set(server))
    if lost:
        raise Failure(f"acknowledged entries missing on the server after sync: {lost[:5]}")
    changed = [i for i, t in world.present.items() if branch.get(i) != t]
    if changed:
        raise Failure(f"acknowledged text not on the branch: {changed[:3]}")
    back = sorted(world.gone & (set(branch) | set(server)))
    if back:
        raise Failure(f"acknowledged forget/purge came back: {back[:5]}")
    if branch != server:
        raise Failure(f"checkout and server differ after sync: "
                      f"{sorted(set(branch) ^ set(server))[:5]}")
    status = git(["status", "--porcelain"], world.a).stdout
    if status:
        raise Failure(f"git status not clean: {status[:300]}")
    # recall works and matches the drive
    words = world.present[newest].replace("(", " ").replace(")", " ")
    found = json.loads(ok(world, ["recall", "--json", "-n", "20", words], world.a).stdout)
    ids = [hit["id"] for hit in found]
    if newest not in ids:
        raise Failure(f"recall does not find the newest entry {newest}: {ids[:5]}")
    if set(ids) - set(branch):
        raise Failure(f"recall returns ids not in the drive: {sorted(set(ids) - set(branch))}")
    info = json.loads(ok(world, ["info", "--json"], world.a).stdout)
    head = git(["rev-parse", "main"], world.a).stdout.strip()
    if (info["head"] != head or info["indexed_revision"] != head
            or info["entries"] != len(branch) or info.get("pending_writes", 0)):
        raise Failure(f"info not sane: head {info['head']} vs {head}, indexed "
                      f"{info['indexed_revision']}, entries {info['entries']} vs "
                      f"{len(branch)}, pending {info.get('pending_writes')}")
    sinfo = json.loads(ok(world, ["info", "--json"], world.server).stdout)
    if sinfo["entries"] != len(server):
        raise Failure(f"server info entries {sinfo['entries']} vs {len(server)}")
    ok(world, ["lint"], world.a)
    ok(world, ["lint", "--rev", "main"], world.server)


def acknowledgement(stdout: str) -> dict[str, Any] | None:
    """The --json result if it was printed whole (before the kill)."""
    try:
        out = json.loads(stdout)
    except ValueError:
        return None
    return out if isinstance(out, dict) else None


AT_MOVE = 0.0  # --at-move


def stamp(path: Path) -> bytes:
    """A loose ref's content (b"" without one), polled without starting a process."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def kill_run(world: World, args: list[str], cwd: Path, rng: random.Random, tally: Tally
             ) -> tuple[subprocess.Popen[str], str, str]:
    """Start ``args``, SIGKILL it after a random share of the longest run seen, or (a
    share ``AT_MOVE`` of the runs, --at-move) within 3 ms of a branch moving, in the
    checkout or on the server: the window between the branch and what follows it, which
    a random moment rarely hits."""
    watched = [world.a / ".git" / "refs" / "heads" / "main",
               world.server / "refs" / "heads" / "main"]
    before = [stamp(path) for path in watched]
    proc = subprocess.Popen([PY, "-m", "memgit", *args], cwd=cwd, env=world.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started = time.monotonic()
    if rng.random() < AT_MOVE:
        pause = rng.uniform(0.0, 0.003)
        while proc.poll() is None and [stamp(path) for path in watched] == before:
            time.sleep(0.0002)
        time.sleep(pause)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
    else:
        delay = rng.uniform(0.0, tally.longest * 1.05)
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
    out, err = proc.communicate()
    if proc.returncode == -signal.SIGKILL:
        tally.killed += 1
        tally.left += bool(leftovers(world.a / ".git", world.server)
                           or git(["status", "--porcelain"], world.a).stdout)
    else:
        tally.finished += 1
        tally.longest = max(tally.longest, time.monotonic() - started)
        if proc.returncode != 0:
            raise Failure(f"`memgit {' '.join(args)[:60]}` (not killed) exit "
                          f"{proc.returncode}: {err.strip()[-400:]}")
    return proc, out, err


def measure(world: World, args: list[str], cwd: Path, tally: Tally) -> None:
    started = time.monotonic()
    ok(world, args, cwd)
    tally.longest = max(tally.longest, time.monotonic() - started)


# --- the commands: each prepares, runs the killed command, records what it acknowledged
# and runs the repairing command

Trial = Callable[[World, random.Random, Tally, bool], None]


def trial_remember(world: World, rng: random.Random, tally: Tally, first: bool,
                   where: str = "a") -> None:
    cwd = world.a if where == "a" else world.server
    world.n += 1
    text = sentence(rng, world.n)
    args = ["remember", "--json", text]
    if first:
        measure(world, ["remember", sentence(rng, 10_000 + world.n)], cwd, tally)
        measure(world, ["remember", sentence(rng, 20_000 + world.n)], cwd, tally)
        ok(world, ["sync"], world.a)
    proc, out, _err = kill_run(world, args, cwd, rng, tally)
    ack = acknowledgement(out)
    if ack and ack.get("status") in ("committed", "queued"):
        tally.acknowledged += proc.returncode == -signal.SIGKILL
        for added in ack.get("added") or []:
            world.present[added["id"]] = added["text"]
    if where == "server":
        # the next ordinary command on the drive the kill hit: a write there (it removes
        # the half-written loose object a writer killed while it wrote a blob leaves)
        remember(world, world.server, rng)
        ok(world, ["sync"], world.a)  # the server's new entries come to the checkout


def trial_remember_bare(world: World, rng: random.Random, tally: Tally, first: bool) -> None:
    trial_remember(world, rng, tally, first, where="server")


def pick(world: World, rng: random.Random) -> str:
    if len(world.present) < 4:
        for _ in range(4):
            remember(world, world.a, rng)
    return rng.choice(sorted(world.present))


def trial_edit(world: World, rng: random.Random, tally: Tally, first: bool) -> None:
    target = pick(world, rng)
    world.n += 1
    text = sentence(rng, world.n)
    if first:
        measure(world, ["edit", target, sentence(rng, 30_000 + world.n)], world.a, tally)
    old = head_entries(world.a)[target]
    world.present.pop(target)  # either text may stand until acknowledged
    proc, out, _err = kill_run(world, ["edit", "--json", target, text], world.a, rng, tally)
    ack = acknowledgement(out)
    if ack and ack.get("status") in ("committed", "queued"):
        tally.acknowledged += proc.returncode == -signal.SIGKILL
        world.present[target] = text
    else:
        now = head_entries(world.a).get(target)
        if now not in (old, text):
            raise Failure(f"a killed edit left neither text: {now!r}")
        world.present[target] = now or old
        if proc.returncode == -signal.SIGKILL:
            # the next ordinary command (a read) applies a queued write; the text the
            # check expects is what the branch holds after it
            ok(world, ["info", "--json"], world.a)
            world.present[target] = head_entries(world.a).get(target, old)


def trial_forget(world: World, rng: random.Random, tally: Tally, first: bool) -> None:
    if first:
        measure(world, ["forget", pick(world, rng)], world.a, tally)
        world.present.pop(next(i for i in world.present if i not in head_entries(world.a)))
    target = pick(world, rng)
    world.present.pop(target)
    proc, out, _err = kill_run(world, ["forget", "--json", target], world.a, rng, tally)
    ack = acknowledgement(out)
    if ack and ack.get("status") in ("committed", "queued"):
        tally.acknowledged += proc.returncode == -signal.SIGKILL
        world.gone.add(target)
    elif target in head_entries(world.a):
        world.present[target] = head_entries(world.a)[target]


def trial_sync(world: World, rng: random.Random, tally: Tally, first: bool) -> None:
    for _ in range(rng.randint(1, 4)):
        remember(world, world.a, rng)
    for _ in range(rng.randint(1, 3)):
        remember(world, world.b, rng)
    ok(world, ["sync"], world.b)
    if first:
        measure(world, ["sync"], world.a, tally)
        for _ in range(3):
            remember(world, world.a, rng)
        remember(world, world.b, rng)
        ok(world, ["sync"], world.b)
    kill_run(world, ["sync"], world.a, rng, tally)
    ok(world, ["sync"], world.a)  # the repair: the next sync


def make_notes(folder: Path, rng: random.Random, count: int, tag: int) -> None:
    """``count`` Markdown notes of a few facts each, in a few folders."""
    for k in range(count):
        area = folder / f"area{k % 7}"
        area.mkdir(parents=True, exist_ok=True)
        lines = [f"# {rng.choice(THINGS).capitalize()} {tag}-{k}", ""]
        for j in range(rng.randint(2, 5)):
            lines.append(f"- {sentence(rng, tag * 100_000 + k * 10 + j)}")
        lines.append("")
        lines.append(f"Context: written after the {rng.choice(DAYS)} review with "
                     f"{rng.choice(PEOPLE)} (note {tag}-{k}).")
        (area / f"note-{tag}-{k:03}.md").write_text("\n".join(lines) + "\n")


def trial_import(world: World, rng: random.Random, tally: Tally, first: bool) -> None:
    world.n += 1
    folder = world.base / f"notes{world.n}"
    make_notes(folder, rng, 300, world.n)
    plan = world.base / f"plan{world.n}.json"
    ok(world, ["import", "plan", str(folder), "-o", str(plan)], world.a)
    if first:
        measure(world, ["import", "apply", str(plan)], world.a, tally)
        world.n += 1
        folder = world.base / f"notes{world.n}"
        make_notes(folder, rng, 300, world.n)
        plan = world.base / f"plan{world.n}.json"
        ok(world, ["import", "plan", str(folder), "-o", str(plan)], world.a)
    before = head_entries(world.a)
    proc, out, _err = kill_run(world, ["import", "apply", "--json", str(plan)], world.a,
                               rng, tally)
    ack = acknowledgement(out)
    if ack and proc.returncode == -signal.SIGKILL and ack.get("status") == "committed":
        tally.acknowledged += 1
    again = json.loads(ok(world, ["import", "apply", "--json", str(plan)], world.a).stdout)
    after = head_entries(world.a)
    new = {i: t for i, t in after.items() if i not in before}
    texts = list(new.values())
    if len(texts) != len(set(texts)):
        raise Failure("the import landed twice (duplicate texts)")
    planned = json.loads(plan.read_text())
    count = planned.get("counts", {}).get("entry") if isinstance(planned, dict) else None
    if count is not None and len(new) != count:
        raise Failure(f"import: {len(new)} new entries, the plan has {count} "
                      f"(rerun said {again.get('status')})")
    world.present.update(new)


def trial_purge(world: World, rng: random.Random, tally: Tally, first: bool) -> None:
    ok(world, ["sync"], world.a)
    target = remember(world, world.a, rng)
    for _ in range(2):
        remember(world, world.a, rng)
    ok(world, ["sync"], world.a)
    text = world.present.pop(target)
    if first:
        spare = remember(world, world.a, rng)
        ok(world, ["sync"], world.a)
        world.present.pop(spare)
        measure(world, ["purge", spare, "--yes", "--repo", str(world.server)], world.base,
                tally)
        world.gone.add(spare)
    proc, out, _err = kill_run(world, ["purge", target, "--yes", "--json", "--repo",
                                       str(world.server)], world.base, rng, tally)
    acked = proc.returncode == 0 or (acknowledgement(out) is not None)
    tally.acknowledged += acked and proc.returncode == -signal.SIGKILL
    ok(world, ["purge", "--resume", "--yes", "--repo", str(world.server)], world.base)
    if target in head_entries(world.server):
        if acked:
            raise Failure(f"an acknowledged purge of {target} was rolled back")
        ok(world, ["purge", target, "--yes", "--repo", str(world.server)], world.base)
    history = git(["log", "--all", "-p"], world.server).stdout
    if text in history:
        raise Failure(f"the purged text of {target} is still in the server's history")
    world.gone.add(target)
    ok(world, ["sync"], world.a)
    ok(world, ["sync"], world.b)


def trial_dream(world: World, rng: random.Random, tally: Tally, first: bool) -> None:
    # near-duplicates and restatements for the rule-based proposer to merge
    for _ in range(3):
        entry_id = remember(world, world.a, rng)
        world.n += 1
        out = json.loads(ok(world, ["remember", "--json", f"{world.present[entry_id]} indeed",
                                    "--topic", f"area{rng.randint(0, 2)}.md"],
                            world.a).stdout)
        for added in out["added"]:
            world.present[added["id"]] = added["text"]
    if first:
        measure(world, ["dream", "--no-model"], world.a, tally)
        for _ in range(3):
            remember(world, world.a, rng)
    before = head_entries(world.a)
    kill_run(world, ["dream", "--no-model"], world.a, rng, tally)
    after = head_entries(world.a)
    if after != before and git(["log", "-1", "--format=%s", "main"], world.a
                               ).stdout.find("Dream") < 0:
        raise Failure("a killed dream changed the drive without its Dream commit")
    ok(world, ["dream", "--no-model"], world.a)  # the next run
    # a dream may merge or prune entries: what it changed is not a lost write
    now = head_entries(world.a)
    world.present = {i: now[i] for i in world.present if i in now}


def trial_index(world: World, rng: random.Random, tally: Tally, first: bool) -> None:
    if len(world.present) < 200:  # something to index: a few hundred entries
        trial_index_setup(world, rng)
    if first:
        measure(world, ["index", "--rebuild"], world.a, tally)
    remember(world, world.a, rng)
    kill_run(world, ["index", "--rebuild"], world.a, rng, tally)
    ok(world, ["recall", "--json", "staging", "cluster"], world.a)  # the next read


def trial_recall(world: World, rng: random.Random, tally: Tally, first: bool) -> None:
    if len(world.present) < 200:
        trial_index_setup(world, rng)
    if first:
        measure(world, ["recall", "--json", "-n", "50", "staging", "cluster"], world.a, tally)
    remember(world, world.a, rng)  # the index has something to catch up with
    words = rng.choice(THINGS).replace("the ", "")
    kill_run(world, ["recall", "--json", "-n", "50", *words.split()], world.a, rng, tally)
    ok(world, ["recall", "--json", "billing"], world.a)


def trial_index_setup(world: World, rng: random.Random) -> None:
    world.n += 1
    folder = world.base / f"notes{world.n}"
    make_notes(folder, rng, 120, world.n)
    plan = world.base / f"plan{world.n}.json"
    ok(world, ["import", "plan", str(folder), "-o", str(plan)], world.a)
    ok(world, ["import", "apply", str(plan)], world.a)
    world.present.update(head_entries(world.a))


COMMANDS: dict[str, Trial] = {
    "remember": trial_remember,
    "edit": trial_edit,
    "forget": trial_forget,
    "remember-bare": trial_remember_bare,
    "sync": trial_sync,
    "import": trial_import,
    "purge": trial_purge,
    "dream": trial_dream,
    "index": trial_index,
    "recall": trial_recall,
}


def sweep(name: str, trials: int, seed: int, root: Path) -> Tally:
    rng = random.Random(f"{seed}-{name}")
    tally = Tally()
    world = make_world(root / name, name)
    first = True
    for number in range(trials):
        tally.trials += 1
        try:
            COMMANDS[name](world, rng, tally, first)
            first = False
            check(world, rng)
        except Failure as failure:
            tally.failures.append(f"trial {number}: {failure}")
            print(f"  {name} trial {number} FAILED: {failure}", flush=True)
            keep = root / f"{name}-failed-{number}"
            shutil.copytree(world.base, keep, symlinks=True, ignore_dangling_symlinks=True)
            world = make_world(root / name, name)
            first = True
    return tally


def main() -> int:
    global SRC, AT_MOVE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20, help="trials per command")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--only", nargs="*", choices=sorted(COMMANDS), default=None)
    parser.add_argument("--keep", action="store_true", help="keep the drives (and print where)")
    parser.add_argument("--src", type=Path, default=SRC,
                        help="the memgit sources to run (default: this checkout's src)")
    parser.add_argument("--at-move", type=float, default=0.0, metavar="SHARE",
                        help="the share of the kills made within 3 ms of a branch moving")
    args = parser.parse_args()
    AT_MOVE = args.at_move
    SRC = args.src.resolve()
    root = Path(tempfile.mkdtemp(prefix="memgit-crash-"))
    total = 0
    print("| command | trials | killed | ended first | left something | acknowledged "
          "then killed | failures | longest run (s) |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.only or list(COMMANDS):
        started = time.monotonic()
        tally = sweep(name, args.trials, args.seed, root)
        total += len(tally.failures)
        print(f"| {name} | {tally.trials} | {tally.killed} | {tally.finished} | {tally.left} "
              f"| {tally.acknowledged} | {len(tally.failures)} | {tally.longest:.2f} |"
              f"  ({time.monotonic() - started:.0f} s)", flush=True)
    if args.keep or total:
        print(f"drives kept in {root}")
    else:
        shutil.rmtree(root)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
