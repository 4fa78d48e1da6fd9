"""stdin and stdout of ``memgit mcp`` served on the event loop, not through worker threads.

Only for pipes and sockets: on a terminal the SDK's transport runs as it is (a terminal
must never be left non-blocking). While serving, fd 0 reads the null device and fd 1
writes to stderr, as the SDK does, so a child process or a stray print cannot touch the
wire; both are restored at the end.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

CHUNK = 65536


def pipe_like(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class LineReader:
    """``async for line in reader``: the lines of a non-blocking descriptor, as text."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = b""
        self.eof = False

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> str:
        import anyio

        while b"\n" not in self.buffer:
            if self.eof:
                if not self.buffer:
                    raise StopAsyncIteration
                line, self.buffer = self.buffer, b""
                return line.decode("utf-8", "replace")
            try:
                chunk = os.read(self.fd, CHUNK)
            except BlockingIOError:
                await anyio.wait_readable(self.fd)
                continue
            self.eof = not chunk
            self.buffer += chunk
        line, _sep, self.buffer = self.buffer.partition(b"\n")
        return line.decode("utf-8", "replace") + "\n"


class Writer:
    """``await writer.write(text)``: all of ``text`` on a non-blocking descriptor."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    async def write(self, text: str) -> None:
        import anyio

        data = memoryview(text.encode("utf-8"))
        while data:
            try:
                data = data[os.write(self.fd, data):]
            except BlockingIOError:
                await anyio.wait_writable(self.fd)

    async def flush(self) -> None:
        """Nothing is buffered."""


@contextmanager
def claimed_stdio() -> Iterator[tuple[LineReader, Writer]]:
    """The wire on private non-blocking copies of fds 0 and 1; fd 0 reads /dev/null and
    fd 1 writes to stderr meanwhile (as the SDK's transport does), restored at the end."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        for fd in (wire_in, wire_out):
            os.set_inheritable(fd, False)
            os.set_blocking(fd, False)
        yield LineReader(wire_in), Writer(wire_out)
    finally:
        os.close(null)
        for fd, target in ((wire_in, 0), (wire_out, 1)):
            os.set_blocking(fd, True)
            os.dup2(fd, target)
            os.close(fd)


SDK_ENV = "MEMGIT_MCP_STDIO"  # "sdk": the SDK's own transport (bench_mcp.py compares them)


def run(app: Any) -> None:
    """Serve ``app`` (an MCPServer) on stdin/stdout until the client closes them."""
    if os.environ.get(SDK_ENV) == "sdk" or not (pipe_like(0) and pipe_like(1)):
        app.run()
        return
    import anyio
    from mcp.server.stdio import stdio_server

    # MCPServer.run_stdio_async with the streams given: the low-level server is the
    # SDK's own (mcp<3 keeps it on _lowlevel_server; tests/agents/test_mcp.py runs it).
    server = app._lowlevel_server

    async def serve() -> None:
        with claimed_stdio() as (reader, writer):
            async with stdio_server(stdin=reader, stdout=writer) as (read, write):  # type: ignore[arg-type]
                await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)
