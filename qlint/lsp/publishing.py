"""Handing results to the client: pushed, or pulled (`textDocument/diagnostic`, LSP 3.17).

A client that pulls asks again after its own edits; what it cannot know of (a runtime
verdict arrived, a module its buffer imports changed and the buffer was rechecked with
another result) it is told with `workspace/diagnostic/refresh`, after which it pulls every
open document again: so one refresh per batch of rechecks, and none when a recheck gave
the result the client already holds (its result id is kept then).
"""

from __future__ import annotations

import asyncio
import time

from lsprotocol import types

from qlint.lsp.scheduler import NOW

PULL_WAIT_SECONDS = 30.0


class Publishing:
    """Mixed into `QlintLanguageServer` (uses its `checked`, `queue`, `open`, `pull`)."""

    def refresh_when_settled(self) -> None:
        """Send the owed `workspace/diagnostic/refresh` when no dependent's recheck is due:
        one request after a batch of rechecks, not one per buffer (each makes the client
        pull every open document)."""
        if not self.refresh_owed or self.queue.pending_dependents():
            return
        self.refresh_owed = False
        if self.pull:
            self.workspace_diagnostic_refresh(None)

    def send(self, uri: str) -> None:
        """Push the buffer's current result, or tell a pulling client to pull again."""
        state = self.checked.get(uri)
        if state is None:
            return
        signal, self.published_signal = self.published_signal, asyncio.Event()
        signal.set()
        if not self.pull:
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, version=state.version, diagnostics=state.published())
            )
            return
        caps = self.client_capabilities.workspace
        if state.generation and caps and caps.diagnostics and caps.diagnostics.refresh_support:
            self.workspace_diagnostic_refresh(None)

    async def result_for(self, uri: str):
        """The result (`check_results.Checked`) for the buffer's current version, waiting for its
        check (pull); None when none came in time."""
        deadline = time.monotonic() + PULL_WAIT_SECONDS
        while uri in self.open:
            doc = self.workspace.text_documents.get(uri)
            state = self.checked.get(uri)
            if state is not None and doc is not None and state.version == doc.version:
                return state
            if not self.queue.pending(uri):
                self.schedule(uri, NOW, notify_dependents=False)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                await asyncio.wait_for(self.published_signal.wait(), remaining)
            except asyncio.TimeoutError:
                break
        return None
