"""The server's check log (`qlint/debugTimings`): each check taken once, complete, and the
check running now, which tests wait on instead of sleeping."""

from __future__ import annotations

from pathlib import Path

import pytest

from qlint.lsp.timings import Timings
from tests.snippets import LSP_FINDING


def test_the_running_check_is_taken_once_it_ended():
    timings = Timings()
    timings.edited("a.py")
    first = timings.started("a.py", 1, "edit")
    timings.published(first, current=True)
    timings.ended()
    second = timings.started("b.py", 1, "dependent")
    assert timings.in_progress()["uri"] == "b.py"
    assert [c["uri"] for c in timings.take()] == ["a.py"]  # b.py is still running
    second.cancelled = True  # what the server stamps when the check stops between rules
    timings.ended()
    assert timings.in_progress() is None
    (taken,) = timings.take()
    assert (taken["uri"], taken["why"], taken["cancelled"]) == ("b.py", "dependent", True)
    assert timings.take() == []


def test_the_reply_lists_the_running_check_and_the_buffers_due():
    pytest.importorskip("pygls")
    from qlint.lsp.features import DEBUG_TIMINGS, create_server
    from qlint.lsp.scheduler import Due

    server = create_server()
    try:
        answer = server.protocol.fm.features[DEBUG_TIMINGS]
        assert answer() == {"checks": [], "running": None, "due": []}
        server.timings.started("file:///a.py", 3, "dependent")
        server.queue.due["file:///c.py"] = Due()
        server.queue.due["file:///b.py"] = Due()
        reply = answer()
        assert reply["checks"] == [] and reply["due"] == ["file:///b.py", "file:///c.py"]
        assert (reply["running"]["uri"], reply["running"]["version"]) == ("file:///a.py", 3)
        server.timings.ended()
        assert [c["uri"] for c in answer()["checks"]] == ["file:///a.py"]
    finally:
        server.close()


def test_idle_waits_for_the_checks_an_open_set_off(tmp_path: Path):
    pytest.importorskip("pygls")
    from qlint.lsp.client import LspClient

    text = LSP_FINDING
    client = LspClient(tmp_path)
    try:
        client.initialize(tmp_path)
        uri = client.open(tmp_path / "m.py", text)
        (check,) = client.idle()  # no publish awaited first: only the server's word
        assert (check["uri"], check["version"], check["published"] is not None) == (uri, 1, True)
        published = [m for m in client.received if m["method"] == "textDocument/publishDiagnostics"]
        assert [d["code"] for d in published[-1]["params"]["diagnostics"]] == ["QL101"]
        assert client.request("qlint/debugTimings") == {"checks": [], "running": None, "due": []}
    finally:
        client.close()
