"""The server's stdin, read by the event loop itself (asyncio's pipe transport).

pygls reads stdin through its thread pool: three hand-offs between a reader thread and the
event loop per message (the header line, the blank line, the body). Messages a client
wrote together therefore reach the handlers one hand-off apart, about 1 ms on an idle
machine and several on a loaded one, and the scheduler's timers run in between: a burst
of edits was checked halfway, and each keystroke paid the hops. Read as a pipe, whatever
has arrived is in the loop's buffer, and pygls's message loop takes message after message
from it without yielding: everything sent together is handled before any timer fires.

Where stdin is not a pipe or socket (a file, a terminal), pygls's own reader is used.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
import threading
from typing import BinaryIO

from pygls.io_ import StdoutWriter, run_async

log = logging.getLogger(__name__)

HEADER_LIMIT = 1 << 20  # a header line longer than this is not LSP


class PipeReader:
    """The `readline` / `readexactly` pygls's message loop asks for; b"" at the end."""

    def __init__(self, stream: asyncio.StreamReader):
        self.stream = stream

    async def readline(self) -> bytes:
        try:
            return await self.stream.readline()
        except ValueError:  # no line break within HEADER_LIMIT: the stream is not LSP
            log.error("qlint server: a header line longer than %d bytes; closing", HEADER_LIMIT)
            return b""

    async def readexactly(self, n: int) -> bytes:
        try:
            return await self.stream.readexactly(n)
        except asyncio.IncompleteReadError as exc:  # the client went away mid-message
            return exc.partial if exc.partial else b""


def is_pipe(stdin: BinaryIO) -> bool:
    """Whether `stdin` is a pipe or socket (what editors give; epoll cannot wait on a
    regular file or /dev/null)."""
    try:
        mode = os.fstat(stdin.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def serve(server, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> bool:
    """Run `server` (a pygls server) on stdin/stdout until the client exits; False, having
    done nothing, when stdin is not a pipe."""
    stdin = stdin or sys.stdin.buffer
    if not is_pipe(stdin):
        return False

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stream = asyncio.StreamReader(limit=HEADER_LIMIT)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), stdin)
        await run_async(
            stop_event=server._stop_event,
            reader=PipeReader(stream),
            protocol=server.protocol,
            logger=log,
            error_handler=server.report_server_error,
        )

    server._stop_event = threading.Event()  # what pygls's shutdown and exit set
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    try:
        asyncio.run(main())
    except BrokenPipeError:
        log.error("qlint server: the client's pipe closed; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
    return True
