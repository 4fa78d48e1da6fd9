"""memgit set/get/unset/keys through the real command line on real drives: the values, the
refusals (exit status, code, no echo), paging, and that working memory stays out of the
facts' way (recall, the context packet, the Index, the dream's input, main's log)."""

from __future__ import annotations

import json

import pytest

from memgit.git.repository import open_drive
from memgit.policy.settings import drive_policy
from memgit.policy.working import WORKING_REF, Scope
from memgit.working.store import list_keys, write_values
from tests.conftest import git, memgit, memgit_ok

FAKE_KEY = "AKIAZ3MBQX7TQW4RWNB2"  # synthetic, of the real shape


def out(proc) -> str:  # type: ignore[no-untyped-def]
    return proc.stdout.decode()


def refused_with(proc, code: str, status: int = 1) -> str:  # type: ignore[no-untyped-def]
    err = proc.stderr.decode()
    assert proc.returncode == status, (proc.returncode, err)
    assert f"memgit: error {code}: " in err and "hint: " in err, err
    return err


@pytest.mark.slow
def test_set_get_unset_keys(new_drive) -> None:
    drive = new_drive()
    memgit_ok("set", "goal", "ship the payments launch", cwd=drive)
    memgit_ok("set", "plan", '{"step": 2, "steps": ["draft", "review", "ship"]}', "--json",
              cwd=drive)
    memgit_ok("set", "note", "-", cwd=drive, input=b"line one\nline two\n")
    memgit_ok("set", "ünïcode/ключ", "42", "--json", cwd=drive)
    assert out(memgit_ok("get", "goal", cwd=drive)) == "ship the payments launch\n"
    assert out(memgit_ok("get", "note", cwd=drive)) == "line one\nline two\n"
    memgit_ok("set", "escape", "red \x1b[31m text", cwd=drive)
    assert "\x1b" not in out(memgit_ok("get", "escape", cwd=drive))
    assert json.loads(out(memgit_ok("get", "note", "--json", cwd=drive)))["value"] == \
        "line one\nline two"
    got = json.loads(out(memgit_ok("get", "plan", "--json", cwd=drive)))
    assert got["value"] == {"step": 2, "steps": ["draft", "review", "ship"]}
    assert got["id"].startswith("w-") and got["agent"] == "default" and got["team"] is None
    assert out(memgit_ok("get", "plan", cwd=drive)) == \
        '{"step":2,"steps":["draft","review","ship"]}\n'
    assert out(memgit_ok("keys", cwd=drive)).splitlines() == ["escape", "goal", "note",
                                                              "plan", "ünïcode/ключ"]
    # a second set of the same key keeps its id (one purge removes every value it had)
    memgit_ok("set", "plan", '{"step": 3}', "--json", cwd=drive)
    again = json.loads(out(memgit_ok("get", "plan", "--json", cwd=drive)))
    assert again["value"] == {"step": 3} and again["id"] == got["id"]
    memgit_ok("set", "nothing", "null", "--json", cwd=drive)  # JSON's null is a value
    assert json.loads(out(memgit_ok("get", "nothing", "--json", cwd=drive)))["value"] is None
    memgit_ok("unset", "nothing", cwd=drive)
    memgit_ok("unset", "goal", cwd=drive)
    refused_with(memgit("get", "goal", cwd=drive), "MG016")
    refused_with(memgit("unset", "goal", cwd=drive), "MG016")
    listed = json.loads(out(memgit_ok("keys", "--json", cwd=drive)))
    assert [k["key"] for k in listed["keys"]] == ["escape", "note", "plan", "ünïcode/ключ"]
    assert listed["next"] is None
    # scopes: another agent, a team, the environment
    memgit_ok("set", "goal", "review PRs", "--agent", "reviewer", cwd=drive)
    memgit_ok("set", "goal", "team goal", "--agent", "reviewer", "--team", "core", cwd=drive)
    assert out(memgit_ok("get", "goal", "--agent", "reviewer", cwd=drive)) == "review PRs\n"
    assert out(memgit_ok("get", "goal", "--agent", "reviewer", "--team", "core",
                         cwd=drive)) == "team goal\n"
    assert out(memgit_ok("keys", "--agent", "nobody", cwd=drive)) == ""
    # the ref's log names what changed, one commit per write
    log = git("log", "--format=%s", WORKING_REF, cwd=drive).stdout.decode().splitlines()
    assert len(log) == 11 and log[0] == "Set 1 key of agent reviewer of team core"
    assert git("status", "--porcelain", cwd=drive).stdout == b""


