"""Every path a write takes ends where the team drive's autonomy rules say: a plain git push
to a server drive with memgit's hooks, the MCP server (the SDK's real client over stdio),
memgit import apply and the dream."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from memgit.format import entries as fmt
from tests.conftest import ROOT, git, memgit, memgit_ok
from tests.receive_support import Drive as ServerDrive
from tests.receive_support import entry, memory, ulid_like
from tests.review.support import TEAM_POLICY, entries_of, recalled_ids, team_drive

AGENT = "Codex Bot <codex@bots.example>"
PERSON = "Owner <owner@people.example>"


def _files(decisions: list[str], notes: list[str]) -> dict[str, Any]:
    return {"MEMORY.md": memory(["decisions.md", "notes.md"]),
            "decisions.md": "# Decisions\n\n" + "".join(e + "\n" for e in decisions),
            "notes.md": "# Notes\n\n" + "".join(e + "\n" for e in notes)}


@pytest.fixture
def server(tmp_path: Path) -> ServerDrive:
    seed = entry("We ship on Fridays", ulid_like(1), source="codex:session/1")
    return ServerDrive(tmp_path / "team", policy=TEAM_POLICY, files=_files([seed], []))


def test_a_push_of_an_active_entry_where_only_proposals_are_allowed_is_refused(
        server: ServerDrive) -> None:
    seed = entry("We ship on Fridays", ulid_like(1), source="codex:session/1")
    note = entry("The build cache lives on the NAS", ulid_like(2), source="codex:session/2")
    decision = entry("We ship on Tuesdays", ulid_like(3), source="codex:session/2")
    # an agent adds to notes.md: lands
    [ok] = server.build((_files([seed], [note]), "note"), author=AGENT)
    assert server.push(ok).returncode == 0
    # an agent adds an active entry to decisions.md: refused with the code and its hint
    [bad] = server.build((_files([seed, decision], [note]), "decide"), author=AGENT)
    pushed = server.push(bad)
    assert pushed.refused_by_hook and pushed.codes() == {"MG612"}
    assert "needs a proposal" in pushed.stderr and "memgit approve ID" in pushed.stderr
    assert server.main() == ok
    # the same line as a proposal lands, and is not recalled
    proposal = decision[:-1] + "; status: proposed; proposed-by: codex]"
    [prop] = server.build((_files([seed, proposal], [note]), "propose"), author=AGENT)
    assert server.push(prop).returncode == 0
    # the agent may not approve it by pushing; the owner may
    [self_approved] = server.build((_files([seed, decision], [note]), "approve"),
                                   author=AGENT)
    assert server.push(self_approved).codes() == {"MG612"}
    [approved] = server.build((_files([seed, decision], [note]), "approve"), author=PERSON)
    assert server.push(approved).returncode == 0
    # an agent editing or removing a decision is refused too; forgetting a note is MG613
    edited = decision.replace("Tuesdays", "Wednesdays")
    [edit] = server.build((_files([seed, edited], [note]), "edit"), author=AGENT)
    assert server.push(edit).codes() == {"MG612"}
    [forget] = server.build((_files([seed, decision], []), "forget"), author=AGENT)
    refused = server.push(forget)
    assert refused.codes() == {"MG613"} and "refused by autonomy rule 3" in refused.stderr
    assert server.main() == approved


def test_the_writer_on_the_server_drive_and_a_push_agree(server: ServerDrive) -> None:
    """memgit remember on the server drive writes what pre-receive would accept."""
    proc = memgit_ok("-C", str(server.git_dir), "remember", "Deploys need two approvals",
                     "--topic", "decisions", "--source", "codex:session/5", "--json")
    [added] = json.loads(proc.stdout)["added"]
    assert json.loads(proc.stdout)["proposed"] == [added["id"]]
    line = entries_of(server.git_dir, "decisions.md", "main")[added["id"]]
    assert line.get("status") == "proposed"


# --- MCP -------------------------------------------------------------------------------------


def _mcp(path: Path, agent: str) -> Any:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memgit", "-C", str(path), "mcp", "--agent", agent],
        env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    return Client(params, read_timeout_seconds=120)


async def _call(client: Any, tool: str, **args: Any) -> Any:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content[0].text
    return result.structured_content


def test_mcp_remember_says_proposed_and_proposals_approve_reject(new_drive: Any) -> None:
    pytest.importorskip("mcp")
    path = team_drive(new_drive)

    async def agent_work() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with _mcp(path, "claude-code") as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            out["tools"] = tools
            out["note"] = await _call(client, "remember", text="The VPN drops at midnight",
                                      topic="notes", source="claude-code:session/3")
            for text in ("We use Terraform for all infrastructure",
                         "Incident reviews are blameless"):
                out.setdefault("decisions", []).append(await _call(
                    client, "remember", text=text, topic="decisions",
                    source="claude-code:session/3", why="agreed in the retro"))
            out["mine"] = await _call(client, "proposals")
        async with _mcp(path, "cursor") as client:
            out["theirs"] = await _call(client, "proposals")
            out["all"] = await _call(client, "proposals", mine=False)
        return out

    out = anyio.run(agent_work)
    assert {"proposals", "approve", "reject"} <= out["tools"]
    assert "proposed" not in out["note"] and out["note"]["status"] == "committed"
    first, second = (d["proposed"]["ids"][0] for d in out["decisions"])
    assert "waits for a person" in out["decisions"][0]["proposed"]["note"]
    assert [p["id"] for p in out["mine"]["proposals"]] == [first, second]
    assert out["mine"]["proposals"][0]["why"] == "agreed in the retro"
    assert out["theirs"]["count"] == 0 and out["all"]["count"] == 2
    assert first not in recalled_ids(path, "Terraform infrastructure")

    async def owner_work() -> dict[str, Any]:
        async with _mcp(path, "owner") as client:
            return {"approve": await _call(client, "approve", ids=[first]),
                    "reject": await _call(client, "reject", ids=[second],
                                          reason="not decided yet")}

    done = anyio.run(owner_work)
    assert done["approve"]["status"] == "committed" and done["reject"]["status"] == "committed"
    assert first in recalled_ids(path, "Terraform infrastructure")
    assert entries_of(path, "decisions.md")[second].get("status") == "rejected"
    assert second not in recalled_ids(path, "incident reviews blameless")
    log = git("log", "-3", "--format=%s", cwd=path).stdout.decode().split("\n")
    assert log[:2] == ["Reject 1 proposal", "Approve 1 proposal"]


# --- import and the dream ------------------------------------------------------------------


def test_import_apply_follows_the_rules(new_drive: Any, tmp_path: Path) -> None:
    path = team_drive(new_drive)
    source = tmp_path / "notes-folder"
    source.mkdir()
    (source / "decisions.md").write_text("# Decisions\n\n- We deploy on Tuesdays only\n")
    (source / "notes.md").write_text("# Notes\n\n- The staging host is slow on Mondays\n")
    plan = tmp_path / "plan.json"
    memgit_ok("import", "plan", str(source), "-o", str(plan), "--policy",
              str(path / ".git" / "memgit.yaml"))
    applied = memgit_ok("-C", str(path), "import", "apply", str(plan)).stdout.decode()
    assert "1 of them are proposals" in applied
    [decision] = entries_of(path, "decisions.md").values()
    [note] = entries_of(path, "notes.md").values()
    assert (decision.get("status"), decision.get("proposed-by")) == ("proposed", "imported")
    assert note.get("status") == ""
    assert recalled_ids(path, "staging host Mondays") == {note.id}
    assert decision.id not in recalled_ids(path, "deploy Tuesdays")


def test_the_dream_merges_notes_and_proposes_for_decisions(new_drive: Any) -> None:
    # (the dream writes memgit:observation sources, which a team drive refuses: MG109)
    policy = TEAM_POLICY + "dream: {model: rules}\nrequire_source: false\n"
    path = team_drive(new_drive, policy)
    lines = {"notes.md": ["The nightly backup runs at 02:00 UTC on the NAS",
                          "The nightly backup runs at 02:00 UTC on the NAS!"],
             "decisions.md": ["All services log in JSON to Loki",
                              "All services log in JSON to Loki."]}
    for topic, texts in lines.items():
        body = "".join(f"- {t} [source: codex:session/{n}; added: 2026-01-0{n + 1}; "
                       f"id: {ulid_like(n + (10 if topic == 'notes.md' else 20))}]\n"
                       for n, t in enumerate(texts))
        (path / topic).write_text(f"# {topic[:-3].title()}\n\n{body}")
    git("add", "-A", cwd=path)
    git("commit", "-qm", "duplicates", cwd=path)
    proc = memgit("-C", str(path), "dream", "--no-model", "--json")
    assert proc.returncode == 0, proc.stderr
    notes = entries_of(path, "notes.md")
    decisions = entries_of(path, "decisions.md")
    assert len(notes) == 1 and all(e.get("status") == "" for e in notes.values())
    # the merge in decisions.md waits: one original marked for review, the keeper's new
    # text (if any) proposed; nothing active was removed
    assert ulid_like(20) in decisions and ulid_like(21) in decisions
    marked = [e for e in decisions.values() if e.get("review") == "forget"
              or e.get("status") == "proposed"]
    assert marked and all(e.get("proposed-by") == "dream" for e in marked)
    listed = json.loads(memgit_ok("-C", str(path), "review", "--json").stdout)["proposals"]
    assert {p["id"] for p in listed} == {e.id for e in marked}
    assert fmt.MEMORY_FILE  # the Index stays current: lint passes
    assert memgit("-C", str(path), "lint").returncode == 0
