"""The language server's check order: the edited buffer first, importers when typing pauses."""

from __future__ import annotations

import asyncio
import gc
import time
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from qlint.lsp import heap, scheduler
from qlint.lsp.client import LspClient
from qlint.lsp.scheduler import EDITED, LATER, NOW, CheckQueue, Due
from tests.conftest import write_package
from tests.snippets import LSP_FINDING


class Recorder:
    """A stand-in for the server's check: records (uri, loop time) and takes `seconds`."""

    def __init__(self, seconds: float = 0.01, stale_calls: frozenset[int] = frozenset()):
        self.seconds = seconds
        self.stale_calls = stale_calls  # which calls (0-based) find their buffer edited
        self.calls: list[tuple[str, float]] = []

    async def __call__(self, uri: str, due: Due) -> bool:
        self.calls.append((uri, asyncio.get_running_loop().time()))
        await asyncio.sleep(self.seconds)
        return len(self.calls) - 1 in self.stale_calls

    @property
    def order(self) -> list[str]:
        return [uri for uri, _ in self.calls]


class VirtualClockLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock moves only when every task waits: where the loop would
    sleep until its next timer, the clock jumps there. The queue's pauses and windows are
    then kept or not by its logic alone, never by how busy the machine is (a test that
    slept 0.1 s between keystrokes failed whenever a sleep overran the 0.3 s pause)."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0
        select = self._selector.select

        def jumping(timeout=None):
            events = select(0)
            if not events:
                if timeout is None:
                    raise RuntimeError("every task waits and no timer is set: nothing would ever run")
                self.now += timeout
            return events

        self._selector.select = jumping

    def time(self) -> float:
        return self.now


def run_virtual(scenario):
    """`asyncio.run` on a `VirtualClockLoop`."""
    loop = VirtualClockLoop()
    try:
        return loop.run_until_complete(scenario)
    finally:
        loop.close()


