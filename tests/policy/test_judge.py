"""Every one-tree rule of the drive policy: a failing and a passing case each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memgit.errors import PolicyFileError, RegistryError
from memgit.format import entries as fmt
from memgit.git.modes import MODE_COMMIT, MODE_EXEC, MODE_FILE, MODE_LINK
from memgit.policy.judge import (
    ERROR,
    TreeItem,
    Violation,
    check_change,
    check_update,
    judge,
    source_allowed,
    text_digest,
)
from memgit.policy.registry import PurgeRegistry
from memgit.policy.settings import Policy, find_policy, load_policy_file, policy_from_mapping

GOOD = "- A plain fact [source: https://example.com/sessions/1; added: 2026-09-03; id: m-1]\n"

File = bytes | tuple[bytes, int]


def drive(files: dict[str, File], *, index: bool = True) -> dict[str, File]:
    """A drive holding ``files`` plus a MEMORY.md whose Index is current."""
    out = dict(files)
    if "MEMORY.md" not in out:
        memory = "# Memory\n\n## Index\n"
        if index:
            memory = fmt.regenerate_index_section(memory, list(out) + ["MEMORY.md"])
        out["MEMORY.md"] = memory.encode()
    return out


def run(files: dict[str, File], policy: Policy | None = None, *, strict: bool = False,
        registry: PurgeRegistry | None = None) -> list[Violation]:
    items = []
    data: dict[str, bytes] = {}
    for path, value in files.items():
        content, mode = (value, MODE_FILE) if isinstance(value, bytes) else value
        data[path] = content
        items.append(TreeItem(path, mode, len(content)))
    return judge(items, data.__getitem__, policy or Policy(), strict=strict, registry=registry)


def codes(violations: list[Violation], errors: bool = True) -> set[str]:
    return {v.code for v in violations if v.severity == ERROR or not errors}


# (rule, failing drive, passing drive)
CASES: list[tuple[str, dict[str, File], dict[str, File]]] = [
    ("MG101", {"a.md": b"- x [source: javascript:alert(1)]\n"},
     {"a.md": b"- x [source: https://example.com/s/1]\n"}),
    ("MG101", {"a.md": b"- x [source: http://example.com/s/1]\n"},
     {"a.md": b"- x [source: claude-code:session/42]\n"}),
    ("MG101", {"a.md": b"- x [source: file:///etc/passwd]\n"},
     {"a.md": b"- x [source: /?session=abc]\n"}),
    ("MG101", {"a.md": b"- x [source: data:text/html,hi]\n"},
     {"a.md": b"- x [source: imported:unknown]\n"}),
    ("MG102", {"a.md": b"- x [added: 2026-02-30]\n"}, {"a.md": b"- x [added: 2024-02-29]\n"}),
    ("MG103", {"a.md": b"- x [id: m-1]\n", "b.md": b"- y [id: m-1]\n"},
     {"a.md": b"- x [id: m-1]\n", "b.md": b"- y [id: m-2]\n"}),
    ("MG103", {"a.md": b"- same [id: m-1]\n- same [id: m-1]\n"},
     {"a.md": b"- same\n- same\n"}),  # id-less repeats are MG108, a warning
    ("MG104", {"a.md": b"- x [Source: https://example.com]\n"},
     {"a.md": b"- x [source: https://example.com]\n"}),
    ("MG105", {"a.md": b"- x [id: m-1]\n  continued here\n"},
     {"a.md": b"- x [id: m-1]\n  - a nested entry\n"}),
    ("MG106", {"a.md": b"- x [id: bad id!]\n"}, {"a.md": b"- x [id: custom:id-1]\n"}),
    ("MG107", {"a.md": b"- x [status: maybe]\n"}, {"a.md": b"- x [status: proposed]\n"}),
    ("MG107", {"a.md": b"- x [kind: note]\n"}, {"a.md": b"- x [kind: question]\n"}),
    ("MG201", {"q.sql": b"select 1;\n"}, {"q.md": b"- select 1\n"}),
    ("MG202", {"a.md": (b"target.md", MODE_LINK)}, {"a.md": GOOD.encode()}),
    ("MG203", {"sub": (b"", MODE_COMMIT)}, {"sub.md": GOOD.encode()}),
    ("MG204", {"a.md": (GOOD.encode(), MODE_EXEC)}, {"a.md": (GOOD.encode(), MODE_FILE)}),
    ("MG205", {"big.md": b"- x\n" * 20000}, {"big.md": b"- x\n" * 100}),
    ("MG206", {f"f{i}.md": b"#" * 60000 + b"\n" for i in range(40)},
     {f"f{i}.md": b"#" * 60000 + b"\n" for i in range(20)}),
    ("MG207", {f"f{i:03}.md": b"# t\n" for i in range(256)},
     {f"f{i:03}.md": b"# t\n" for i in range(255)}),
    ("MG208", {"a/../b.md": b"# x\n"}, {"a/b.md": b"# x\n"}),
    ("MG208", {".git/config.md": b"# x\n"}, {"git/config.md": b"# x\n"}),
    ("MG208", {"a\x01b.md": b"# x\n"}, {"ab.md": b"# x\n"}),
    ("MG209", {"cafe\u0301.md": b"# x\n"}, {"caf\u00e9.md": b"# x\n"}),
    ("MG210", {"Notes.md": b"# x\n", "notes.md": b"# y\n"}, {"Notes.md": b"# x\n"}),
    ("MG211", {("d" * 120 + "/") * 2 + "x" * 20 + ".md": b"# x\n"},
     {("d" * 100 + "/") * 2 + "x" * 20 + ".md": b"# x\n"}),
    ("MG212", {"a.md": b"# x\n", "A.md/b.md": b"# y\n"}, {"a.md": b"# x\n", "b/a.md": b"# y\n"}),
    ("MG301", {"a.md": b"- caf\xe9\n"}, {"a.md": "- café\n".encode()}),
    ("MG302", {"a.md": b"- x\x00y\n"}, {"a.md": b"- xy\n"}),
    ("MG303", {"a.md": b"- see <div>hi</div>\n"}, {"a.md": b"- see `<div>` and a < b > c\n"}),
    ("MG303", {"a.md": b"<!-- hidden -->\n"}, {"a.md": b"- arrows -> and <- are fine\n"}),
    ("MG304", {"a.md": b"- ![chart](https://x.example/c.png)\n"},
     {"a.md": b"- [chart](https://x.example/c.png)\n"}),
    ("MG305", {"a.md": b"User: can you check the deploy?\nAssistant: It finished at 10:02.\n"},
     {"a.md": b"- User: prefers dark mode\n"}),
    ("MG305", {"a.md": b"User: hi\nAssistant: hello\nUser: deploy\nAssistant: done\n"},
     {"a.md": b"# Accounts\n\n- User: alice\n- Model: v5\n"}),
    ("MG305", {"a.md": b"2026-09-03 10:00:01 INFO started\n"},
     {"a.md": b"- 2026-09-03 meeting with Joe\n"}),
    ("MG305", {"session.log.md": b"# x\n"}, {"session.md": b"# x\n"}),
    ("MG305", {"transcript-1.md": b"# x\n"}, {"trans.md": b"# x\n"}),
    ("MG305", {"calls/meeting_transcripts.md": b"# x\n"},
     {"reference/gotchas/audio-transcription.md": b"# x\n"}),
    ("MG305", {"app.log.1": b"x\n"}, {"catalog.md": b"# x\n"}),
    ("MG306", {"a.md": b"<<<<<<< HEAD\n- a\n=======\n- b\n>>>>>>> other\n"},
     {"a.md": b"Title\n=======\n\n- a\n"}),
    ("MG401", {"a.md": b"- db is postgres://app:Sup3rS3cretPw@db.internal/app\n"},
     {"a.md": b"- db is postgres://db.internal/app\n"}),
    ("MG401", {"a.md": b"- key AKIAZ7Q3XKD5JH2LMN4P for deploys\n"},
     {"a.md": b"- commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed it\n"}),
]


@pytest.mark.parametrize("code,failing,passing", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule_fails_and_passes(code: str, failing: dict[str, File],
                               passing: dict[str, File]) -> None:
    bad = run(drive(failing))
    assert code in codes(bad), [v.format() for v in bad]
    good = run(drive(passing))
    assert code not in codes(good), [v.format() for v in good]


def test_structure_rules() -> None:
    no_memory = run({"a.md": GOOD.encode()})
    assert "MG501" in codes(no_memory)
    stale = run(drive({"a.md": GOOD.encode()}, index=False))
    assert [v.code for v in stale] == ["MG502"]
    assert stale[0].path == "MEMORY.md" and stale[0].line == 3
    assert run(drive({"a.md": GOOD.encode()})) == []


def test_links_are_warnings_unless_strict() -> None:
    files = drive({"a.md": b"- see [[missing]] and [[a.md]]\n"})
    lax = run(files)
    assert codes(lax) == set()
    assert codes(lax, errors=False) == {"MG503", "MG504"}
    assert codes(run(files, strict=True)) == {"MG503", "MG504"}
    ok = run(drive({"a.md": b"- see [[b]] and [[q.sql]]\n", "b.md": b"# b\n", "q.sql": b"x"}),
             Policy(extensions=()))
    assert "MG503" not in codes(ok, errors=False)


def test_memory_size_warning_and_near_limit() -> None:
    big_memory = "# Memory\n\n" + "- fact number\n" * 400 + "## Index\n"
    out = run({"MEMORY.md": big_memory.encode()})
    # 400 copies of one id-less line: repeated lines (a warning), not clashing ids
    assert (codes(out), codes(out, errors=False)) == (set(), {"MG108", "MG505"})
    out = run({"MEMORY.md": ("# Memory\n\n" + "".join(f"- fact {i}\n" for i in range(400))
                             + "## Index\n").encode()})
    assert [v.code for v in out] == ["MG505"] and out[0].severity != ERROR
    near = run(drive({f"f{i:03}.md": b"# t\n" for i in range(210)}))
    assert codes(near) == set() and "MG290" in codes(near, errors=False)


def test_violation_fields() -> None:
    [v] = run(drive({"notes.md": b"# N\n\n- x [source: javascript:alert(1)]\n"}))
    assert (v.code, v.name, v.path, v.line) == ("MG101", "source-scheme", "notes.md", 3)
    assert v.hint and "javascript" in v.message
    d = v.as_dict()
    assert set(d) == {"code", "name", "path", "line", "message", "hint", "severity", "commit"}
    assert v.format() == f"notes.md:3: MG101 source-scheme: {v.message}"


def test_secret_is_never_echoed() -> None:
    secret = "Sup3rS3cretPw"
    out = run(drive({"a.md": f"- db postgres://app:{secret}@db.internal/app\n".encode()}))
    assert [v.code for v in out] == ["MG401"]
    assert secret not in out[0].format() and secret not in str(out[0].as_dict())


def test_fenced_code_is_not_judged_as_entries_or_html() -> None:
    text = b"# T\n\n```\n<div>x</div>\n- y [source: javascript:x]\n```\n"
    assert run(drive({"a.md": text})) == []


def test_amr_profile_relaxes_drive_rules() -> None:
    amr = policy_from_mapping({"profile": "amr"})
    files = {"MEMORY.md": b"# Memory\n\n## Index\n- [[a]]\n", "a.md": b"- <b>x</b>\n",
             "q.sql": b"select 1;\n", "run.sh": (b"echo hi\n", MODE_EXEC), "b.md": b"# b\n"}
    assert codes(run(files, amr)) == set()
    assert codes(run(files)) == {"MG201", "MG204", "MG303", "MG502"}
    # what amr keeps: the entry rules, secrets, symlinks
    assert "MG101" in codes(run(drive({"a.md": b"- x [source: javascript:1]\n"}), amr))
    assert "MG202" in codes(run(drive({"l.md": (b"x", MODE_LINK)}), amr))


def test_check_update_rules() -> None:
    p = Policy()
    zero = "0" * 40
    a, b = "a" * 40, "b" * 40
    assert check_update("refs/heads/main", a, b, p, fast_forward=True, new_commits=1) == []
    assert [v.code for v in check_update("refs/heads/other", a, b, p, fast_forward=True,
                                         new_commits=1)] == ["MG602"]
    assert [v.code for v in check_update("refs/tags/v1", zero, b, p, fast_forward=True,
                                         new_commits=0)] == ["MG602"]
    assert [v.code for v in check_update("refs/heads/main", a, zero, p, fast_forward=False,
                                         new_commits=0)] == ["MG603"]
    assert [v.code for v in check_update("refs/heads/main", a, b, p, fast_forward=False,
                                         new_commits=1)] == ["MG604"]
    assert [v.code for v in check_update("refs/heads/main", a, b, p, fast_forward=True,
                                         new_commits=201)] == ["MG605"]
    assert check_update("refs/heads/main", a, b, p, fast_forward=True, new_commits=200) == []
    assert [v.code for v in check_update("refs/heads/main", a, b, p, fast_forward=True,
                                         new_commits=0, target_kind="tag")] == ["MG602"]


def test_check_change_protects_twin() -> None:
    assert [v.code for v in check_change(["twin/a.md", "b.md"], Policy())] == ["MG601"]
    assert check_change(["b.md", "twins.md"], Policy()) == []


def test_purged_ids_and_texts(tmp_path: Path) -> None:
    PurgeRegistry.append(tmp_path, [("m-gone", text_digest("Joe's  SECRET plan"))],
                         "2026-11-29")
    reg = PurgeRegistry.load(tmp_path)
    out = run(drive({"a.md": b"- other [id: m-gone]\n- joe's secret   plan [id: m-new]\n"}),
              registry=reg)
    assert sorted(v.code for v in out) == ["MG606", "MG607"]
    assert run(drive({"a.md": b"- fine [id: m-ok]\n"}), registry=reg) == []


def test_corrupt_registry_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "memgit-purged").write_text("not a registry line\n")
    with pytest.raises(RegistryError, match="malformed"):
        PurgeRegistry.load(tmp_path)


@pytest.mark.parametrize("source,ok", [
    ("https://example.com/sessions/100", True), ("https://x", True),
    ("https://", False), ("https:///path", False), ("/?session=abc-1", True),
    ("claude-code:session/42", True), ("allternative:observation/x_1", True),
    ("imported:unknown", True), ("imported:other", False), ("Tool:session/1", False),
    ("javascript:alert(1)", False), ("vbscript:x", False), ("ftp://x.example", False),
])
def test_source_allowed(source: str, ok: bool) -> None:
    assert source_allowed(source) is ok


def test_policy_files(tmp_path: Path) -> None:
    good = tmp_path / "p.yaml"
    good.write_text("profile: drive\nbranch: trunk\nlimits: {files: 10, drive_bytes: 1000}\n"
                    "protected: [twin/, private/]\ntimezone: Europe/Berlin\n")
    p = load_policy_file(good)
    assert (p.branch_ref, p.files, p.drive_bytes, p.protected, p.timezone) == \
        ("refs/heads/trunk", 10, 1000, ("twin/", "private/"), "Europe/Berlin")
    for text, needle in [("limits: {filez: 1}\n", "unknown limit"),
                         ("profile: other\n", "profile"), ("limits: {files: -1}\n", "positive"),
                         ("colour: blue\n", "unknown key"), ("timezone: Mars/Base\n", "timezone"),
                         ("[unclosed\n", "YAML"), ("- a list\n", "mapping")]:
        bad = tmp_path / "bad.yaml"
        bad.write_text(text)
        with pytest.raises(PolicyFileError, match=needle):
            load_policy_file(bad)
    with pytest.raises(PolicyFileError, match="cannot read"):
        load_policy_file(tmp_path / "missing.yaml")


def test_policy_lookup_order(tmp_path: Path) -> None:
    git_dir = tmp_path / "git"
    git_dir.mkdir()
    explicit = tmp_path / "explicit.yaml"
    explicit.write_text("branch: explicit\n")
    configured = tmp_path / "configured.yaml"
    configured.write_text("branch: configured\n")
    assert find_policy(None, git_dir, None) == Policy()
    assert find_policy(None, git_dir, str(configured)).branch == "configured"
    (git_dir / "memgit.yaml").write_text("branch: gitdir\n")
    assert find_policy(None, git_dir, str(configured)).branch == "gitdir"
    assert find_policy(str(explicit), git_dir, str(configured)).branch == "explicit"


def test_every_key_and_limit_is_documented() -> None:
    from memgit.policy.settings import LIMITS, SECTIONS

    doc = (Path(__file__).parents[2] / "docs" / "policy.md").read_text()
    for key in SECTIONS:
        assert f"| `{key}` |" in doc, key
    for name in LIMITS:
        default = getattr(Policy(), name)
        assert f"| `{name}` | {default} |" in doc, name
    assert LIMITS == ("file_bytes", "drive_bytes", "files", "push_commits", "memory_bytes",
                      "path_bytes", "push_bytes", "max_entries", "max_age_days")


def test_a_section_without_a_field_keeps_its_value_hashable() -> None:
    from memgit.policy.settings import frozen

    value = frozen({"extra_rules": [{"name": "acme", "regex": "acme_[0-9]{8}"}], "on": True})
    assert value == (("extra_rules", ((("name", "acme"), ("regex", "acme_[0-9]{8}")),)),
                     ("on", True))
    policy = Policy(settings=(("dream", value),))
    assert policy.setting("dream") == value and policy.setting("other", 7) == 7
    assert hash(policy) != hash(Policy())


def test_every_rule_is_documented() -> None:
    from memgit.policy.codes import RULES

    doc = (Path(__file__).parents[2] / "docs" / "rules.md").read_text()
    for code, (name, _hint) in RULES.items():
        assert f"| {code} | {name} |" in doc, code


def test_deep_secrets_adds_detect_secrets_plugins(tmp_path: Path) -> None:
    """secrets: deep runs detect-secrets' own plugins on top of memgit's rules."""
    deep_file = tmp_path / "deep.yaml"
    deep_file.write_text("secrets: deep\n")
    deep = load_policy_file(deep_file)
    assert deep.deep_secrets and not Policy().deep_secrets
    line = b"- deploy key AKIAZ7Q3XKD5JH2LMN4P [source: imported:unknown]\n"
    out = run(drive({"a.md": line}), deep)
    assert [v.code for v in out] == ["MG401"]
    assert "AKIAZ7Q3XKD5JH2LMN4P" not in out[0].format()
    assert run(drive({"a.md": GOOD.encode()}), deep) == []
    # detect-secrets' Artifactory plugin knows a format memgit's fast rules leave alone
    artifactory = b"- artifactory AKCp8" + b"k" * 20 + b"\n"
    assert run(drive({"a.md": artifactory})) == []
    found = run(drive({"a.md": artifactory}), deep)
    assert [v.code for v in found] == ["MG401"] and "Artifactory" in found[0].message
    assert "AKCp8" not in found[0].message
    bad = tmp_path / "bad.yaml"
    bad.write_text("secrets: paranoid\n")
    with pytest.raises(PolicyFileError, match="secrets must be"):
        load_policy_file(bad)


# --- issue 12: what other memory writers do is not an error ------------------------------

AMR = policy_from_mapping({"profile": "amr"})


def messages(violations: list[Violation], code: str) -> list[str]:
    return [v.message for v in violations if v.code == code]


def test_id_less_repeats_are_a_warning_of_their_own_in_both_profiles() -> None:
    # cline/csv-date-expander/memory-bank/techContext.md repeats "  - **Web UI:**"
    files = drive({"a.md": b"- Run the tests before pushing\n\n## Later\n\n"
                           b"- Run the tests before pushing\n", "b.md": b"- x [id: m-1]\n"})
    for policy in (Policy(), AMR):
        out = run(files, policy)
        assert codes(out) == set()
        assert [(v.code, v.path, v.line, v.severity) for v in out if v.code == "MG108"] == \
            [("MG108", "a.md", 5, "warning")]
        assert messages(out, "MG108") == ["the same line is also at a.md:1"]
    # an explicit id that equals the derived id of an id-less line is a clash
    derived = fmt.parse_entry("- Run the tests before pushing")
    assert derived is not None
    clash = drive({"a.md": b"- Run the tests before pushing\n",
                   "b.md": f"- other text [id: {derived.id}]\n".encode()})
    assert "MG103" in codes(run(clash))


def test_amr_keys_and_values_are_open() -> None:
    lines = (b"- Prefers tea [kind: preference; source: thread/ab12cd34#m9]\n"
             b"- Ship the beta [status: done; parent: the launch plan; source: note/n-17]\n"
             b"- Seen on the board [source: backspace://board/42]\n"
             b"- Plain http is fine here [source: http://example.com/x]\n")
    assert run(drive({"prefs.md": lines}), AMR) == []
    strict = run(drive({"prefs.md": lines}))
    assert sorted(v.code for v in strict) == ["MG101", "MG101", "MG101", "MG101", "MG106",
                                              "MG107", "MG107"]
    # memgit's own key keeps its form under amr, and a date is still a date
    bad = run(drive({"a.md": b"- x [id: bad id!; added: 2026-02-30]\n"}), AMR)
    assert codes(bad) == {"MG106", "MG102"}


@pytest.mark.parametrize("source", ["javascript:alert(1)", "JavaScript:alert(1)",
                                    "java\tscript:alert(1)", "data:text/html,hi",
                                    "vbscript:msgbox", "file:///etc/passwd", " file:x"])
def test_amr_refuses_only_the_dangerous_schemes(source: str) -> None:
    out = run(drive({"a.md": f"- x [source: {source}]\n".encode()}), AMR)
    assert codes(out) == {"MG101"}
    assert source_allowed(source, AMR) is False


def test_mg101_quotes_the_value_or_its_scheme() -> None:
    out = run(drive({"a.md": b"- a [source: thread/ab12cd34#m9]\n"
                             b"- b [source: backspace://board/42]\n"}))
    assert messages(out, "MG101") == [
        "source 'thread/ab12cd34#m9' has no scheme: it is not a link or a label of an "
        "allowed form",
        "source scheme 'backspace' is not allowed"]
    # a credential in a refused source is never echoed back
    token = "ghp_4Fq8Zr2LmN7xKc1VbT9sWd3YhJ6pQa0Ue5Gi"  # synthetic, GitHub token shape
    out = run(drive({"a.md": f"- c [source: {token}]\n".encode()}))
    assert token not in " ".join(v.message for v in out)
    assert "MG101" in codes(out)  # refused, and the message quoted something else


def test_the_drive_profile_accepts_the_import_provenance() -> None:
    for source in ("imported:claude-code/browser-setup.md#L13",
                   "imported:letta/system/project/gotchas.md#L4",
                   "imported:plain/notes%20and%20more.md#L2", "imported:mem0/get_all.json"):
        assert source_allowed(source), source
    for source in ("imported:Claude/x.md#L1", "imported:claude-code/a b.md#L1",
                   "imported:claude-code/x.md#Lx"):
        assert not source_allowed(source), source


@pytest.mark.parametrize("memory,message", [
    ("# Memory\n", "MEMORY.md has no ## Index section"),
    ("# Memory\n\n## Index\n- [[b]]\n- [[a]]\n",
     "the ## Index is not sorted by path: [[b]] comes before [[a]]"),
    ("# Memory\n\n## Index\n- [[a]]\n",
     "the ## Index does not list exactly the drive's topic files: missing [[b]]"),
    ("# Memory\n\n## Index\n- [[a]]\n- [[b]]\n- [[gone]]\n",
     "the ## Index does not list exactly the drive's topic files: not a topic file [[gone]]"),
    ("# Memory\n\n## Index\n- [[a]]\n- [[a]]\n- [[b]]\n", "the ## Index lists [[a]] twice"),
    ("# Memory\n\n## Index\n* [[a]]\n- [[b]]\n",
     "the ## Index list is not in the form memgit writes (one '- [[path]]' line per file, "
     "together)"),
])
def test_mg502_says_what_is_wrong(memory: str, message: str) -> None:
    out = run({"MEMORY.md": memory.encode(), "a.md": GOOD.encode(),
               "b.md": GOOD.replace("m-1", "m-2").encode()})
    assert [(v.code, v.message) for v in out if v.code != "MG503"] == [("MG502", message)]


def test_transcript_turns_need_a_conversation() -> None:
    def turns(text: str) -> list[str]:
        return messages(run(drive({"a.md": text.encode()})), "MG305")

    assert turns("- User: alice\n- Model: v5\n") == []  # two key-value bullets
    assert turns("- User: alice\n- User: bob\n- Model: v5\n") == []  # no sentence, one repeat
    assert turns("**User:** Can you check the deploy?\n\n**Assistant:** Done.\n") == [
        "a speaker turn (user:) of a transcript", "a speaker turn (assistant:) of a transcript"]
    assert len(turns("> Human: what now\n> AI: wait\n> Human: ok\n> AI: bye\n")) == 4


# --- issue 10: quoting, printing, names, commits ------------------------------------------


def test_quote_redacts_each_secret_span_and_keeps_the_rest() -> None:
    from memgit.policy.judge import quote

    token = "ghp_" + "Zq8Lm3Nx7Rt2Vb6Kw9Yp4Hd1Fs5Jc0Ga8Ue3"
    assert quote("plain words") == "plain words"
    assert quote(f"notes/{token}.md") == "notes/<redacted: GitHub token>.md"
    assert quote(f"{token} and AKIAZ7Q3XKD5JH2LMN4P") == \
        "<redacted: GitHub token> and <redacted: AWS access key ID>"


@pytest.mark.parametrize("path, code", [("a\x9bb.md", "MG208"), ("a\u202eb.md", "MG214"),
                                        ("a\u200db.md", "MG214"), ("x/\ufeffy.md", "MG214"),
                                        ("ghp_" + "Zq8Lm3Nx7Rt2Vb6Kw9Yp4Hd1Fs5Jc0Ga8Ue3/a.md",
                                         "MG402")])
def test_path_rules_of_issue_10(path: str, code: str) -> None:
    from memgit.git.modes import MODE_FILE
    from memgit.policy.judge import check_path

    for policy in (Policy(), Policy(profile="amr", extensions=(), strict_drive_rules=False)):
        assert code in [v.code for v in check_path(path, MODE_FILE, policy)]


def test_check_commit_names_the_field_never_the_value() -> None:
    from memgit.policy.judge import check_commit
    from memgit.policy.registry import PurgeRegistry, registry_key

    token = "xoxb-" + "2048123456-4096123456-Kq8Zm3Nx7Rt2Vb6Kw9Yp4Hd1"
    reg = PurgeRegistry()
    reg.add("m-1", registry_key("the vault code is 9911"))
    found = check_commit(f"subject\n\nbody {token}\nThe Vault code is 9911!\n",
                         [("author name", "Ann"), ("committer email", f"{token}@x.org")],
                         Policy(), reg)
    assert [(v.code, v.message) for v in found] == [
        ("MG403", "the committer email holds a possible credential: Slack token"),
        ("MG403", "line 3 of the commit message holds a possible credential: Slack token"),
        ("MG607", "line 4 of the commit message quotes a purged text")]
    assert check_commit("plain subject", [("author name", "Ann")], Policy(), reg) == []


def test_push_bytes_is_a_limit_key(tmp_path: Path) -> None:
    from memgit.policy.judge import check_push_size

    policy = policy_from_mapping({"limits": {"push_bytes": 1000}})
    assert policy.push_limit == 1000
    assert [v.code for v in check_push_size(1001, policy)] == ["MG611"]
    assert check_push_size(1000, policy) == []
    assert Policy(drive_bytes=10).push_limit == 40


def test_amr_scans_an_undecodable_file() -> None:
    from memgit.policy.judge import check_blob

    amr = Policy(profile="amr", extensions=(), strict_drive_rules=False)
    data = b"\xff caf\xe9 token ghp_" + b"Zq8Lm3Nx7Rt2Vb6Kw9Yp4Hd1Fs5Jc0Ga8Ue3\n"
    assert [v.code for v in check_blob("data.bin", data, amr).violations] == ["MG401"]
    assert [v.code for v in check_blob("data.md", data, amr).violations] == ["MG301"]


# --- found by the hostile sweep (bench/hostile_sweep.py, branch hostile42) -----------------

SPLIT_TOKEN = "ghp_" + "OhbVrpoiVgRV5IfLBcbfnoGMbJmTPS2gjNut"


def _push_entry(tmp_path: Path, text: str, n: int) -> tuple[Any, str, str, Any]:
    """A hooked server drive and its client; one entry of ``text`` committed and pushed
    to work: (the drive, main before the push, the commit pushed, the push's result)."""
    from tests.receive_support import Drive, base_files, entry, people_text, ulid_like

    drive = Drive(tmp_path, files=base_files())
    before = drive.main()
    pushed = drive.build(({"people.md": people_text(entry(text, ulid_like(n)))}, "add"))[-1]
    return drive, before, pushed, drive.push("refs/heads/work")


@pytest.mark.parametrize("sep", ["\u00ad", "\u200b", "\u2060", "\ufeff", "\u200c"])
def test_a_token_split_by_invisible_characters_refuses_the_push(tmp_path: Path,
                                                                  sep: str) -> None:
    """A soft hyphen every five characters hid a GitHub token from every rule (no keyword
    before it): the line is scanned again without its invisible characters."""
    split = sep.join(SPLIT_TOKEN[i:i + 5] for i in range(0, len(SPLIT_TOKEN), 5))
    drive, before, pushed, result = _push_entry(tmp_path, f"ci uses {split}", 90)
    assert result.refused_by_hook and "MG401" in result.codes(), result.stderr
    assert SPLIT_TOKEN[4:12] not in result.stderr.replace(sep, "")
    assert drive.main() == before


def test_invisible_characters_without_a_token_still_land(tmp_path: Path) -> None:
    text = "the co\u00adoperative uses zero\u200bwidth joins in the family emoji"
    drive, before, pushed, result = _push_entry(tmp_path, text, 91)
    assert result.returncode == 0, result.stderr
    assert drive.main() == pushed != before


@pytest.mark.parametrize("form", ["decimal", "hex", "prefix-only"])
def test_a_token_written_as_html_references_refuses_the_push(tmp_path: Path,
                                                              form: str) -> None:
    """Every character of a token as an HTML character reference: a Markdown viewer shows
    the token, no rule saw it. The line is scanned again as it renders."""
    written = {"decimal": "".join(f"&#{ord(c)};" for c in SPLIT_TOKEN),
               "hex": "".join(f"&#x{ord(c):x};" for c in SPLIT_TOKEN),
               "prefix-only": "".join(f"&#{ord(c)};" for c in SPLIT_TOKEN[:4])
               + SPLIT_TOKEN[4:]}[form]
    drive, before, pushed, result = _push_entry(tmp_path, f"ci uses {written}", 94)
    assert result.refused_by_hook and "MG401" in result.codes(), result.stderr
    assert SPLIT_TOKEN[4:12] not in result.stderr
    assert drive.main() == before


def test_as_rendered_reads_what_a_viewer_shows() -> None:
    from memgit.policy.judge import as_rendered

    assert as_rendered("a &#103;&#x68;p\\_x \\\\ y co\u00adop &amp; z") == "a ghp_x \\ y coop & z"
