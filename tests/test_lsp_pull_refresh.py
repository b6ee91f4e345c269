"""A pulling client is told to pull again when a recheck it could not know of changed a result.

A client that pulls diagnostics (`textDocument/diagnostic`) asks again after its own edits,
but not when another module changes under a buffer: another buffer is edited, a file is
rewritten on disk. The server then rechecks the importers, and when a result it already
handed out changed, it sends `workspace/diagnostic/refresh` (once per batch of rechecks),
with a new result id, so the client's `previousResultId` does not earn an "unchanged".

Driven by pygls's own `LanguageClient` over stdio (a different client than the wire-level
one of the other tests), declaring `workspace.diagnostics.refreshSupport` as VS Code does.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from qlint.lsp.client import server_env
from tests.conftest import write_package

TIMEOUT = 30.0
MATCH = (
    "from .ops import DQ\n\n\ndef count(ep):\n"
    "    return sum(1 for n in ep.graph_module.graph.nodes if n.target in DQ)\n"
)
OVERLOAD = "import torch\n\nDQ = {torch.ops.torchao.dequantize_affine.default}\n"
PACKET = "import torch\n\nDQ = {torch.ops.torchao.dequantize_affine}\n"
OTHER = "from .ops import DQ\n\nNAMES = sorted(str(t) for t in DQ)\n"  # imports ops, no matcher


class Client:
    """pygls's client with what the server asks of it recorded."""

    def __init__(self, root: Path):
        self.root = root
        self.lsp = LanguageClient("qlint-test", "1")
        self.refreshes: list[float] = []
        self.refreshed = asyncio.Event()
        self.pushed: list[types.PublishDiagnosticsParams] = []

        @self.lsp.feature(types.WORKSPACE_DIAGNOSTIC_REFRESH)
        def refresh(ls, params):
            self.refreshes.append(asyncio.get_running_loop().time())
            self.refreshed.set()

        @self.lsp.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(ls, params):
            self.pushed.append(params)

    async def start(self) -> None:
        await self.lsp.start_io(sys.executable, "-m", "qlint", "server", cwd=str(self.root), env=server_env())
        caps = types.ClientCapabilities(
            text_document=types.TextDocumentClientCapabilities(
                diagnostic=types.DiagnosticClientCapabilities(related_document_support=False)
            ),
            workspace=types.WorkspaceClientCapabilities(
                diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
            ),
        )
        params = types.InitializeParams(capabilities=caps, root_uri=self.root.as_uri(), process_id=None)
        result = await asyncio.wait_for(self.lsp.initialize_async(params), TIMEOUT)
        assert result.capabilities.diagnostic_provider is not None
        self.lsp.initialized(types.InitializedParams())

    def open(self, path: Path, text: str) -> str:
        uri = path.as_uri()
        item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        self.lsp.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
        return uri

    def change(self, uri: str, version: int, text: str) -> None:
        self.lsp.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    async def pull(self, uri: str, previous: str | None = None):
        params = types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=uri), previous_result_id=previous
        )
        return await asyncio.wait_for(self.lsp.text_document_diagnostic_async(params), TIMEOUT)

    async def idle(self) -> None:
        """Wait until the server has no check running or due (`qlint/debugTimings`): what
        the rechecks sent, a refresh among it, has arrived by then (one stream, in order)."""
        deadline = asyncio.get_running_loop().time() + TIMEOUT
        while True:
            reply = await asyncio.wait_for(self.lsp.protocol.send_request_async("qlint/debugTimings", None), TIMEOUT)
            if reply.running is None and not reply.due:
                return
            assert asyncio.get_running_loop().time() < deadline, f"the server's checks did not end: {reply}"
            await asyncio.sleep(0.01)

    async def next_refresh(self) -> None:
        await asyncio.wait_for(self.refreshed.wait(), TIMEOUT)
        self.refreshed.clear()

    async def stop(self) -> None:
        try:
            await asyncio.wait_for(self.lsp.shutdown_async(None), TIMEOUT)
            self.lsp.exit(None)
        finally:
            await self.lsp.stop()


def codes(report) -> list[str]:
    return [d.code for d in report.items]


def run(root: Path, scenario) -> None:
    async def main():
        client = Client(root)
        await client.start()
        try:
            await scenario(client)
        finally:
            await client.stop()

    asyncio.run(main())


def test_an_edit_of_an_imported_buffer_makes_the_client_pull_its_importers_again(tmp_path: Path):
    pkg = write_package(tmp_path, "pkg", ops=OVERLOAD, match=MATCH, other=OTHER)

    async def scenario(client: Client):
        match_uri = client.open(pkg / "match.py", MATCH)
        other_uri = client.open(pkg / "other.py", OTHER)
        ops_uri = client.open(pkg / "ops.py", OVERLOAD)
        first = await client.pull(match_uri)
        assert codes(first) == []
        assert codes(await client.pull(other_uri)) == []
        assert codes(await client.pull(ops_uri)) == []
        await client.idle()  # the importers' rechecks after the opens have run
        client.refreshes.clear()
        client.refreshed.clear()

        # ops.py is edited to hold a packet: match.py's finding appears without any
        # change to match.py, so only a refresh can tell the client to pull it again.
        client.change(ops_uri, 2, PACKET)
        assert codes(await client.pull(ops_uri)) == []
        await client.next_refresh()
        again = await client.pull(match_uri, previous=first.result_id)
        assert again.kind == "full" and codes(again) == ["QL101"]
        assert again.result_id != first.result_id
        assert codes(await client.pull(other_uri)) == []  # rechecked too: nothing changed there
        await client.idle()
        assert len(client.refreshes) == 1  # one refresh for the batch of rechecks
        assert client.pushed == []  # a pulling client is never pushed to

        # The same text of ops.py again (an edit and its undo): match.py's result is the
        # same as the one the client holds: no refresh.
        client.change(ops_uri, 3, PACKET + "\n")
        await client.idle()
        assert len(client.refreshes) == 1
        unchanged = await client.pull(match_uri, previous=again.result_id)
        assert unchanged.kind == "unchanged"

    run(tmp_path, scenario)


def test_a_module_rewritten_on_disk_makes_the_client_pull_its_importers_again(tmp_path: Path):
    pkg = write_package(tmp_path, "pkg", ops=OVERLOAD, match=MATCH)

    async def scenario(client: Client):
        match_uri = client.open(pkg / "match.py", MATCH)
        first = await client.pull(match_uri)
        assert codes(first) == []
        (pkg / "ops.py").write_text(PACKET)  # a `git checkout` outside the editor
        change = types.FileEvent(uri=(pkg / "ops.py").as_uri(), type=types.FileChangeType.Changed)
        client.lsp.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[change]))
        await client.next_refresh()
        again = await client.pull(match_uri, previous=first.result_id)
        assert again.kind == "full" and codes(again) == ["QL101"]

    run(tmp_path, scenario)
