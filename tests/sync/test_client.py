"""memgit sync / clone / status against real bare server drives with memgit's hooks.

Servers are created by ``memgit init --bare`` (create_drive), which installs the
pre-receive hook; agents are checkouts made by ``memgit clone``. Local commits
are made with plain git (``--no-verify``, as an agent bypassing the hooks would).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from memgit.drives.create import clone_drive, create_drive
from memgit.errors import NotADriveError, SyncAuthError, SyncNetworkError, UsageError
from memgit.format import entries as fmt
from memgit.git.repository import open_drive, tree_texts
from memgit.sync.client import SyncRefusedError, parse_push, sync, sync_status
from memgit.sync.status import LAST_SYNCED, SYNC_SOURCE
from tests.conftest import commit_all, git, head_entries, memgit, refused

SOURCE = "https://example.com/sessions/1"
SECRET = "ghp_Xq7Rk2Lm9Pz4Wv8Ny3Bt6Hd1Jc5Fg0Sa2Ke7"


# --- helpers ------------------------------------------------------------------------------


def server(tmp_path: Path, name: str = "server.git") -> Path:
    path = tmp_path / name
    create_drive(path, bare=True)
    assert (path / "hooks" / "pre-receive").exists()
    return path


def add(work: Path, text: str, path: str = fmt.MEMORY_FILE, entry_id: str | None = None) -> str:
    entry_id = entry_id or fmt.new_id()
    line = fmt.format_entry(text, SOURCE, "2026-01-02", entry_id)
    full = work / path
    if path == fmt.MEMORY_FILE:
        head, sep, tail = full.read_text().partition(fmt.INDEX_HEADING)
        full.write_text(head.rstrip("\n") + "\n\n" + line + "\n\n" + sep + tail)
    else:
        full.parent.mkdir(parents=True, exist_ok=True)
        text_before = full.read_text() if full.exists() else f"# {path[:-3]}\n\n"
        full.write_text(text_before + line + "\n")
    return entry_id


def set_text(work: Path, entry_id: str, text: str | None) -> None:
    """Edit (or with None delete) the entry ``entry_id`` wherever it is."""
    for full in work.rglob("*.md"):
        if ".git" in full.parts:
            continue
        out = []
        for content, eol in fmt.split_lines(full.read_text()):
            entry = fmt.parse_entry(content)
            if entry is not None and entry.meta.get("id") == entry_id:
                if text is None:
                    continue
                content = entry.with_text(text).serialise()
            out.append(content + eol)
        full.write_text("".join(out))


def texts(mapping: dict[str, tuple[str, str]]) -> dict[str, str]:
    return {k: fmt.parse_entry(v[1]).text for k, v in mapping.items()}  # type: ignore[union-attr]


def head(work: Path, ref: str = "HEAD") -> str:
    return git("rev-parse", ref, cwd=work).stdout.decode().strip()


def assert_clean_drive(work: Path) -> None:
    """Work tree equals HEAD, the Index is current, no conflict marker anywhere."""
    assert git("status", "--porcelain", cwd=work).stdout == b""
    drive = open_drive(work)
    head_commit = drive.head_commit()
    assert head_commit is not None
    tree = tree_texts(drive, str(head_commit.tree_id))
    assert fmt.index_section_is_current(tree[fmt.MEMORY_FILE], list(tree))
    for text in tree.values():
        for line in text.splitlines():
            assert not line.startswith(("<<<<<<<", "=======", ">>>>>>>"))


def server_reflog_forward_only(bare: Path) -> None:
    """Every server update of main was a fast-forward (the first-parent chain holds all)."""
    log = git("log", "--format=%H %P", "main", cwd=bare).stdout.decode().split("\n")
    assert all(len(line.split()) <= 2 for line in log if line)  # no merges


# --- the basics ---------------------------------------------------------------------------


def test_two_offline_agents_both_end_with_all_entries(tmp_path: Path) -> None:
    bare = server(tmp_path)
    a = clone_drive(bare.as_uri(), tmp_path / "a")
    b = clone_drive(bare.as_uri(), tmp_path / "b")
    ids = [add(a, "Joe leads the product team")]
    commit_all(a, "agent a: 1 entry")
    ids.append(add(a, "payments launch is in March", "projects/payments.md"))
    commit_all(a, "agent a: topic file")
    ids.append(add(b, "Joe prefers tea"))
    commit_all(b, "agent b: 1 entry")
    ids.append(add(b, "the team meets on Mondays", "team.md"))
    ids.append(add(b, "standups are at nine", "team.md"))
    commit_all(b, "agent b: team file")

    first = sync(open_drive(a))
    assert [local for local, _server in first.pushed] == [
        head(a, "HEAD~1"), head(a)]  # pushed as they are: the server had not moved
    b_commits = git("log", "-2", "--format=%an|%ae|%ad|%B", cwd=b).stdout
    second = sync(open_drive(b))
    assert len(second.pushed) == 2 and second.pulled and second.conflicts == []
    # Replayed (new ids, new parents), with the same authors, dates and messages.
    assert all(local != server for local, server in second.pushed)
    assert git("log", "-2", "--format=%an|%ae|%ad|%B", "main", cwd=bare).stdout == b_commits
    sync(open_drive(a))

    want = head_entries(bare)
    assert set(want) == set(ids)
    assert head_entries(a) == head_entries(b) == want
    for work in (a, b):
        assert_clean_drive(work)
        assert head(work) == head(bare, "main")
    messages = git("log", "--format=%s|%an", "main", cwd=bare).stdout.decode().splitlines()
    assert messages[:4] == ["agent b: team file|Test Agent", "agent b: 1 entry|Test Agent",
                            "agent a: topic file|Test Agent", "agent a: 1 entry|Test Agent"]
    server_reflog_forward_only(bare)
    assert sync_status(open_drive(b), "origin")["waiting_commits"] == 0


def test_status_counts_waiting_commits_and_last_sync(tmp_path: Path) -> None:
    bare = server(tmp_path)
    a = clone_drive(bare.as_uri(), tmp_path / "a")
    before = sync_status(open_drive(a), "origin")
    assert before["waiting_commits"] == 0 and before["last_sync"] is None
    add(a, "one")
    commit_all(a, "one")
    add(a, "two")
    commit_all(a, "two")
    assert sync_status(open_drive(a), "origin")["waiting_commits"] == 2
    sync(open_drive(a))
    after = sync_status(open_drive(a), "origin")
    assert after["waiting_commits"] == 0 and after["last_sync"] is not None
    proc = memgit("status", "--json", cwd=a)
    assert proc.returncode == 0 and json.loads(proc.stdout)["last_synced_commit"] == head(a)


# --- conflicts ----------------------------------------------------------------------------


@pytest.mark.parametrize("policy,b_is_newer,winner", [
    ("local", False, "b"),
    ("server", True, "a"),
    ("newest", True, "b"),
    ("newest", False, "a"),
])
def test_on_conflict_choices(tmp_path: Path, policy: str, b_is_newer: bool,
                             winner: str) -> None:
    bare = server(tmp_path)
    seed = clone_drive(bare.as_uri(), tmp_path / "seed")
    entry_id = add(seed, "Joe drinks coffee")
    other = add(seed, "Joe lives in Berlin")
    commit_all(seed, "seed")
    sync(open_drive(seed))
    a = clone_drive(bare.as_uri(), tmp_path / "a")
    b = clone_drive(bare.as_uri(), tmp_path / "b")
    set_text(a, entry_id, "Joe drinks green tea")
    commit_all(a, "a edits", date="2026-01-05T10:00:00Z" if b_is_newer else "2026-01-05T12:00:00Z")
    set_text(b, entry_id, "Joe drinks black tea")
    set_text(b, other, "Joe lives in Hamburg")
    commit_all(b, "b edits", date="2026-01-05T11:00:00Z")
    sync(open_drive(a))
    report = sync(open_drive(b), on_conflict=policy)
    expected = "Joe drinks green tea" if winner == "a" else "Joe drinks black tea"
    final = texts(head_entries(bare))
    assert final[entry_id] == expected
    assert final[other] == "Joe lives in Hamburg"  # the other edit lands either way
    assert [(c.key, c.kind, c.winner) for c in report.conflicts] == [
        (entry_id, "edit-edit", "local" if winner == "b" else "server")]
    sync(open_drive(a))
    assert head_entries(a) == head_entries(b) == head_entries(bare)
    assert_clean_drive(b)


def test_on_conflict_fail_stops_and_changes_nothing(tmp_path: Path) -> None:
    bare = server(tmp_path)
    seed = clone_drive(bare.as_uri(), tmp_path / "seed")
    entry_id = add(seed, "Joe drinks coffee")
    commit_all(seed, "seed")
    sync(open_drive(seed))
    a = clone_drive(bare.as_uri(), tmp_path / "a")
    b = clone_drive(bare.as_uri(), tmp_path / "b")
    set_text(a, entry_id, "Joe drinks green tea")
    commit_all(a, "a edits")
    set_text(b, entry_id, "Joe drinks black tea")
    b_head = commit_all(b, "b edits")
    sync(open_drive(a))
    server_head = head(bare, "main")
    proc = memgit("sync", "--on-conflict", "fail", cwd=b)
    assert proc.returncode == 3
    assert entry_id in proc.stderr.decode()
    refused(proc, "MG006", status=3)
    assert head(b) == b_head and head(bare, "main") == server_head
    assert texts(head_entries(b))[entry_id] == "Joe drinks black tea"
    # A later sync with another choice goes through.
    assert memgit("sync", "--on-conflict", "server", cwd=b).returncode == 0
    assert texts(head_entries(bare))[entry_id] == "Joe drinks green tea"


# --- refusals, races, interruptions -------------------------------------------------------


def test_policy_refusal_stops_with_the_servers_message_and_keeps_local_work(
        tmp_path: Path) -> None:
    bare = server(tmp_path)
    a = clone_drive(bare.as_uri(), tmp_path / "a")
    good = add(a, "Joe leads the product team")
    commit_all(a, "good")
    add(a, f"deploy token is {SECRET}")
    bad_head = commit_all(a, "oops: a secret (hooks bypassed)")
    add(a, "after the bad one")
    local_head = commit_all(a, "after")
    proc = memgit("sync", cwd=a)
    err = proc.stderr.decode()
    assert proc.returncode == 1
    assert "MG401" in err and "refused" in err and bad_head[:10] in err
    assert SECRET not in err and SECRET not in proc.stdout.decode()
    # The good commit before it landed; the local branch and files are untouched.
    assert set(head_entries(bare)) == {good}
    assert head(a) == local_head
    assert git("status", "--porcelain", cwd=a).stdout == b""
    # Not retried in a loop: the same refusal again, nothing new on the server.
    server_head = head(bare, "main")
    with pytest.raises(SyncRefusedError) as info:
        sync(open_drive(a))
    assert "MG401" in info.value.server_message and head(bare, "main") == server_head


def test_push_race_replays_once_on_the_new_head(tmp_path: Path) -> None:
    bare = server(tmp_path)
    a = clone_drive(bare.as_uri(), tmp_path / "a")
    c = clone_drive(bare.as_uri(), tmp_path / "c")
    mine = add(a, "mine")
    commit_all(a, "mine")
    theirs = add(c, "theirs")
    commit_all(c, "theirs")
    calls = []

    def meanwhile(msg: str) -> None:
        # Between a's fetch and a's push, another agent pushes.
        if not calls:
            calls.append(msg)
            sync(open_drive(c))

    report = sync(open_drive(a), step=meanwhile)
    assert report.races == 1 and len(report.pushed) == 1
    assert set(head_entries(bare)) == {mine, theirs}
    assert head_entries(a) == head_entries(bare)
    server_reflog_forward_only(bare)


@pytest.mark.parametrize("marks_lost", [False, True])
def test_interrupted_sync_resumes_without_duplicates(tmp_path: Path, marks_lost: bool) -> None:
    bare = server(tmp_path)
    a = clone_drive(bare.as_uri(), tmp_path / "a")
    b = clone_drive(bare.as_uri(), tmp_path / "b")
    add(a, "from a")
    commit_all(a, "a")
    sync(open_drive(a))
    ids = []
    for n in range(3):
        ids.append(add(b, f"b fact {n}"))
        commit_all(b, f"b {n}")
    before = (head(b, LAST_SYNCED), None)

    def killed(msg: str) -> None:
        if msg.startswith("[3/3]"):
            raise KeyboardInterrupt  # the process dies between the 2nd and 3rd push

    with pytest.raises(KeyboardInterrupt):
        sync(open_drive(b), step=killed)
    assert len(head_entries(bare)) == 3  # a's + two of b's
    if marks_lost:
        # Killed after a push but before the marks were written: the resumed
        # sync replays commits already on the server, which must change nothing.
        git("update-ref", LAST_SYNCED, before[0], cwd=b)
        git("update-ref", "-d", SYNC_SOURCE, cwd=b)
    report = sync(open_drive(b))
    final = head_entries(bare)
    assert set(ids) <= set(final) and len(final) == 4
    lines = [v[1] for v in final.values()]
    assert len(lines) == len(set(lines))
    memory = tree_texts(open_drive(bare), str(open_drive(bare).head_commit().tree_id))  # type: ignore[union-attr]
    assert sum(text.count("b fact") for text in memory.values()) == 3
    assert (len(report.skipped) == 2) is marks_lost
    assert head_entries(b) == final
    assert_clean_drive(b)


# --- offline drives, bad input ------------------------------------------------------------


def test_offline_drive_syncs_when_a_remote_is_added_later(tmp_path: Path) -> None:
    bare = server(tmp_path)
    seed = clone_drive(bare.as_uri(), tmp_path / "seed")
    theirs = add(seed, "server side fact")
    commit_all(seed, "server")
    sync(open_drive(seed))
    local = tmp_path / "offline"
    create_drive(local, bare=False)
    mine = [add(local, "offline fact one"), add(local, "offline topic fact", "notes.md")]
    commit_all(local, "offline work")
    assert sync_status(open_drive(local), "origin")["remote_url"] is None
    proc = memgit("sync", cwd=local)
    assert proc.returncode == 2 and "no remote" in proc.stderr.decode()
    refused(proc, "MG001")
    git("remote", "add", "origin", bare.as_uri(), cwd=local)
    report = sync(open_drive(local))
    assert set(head_entries(bare)) == {theirs, *mine}
    assert head_entries(local) == head_entries(bare)
    # Its work lands as one commit ("Create drive" replays to nothing, or is the
    # very same commit when both drives were made in the same second).
    assert len(report.pushed) == 1 and report.conflicts == []
    assert git("log", "-1", "--format=%s", "main", cwd=bare).stdout == b"offline work\n"
    assert_clean_drive(local)
    sync(open_drive(seed))
    assert head_entries(seed) == head_entries(local)


def test_bad_input_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    bare = server(tmp_path)
    a = clone_drive(bare.as_uri(), tmp_path / "a")
    add(a, "waiting")
    local_head = commit_all(a, "waiting")

    # uncommitted edits
    (a / "MEMORY.md").write_text((a / "MEMORY.md").read_text() + "\nstray\n")
    proc = memgit("sync", cwd=a)
    assert proc.returncode == 2 and "uncommitted" in proc.stderr.decode()
    refused(proc, "MG001")
    git("checkout", "--", "MEMORY.md", cwd=a)
    # detached HEAD
    git("checkout", "-q", "--detach", cwd=a)
    proc = memgit("sync", cwd=a)
    assert proc.returncode == 2 and "detached" in proc.stderr.decode()
    refused(proc, "MG001")
    git("checkout", "-q", "main", cwd=a)
    # unreachable server
    git("remote", "add", "gone", (tmp_path / "nowhere.git").as_uri(), cwd=a)
    with pytest.raises(SyncNetworkError):
        sync(open_drive(a), remote="gone")
    from tests.servers import free_port

    git("remote", "add", "down", f"http://127.0.0.1:{free_port()}/git/drive.git", cwd=a)
    proc = memgit("sync", "--remote", "down", cwd=a)
    assert proc.returncode == 2 and "MG011" in proc.stderr.decode()
    # a remote that is not a drive
    plain = tmp_path / "plain.git"
    git("init", "-q", "--bare", str(plain), cwd=tmp_path)
    work = tmp_path / "plain-work"
    git("init", "-q", str(work), cwd=tmp_path)
    (work / "README.md").write_text("# not a drive\n")
    git("add", "-A", cwd=work)
    git("commit", "-qm", "readme", cwd=work)
    git("push", "-q", plain.as_uri(), "HEAD:refs/heads/main", cwd=work)
    git("remote", "add", "plain", plain.as_uri(), cwd=a)
    proc = memgit("sync", "--remote", "plain", cwd=a)
    assert proc.returncode == 2 and "not a drive" in proc.stderr.decode()
    refused(proc, "MG002")
    # a checkout on main when the drive's policy names another branch, which it lacks:
    # both commands name the missing branch and the fix (issue 12)
    (a / ".git" / "memgit.yaml").write_text("branch: trunk\n")
    proc = memgit("sync", cwd=a)
    assert proc.returncode == 2 and "no branch trunk (HEAD is main)" in proc.stderr.decode()
    refused(proc, "MG002")
    with pytest.raises(NotADriveError, match="no branch trunk"):
        sync_status(open_drive(a), "origin")
    # with the branch there but another one checked out, sync says which to switch to
    git("branch", "trunk", cwd=a)
    proc = memgit("sync", cwd=a)
    assert proc.returncode == 2 and "not trunk" in proc.stderr.decode()
    refused(proc, "MG001")
    assert sync_status(open_drive(a), "origin")["branch"] == "trunk"
    git("branch", "-D", "trunk", cwd=a)
    (a / ".git" / "memgit.yaml").unlink()
    # a bare repository
    with pytest.raises(UsageError):
        sync(open_drive(bare))
    assert head(a) == local_head
    assert git("status", "--porcelain", cwd=a).stdout == b""
    assert sync_status(open_drive(a), "origin")["waiting_commits"] == 1


def test_clone_refuses_non_drives_and_leaves_nothing(tmp_path: Path) -> None:
    proc = memgit("clone", (tmp_path / "missing.git").as_uri(), str(tmp_path / "x"))
    assert proc.returncode != 0 and not (tmp_path / "x").exists()
    assert "cannot clone" in refused(proc, "MG011")  # refused, not a crash
    # an unreachable URL carrying a token: the message shows it masked, the hint is a clone's
    token = "s3cretT0kenValue42"
    proc = memgit("clone", f"http://writer:{token}@127.0.0.1:9/acme/team.git?sig={token}x",
                  str(tmp_path / "z"))
    said = refused(proc, "MG011")
    assert token not in said and "writer:***@127.0.0.1:9" in said
    assert "clone again" in said and not (tmp_path / "z").exists()
    bare = server(tmp_path)
    proc = memgit("clone", bare.as_uri(), str(tmp_path / "y"))
    assert proc.returncode == 0, proc.stderr
    work = tmp_path / "y"
    assert head(work, LAST_SYNCED) == head(bare, "main")
    hook = work / ".git" / "hooks" / "pre-commit"
    assert os.access(hook, os.X_OK)
    # The hook refuses a bad staged commit.
    (work / "MEMORY.md").write_text("# Memory\n\n- bad [source: javascript:x]\n\n## Index\n")
    git("add", "MEMORY.md", cwd=work)
    bad = git("commit", "-qm", "bad", cwd=work, check=False)
    assert bad.returncode != 0 and b"MG101" in bad.stdout + bad.stderr


def test_parse_push_tells_outcomes_apart() -> None:
    ok = parse_push(0, "To x\n \trefs/heads/main:refs/heads/main\ta..b\nDone\n", "")
    race = parse_push(1, "To x\n!\tH:refs/heads/main\t[rejected] (fetch first)\nDone\n", "")
    refused = parse_push(1, "To x\n!\tH:refs/heads/main\t[remote rejected] (pre-receive "
                         "hook declined)\nDone\n", "remote: MG401 secret: line 3\nerror: x\n")
    auth = parse_push(128, "", "fatal: Authentication failed for 'http://h/x'\n")
    down = parse_push(128, "", "fatal: unable to access 'http://h/': Failed to connect\n")
    lost_lock = parse_push(1, "To x\n!\tH:refs/heads/main\t[remote rejected] (failed to "
                           "update ref)\nDone\n", "")
    raced_hook = parse_push(1, "To x\n!\tH:refs/heads/main\t[remote rejected] (pre-receive "
                            "hook declined)\nDone\n", "remote: MG604 non-fast-forward: x\n")
    piped = parse_push(-13, "", "")  # git refused locally and died sending push options
    silent = parse_push(1, "", "")
    killed = parse_push(-9, "", "")
    assert [o.status for o in (ok, race, refused, auth, down, lost_lock, raced_hook, piped,
                               silent, killed)] == [
        "ok", "race", "refused", "auth", "network", "race", "race", "race", "network",
        "network"]
    assert refused.message == "MG401 secret: line 3"
    assert silent.message == "git push exited with status 1, saying nothing"
    assert killed.message == "git push was killed by SIGKILL, saying nothing"


def test_a_push_git_refuses_itself_with_push_options_is_a_lost_race(tmp_path: Path) -> None:
    """The server's branch moved to a commit this checkout lacks: git refuses the push
    itself ("fetch first") and, sending push options after the empty command list, is
    sometimes killed by SIGPIPE (receive-pack ended first); either way a lost race."""
    bare = server(tmp_path)
    mine = clone_drive(bare.as_uri(), tmp_path / "mine")
    other = clone_drive(bare.as_uri(), tmp_path / "other")
    add(other, "landed first")
    commit_all(other, "other")
    sync(open_drive(other))
    add(mine, "pushed on the old head")
    commit_all(mine, "mine")
    statuses = set()
    for _ in range(20):
        proc = subprocess.run(["git", "push", "--porcelain", "--push-option=memgit-work=x",
                               "origin", "HEAD:refs/heads/main"], cwd=mine,
                              capture_output=True, text=True)
        statuses.add(parse_push(proc.returncode, proc.stdout, proc.stderr).status)
    assert statuses == {"race"}


# --- smart HTTP ---------------------------------------------------------------------------


def test_sync_over_smart_http(http_git_server, tmp_path: Path) -> None:
    bare = http_git_server.repo_path("drive")
    create_drive(bare, bare=True)
    url = http_git_server.url("drive")
    a = clone_drive(url, tmp_path / "a")
    b = clone_drive(url, tmp_path / "b")
    ids = [add(a, "over http from a")]
    commit_all(a, "a")
    ids.append(add(b, "over http from b"))
    commit_all(b, "b")
    sync(open_drive(a))
    sync(open_drive(b))
    sync(open_drive(a))
    assert set(head_entries(bare)) == set(ids)
    assert head_entries(a) == head_entries(b) == head_entries(bare)
    # A refusal over HTTP (HTTP 200 with the refusal inside the protocol).
    add(b, f"token {SECRET}")
    local_head = commit_all(b, "secret")
    with pytest.raises(SyncRefusedError) as info:
        sync(open_drive(b))
    assert "MG401" in info.value.server_message
    assert head(b) == local_head and set(head_entries(bare)) == set(ids)
    # Wrong credentials: an authentication failure, not a refusal.
    bad = url.replace(http_git_server.passwords["writer"], "wrong")
    git("remote", "add", "badauth", bad, cwd=a)
    add(a, "never pushed")
    commit_all(a, "x")
    with pytest.raises(SyncAuthError):
        sync(open_drive(a), remote="badauth")


# --- a purge on the server ----------------------------------------------------------------


def objects_containing(git_dir: Path, needle: bytes) -> list[str]:
    """Every object of the repository (loose and packed, reachable or not) holding ``needle``."""
    proc = git(f"--git-dir={git_dir}", "cat-file", "--batch-all-objects", "--batch",
               cwd=git_dir)
    out, data, pos = [], proc.stdout, 0
    while pos < len(data):
        end = data.index(b"\n", pos)
        oid, _kind, size = data[pos:end].split()
        body = data[end + 1:end + 1 + int(size)]
        if needle in body:
            out.append(oid.decode())
        pos = end + 1 + int(size) + 1
    return out


def test_purge_on_the_server_reaches_every_client(tmp_path: Path) -> None:
    from memgit.purge.rewrite import purge

    private = b"home address is 12 Elm Street"
    bare = server(tmp_path)
    a = clone_drive(bare.as_uri(), tmp_path / "a")
    purged = add(a, "Joe's home address is 12 Elm Street")
    kept = add(a, "Joe likes sailing", "hobbies.md")
    commit_all(a, "two entries")
    sync(open_drive(a))
    b = clone_drive(bare.as_uri(), tmp_path / "b")
    # b works offline: a new entry, and an edit of the entry about to be purged.
    mine = add(b, "Joe plays chess", "hobbies.md")
    set_text(b, purged, "Joe's home address is 12 Elm Street, flat 3")
    commit_all(b, "b offline work")
    assert objects_containing(open_drive(b).git_dir, private)
    assert objects_containing(bare, private)  # the server and both clients held it
    assert objects_containing(open_drive(a).git_dir, private)

    purge(open_drive(bare), [purged])
    assert not objects_containing(bare, private)

    report = sync(open_drive(b))
    assert report.rewritten and purged in report.dropped
    assert set(head_entries(bare)) == {kept, mine}
    assert head_entries(b) == head_entries(bare)
    assert_clean_drive(b)
    assert not objects_containing(open_drive(b).git_dir, private)
    assert git("fsck", "--no-dangling", cwd=b).returncode == 0

    # a made no new work: it takes the rewritten history and prunes too.
    report_a = sync(open_drive(a))
    assert report_a.rewritten and report_a.pushed == []
    assert head_entries(a) == head_entries(bare)
    assert not objects_containing(open_drive(a).git_dir, private)

    # The purged entry cannot come back: the server refuses it, sync drops it.
    line = fmt.format_entry("Joe's home address is 12 Elm Street", SOURCE, "2026-01-02", purged)
    memory = (a / "MEMORY.md").read_text().replace(fmt.INDEX_HEADING,
                                                   line + "\n\n" + fmt.INDEX_HEADING)
    (a / "MEMORY.md").write_text(memory)
    commit_all(a, "put it back")
    again = sync(open_drive(a))
    assert purged in again.dropped
    assert purged not in head_entries(bare)
    assert not objects_containing(bare, private)
    assert not objects_containing(open_drive(a).git_dir, private)


# --- three agents, random interleavings ---------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

steps = st.lists(st.tuples(st.integers(0, 2),
                           st.sampled_from(["add", "add", "edit", "delete", "sync"]),
                           st.integers(0, 50), st.sampled_from([fmt.MEMORY_FILE, "work.md"])),
                 min_size=3, max_size=14)


@pytest.mark.slow
@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps)
def test_three_agents_converge(tmp_path_factory: pytest.TempPathFactory, plan) -> None:
    tmp = tmp_path_factory.mktemp("three")
    bare = server(tmp)
    three_agents(tmp, bare, bare.as_uri(), plan)


@pytest.mark.slow
@settings(max_examples=5, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps)
def test_three_agents_converge_over_http(http_git_server, tmp_path_factory: pytest.TempPathFactory,
                                         plan) -> None:
    tmp = tmp_path_factory.mktemp("three-http")
    name = tmp.name  # a new repository on the one server for each example
    bare = http_git_server.repo_path(name)
    create_drive(bare, bare=True)
    three_agents(tmp, bare, http_git_server.url(name), plan)


def three_agents(tmp: Path, bare: Path, url: str, plan) -> None:
    """Run ``plan`` (agent, action, pick, path) on three clones, then sync each twice."""
    agents = [clone_drive(url, tmp / f"agent{n}") for n in range(3)]
    added: set[str] = set()
    deleted: set[str] = set()
    server_heads: list[str] = []
    for n, (who, action, pick, path) in enumerate(plan):
        work = agents[who]
        if action == "sync":
            sync(open_drive(work))
            server_heads.append(head(bare, "main"))
            continue
        mine = sorted(head_entries(work))
        if action == "add" or not mine:
            added.add(add(work, f"fact {n} from agent {who}", path))
        elif action == "edit":
            set_text(work, mine[pick % len(mine)], f"fact edited at step {n}")
        else:
            target = mine[pick % len(mine)]
            deleted.add(target)
            set_text(work, target, None)
        commit_all(work, f"step {n}")
    for _round in range(2):
        for work in agents:
            sync(open_drive(work))
            server_heads.append(head(bare, "main"))
    final = head_entries(bare)
    for work in agents:
        assert head_entries(work) == final
        assert_clean_drive(work)
    assert added - deleted <= set(final)  # nothing lost
    tree = tree_texts(open_drive(bare), str(open_drive(bare).head_commit().tree_id))  # type: ignore[union-attr]
    ids = [e.id for p, t in tree.items() for _ln, e in fmt.parse_document(p, t).entries()]
    assert len(ids) == len(set(ids))  # nothing duplicated
    final_head = head(bare, "main")
    for earlier in server_heads:  # the server only ever moved forward
        assert git("merge-base", "--is-ancestor", earlier, final_head, cwd=bare,
                   check=False).returncode == 0


def test_batched_sync_keeps_one_server_commit_per_local_commit(tmp_path: Path) -> None:
    bare = server(tmp_path)
    a = clone_drive(bare.as_uri(), tmp_path / "a")
    b = clone_drive(bare.as_uri(), tmp_path / "b")
    add(a, "a moves the server")
    commit_all(a, "a")
    sync(open_drive(a))
    ids = []
    for n in range(5):
        ids.append(add(b, f"b fact {n}", "b.md"))
        commit_all(b, f"b {n}")
    proc = memgit("sync", "--batch", "3", "--json", cwd=b)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert len(report["pushed"]) == 5
    subjects = git("log", "--format=%s", "main", cwd=bare).stdout.decode().splitlines()
    assert subjects[:6] == ["b 4", "b 3", "b 2", "b 1", "b 0", "a"]
    assert set(ids) <= set(head_entries(bare)) and head_entries(b) == head_entries(bare)


def test_refused_batch_falls_back_to_one_commit_at_a_time(tmp_path: Path) -> None:
    bare = server(tmp_path)
    a = clone_drive(bare.as_uri(), tmp_path / "a")
    good = [add(a, "good one")]
    commit_all(a, "good 1")
    good.append(add(a, "good two"))
    commit_all(a, "good 2")
    add(a, f"token {SECRET}")
    bad = commit_all(a, "bad")
    with pytest.raises(SyncRefusedError) as info:
        sync(open_drive(a), batch=10)
    assert info.value.commit == bad and "MG401" in info.value.server_message
    assert set(head_entries(bare)) == set(good)
    assert head(a) == bad


def test_sync_killed_during_pushes_resumes_without_duplicates(tmp_path: Path) -> None:
    """A real ``memgit sync`` process is SIGKILLed right after its first push lands."""
    import signal
    import sys
    import time

    bare = server(tmp_path)
    a = clone_drive(bare.as_uri(), tmp_path / "a")
    b = clone_drive(bare.as_uri(), tmp_path / "b")
    add(a, "from a")
    commit_all(a, "a")
    sync(open_drive(a))
    moved = head(bare, "main")
    ids = []
    for n in range(4):
        ids.append(add(b, f"b fact {n}"))
        commit_all(b, f"b {n}")
    # The server's receive-pack runs in a session of its own, as on a real server: over a
    # local path git starts it as a child of `git push`, and killing the agent's process
    # group would kill it too, mid-update, leaving a stale refs/heads/main.lock that makes
    # every later push fail with "cannot lock ref" (the server's problem, not sync's).
    git("config", "remote.origin.receivepack", "setsid -w git receive-pack", cwd=b)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    proc = subprocess.Popen([sys.executable, "-m", "memgit", "sync"], cwd=b, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    while head(bare, "main") == moved and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    # the whole process group, as when an agent is killed: a `git push` child left running
    # would race the next sync's fetch for refs/remotes/origin/main
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    landed = len(head_entries(bare)) - 1
    assert 1 <= landed <= 4
    sync(open_drive(b))
    final = head_entries(bare)
    assert set(ids) <= set(final) and len(final) == 5
    tree = tree_texts(open_drive(bare), str(open_drive(bare).head_commit().tree_id))  # type: ignore[union-attr]
    assert sum(text.count("b fact") for text in tree.values()) == 4
    assert head_entries(b) == final
    assert_clean_drive(b)


def test_a_stale_branch_lock_on_the_server_is_named_with_its_fix(tmp_path: Path) -> None:
    """A receive-pack killed on the server can leave refs/heads/main.lock behind; every
    push then fails to lock the branch. sync stops after its retries and says what to
    check instead of only "run memgit sync again" (a lock older than any push holds one
    is called stale, memgit.sync.retry); the local commit is kept."""
    bare = server(tmp_path)
    b = clone_drive(bare.as_uri(), tmp_path / "b")
    entry = add(b, "kept while the server is stuck")
    commit_all(b, "b")
    lock = bare / "refs" / "heads" / "main.lock"
    lock.write_text("")
    os.utime(lock, (time.time() - 3600, time.time() - 3600))  # left an hour ago
    stuck = memgit("sync", cwd=b)
    err = stuck.stderr.decode()
    assert stuck.returncode == 3 and "MG006" in err, err
    assert "locked by a stale lock file" in err and f"{lock} is 36" in err  # 3600 s and more
    assert "remove the file" in err
    assert entry in head_entries(b) and entry not in head_entries(bare)
    (bare / "refs" / "heads" / "main.lock").unlink()  # the admin's fix
    assert memgit("sync", cwd=b).returncode == 0
    assert entry in head_entries(bare)


@pytest.mark.parametrize("ref", [LAST_SYNCED, SYNC_SOURCE, "refs/remotes/origin/main"])
def test_a_ref_lock_a_killed_sync_left_is_repaired_by_the_next_sync(tmp_path: Path,
                                                                    ref: str) -> None:
    """A sync killed while libgit2 wrote one of its refs leaves REF.lock (the fault
    injection of tests/write/test_crash_faults.py hit refs/memgit/last-synced.lock): every
    later sync failed to lock it (MG000). A ref lock older than any write holds one is a
    killed process's: the next sync removes it and goes on."""
    bare = server(tmp_path)
    b = clone_drive(bare.as_uri(), tmp_path / "b")
    assert memgit("sync", cwd=b).returncode == 0
    entry = add(b, "written before the next sync")
    commit_all(b, "b")
    lock = b / ".git" / (ref + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    os.utime(lock, (time.time() - 60, time.time() - 60))  # left a minute ago
    proc = memgit("sync", cwd=b)
    assert proc.returncode == 0, proc.stderr
    assert not lock.exists()
    assert entry in head_entries(bare)


def test_demo_sync_two_offline_agents_end_with_all_entries(tmp_path: Path, capsys) -> None:
    from memgit.demo.sync import demo_sync

    assert demo_sync(tmp_path / "demo") is True
    out = capsys.readouterr().out
    assert "edit-edit" in out and "each hold 4 entries" in out
    a, b = tmp_path / "demo" / "agent-a", tmp_path / "demo" / "agent-b"
    assert head_entries(a) == head_entries(b) == head_entries(tmp_path / "demo" / "server.git")
    assert_clean_drive(a)


def test_offline_drive_publishes_to_an_empty_server(tmp_path: Path) -> None:
    empty = tmp_path / "empty.git"
    git("init", "-q", "--bare", str(empty), cwd=tmp_path)
    local = tmp_path / "offline"
    create_drive(local, bare=False)
    mine = add(local, "written before any server existed")
    local_head = commit_all(local, "offline work")
    git("remote", "add", "origin", empty.as_uri(), cwd=local)
    report = sync(open_drive(local))
    assert head(empty, "main") == local_head  # pushed as they are, history kept
    assert len(report.pushed) == 2 and set(head_entries(empty)) == {mine}
    assert sync_status(open_drive(local), "origin")["waiting_commits"] == 0
