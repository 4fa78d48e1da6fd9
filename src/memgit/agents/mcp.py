"""``memgit mcp``: the drive's operations as MCP tools over stdio (the ``mcp`` SDK, 2.x).

A MemgitError becomes a tool error with its code, message and hint; anything else
``MG000 internal error`` with the exception's type only, so no text (and no secret) from
inside memgit, and no traceback, reaches the client.
"""

# No "from __future__ import annotations": the SDK reads the tools' annotations, which
# name types local to build_server (they are evaluated where the tools are defined).
import functools
import sys
from collections.abc import Callable
from typing import Annotated, Any, Literal

from memgit.agents.operations import MAX_LIMIT, MAX_TEXT, AgentDrive, Recalled
from memgit.errors import MemgitError, PluginError, RefusedError
from memgit.index.search import hit_line, labelled_line
from memgit.plugins import install_command
from memgit.policy.working import MAX_KEY_CHARS
from memgit.recall.defaults import DEFAULT_BUDGET, DEFAULT_LIMIT
from memgit.safe_text import printable
from memgit.working.store import DEFAULT_LIMIT as DEFAULT_PAGE
from memgit.working.store import MAX_LIMIT as MAX_PAGE

# a working memory value: any JSON (a union, so the tool's schema names the types)
JsonValue = str | int | float | bool | list[Any] | dict[str, Any] | None
Mode = Literal["hybrid", "lexical", "semantic"]  # MODES as a type (tests/agents/test_mcp.py)

SERVER_NAME = "memgit"
MEMORY_URI = "memgit://drive/MEMORY.md"
INSTRUCTIONS = (
    "memgit is a git-backed memory drive shared with other agents and people. At the "
    "start of a task call context (or recall with a query); store durable facts with "
    "remember, one fact per call; fix or drop facts with edit and forget, citing ids. "
    "Keep state that is not a fact (the goal, a plan's step) in working memory: "
    "memory_set, memory_get, memory_list, memory_delete. "
    "Never write the drive's files directly: memgit checks every write against the "
    "drive's policy and refuses credentials.")
MAX_VIOLATIONS = 5


def error_text(err: MemgitError) -> str:
    """What a tool error says: the code, the message, the policy's findings, the hint."""
    lines = [f"memgit error {err.code}: {err.message}"]
    if isinstance(err, RefusedError):
        lines += [f"  {v.format()}" for v in err.violations[:MAX_VIOLATIONS]]
        if len(err.violations) > MAX_VIOLATIONS:
            lines.append(f"  ... and {len(err.violations) - MAX_VIOLATIONS} more")
    if err.hint:
        lines.append(f"hint: {err.hint}")
    return "\n".join(lines)


def recall_text(found: Recalled) -> str:
    """A recall result as the agent reads it: a line with the count and the mode, then each
    hit as ``memgit recall`` prints it (index.search.hit_line; ``[drive]`` first across
    mounts), then what was not searched or why the answer is by words only."""
    count = len(found.hits)
    lines = [f"{count} {'entry' if count == 1 else 'entries'} ({found.mode})"]
    lines += [hit_line(hit) if label is None else labelled_line(label, hit)
              for label, hit in found.hits]
    lines += [f"warning: mount {printable(problem, 400)} (not searched)"
              for problem in found.skipped]
    lines += [f"warning: {printable(warning, 400)}" for warning in found.warnings]
    return "\n".join(lines)


def internal_error_text(exc: BaseException) -> str:
    return (f"memgit error MG000: internal error ({type(exc).__name__}); nothing was "
            "written by this call unless a later status shows it\n"
            "hint: retry once; if it happens again, report it with the server's log")


def _where(exc: BaseException) -> str:
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return "?"
    return f"{tb.tb_frame.f_code.co_filename.rsplit('/', 1)[-1]}:{tb.tb_lineno}"


def tool_errors(fn: Callable[..., Any], inline: bool = False) -> Callable[..., Any]:
    """Turn memgit's errors into MCP tool errors (code and hint, never a traceback).

    The SDK runs a plain function in a worker thread; ``inline`` wraps it in a
    coroutine instead, so it runs on the event loop: a read (recall, context...)
    takes about a millisecond, less than the hop to a thread and back.
    """
    from mcp.server.mcpserver.exceptions import ToolError

    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except MemgitError as err:
            raise ToolError(error_text(err)) from None
        except Exception as exc:  # noqa: BLE001 - the client gets the type, the log the place
            print(f"memgit mcp: {fn.__name__}: internal error {type(exc).__name__} at "
                  f"{_where(exc)}", file=sys.stderr, flush=True)
            raise ToolError(internal_error_text(exc)) from None

    if not inline:
        return functools.wraps(fn)(guarded)

    @functools.wraps(fn)
    async def on_loop(*args: Any, **kwargs: Any) -> Any:
        return guarded(*args, **kwargs)

    return on_loop