@pytest.mark.slow
def test_bad_keys_and_values_are_refused_and_nothing_is_stored(new_drive) -> None:
    drive = new_drive()
    memgit_ok("set", "kept", "1", "--json", cwd=drive)
    before = git("rev-parse", WORKING_REF, cwd=drive).stdout
    cases = [
        (("set", "deploy", json.dumps({"aws": FAKE_KEY}), "--json"), "MG401"),
        (("set", "deploy", f"the key is {FAKE_KEY}"), "MG401"),
        (("set", f"key-{FAKE_KEY}", "x"), "MG401"),
        (("set", "k" * 257, "x"), "MG701"),
        (("set", "a\nb", "x"), "MG701"),
        (("set", "", "x"), "MG701"),
        (("set", "j", "{not json", "--json"), "MG702"),
        (("set", "j", "NaN", "--json"), "MG702"),
        (("set", "big", "x" * (64 * 1024)), "MG703"),
        (("set", "k", "x", "--agent", "../etc"), "MG704"),
        (("set", "k", "x", "--team", "a/b"), "MG704"),
    ]
    for args, code in cases:
        err = refused_with(memgit(*args, cwd=drive), code)
        assert FAKE_KEY not in err, err  # never echoed
    assert git("rev-parse", WORKING_REF, cwd=drive).stdout == before
    # the limits are inclusive: 256 characters, 64 KiB of JSON (the quotes count)
    memgit_ok("set", "k" * 256, "x" * (64 * 1024 - 2), cwd=drive)
    assert memgit("keys", "--limit", "0", cwd=drive).returncode == 2
    # a code repository is not a drive: nothing lands in it
    code = drive.parent / "code"
    git("init", "-q", "-b", "main", code)
    git("commit", "-q", "--allow-empty", "-m", "code", cwd=code)
    refused_with(memgit("set", "k", "v", cwd=code), "MG002", status=2)
    assert git("for-each-ref", cwd=code).stdout.count(b"\n") == 1
    assert memgit("keys", "--limit", "1001", cwd=drive).returncode == 2


@pytest.mark.slow
def test_paging_walks_2500_keys_in_pages_of_1000(new_drive) -> None:
    drive_path = new_drive()
    drive = open_drive(drive_path)
    keys = [f"item/{i:05d}" for i in range(2500)] + ["é-last", "a-first", "Z-upper"]
    write_values(drive, Scope("default"), {k: {"n": i} for i, k in enumerate(keys)},
                 drive_policy(drive))
    seen: list[str] = []
    after: str | None = None
    pages = 0
    while True:
        args = ["keys", "--limit", "1000", "--json"] + (["--after", after] if after else [])
        page = json.loads(out(memgit_ok(*args, cwd=drive_path)))
        pages += 1
        seen += [k["key"] for k in page["keys"]]
        if page["next"] is None:
            break
        assert page["next"] == page["keys"][-1]["key"] and len(page["keys"]) == 1000
        after = page["next"]
    assert pages == 3
    assert seen == sorted(keys, key=lambda k: k.encode()) and len(set(seen)) == len(keys)
    prefixed = json.loads(out(memgit_ok("keys", "--prefix", "item/0249", "--json",
                                        cwd=drive_path)))
    assert [k["key"] for k in prefixed["keys"]] == [f"item/0249{d}" for d in range(10)]
    # prefix and cursor together, a cursor between keys, the default page of 100
    both, cursor = list_keys(drive, Scope("default"), prefix="item/0249", after="item/02494",
                             limit=3)
    assert [k for k, _ in both] == ["item/02495", "item/02496", "item/02497"]
    assert cursor == "item/02497"
    between, _ = list_keys(drive, Scope("default"), after="item/00009x", limit=1)
    assert between[0][0] == "item/00010"
    default = json.loads(out(memgit_ok("keys", "--json", cwd=drive_path)))
    assert len(default["keys"]) == 100 and default["next"] == default["keys"][-1]["key"]