async def drained(queue: CheckQueue, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while queue.due or queue.in_flight is not None:
        assert asyncio.get_running_loop().time() < deadline, "the queue did not drain"
        await asyncio.sleep(0.005)


def test_an_edit_goes_before_importers_already_due_and_they_wait_for_a_pause():
    async def scenario():
        run = Recorder()
        queue = CheckQueue(run)
        queue.add("b.py", LATER)
        queue.add("c.py", LATER)
        queue.add("a.py", EDITED)
        edited = asyncio.get_running_loop().time()
        await drained(queue)
        return run, edited

    run, edited = run_virtual(scenario())
    assert run.order == ["a.py", "b.py", "c.py"]
    started = dict(run.calls)
    # On the loop's virtual clock (`run_virtual`) the schedule is exact: the edit once its
    # coalescing window passed, the importers once the pause after it has.
    assert started["a.py"] - edited == pytest.approx(scheduler.COALESCE_SECONDS)
    assert started["b.py"] - edited == pytest.approx(scheduler.DEPENDENT_IDLE_SECONDS)
    assert started["c.py"] - started["b.py"] == pytest.approx(run.seconds)  # right after b.py


def test_importers_are_not_checked_while_the_user_keeps_typing():
    async def scenario():
        run = Recorder(seconds=0.005)
        queue = CheckQueue(run)
        loop = asyncio.get_running_loop()
        queue.add("b.py", LATER)
        for _ in range(5):  # a keystroke every 100 ms: shorter than the idle pause
            queue.add("a.py", EDITED)
            await asyncio.sleep(0.1)
        last_edit = queue.last_edit
        await drained(queue)
        return run, last_edit, loop

    run, last_edit, _ = run_virtual(scenario())
    assert run.order == ["a.py"] * 5 + ["b.py"]
    assert run.calls[-1][1] - last_edit == pytest.approx(scheduler.DEPENDENT_IDLE_SECONDS)


def test_a_burst_of_edits_is_one_check_at_its_end():
    async def scenario():
        run = Recorder()
        queue = CheckQueue(run)
        for _ in range(5):
            queue.add("a.py", EDITED)
            await asyncio.sleep(0.0005)  # messages of one write reach the server ~1 ms apart
        await drained(queue)
        return run

    assert run_virtual(scenario()).order == ["a.py"]


@pytest.mark.parametrize("outcome", [True, scheduler.CANCELLED])
def test_a_buffer_edited_during_its_check_is_checked_again_at_once(outcome):
    """Stale (dropped) or cancelled (stopped between rules): the newest text is checked as
    soon as the check ends, with no pause (it cost the keystroke up to a whole check)."""

    async def scenario():
        run = Recorder(seconds=0.05, stale_calls=frozenset({0}))

        async def runner(uri: str, due: Due):
            stale = await run(uri, due)
            return outcome if stale else False

        queue = CheckQueue(runner)
        queue.add("a.py", NOW)
        await asyncio.sleep(0.02)
        queue.add("a.py", EDITED)  # during the check
        await drained(queue)
        return run

    run = run_virtual(scenario())
    assert run.order == ["a.py", "a.py"]
    first_ended = run.calls[0][1] + run.seconds
    assert run.calls[1][1] == pytest.approx(first_ended)


def test_an_edit_waiting_is_what_stops_an_importers_recheck():
    queue = CheckQueue(Recorder())
    queue.due["b.py"] = Due(priority=scheduler.DEPENDENT)
    assert not queue.edit_waiting() and queue.pending_dependents()
    queue.due["a.py"] = Due(priority=scheduler.EDIT)
    assert queue.edit_waiting()


def test_a_check_that_fails_does_not_stop_the_queue(caplog):
    async def scenario():
        run = Recorder()

        async def failing(uri: str, due: Due) -> bool:
            if uri == "a.py":
                raise RuntimeError("a bug in one check")
            return await run(uri, due)

        queue = CheckQueue(failing)
        queue.add("a.py", NOW)
        queue.add("b.py", NOW)
        await drained(queue)
        return run

    assert run_virtual(scenario()).order == ["b.py"]
    assert "checking a.py failed" in caplog.text


def test_the_server_checks_and_converts_with_the_collector_paused(tmp_path: Path, monkeypatch):
    from qlint.lsp import server as server_module
    from qlint.lsp import worker_checks
    from qlint.lsp.check_results import Snapshot

    seen = []
    real = worker_checks.to_lsp_diagnostic

    def convert(*args):
        seen.append(gc.isenabled())
        return real(*args)

    monkeypatch.setattr(worker_checks, "to_lsp_diagnostic", convert)
    path = tmp_path / "matcher.py"
    text = LSP_FINDING
    server = server_module.QlintLanguageServer()
    try:
        outcome = server._check(Snapshot(path.as_uri(), str(path), 1, text), "utf-16")
    finally:
        server.close()
    assert [d.code for d in outcome.diagnostics] == ["QL101"]
    assert seen == [False]
    assert gc.isenabled()


def test_the_collector_waits_until_the_result_is_published(tmp_path: Path, monkeypatch):
    """A check's cyclic garbage is collected after its publish, not by the publish."""
    from lsprotocol import types

    from qlint.lsp import server as server_module

    path = tmp_path / "matcher.py"
    text = LSP_FINDING
    server = server_module.QlintLanguageServer()
    sent = []
    monkeypatch.setattr(server, "text_document_publish_diagnostics", lambda params: sent.append(gc.isenabled()))
    monkeypatch.setattr(server, "start_runtime", lambda *args, **kwargs: None)
    from pygls.workspace import Workspace

    server.protocol._workspace = Workspace(tmp_path.as_uri())  # what `initialize` sets up
    server.protocol.client_capabilities = types.ClientCapabilities()
    item = types.TextDocumentItem(uri=path.as_uri(), language_id="python", version=1, text=text)
    server.workspace.put_text_document(item)
    server.open[path.as_uri()] = str(path)

    async def check():
        return await server._check_once(path.as_uri(), Due(priority=scheduler.EDIT))

    try:
        assert gc.isenabled()
        assert asyncio.run(check()) is False
    finally:
        server.close()
    assert sent == [False]  # published with the collector still paused
    assert gc.isenabled()  # and running again after it


def test_settle_freezes_what_is_alive():
    try:
        heap.settle()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_the_edited_module_is_published_before_its_importers_are_rechecked(tmp_path: Path):
    """The real server: typing in ops.py (a keystroke 30 ms after the last publish) is
    checked and published before the modules that import it are re-checked, which happens
    once typing pauses, against the newest ops.py. Tried again when the server's own stamps
    say the keystrokes came further apart than the pause (the client was not scheduled)."""
    ops = "import torch\n\nDQ_OPS = {torch.ops.torchao.dequantize_affine.default}\n"
    pkg = write_package(tmp_path, "pkg", ops=ops)
    use = (
        "from .ops import DQ_OPS\n\n\ndef count(ep):\n"
        "    return sum(n.target in DQ_OPS for n in ep.graph_module.graph.nodes)\n"
    )
    client = LspClient(tmp_path)
    try:
        client.initialize(tmp_path)
        importers = []
        for i in range(4):
            (pkg / f"use{i}.py").write_text(use)
            importers.append(client.open(pkg / f"use{i}.py", use))
        ops_uri = client.open(pkg / "ops.py", ops)
        for uri in [*importers, ops_uri]:
            assert client.diagnostics(uri, 1) == []

        def published(uri: str) -> int:
            return sum(m["params"]["uri"] == uri for m in client.received if m["method"].endswith("publishDiagnostics"))

        for uri in importers:  # opened, then re-checked once ops.py was opened after them
            if published(uri) < 2:
                client.wait(lambda m, uri=uri: published(uri) >= 2, what=f"the recheck of {uri}")

        packet = ops.replace("dequantize_affine.default", "dequantize_affine")
        version = 1
        for attempt in range(3):
            client.idle()  # the rechecks set off so far have run
            start = len(client.received)
            version += 2
            text = packet + f"# try {attempt}\n"
            client.send(client.change(ops_uri, version - 1, text))
            assert client.diagnostics(ops_uri, version - 1) == []
            time.sleep(0.03)
            client.send(client.change(ops_uri, version, text + "# typing\n"))
            assert client.diagnostics(ops_uri, version) == []
            for uri in importers:  # re-checked after the pause, each against the packet
                (diag,) = client.wait_for(
                    "textDocument/publishDiagnostics",
                    lambda p, uri=uri: p["uri"] == uri and p["diagnostics"],
                    since=start,
                )["diagnostics"]
                assert diag["code"] == "QL101"
            # The server's stamps of the two keystrokes: a client stalled past the pause (a
            # loaded machine) was no longer typing, and its importers were due in between.
            edits = {c["version"]: c["last_edit"] for c in client.idle() if c["uri"] == ops_uri}
            if edits[version] - edits[version - 1] < scheduler.DEPENDENT_IDLE_SECONDS:
                break
        else:
            raise AssertionError("three times, the second keystroke reached the server after the typing pause")
        order = [
            (m["params"]["uri"], m["params"].get("version"))
            for m in client.received[start:]
            if m["method"] == "textDocument/publishDiagnostics"
        ]
        assert order[:2] == [(ops_uri, version - 1), (ops_uri, version)], order
        assert sorted(uri for uri, _ in order[2:]) == sorted(importers), order
    finally:
        client.close()


def test_an_edit_stops_an_importers_recheck_that_is_running(tmp_path: Path):
    """The real server: a keystroke in ops.py while a long module that imports it is being
    rechecked stops that recheck between two rules; ops.py is published first, and the
    importer is rechecked again afterwards, against the newest ops.py.

    The importer's 300 matchers of an overload set make QL101's walk long, and its comment
    sets QL204's text trigger off: a rule after QL101, so a keystroke during that walk stops
    the recheck at the boundary after it (with QL101 alone, only before it)."""
    ops = (
        "import torch\n\nDQ_OPS = {torch.ops.torchao.dequantize_affine.default}\n"
        "Q_OPS = {torch.ops.torchao.quantize_affine.default}\n"
    )
    pkg = write_package(tmp_path, "pkg", ops=ops)
    block = (
        "\n\ndef fold_{i}(gm):\n    changed = False\n    for node in gm.graph.nodes:\n"
        "        if node.target in Q_OPS:\n            changed = bool(node.users)\n"
        "        elif node.op == 'call_function' and node.args:\n"
        "            node.meta['q{i}'] = node.args[0]\n            changed = True\n"
        "    return changed\n"
    )
    matcher = "\n\ndef count(ep):\n    return sum(1 for n in ep.graph_module.graph.nodes if n.target in DQ_OPS)\n"
    folds = "".join(block.format(i=i) for i in range(300))
    big = "import torch\n\nfrom .ops import DQ_OPS, Q_OPS\n" + matcher + folds + "\n# Folded before convert_pt2e.\n"
    (pkg / "big.py").write_text(big)
    client = LspClient(tmp_path)
    try:
        client.initialize(tmp_path)
        big_uri = client.open(pkg / "big.py", big)
        ops_uri = client.open(pkg / "ops.py", ops)
        assert client.diagnostics(big_uri, 1) == [] and client.diagnostics(ops_uri, 1) == []
        packet = ops.replace("dequantize_affine.default", "dequantize_affine")

        def importer_recheck_running(reply: dict) -> bool:
            running = reply["running"]
            return running is not None and running["uri"] == big_uri and running["why"] == "dependent"

        version, stopped = 1, []
        for _attempt in range(5):  # a keystroke during the recheck's last rule stops nothing: again
            version += 1
            client.send(client.change(ops_uri, version, packet + "#" * version + "\n"))
            client.diagnostics(ops_uri, version)
            # The importer's recheck starts once typing pauses; the server says when it runs.
            _, ended = client.debug_timings_until(importer_recheck_running, what="the importer's recheck")
            version += 1
            client.send(client.change(ops_uri, version, packet + "#" * version + "\n"))
            client.diagnostics(ops_uri, version)  # checked once the recheck stopped (or ended)
            ended += client.request("qlint/debugTimings")["checks"]
            stopped += [c for c in ended if c["uri"] == big_uri and c["cancelled"]]
            if stopped:
                break
        assert stopped, "five keystrokes landed while the importer's recheck ran, and none stopped it"
        assert all(c["why"] == "dependent" and c["published"] is None for c in stopped)
        # It runs again, after the edit, and sees the packet of the newest ops.py.
        found = client.wait_for(
            "textDocument/publishDiagnostics", lambda p: p["uri"] == big_uri and p["diagnostics"], timeout=30
        )["diagnostics"]
        assert [d["code"] for d in found] == ["QL101"]
    finally:
        client.close()