def build_server(agent: AgentDrive) -> Any:
    """The MCPServer with memgit's tools and the MEMORY.md resource."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.types import ToolAnnotations
        from pydantic import Field
    except ImportError as exc:
        raise PluginError(f"the MCP server needs the mcp package: {exc}",
                          install_command("mcp")) from exc

    from memgit import __version__

    app: Any = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, version=__version__,
                         log_level="WARNING")
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False,
                             open_world_hint=False)

    def tool(description: str, annotations: Any) -> Callable[[Callable[..., Any]], Any]:
        def register(fn: Callable[..., Any]) -> Any:
            # A tool that returns text is text only: the SDK would otherwise also send it
            # as structuredContent ({"result": ...}), and the agent would pay for it twice.
            text_only = fn.__annotations__.get("return") is str
            app.add_tool(tool_errors(fn, inline=annotations is read_only),
                         description=description, annotations=annotations,
                         structured_output=False if text_only else None)
            return fn
        return register

    Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]
    EntryId = Annotated[str, Field(min_length=1, max_length=64,
                                   description="An entry id such as m-01jd3xk8q7c9v2n4r6t8w0y1z3 "
                                               "(from recall or context)")]
    QuestionId = Annotated[str, Field(min_length=1, max_length=64,
                                      description="The question's id (from ask or questions)")]

    @tool("Store one fact in the memory drive as one commit; says what was committed, or "
          "skipped and why (duplicate, credential, source, policy), or queued.", writes)
    def remember(text: Annotated[Text, Field(description="The fact, one sentence, no secrets")],
                 topic: Annotated[str | None, Field(
                     description="Topic file such as people or projects/payments "
                                 "(default notes)")] = None,
                 source: Annotated[str | None, Field(
                     description="Where the fact comes from: https://..., TOOL:session/ID "
                                 "or TOOL:observation/ID (default memgit:observation/ID)")] = None,
                 why: Annotated[str, Field(max_length=500, description=(
                     "Why this matters; kept with the entry when the drive's rules make "
                     "the write a proposal for a person to approve"))] = "",
                 ) -> dict[str, Any]:
        return agent.remember(text, topic, source, why)

    @tool("Replace the text of entry ID, keeping its id, source and date.", writes)
    def edit(id: EntryId, text: Annotated[Text, Field(description="The new text")]
             ) -> dict[str, Any]:
        return agent.edit(id, text)

    @tool("Remove entry ID from the drive (git history keeps it; an admin can purge it).",
          ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False))
    def forget(id: EntryId) -> dict[str, Any]:
        return agent.forget(id)

    @tool("Search the memory drive; returns the best entries, one a line: "
          "topic:line: text  [id; score].", read_only)
    def recall(query: Annotated[Text, Field(description="Words to look for, or a question")],
               limit: Annotated[int, Field(ge=1, le=MAX_LIMIT,
                                           description="How many entries to return")
                            ] = DEFAULT_LIMIT,
               mode: Annotated[Mode | None, Field(
                   description="hybrid: by words and meaning (the default when the drive "
                               "has an embedder); lexical: words only; semantic: meaning "
                               "only")] = None,
               mounts: Annotated[bool, Field(description=(
                   "Also search the shared drives mounted next to this one (memgit mount), "
                   "by words; each hit then names its drive"))] = False,
               ) -> str:
        return recall_text(agent.recall_hits(query, limit, mode=mode, mounts=mounts))

    @tool("Load the drive's title, Index and the entries most likely to matter, within a "
          "token budget; says what was left out.", read_only)
    def context(budget_tokens: Annotated[int, Field(ge=1, le=200_000, description=(
                    "Most tokens the packet may take (estimated conservatively)"))
                    ] = DEFAULT_BUDGET,
                query: Annotated[str | None, Field(max_length=MAX_TEXT, description=(
                    "What the task is about: its matches come first"))] = None,
                ) -> str:
        return str(agent.context(budget_tokens, query)["text"])

    @tool("Post an open question on the drive's board for other agents or people.", writes)
    def ask(text: Annotated[Text, Field(description="The question")]) -> dict[str, Any]:
        return agent.ask(text)

    @tool("Answer question QUESTION_ID on the drive's board.", writes)
    def answer(question_id: QuestionId, text: Annotated[Text, Field(
            description="The answer")]) -> dict[str, Any]:
        return agent.answer(question_id, text)

    @tool("Mark question QUESTION_ID on the drive's board resolved.", writes)
    def resolve(question_id: QuestionId) -> dict[str, Any]:
        return agent.resolve(question_id)

    @tool("List the board's open questions with their answers.", read_only)
    def questions(include_resolved: Annotated[bool, Field(
            description="Also list resolved questions")] = False) -> dict[str, Any]:
        return agent.questions(include_resolved)

    @tool("List the proposals waiting for a person's approval (by default your own): "
          "writes the drive's autonomy rules held for review.", read_only)
    def proposals(mine: Annotated[bool, Field(
            description="Only the proposals this agent made")] = True) -> dict[str, Any]:
        return agent.proposals(mine)

    Ids = Annotated[list[EntryId], Field(min_length=1, max_length=100,
                                         description="Proposal ids (from proposals)")]

    @tool("Approve proposals: each becomes an active entry with the same id (one commit). "
          "For the drive's owner.", writes)
    def approve(ids: Ids, text: Annotated[str | None, Field(
            max_length=MAX_TEXT, description="A new text for the one proposal approved")
            ] = None) -> dict[str, Any]:
        return agent.approve(ids, text)

    @tool("Reject proposals with a reason (kept a while, never recalled). For the drive's "
          "owner.", writes)
    def reject(ids: Ids, reason: Annotated[Text, Field(description="Why")]
               ) -> dict[str, Any]:
        return agent.reject(ids, reason)

    @tool("Show the drive, branch, head commit, pending writes and the last sync.", read_only)
    def status() -> dict[str, Any]:
        return agent.status()

    Key = Annotated[str, Field(min_length=1, max_length=MAX_KEY_CHARS, description=(
        "A key of this agent's working memory, such as plan/step or goal"))]

    @tool("Read KEY from this agent's working memory (state kept across sessions beside "
          "the facts, never recalled): its JSON value, id and set time.", read_only)
    def memory_get(key: Key) -> dict[str, Any]:
        return agent.memory_get(key)

    @tool("Set KEY in this agent's working memory to a JSON value (at most 64 KiB; no "
          "credentials): the goal, a plan's step, structured preferences.", writes)
    def memory_set(key: Key, value: Annotated[JsonValue, Field(
            description="Any JSON value: a string, number, list or object")]) -> dict[str, Any]:
        return agent.memory_set(key, value)

    @tool("Remove KEY from this agent's working memory (history keeps it).",
          ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False))
    def memory_delete(key: Key) -> dict[str, Any]:
        return agent.memory_delete(key)

    @tool("List the keys of this agent's working memory in ascending order, a page at a "
          "time: pass the answer's next as after for the next page.", read_only)
    def memory_list(prefix: Annotated[str, Field(max_length=MAX_KEY_CHARS, description=(
                        "Only keys starting with this"))] = "",
                    limit: Annotated[int, Field(ge=1, le=MAX_PAGE, description=(
                        "Keys per page"))] = DEFAULT_PAGE,
                    after: Annotated[str | None, Field(max_length=MAX_KEY_CHARS, description=(
                        "Start after this key (the previous page's next)"))] = None,
                    ) -> dict[str, Any]:
        return agent.memory_list(prefix, limit, after)

    @app.resource(MEMORY_URI, name="MEMORY.md", mime_type="text/markdown",
                  description="The drive's entry point at the branch head: title and Index.")
    def memory_md() -> str:
        try:
            return agent.memory_md()
        except MemgitError as err:
            from mcp.server.mcpserver.exceptions import ResourceError

            raise ResourceError(error_text(err)) from None

    return app


def warm(agent: AgentDrive) -> str | None:
    """Import what the tools use and open the drive now, so the first call is as fast as
    the others; returns the error text when the folder is not a drive (the server still
    starts and every tool answers with that error)."""
    from memgit.write import board as questions  # noqa: F401

    try:
        agent.status()
        unavailable = agent.warm_embedder()
    except MemgitError as err:
        return error_text(err)
    if unavailable:
        print(f"memgit mcp: semantic recall unavailable, lexical only: {unavailable}",
              file=sys.stderr, flush=True)
    return None


def serve(path: str | None, agent_name: str = "") -> None:
    """Run the server on stdin/stdout until the client closes it."""
    from memgit.embeddings.embedders import expect_many_queries

    # before the embedder loads (warm): a server answers many questions, so the local
    # embedder's query: auto takes its fast query encoder (docs/embeddings.md)
    expect_many_queries()
    from memgit.embeddings import fill as vector_fill

    vector_fill.use_thread()  # a long-lived process: vectors are filled by one thread of it
    agent = AgentDrive(path, agent_name)
    app = build_server(agent)
    problem = warm(agent)
    if problem:
        print(f"memgit mcp: {problem}", file=sys.stderr, flush=True)
    from memgit.agents.mcp_stdio import run

    run(app)
