"""mcp_stdio: lines and answers on non-blocking pipes, served by the event loop (real
pipes and a real pseudo-terminal; the whole server over stdio is in test_mcp_server.py)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import threading

import anyio

from memgit.agents.mcp_stdio import LineReader, Writer, pipe_like


def test_lines_arrive_whole_across_reads_and_the_last_one_without_newline() -> None:
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    chunks = [b'{"a": 1}\n{"b"', b': 2}\n', b"\xff tail"]

    def feed() -> None:
        for chunk in chunks:
            os.write(write_fd, chunk)
        os.close(write_fd)

    async def read_all() -> list[str]:
        return [line async for line in LineReader(read_fd)]

    feeder = threading.Thread(target=feed)
    feeder.start()
    lines = anyio.run(read_all)
    feeder.join()
    os.close(read_fd)
    assert lines == ['{"a": 1}\n', '{"b": 2}\n', "\ufffd tail"]


def test_an_answer_larger_than_the_pipe_is_written_whole() -> None:
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    text = "é" * 400_000  # 800 KB: many times a pipe's buffer
    received: list[bytes] = []

    def drain() -> None:
        while chunk := os.read(read_fd, 65536):
            received.append(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    anyio.run(Writer(write_fd).write, text)
    os.close(write_fd)
    reader.join()
    os.close(read_fd)
    assert b"".join(received).decode() == text


def test_pipes_and_sockets_count_a_terminal_does_not() -> None:
    read_fd, write_fd = os.pipe()
    primary, secondary = pty.openpty()
    try:
        assert pipe_like(read_fd) and pipe_like(write_fd)
        assert not pipe_like(secondary)
    finally:
        for fd in (read_fd, write_fd, primary, secondary):
            os.close(fd)


def test_while_serving_children_see_no_wire_and_the_descriptors_come_back() -> None:
    """A child process started while serving reads EOF and writes to stderr; after the
    server, fd 0 and 1 are the wire again (and blocking)."""
    code = (
        "import os, subprocess, sys\n"
        "from memgit.agents.mcp_stdio import claimed_stdio\n"
        "with claimed_stdio() as (reader, writer):\n"
        "    child = subprocess.run([sys.executable, '-c', "
        "'import sys; print(repr(sys.stdin.read()))'])\n"
        "os.write(1, b'wire again\\n')\n"
        "print(os.get_blocking(0), os.get_blocking(1))\n")
    proc = subprocess.run([sys.executable, "-c", code], input=b"secret input\n",
                          capture_output=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"wire again\nTrue True\n"
    assert b"''" in proc.stderr  # the child's stdin was the null device, its stdout stderr


def test_both_transports_serve_the_same_answers(new_drive) -> None:
    """A recall through memgit's transport and through the SDK's (MEMGIT_MCP_STDIO=sdk),
    with the SDK's real client, returns the same text."""
    from mcp import Client, StdioServerParameters

    from tests.conftest import ROOT

    drive = new_drive({"people.md": "- Joe leads the product team [source: imported:unknown; "
                                    "added: 2026-01-02; id: m-joe]\n"})

    async def recall(transport: str) -> object:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "memgit", "-C", str(drive), "mcp"],
            env=dict(os.environ, PYTHONPATH=str(ROOT / "src"), MEMGIT_MCP_STDIO=transport))
        async with Client(params, read_timeout_seconds=120) as client:
            result = await client.call_tool("recall", {"query": "product team",
                                                       "limit": 3})
            assert not result.is_error and result.structured_content is None
            return result.content[0].text  # type: ignore[union-attr]

    ours, sdk = anyio.run(recall, "memgit"), anyio.run(recall, "sdk")
    assert ours.startswith("1 entry (lexical)\npeople.md:1: Joe leads the product team  [m-joe;")
    assert ours == sdk
