"""`qlint server`: diagnostics on unsaved buffers, code actions, hover, runtime verdicts.

Every open Python buffer is checked under its real path with the settings of its project,
against a `ProjectIndex` whose overlay holds all open buffers, so a constant imported from
another module is read as the editor shows it, not as it was last saved. Checks run one at
a time on a worker thread (the project index is not thread-safe, and the event loop must
keep reading messages), in the order `scheduler.CheckQueue` decides: the buffer being
edited first, the buffers that import it after, when typing pauses. A result whose buffer
changed meanwhile is dropped rather than published. The cycle collector is kept out of
the checks (`gc_paused`) and off the start-up state (`heap`).

Runtime verdicts (opt-in) run on a thread of their own after the static result is
published, and are republished onto that same version only (see `runtime_jobs`).

Never imports torch: the engine's op knowledge is a bundled table.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from qlint import __version__
from qlint.analysis.names.project import ProjectIndex
from qlint.config import ConfigError, runtime_editor_mode
from qlint.engine import CheckCancelled
from qlint.gc_pause import gc_paused
from qlint.lsp import actions, heap, stdio
from qlint.lsp.check_results import Checked, CheckOutcome, Snapshot
from qlint.lsp.convert import UTF16
from qlint.lsp.disk_changes import DiskChanges
from qlint.lsp.protocol import AlreadyAnswered, QlintProtocol, pulls_and_refreshes
from qlint.lsp.publishing import Publishing
from qlint.lsp.runtime_jobs import RuntimeJobs
from qlint.lsp.scheduler import CANCELLED, EDIT, EDITED, LATER, CheckQueue, Due
from qlint.lsp.settings_cache import SettingsCache
from qlint.lsp.timings import Timings
from qlint.lsp.verdicts import EditorRuntime
from qlint.lsp.worker_checks import WorkerChecks

PYTHON_SUFFIXES = (".py", ".pyi")

log = logging.getLogger(__name__)


class QlintLanguageServer(Publishing, RuntimeJobs, DiskChanges, WorkerChecks, LanguageServer):
    def __init__(self):
        super().__init__(
            "qlint",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=QlintProtocol,
        )
        self.project = ProjectIndex()
        self.settings_cache = SettingsCache()
        self.checker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="qlint-check")
        self.runtime = EditorRuntime()
        self.runtime_override: str | None = None  # the editor's runtime mode, when it sets one
        self.open: dict[str, str] = {}  # uri -> path of the open Python buffers
        self.queue = CheckQueue(self._check_once)
        self.runtime_jobs: dict[str, asyncio.Task] = {}
        self.settled = False  # the start-up state is frozen out of the collector's walks
        self.checked: dict[str, Checked] = {}
        self.published_signal = asyncio.Event()
        self.shutdown_requested = False
        self.serial = 0  # checks published so far
        self.refresh_owed = False  # a pulling client holds a result that a recheck changed
        self.timings = Timings()
        self.watch_roots: tuple[str, ...] | None = None  # the folders the client watches for us

    # -- errors: a reply where one is owed, a log line, never a popup ---------------------

    def report_server_error(self, error: Exception, source) -> None:
        if isinstance(error, (json.JSONDecodeError, UnicodeDecodeError)):
            self.protocol.answer_parse_error(error)
            message = f"qlint: ignored a message that is not JSON: {error}"
        elif isinstance(error, AlreadyAnswered):
            message = f"qlint: answered a request with an error: {error}"
        else:
            message = f"qlint: {type(error).__name__}: {error}"
        self.window_log_message(types.LogMessageParams(type=types.MessageType.Warning, message=message))

    # -- state, read on the event loop ---------------------------------------------------

    @property
    def encoding(self) -> str:
        encoding = self.workspace.position_encoding
        return str(getattr(encoding, "value", encoding) or UTF16)

    @property
    def pull(self) -> bool:
        """The client pulls diagnostics (`textDocument/diagnostic`) and can be told to pull
        again: then none are pushed (others were offered no pull: see `protocol`)."""
        return pulls_and_refreshes(self.client_capabilities)

    def snapshot(self, uri: str) -> Snapshot | None:
        path = self.open.get(uri)
        if path is None:
            return None
        doc = self.workspace.get_text_document(uri)
        return Snapshot(uri, path, doc.version, doc.source)

    def current(self, uri: str, version: int | None) -> bool:
        snap = self.workspace.text_documents.get(uri)
        return uri in self.open and snap is not None and snap.version == version

    def edit_for(self, uri: str, version: int | None) -> actions.EditFor:
        caps = self.client_capabilities.workspace
        versioned = bool(caps and caps.workspace_edit and caps.workspace_edit.document_changes)
        return lambda edits: actions.workspace_edit(uri, version, edits, versioned)

    def set_runtime_override(self, options) -> None:
        """`initializationOptions` / `workspace/didChangeConfiguration`: `{"runtime": "on-save"}`,
        also nested as `{"qlint": {"runtime": {"editor": ...}}}`; null or "" leaves the choice
        to the project's `[tool.qlint.runtime] editor`."""
        if isinstance(options, dict) and isinstance(options.get("qlint"), dict):
            options = options["qlint"]
        if not isinstance(options, dict) or "runtime" not in options:
            return
        mode = options["runtime"]
        if isinstance(mode, dict):
            mode = mode.get("editor")
        if mode in (None, ""):
            self.runtime_override = None
            return
        try:
            self.runtime_override = runtime_editor_mode(mode, "qlint settings: runtime")
        except ConfigError as exc:
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=f"qlint: {exc}"))

    # -- scheduling ----------------------------------------------------------------------

    def schedule(self, uri: str, when: str = EDITED, notify_dependents: bool = True, runtime=False) -> None:
        """Check `uri`: after the edit-coalescing window (EDITED: its text changed), next
        (NOW: opened, saved, asked for), or when typing pauses (LATER: a module it imports
        changed). A request during its check is done by one more check. `runtime`: the
        buffer was opened or saved."""
        due = self.queue.entry(uri)
        due.notify_dependents = due.notify_dependents or notify_dependents
        doc = self.workspace.text_documents.get(uri)
        if runtime:
            due.runtime, due.runtime_version = True, doc.version if doc is not None else None
        elif notify_dependents:
            self.cancel_runtime(uri)  # the buffer's text changed: its running checks are stale
        self.queue.add(uri, when)

    async def _check_once(self, uri: str, due: Due) -> bool | str:
        """Check and publish; True when the buffer changed meanwhile (nothing published),
        CANCELLED when the check stopped early for that reason or for an edit elsewhere.

        The collector stays paused until the result is written: a check leaves thousands of
        objects in reference cycles (the model-flow analysis links its interpreter state to
        the tree), which the first allocation after the pause would collect, on the event
        loop, before the publish (12-40 ms on a 1,400-line module). They are collected
        right after it instead, before the next message is read."""
        try:
            with gc_paused():
                outcome = await self._check_and_publish(uri, due)
        finally:
            self.timings.ended()
        if gc.isenabled():
            gc.collect(0)
        return outcome

    async def _check_and_publish(self, uri: str, due: Due) -> bool | str:
        snap = self.snapshot(uri)
        if snap is None:
            return False
        loop = asyncio.get_running_loop()
        dependent = due.priority != EDIT
        timing = self.timings.started(uri, snap.version, "dependent" if dependent else "edit")

        def cancelled() -> bool:
            """Asked by the engine between rules, on the checker thread: the buffer moved on
            (its result would be dropped), or this is an importer's recheck and an edit
            waits (the edited buffer never waits behind it)."""
            return not self.current(uri, snap.version) or (dependent and self.queue.edit_waiting())

        try:
            outcome = await loop.run_in_executor(self.checker, self._check, snap, self.encoding, cancelled)
        except CheckCancelled:
            timing.cancelled, timing.finished = True, time.monotonic()
            timing.work = timing.finished - timing.started
            self.timings.published(timing, current=False)
            if uri in self.open:  # what it owed passes to the next check of the buffer
                later = self.queue.entry(uri)
                later.notify_dependents = later.notify_dependents or due.notify_dependents
                if self.current(uri, snap.version):  # stopped for an edit elsewhere: it runs again
                    if due.runtime and not later.runtime:
                        later.runtime, later.runtime_version = True, due.runtime_version
                    self.queue.add(uri, LATER)
            return CANCELLED
        except Exception as exc:  # a bug must cost this check, not the server
            log.exception("checking %s failed", snap.path)
            message = f"qlint: checking {snap.path} failed: {type(exc).__name__}: {exc}"
            self.window_log_message(types.LogMessageParams(type=types.MessageType.Error, message=message))
            return False
        timing.engine, timing.work, timing.finished = outcome.engine_seconds, outcome.seconds, time.monotonic()
        timing.engine_cpu = outcome.engine_cpu
        if outcome.config_error:
            self.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Error,
                    message=f"qlint: {outcome.config_error} (checking with the default settings until it is fixed)",
                )
            )
        if not self.current(uri, snap.version):
            self.timings.published(timing, current=False)
            # Closed, or edited meanwhile: the newer check publishes. What this one owed
            # (dependents) carries over to it.
            if uri in self.open:
                later = self.queue.entry(uri)
                later.notify_dependents = later.notify_dependents or due.notify_dependents
                return True
            return False
        self.publish(outcome)
        self.timings.published(timing, current=True)
        if due.notify_dependents:
            path = os.path.abspath(snap.path)
            for other, state in list(self.checked.items()):
                if other != uri and path in state.dependencies:
                    self.schedule(other, LATER, notify_dependents=False)
        self.refresh_when_settled()
        self.start_runtime(uri, run_worker=due.runtime and due.runtime_version == snap.version)
        if not self.settled:  # after the first publish, off the edit's path
            self.settled = True
            self.checker.submit(heap.settle)
        return False

    def publish(self, outcome: CheckOutcome) -> None:
        snap = outcome.snapshot
        for error in outcome.errors:
            self.window_log_message(types.LogMessageParams(type=types.MessageType.Error, message=f"qlint: {error}"))
        self.serial += 1
        state = Checked(
            snap.version, outcome.diagnostics, outcome.dependencies, outcome.lsp, outcome.settings, serial=self.serial
        )
        before = self.checked.get(snap.uri)
        self.checked[snap.uri] = state
        # A pulling client asks again by itself after its own edits; a recheck of a text it
        # already holds (a module it imports changed, on disk or in another buffer; the
        # config changed) it cannot know of: it is told to pull again, once the rechecks
        # that are due have run, and only when the result differs.
        if before is not None and before.version == snap.version:
            if before.generation == 0 and before.lsp == state.lsp:
                state.serial = before.serial  # the same result: the client's copy is current
            else:
                self.refresh_owed = True
        self.send(snap.uri)

    def forget(self, uri: str) -> None:
        self.cancel_runtime(uri)
        self.timings.forget(uri)
        self.queue.discard(uri)
        path = self.open.pop(uri, None)
        self.checked.pop(uri, None)
        if path is not None:
            self.checker.submit(self.project.set_overlay, path, None)
            dependents = [u for u, s in self.checked.items() if os.path.abspath(path) in s.dependencies]
            for other in dependents:  # they now see the file on disk again
                self.schedule(other, LATER, notify_dependents=False)
        self.refresh_when_settled()  # its recheck may have been the last one due
        if not self.pull:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def start_io(self, stdin=None, stdout=None) -> None:
        """stdin read by the event loop (`stdio`), else the way pygls reads it."""
        if not stdio.serve(self, stdin, stdout):
            super().start_io(stdin, stdout)

    def close(self) -> None:
        self.queue.close()
        self.checker.shutdown(wait=False, cancel_futures=True)
        self.runtime.close()


def is_python(uri: str, language_id: str | None) -> str | None:
    """The file path of a Python buffer qlint can check, else None (notebook cells and
    untitled buffers have no path to resolve imports and settings from)."""
    path = to_fs_path(uri)
    if path is None or (language_id != "python" and not path.endswith(PYTHON_SUFFIXES)):
        return None
    return os.path.abspath(path)
