"""The test client's waits: `initialize` outlasts a slow server start-up, other replies do not."""

import sys
from pathlib import Path

import pytest

from qlint.lsp import client as lsp_client
from qlint.lsp.client import LspClient, LspTimeout

# A stand-in server that answers every request after the same delay, as a server still importing
# its modules on a loaded machine does for its first reply.
SLOW_SERVER = r"""
import json, sys, time
stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
while True:
    length = None
    while (line := stdin.readline()) not in (b"\r\n", b"\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    if length is None:
        break
    message = json.loads(stdin.read(length))
    time.sleep(float(sys.argv[1]))
    body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}).encode()
    stdout.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stdout.flush()
"""


@pytest.fixture
def slow_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(lsp_client, "DEFAULT_TIMEOUT", 0.2)
    # Far above the stand-in's 1 s (its interpreter's start-up on a loaded machine comes first),
    # far below the 60 s of the real client: the wait that `initialize` gets is this one.
    monkeypatch.setattr(lsp_client, "STARTUP_TIMEOUT", 30.0)
    client = LspClient(tmp_path, argv=[sys.executable, "-c", SLOW_SERVER, "1.0"], env={})
    yield client
    client.close()


def test_initialize_waits_for_a_slow_start_up(slow_client: LspClient, tmp_path: Path):
    assert slow_client.request("initialize", {"rootUri": tmp_path.as_uri()}) == {}


def test_other_requests_keep_the_short_wait(slow_client: LspClient):
    with pytest.raises(LspTimeout):
        slow_client.request("shutdown")
