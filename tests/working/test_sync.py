"""Working memory against real server drives (memgit's pre-receive hook; smart HTTP through
nginx + git http-backend): a fresh clone restores it, offline sets of two agents both
survive, the same key on both ends ends with the newest set (the other in history), the
server refuses what the policy refuses, a purge removes a value from all history, and a
fork starts with a copy that then diverges."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memgit.drives.create import create_drive
from memgit.policy.working import MAX_STORED_BYTES, WORKING_REF, key_name, value_line
from tests.conftest import git, memgit, memgit_ok
from tests.sync.test_client import objects_containing

FAKE_KEY = "AKIAZ3MBQX7TQW4RWNB2"  # synthetic, of the real shape


def server(tmp_path: Path) -> Path:
    path = tmp_path / "server.git"
    create_drive(path, bare=True)
    assert (path / "hooks" / "pre-receive").exists()
    return path


def two_clones(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A server drive with memgit's hooks and two agents' checkouts of it."""
    bare = server(tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    memgit_ok("clone", bare.as_uri(), str(a))
    memgit_ok("clone", bare.as_uri(), str(b))
    return bare, a, b


def get(work: Path, key: str, *args: str) -> dict:
    return json.loads(memgit_ok("get", key, "--json", *args, cwd=work).stdout)


def keys(work: Path, *args: str) -> list[str]:
    page = json.loads(memgit_ok("keys", "--json", *args, cwd=work).stdout)
    return [k["key"] for k in page["keys"]]


def sync(work: Path) -> dict:
    return json.loads(memgit_ok("sync", "--json", cwd=work).stdout)["working"]


@pytest.mark.slow
def test_clone_restores_and_offline_agents_merge_over_http(http_git_server,
                                                          tmp_path: Path) -> None:
    bare = http_git_server.repo_path("drive")
    create_drive(bare, bare=True)
    url = http_git_server.url("drive")
    a, b = tmp_path / "a", tmp_path / "b"
    memgit_ok("clone", url, str(a))
    memgit_ok("clone", url, str(b))
    # offline: each agent sets its own keys, and both set "shared" (b last)
    memgit_ok("set", "goal", "ship payments", cwd=a)
    memgit_ok("set", "shared", '"from a"', "--json", cwd=a)
    memgit_ok("set", "plan", '{"step": 1}', "--json", cwd=b)
    memgit_ok("set", "shared", '"from b"', "--json", cwd=b)
    assert sync(a)["pushed"] is True
    report_b = sync(b)
    assert report_b["conflicts"] == [{"scope": "agents/default", "key": "shared",
                                      "winner": "local"}]  # b set it last
    report_a = sync(a)
    assert report_a["pulled"] is True and report_a["pushed"] is False
    for work in (a, b):
        assert keys(work) == ["goal", "plan", "shared"]
        assert get(work, "shared")["value"] == "from b"
    # the losing value is still in the server's history (a parent of the merge)
    history = git("log", "-p", "--format=%s", WORKING_REF, cwd=bare).stdout.decode()
    assert '- "from a" [id: ' in history and '- "from b" [id: ' in history
    parents = git("log", "-1", "--format=%P", WORKING_REF, cwd=bare).stdout.split()
    assert len(parents) == 2
    # the agent loses its sandbox: a fresh clone restores everything
    fresh = tmp_path / "fresh"
    memgit_ok("clone", url, str(fresh))
    assert keys(fresh) == ["goal", "plan", "shared"]
    assert get(fresh, "goal")["value"] == "ship payments"
    assert get(fresh, "plan")["value"] == {"step": 1}
    # main's log holds no working memory commit
    subjects = git("log", "--format=%s", "main", cwd=bare).stdout.decode().splitlines()
    assert subjects == ["Create drive"]
    assert git("fsck", "--no-dangling", cwd=bare).returncode == 0


@pytest.mark.slow
def test_same_key_newest_set_wins_whoever_syncs_last(tmp_path: Path) -> None:
    bare, a, b = two_clones(tmp_path)
    memgit_ok("set", "step", "b's older step", cwd=b)
    memgit_ok("set", "step", "a's newer step", cwd=a)
    sync(a)
    report = sync(b)  # b syncs last, but a set it later: a's value wins
    assert report["conflicts"] == [{"scope": "agents/default", "key": "step",
                                    "winner": "server"}]
    sync(a)
    assert get(a, "step")["value"] == get(b, "step")["value"] == "a's newer step"
    history = git("log", "-p", WORKING_REF, cwd=bare).stdout.decode()
    assert "b's older step" in history
    # an unset on one side and a set on the other: the set stays
    memgit_ok("unset", "step", cwd=a)
    memgit_ok("set", "step", "b again", cwd=b)
    sync(a)
    sync(b)
    sync(a)
    assert get(a, "step")["value"] == get(b, "step")["value"] == "b again"


@pytest.mark.slow
def test_two_agents_in_teams_sync_into_their_own_scopes(tmp_path: Path) -> None:
    bare, a, b = two_clones(tmp_path)
    git("config", "memgit.agent", "planner", cwd=a)
    git("config", "memgit.team", "core", cwd=a)
    memgit_ok("set", "goal", "plan", cwd=a)
    memgit_ok("set", "goal", "review", "--agent", "reviewer", cwd=b)
    sync(a)
    sync(b)
    sync(a)
    assert get(a, "goal")["value"] == "plan"
    assert get(b, "goal", "--agent", "planner", "--team", "core")["value"] == "plan"
    assert get(a, "goal", "--agent", "reviewer", "--team", "")["value"] == "review"
    tree = git("ls-tree", "-r", "--name-only", WORKING_REF, cwd=bare).stdout.decode().split()
    goal = key_name("goal")
    assert tree == [f"agents/reviewer/{goal}/{goal}", f"teams/core/agents/planner/{goal}/{goal}"]


@pytest.mark.slow
def test_the_server_judges_what_lands_on_the_working_ref(tmp_path: Path) -> None:
    """A plain git push that bypasses memgit: the server's pre-receive refuses a credential
    (by kind, never echoed), a file outside the layout, a deletion and a forced rewrite."""
    bare = server(tmp_path)
    a = tmp_path / "a"
    memgit_ok("clone", bare.as_uri(), str(a))
    memgit_ok("set", "ok", "fine", cwd=a)
    assert sync(a)["pushed"] is True
    good = git("rev-parse", WORKING_REF, cwd=a).stdout.decode().strip()

    def commit_with(path: str, content: bytes) -> str:
        blob = git("hash-object", "-w", "--stdin", cwd=a, input=content).stdout.decode().strip()
        index = {"GIT_INDEX_FILE": str(tmp_path / "index")}
        git("read-tree", good, cwd=a, env=index)
        git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", cwd=a, env=index)
        tree = git("write-tree", cwd=a, env=index).stdout.decode().strip()
        return git("commit-tree", tree, "-p", good, "-m", "raw", cwd=a).stdout.decode().strip()

    line = f'- "key {FAKE_KEY}" [id: w-{"0" * 32}; set: 2026-01-01T00:00:00.000Z]\n'
    cases = [
        (commit_with(f"agents/default/{key_name('deploy')}/{key_name('deploy')}",
                     line.encode()), "MG401"),
        (commit_with("notes.md", b"- hello\n"), "MG705"),
        (commit_with(f"agents/default/{key_name('x')}/{key_name('x')}", b"not a value line\n"),
         "MG705"),
        (commit_with(f"agents/default/{key_name('big')}/{key_name('big')}",
                     b"x" * (MAX_STORED_BYTES + 1)), "MG703"),  # refused unread
        # "z" filed in a bucket before "ok"'s: keys would not ascend, listing would skip
        (commit_with(f"agents/default/{key_name('a')}/{key_name('z')}",
                     value_line("v", "w-" + "1" * 32, "2026-01-01T00:00:00.000Z")), "MG705"),
    ]
    for commit, code in cases:
        push = git("push", "--porcelain", "origin", f"{commit}:{WORKING_REF}", cwd=a,
                   check=False)
        said = push.stdout.decode() + push.stderr.decode()
        assert push.returncode != 0 and "[remote rejected]" in said and code in said, said
        assert FAKE_KEY not in said
    delete = git("push", "--porcelain", "origin", f":{WORKING_REF}", cwd=a, check=False)
    assert delete.returncode != 0 and "MG603" in delete.stderr.decode()
    root = git("commit-tree", git("rev-parse", f"{good}^{{tree}}", cwd=a).stdout.decode()
               .strip(), "-m", "rewrite", cwd=a).stdout.decode().strip()
    forced = git("push", "--porcelain", "--force", "origin", f"{root}:{WORKING_REF}", cwd=a,
                 check=False)
    assert forced.returncode != 0 and "MG604" in forced.stderr.decode()
    assert git("rev-parse", WORKING_REF, cwd=bare).stdout.decode().strip() == good
    # other refs stay closed
    other = git("push", "--porcelain", "origin", f"{good}:refs/memgit/elsewhere", cwd=a,
                check=False)
    assert other.returncode != 0 and "MG602" in other.stderr.decode()


@pytest.mark.slow
def test_a_purge_removes_a_value_from_all_history(tmp_path: Path) -> None:
    private = b"Joe lives at 12 Elm Street"
    bare = server(tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    memgit_ok("clone", bare.as_uri(), str(a))
    memgit_ok("set", "address", private.decode(), cwd=a)
    memgit_ok("set", "address", private.decode() + ", flat 3", cwd=a)  # two versions
    memgit_ok("set", "goal", "keep me", cwd=a)
    sync(a)
    memgit_ok("clone", bare.as_uri(), str(b))
    value_id = get(b, "address")["id"]
    assert objects_containing(bare, private) and objects_containing(a / ".git", private)
    memgit_ok("purge", value_id, "--repo", str(bare), "--yes")
    assert not objects_containing(bare, private)
    # the agents: a took part in the history, b made an offline set meanwhile
    memgit_ok("set", "mine", "b offline", cwd=b)
    for work in (a, b):
        assert sync(work)["history_rewritten"] is True
        assert keys(work) == (["goal", "mine"] if work == b else ["goal"])
        assert not objects_containing(work / ".git", private)
        assert memgit("get", "address", cwd=work).returncode == 1
    sync(a)
    assert keys(a) == ["goal", "mine"]
    # the key is usable again, under a new id; the purged text may not return
    memgit_ok("set", "address", "moved away", cwd=a)
    assert get(a, "address")["id"] != value_id
    assert sync(a)["pushed"] is True
    memgit_ok("set", "address", private.decode(), cwd=b)
    refused = memgit("sync", cwd=b)
    err = refused.stderr.decode()
    assert refused.returncode == 1 and "MG607" in err and "Elm Street" not in err
    assert git("fsck", "--no-dangling", cwd=bare).returncode == 0


@pytest.mark.slow
def test_a_fork_copies_working_memory_then_diverges(new_drive, tmp_path: Path) -> None:
    parent = new_drive()
    memgit_ok("set", "goal", "parent goal", cwd=parent)
    memgit_ok("set", "plan", '{"step": 4}', "--json", cwd=parent)
    child = tmp_path / "child"
    memgit_ok("fork", str(parent), str(child))
    assert keys(child) == ["goal", "plan"]
    assert get(child, "plan")["value"] == {"step": 4}
    memgit_ok("set", "goal", "child goal", cwd=child)
    memgit_ok("unset", "plan", cwd=child)
    memgit_ok("set", "goal", "parent moves on", cwd=parent)
    assert get(parent, "goal")["value"] == "parent moves on"
    assert keys(parent) == ["goal", "plan"]
    assert get(child, "goal")["value"] == "child goal" and keys(child) == ["goal"]
    # objects copied, not shared: the child's ref lives in its own repository
    assert git("fsck", "--no-dangling", cwd=child).returncode == 0
    assert not (child / ".git" / "objects" / "info" / "alternates").exists()
