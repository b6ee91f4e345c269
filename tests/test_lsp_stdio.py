"""The server's stdin: read as a pipe by the event loop, else the way pygls reads it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from qlint.lsp.client import LspClient, server_env
from qlint.lsp.stdio import HEADER_LIMIT, PipeReader, is_pipe


def test_pipes_and_sockets_are_read_by_the_loop_files_and_devices_are_not(tmp_path: Path):
    read_end, write_end = os.pipe()
    try:
        with open(read_end, "rb", closefd=False) as pipe:
            assert is_pipe(pipe)
    finally:
        os.close(read_end)
        os.close(write_end)
    (tmp_path / "messages").write_bytes(b"")
    with open(tmp_path / "messages", "rb") as regular, open(os.devnull, "rb") as null:
        assert not is_pipe(regular) and not is_pipe(null)


def test_the_reader_ends_cleanly_on_a_cut_message_and_a_runaway_header():
    async def scenario():
        cut = asyncio.StreamReader()
        cut.feed_data(b"{}")
        cut.feed_eof()
        runaway = asyncio.StreamReader(limit=HEADER_LIMIT)
        runaway.feed_data(b"x" * (HEADER_LIMIT + 10))
        return await PipeReader(cut).readexactly(10), await PipeReader(runaway).readline()

    assert asyncio.run(scenario()) == (b"{}", b"")


def test_a_server_whose_stdin_is_a_file_still_answers(tmp_path: Path):
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "capabilities": {}}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None},
        {"jsonrpc": "2.0", "method": "exit", "params": None},
    ]
    (tmp_path / "in").write_bytes(b"".join(LspClient.frame(m) for m in messages))
    with open(tmp_path / "in", "rb") as stdin:
        proc = subprocess.run(
            [sys.executable, "-m", "qlint", "server"], stdin=stdin, capture_output=True, env=server_env(), timeout=60
        )
    assert proc.returncode == 0, proc.stderr
    replies = [json.loads(part.split(b"\r\n\r\n", 1)[1]) for part in proc.stdout.split(b"Content-Length")[1:]]
    assert [r.get("id") for r in replies if "id" in r] == [1, 2]
    assert replies[0]["result"]["serverInfo"]["name"] == "qlint"