@pytest.mark.slow
def test_working_memory_stays_out_of_the_facts_way(new_drive) -> None:
    from memgit.dream.snapshot import take

    drive_path = new_drive({"people.md": "# People\n"})
    log_before = git("log", "--format=%H", "main", cwd=drive_path).stdout.decode().split()
    memgit_ok("remember", "Joe leads the product team", "--topic", "people", cwd=drive_path)
    memgit_ok("set", "plan", "zebracrossing quokka plan", cwd=drive_path)
    memgit_ok("set", "people.md", "zebracrossing quokka", cwd=drive_path)
    for word in ("zebracrossing", "quokka"):
        missed = memgit("recall", word, "--json", cwd=drive_path)
        assert missed.returncode == 1 and json.loads(missed.stdout) == []  # nothing matched
    found = json.loads(out(memgit_ok("recall", "Joe", "--json", cwd=drive_path)))
    assert [h["text"] for h in found] == ["Joe leads the product team"]
    packet = json.loads(out(memgit_ok("context", "--json", "--query", "quokka",
                                      cwd=drive_path)))
    assert all("quokka" not in e["text"] for e in packet["entries"])
    assert any("Joe" in e["text"] for e in packet["entries"])
    memory = (drive_path / "MEMORY.md").read_text()
    assert "quokka" not in memory and "plan" not in memory and "[[people]]" in memory
    log = git("log", "--format=%H", "main", cwd=drive_path).stdout.decode().split()
    assert len(log) == len(log_before) + 1  # the remember; the sets are on their own ref
    drive = open_drive(drive_path)
    snap = take(drive, drive_policy(drive))
    assert [e.text for e in snap.entries] == ["Joe leads the product team"]
    assert git("status", "--porcelain", cwd=drive_path).stdout == b""


@pytest.mark.slow
def test_buckets_split_and_empty_as_keys_come_and_go(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """One key per write, in an order that fills the first bucket from below: every bucket
    stays at most BUCKET_MAX, keys list in order, and the server's pre-receive accepts the
    layout after the splits and after unsets emptied buckets."""
    from memgit.drives.create import clone_drive, create_drive
    from memgit.working.layout import BUCKET_MAX
    from memgit.working.store import UNSET, get_value
    from memgit.working.sync import sync_working

    server = tmp_path / "server.git"
    create_drive(server, bare=True)
    drive = open_drive(clone_drive(server.as_uri(), tmp_path / "a"))
    policy = drive_policy(drive)
    scope = Scope("default")
    keys = [f"k{i:04d}" for i in range(600)]
    for key in reversed(keys):  # descending: each new key is below every bucket's name
        write_values(drive, scope, {key: key}, policy)
    tree = git("ls-tree", "-r", "--name-only", WORKING_REF, cwd=drive.root).stdout.decode()
    buckets: dict[str, int] = {}
    for path in tree.split():
        buckets[path.split("/")[2]] = buckets.get(path.split("/")[2], 0) + 1
    assert len(buckets) > 2 and max(buckets.values()) <= BUCKET_MAX
    assert [k for k, _ in list_keys(drive, scope, limit=1000)[0]] == keys
    assert get_value(drive, scope, "k0300", policy).value == "k0300"
    assert sync_working(drive, "origin").pushed
    write_values(drive, scope, {k: UNSET for k in keys[:590]}, policy)
    assert [k for k, _ in list_keys(drive, scope, limit=1000)[0]] == keys[590:]
    write_values(drive, scope, {"a": 1, "zz": 2}, policy)
    assert [k for k, _ in list_keys(drive, scope, after="k0595", limit=3)[0]] == \
        ["k0596", "k0597", "k0598"]
    assert sync_working(drive, "origin").pushed
    listed = git("ls-tree", "-r", "--name-only", WORKING_REF, cwd=server).stdout.decode()
    assert len(listed.split()) == 12
