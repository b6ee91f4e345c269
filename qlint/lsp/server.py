"""`qlint server`: diagnostics on unsaved buffers and code actions, over LSP on stdio.

Every open Python buffer is checked under its real path with the settings of its project,
against a `ProjectIndex` whose overlay holds all open buffers, so a constant imported from
another module is read as the editor shows it, not as it was last saved. Checks run one at
a time on a worker thread (the project index is not thread-safe, and the event loop must
keep reading messages); typing is debounced, and a check whose buffer changed meanwhile is
dropped rather than published. When a buffer changes, the open buffers that import it are
checked again.

Never imports torch: the engine's op knowledge is a bundled table.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from qlint import __version__
from qlint.analysis.names.project import ProjectIndex
from qlint.config import CONFIG_NAMES
from qlint.diagnostic import Diagnostic
from qlint.engine import check_source
from qlint.fixes import fix_text
from qlint.lsp import actions
from qlint.lsp.convert import UTF16, DocumentText, from_lsp_diagnostic, to_lsp_diagnostic
from qlint.lsp.settings_cache import SettingsCache

DEBOUNCE_SECONDS = 0.15
DEBUG_MODULES = "qlint/debugModules"
PYTHON_SUFFIXES = (".py", ".pyi")

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Snapshot:
    uri: str
    path: str
    version: int | None
    text: str


@dataclass(frozen=True)
class Pending:
    task: asyncio.Task
    notify_dependents: bool  # the buffer's own text changed: recheck the buffers importing it


@dataclass
class Checked:
    """The last published result of a buffer: what fix-all and the lightbulb consult."""

    version: int | None
    diagnostics: list[Diagnostic]
    dependencies: frozenset[str] = field(default_factory=frozenset)


@dataclass
class CheckOutcome:
    snapshot: Snapshot
    diagnostics: list[Diagnostic]
    lsp: list[types.Diagnostic]
    dependencies: frozenset[str]
    config_error: str | None  # to show: a config problem not reported before
    errors: list[str]


class QlintLanguageServer(LanguageServer):
    def __init__(self, debounce: float = DEBOUNCE_SECONDS):
        super().__init__("qlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.debounce = debounce
        self.project = ProjectIndex()
        self.settings_cache = SettingsCache()
        self.checker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="qlint-check")
        self.open: dict[str, str] = {}  # uri -> path of the open Python buffers
        self.pending: dict[str, Pending] = {}
        self.checked: dict[str, Checked] = {}
        self.shutdown_requested = False

    # -- state, read on the event loop ---------------------------------------------------

    @property
    def encoding(self) -> str:
        encoding = self.workspace.position_encoding
        return str(getattr(encoding, "value", encoding) or UTF16)

    def snapshot(self, uri: str) -> Snapshot | None:
        path = self.open.get(uri)
        if path is None:
            return None
        doc = self.workspace.get_text_document(uri)
        return Snapshot(uri, path, doc.version, doc.source)

    def edit_for(self, uri: str, version: int | None) -> actions.EditFor:
        caps = self.client_capabilities.workspace
        versioned = bool(caps and caps.workspace_edit and caps.workspace_edit.document_changes)
        return lambda edits: actions.workspace_edit(uri, version, edits, versioned)

    # -- scheduling ----------------------------------------------------------------------

    def schedule(self, uri: str, delay: float, notify_dependents: bool = True) -> None:
        """Check `uri` after `delay`; a newer request for the same buffer replaces this one."""
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.task.cancel()
            # A recheck because an import changed must not swallow the buffer's own edit.
            notify_dependents = notify_dependents or previous.notify_dependents
        pending = Pending(asyncio.ensure_future(self._check_later(uri, delay, notify_dependents)), notify_dependents)
        self.pending[uri] = pending
        pending.task.add_done_callback(lambda _: self.pending.pop(uri) if self.pending.get(uri) is pending else None)

    async def _check_later(self, uri: str, delay: float, notify_dependents: bool) -> None:
        if delay:
            await asyncio.sleep(delay)
        snap = self.snapshot(uri)
        if snap is None:
            return
        loop = asyncio.get_running_loop()
        try:
            outcome = await loop.run_in_executor(self.checker, self._check, snap, self.encoding)
        except Exception as exc:  # a bug must cost this check, not the server
            log.exception("checking %s failed", snap.path)
            message = f"qlint: checking {snap.path} failed: {type(exc).__name__}: {exc}"
            self.window_log_message(types.LogMessageParams(type=types.MessageType.Error, message=message))
            return
        if outcome.config_error:
            self.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Error,
                    message=f"qlint: {outcome.config_error} (checking with the default settings until it is fixed)",
                )
            )
        current = self.snapshot(uri)
        if current is None or current.version != snap.version:
            return  # closed, or edited meanwhile: the newer check publishes
        self.publish(outcome)
        if notify_dependents:
            path = os.path.abspath(snap.path)
            for other, state in list(self.checked.items()):
                if other != uri and path in state.dependencies:
                    self.schedule(other, self.debounce, notify_dependents=False)

    def publish(self, outcome: CheckOutcome) -> None:
        snap = outcome.snapshot
        for error in outcome.errors:
            self.window_log_message(types.LogMessageParams(type=types.MessageType.Error, message=f"qlint: {error}"))
        self.checked[snap.uri] = Checked(snap.version, outcome.diagnostics, outcome.dependencies)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=snap.uri, version=snap.version, diagnostics=outcome.lsp)
        )

    def forget(self, uri: str) -> None:
        pending = self.pending.pop(uri, None)
        if pending is not None:
            pending.task.cancel()
        path = self.open.pop(uri, None)
        self.checked.pop(uri, None)
        if path is not None:
            self.checker.submit(self.project.set_overlay, path, None)
            dependents = [u for u, s in self.checked.items() if os.path.abspath(path) in s.dependencies]
            for other in dependents:  # they now see the file on disk again
                self.schedule(other, self.debounce, notify_dependents=False)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    # -- on the worker thread ------------------------------------------------------------

    def _check(self, snap: Snapshot, encoding: str) -> CheckOutcome:
        self.project.set_overlay(snap.path, snap.text)
        loaded = self.settings_cache.get(snap.path)
        config_error = None
        if loaded.error and not loaded.reported:
            loaded.reported = True
            config_error = loaded.error
        if loaded.excludes(snap.path):
            return CheckOutcome(snap, [], [], frozenset(), config_error, [])
        result = check_source(snap.text, snap.path, loaded.settings, self.project)
        doc = DocumentText(snap.text, encoding, snap.path)
        lsp = [to_lsp_diagnostic(d, doc, snap.version, self._text_of) for d in result.diagnostics]
        deps = frozenset(result.dependencies)
        return CheckOutcome(snap, result.diagnostics, lsp, deps, config_error, result.errors)

    def _text_of(self, path: str) -> str | None:
        """An open buffer's text, else the file's (for related information elsewhere)."""
        return self.project.text(path)

    def _fix_all(self, snap: Snapshot) -> str | None:
        """The buffer with every applicable fix applied to a fixpoint (None: nothing to do)."""
        loaded = self.settings_cache.get(snap.path)
        if loaded.excludes(snap.path):
            return None
        self.project.set_overlay(snap.path, snap.text)
        try:
            outcome = fix_text(snap.text, snap.path, loaded.settings, loaded.settings.unsafe_fixes, self.project)
        finally:
            self.project.set_overlay(snap.path, snap.text)  # fix_text moves the overlay along
        return outcome.fixed if outcome.changed else None


def is_python(uri: str, language_id: str | None) -> str | None:
    """The file path of a Python buffer qlint can check, else None (notebook cells and
    untitled buffers have no path to resolve imports and settings from)."""
    path = to_fs_path(uri)
    if path is None or (language_id != "python" and not path.endswith(PYTHON_SUFFIXES)):
        return None
    return os.path.abspath(path)


def create_server(debounce: float = DEBOUNCE_SECONDS) -> QlintLanguageServer:
    server = QlintLanguageServer(debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: QlintLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        path = is_python(doc.uri, doc.language_id)
        if path is not None:
            ls.open[doc.uri] = path
            ls.schedule(doc.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: QlintLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        if params.text_document.uri in ls.open:
            ls.schedule(params.text_document.uri, ls.debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    async def did_save(ls: QlintLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in ls.open:
            ls.schedule(uri, 0)
        elif os.path.basename(to_fs_path(uri) or "") in CONFIG_NAMES:
            for other in list(ls.open):  # a config saved from the editor applies at once
                ls.schedule(other, 0, notify_dependents=False)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: QlintLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.forget(params.text_document.uri)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=actions.CODE_ACTION_KINDS)
    )
    async def code_action(ls: QlintLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        snap = ls.snapshot(params.text_document.uri)
        if snap is None:
            return []
        doc = DocumentText(snap.text, ls.encoding, snap.path)
        edit_for = ls.edit_for(snap.uri, snap.version)
        only = params.context.only
        found: list[types.CodeAction | None] = []
        if actions.kind_wanted(actions.QUICK_FIX_KIND, only):
            for lsp_diag in params.context.diagnostics:
                diag = from_lsp_diagnostic(lsp_diag, doc, snap.path, snap.version) or _cached(ls, snap, lsp_diag, doc)
                if diag is not None:
                    found.append(actions.quick_fix(diag, lsp_diag, doc, edit_for, ls._text_of))
                    found.append(actions.disable_for_line(diag, lsp_diag, doc, edit_for))
        if actions.kind_wanted(actions.FIX_ALL_KIND, only) and _may_fix(ls, snap, asked=only is not None):
            fixed = await asyncio.get_running_loop().run_in_executor(ls.checker, ls._fix_all, snap)
            if fixed is not None and ls.snapshot(snap.uri) == snap:
                found.append(actions.fix_all(doc, fixed, edit_for))
        return [a for a in found if a is not None]

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: QlintLanguageServer, *args) -> None:
        ls.shutdown_requested = True
        for pending in ls.pending.values():
            pending.task.cancel()

    @server.feature(DEBUG_MODULES)
    def debug_modules(ls: QlintLanguageServer, *args) -> dict:
        """For tests and bug reports: which heavy packages this process has imported."""
        return {"modules": sorted(name for name in sys.modules if "." not in name)}

    return server


def _cached(ls: QlintLanguageServer, snap: Snapshot, lsp_diag: types.Diagnostic, doc: DocumentText):
    """For clients that drop `data`: the same finding in the last published result."""
    state = ls.checked.get(snap.uri)
    if state is None or state.version != snap.version or lsp_diag.source != "qlint":
        return None
    rng = doc.range_from_lsp(lsp_diag.range)
    return next((d for d in state.diagnostics if d.code == lsp_diag.code and d.range == rng), None)


def _may_fix(ls: QlintLanguageServer, snap: Snapshot, asked: bool) -> bool:
    """Whether running the fixer can be worth it. The lightbulb asks on every cursor move:
    it only gets fix-all when the current result has an applicable fix. A client asking
    for fix-all explicitly (on save) always gets the fixer run."""
    if asked:
        return True
    state = ls.checked.get(snap.uri)
    return (
        state is not None
        and state.version == snap.version
        and any(d.fix is not None and d.fix.applies(False) for d in state.diagnostics)
    )


def main() -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="qlint server: %(message)s")
    server = create_server()
    server.start_io()
    server.checker.shutdown(wait=False, cancel_futures=True)
    # LSP: exit code 0 after shutdown, 1 when the client exits (or vanishes) without it.
    return 0 if server.shutdown_requested else 1
