"""The LSP methods `qlint server` answers, wired to `QlintLanguageServer`."""

from __future__ import annotations

import asyncio
import logging
import os
import sys

from lsprotocol import types
from pygls.uris import to_fs_path

from qlint.analysis import run_roots
from qlint.analysis.names.packaging_files import PACKAGING_NAMES
from qlint.config import CONFIG_NAMES
from qlint.lsp import actions, hover
from qlint.lsp.check_results import Snapshot
from qlint.lsp.convert import DocumentText, from_lsp_diagnostic
from qlint.lsp.scheduler import NOW
from qlint.lsp.server import PYTHON_SUFFIXES, QlintLanguageServer, is_python

DEBUG_MODULES = "qlint/debugModules"
DEBUG_WORKERS = "qlint/debugRuntimeWorkers"
DEBUG_TIMINGS = "qlint/debugTimings"
DEBUG_WATCHED = "qlint/debugWatchedFiles"
WATCH_ID = "qlint-watched-files"


def register(server: QlintLanguageServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: QlintLanguageServer, params: types.InitializeParams) -> None:
        ls.set_runtime_override(params.initialization_options)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: QlintLanguageServer, params: types.InitializedParams) -> None:
        # The workspace folders stand in for the project root of files with no marker above
        # them (`run_roots`); on the checker thread, between two checks.
        ls.checker.submit(run_roots.use_directories, ls.workspace_roots())
        caps = ls.client_capabilities.workspace
        watched = caps and caps.did_change_watched_files
        if not (watched and watched.dynamic_registration):
            return
        names = dict.fromkeys((*CONFIG_NAMES, *PACKAGING_NAMES))  # `setup.py` is a module too: harmless
        patterns = [f"**/*{suffix}" for suffix in PYTHON_SUFFIXES] + [f"**/{name}" for name in names]
        watchers = [types.FileSystemWatcher(glob_pattern=p) for p in patterns]
        # A directory created, deleted or renamed is one event for all it holds, and its name
        # matches none of the patterns above: without this one, modules moved with their
        # directory would go unreported and the keys kept for them (`watched_files`) stale.
        watchers.append(
            types.FileSystemWatcher(glob_pattern="**/*", kind=types.WatchKind.Create | types.WatchKind.Delete)
        )
        options = types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers)
        registration = types.Registration(
            id=WATCH_ID, method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
        )
        try:
            await ls.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
        except Exception as exc:  # the client said no: buffers are still checked on every edit
            ls.window_log_message(
                types.LogMessageParams(type=types.MessageType.Info, message=f"qlint: no file watching: {exc}")
            )
            return
        ls.watching_started()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: QlintLanguageServer, params: types.DidChangeConfigurationParams) -> None:
        before = ls.runtime_override
        ls.set_runtime_override(params.settings)
        if ls.runtime_override != before:
            for uri in list(ls.open):
                ls.schedule(uri, NOW, notify_dependents=False, runtime=True)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_workspace_folders(ls: QlintLanguageServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        ls.folders_changed()  # pygls has already added and removed them in `ls.workspace`

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: QlintLanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
        changes = [(path, int(c.type)) for c in params.changes if (path := to_fs_path(c.uri))]
        ls.files_changed(changes)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: QlintLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        path = is_python(doc.uri, doc.language_id)
        if path is not None:
            ls.open[doc.uri] = path
            ls.schedule(doc.uri, NOW, runtime=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: QlintLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        if params.text_document.uri in ls.open:
            ls.timings.edited(params.text_document.uri)
            ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: QlintLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in ls.open:
            ls.schedule(uri, NOW, runtime=True)
        path = to_fs_path(uri) or ""
        if os.path.basename(path) in (*CONFIG_NAMES, *PACKAGING_NAMES):
            ls.files_changed([(path, types.FileChangeType.Changed)])  # applies at once, watcher or not

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: QlintLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.forget(params.text_document.uri)

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(identifier="qlint", inter_file_dependencies=True, workspace_diagnostics=False),
    )
    async def pull_diagnostics(ls: QlintLanguageServer, params: types.DocumentDiagnosticParams):
        state = await ls.result_for(params.text_document.uri)
        if state is None:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        if params.previous_result_id == state.result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=state.result_id)
        return types.RelatedFullDocumentDiagnosticReport(items=state.published(), result_id=state.result_id)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def on_hover(ls: QlintLanguageServer, params: types.HoverParams) -> types.Hover | None:
        snap = ls.snapshot(params.text_document.uri)
        if snap is None:
            return None
        state = ls.checked.get(snap.uri)
        findings = state.findings() if state is not None and state.version == snap.version else []
        doc = DocumentText(snap.text, ls.encoding, snap.path)
        where = doc.from_lsp(params.position)
        found = await asyncio.get_running_loop().run_in_executor(
            ls.checker, hover.hover_at, snap.text, snap.path, where, ls.project, findings
        )
        if found is None:
            return None
        markdown, rng = found
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown),
            range=doc.range_to_lsp(rng),
        )

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
                    found.append(actions.quick_fix(diag, lsp_diag, doc, edit_for, ls.text_of))
                    found.append(actions.disable_for_line(diag, lsp_diag, doc, edit_for))
        if actions.kind_wanted(actions.FIX_ALL_KIND, only) and _may_fix(ls, snap, asked=only is not None):
            fixed = await asyncio.get_running_loop().run_in_executor(ls.checker, ls.fixed_text, snap)
            if fixed is not None and ls.snapshot(snap.uri) == snap:
                found.append(actions.fix_all(doc, fixed, edit_for))
        return [a for a in found if a is not None]

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: QlintLanguageServer, *args) -> None:
        ls.shutdown_requested = True
        ls.queue.close()
        for task in ls.runtime_jobs.values():
            task.cancel()
        ls.runtime.close()

    @server.feature(DEBUG_MODULES)
    def debug_modules(ls: QlintLanguageServer, *args) -> dict:
        """For tests and bug reports: which heavy packages this process has imported."""
        return {"modules": sorted(name for name in sys.modules if "." not in name)}

    @server.feature(DEBUG_TIMINGS)
    def debug_timings(ls: QlintLanguageServer, *args) -> dict:
        """For `benchmarks/lsp_bench.py`, tests and bug reports: where the checks that ended
        since the last call spent their time (see `qlint.lsp.timings`), the check running
        now (handed to the checker thread: the event loop answers only between the steps
        of a check that are its own, none of which outlasts a step) and the buffers due
        for a check."""
        return {"checks": ls.timings.take(), "running": ls.timings.in_progress(), "due": sorted(ls.queue.due)}

    @server.feature(DEBUG_WATCHED)
    async def debug_watched(ls: QlintLanguageServer, *args) -> dict:
        """For tests and bug reports: the folders the client watches for the server (None:
        no watcher, every check stats what it reads) and how many file keys are kept there."""

        def taken() -> dict:  # on the checker thread: between checks
            watched = ls.project.watched
            roots = list(watched.roots) if watched is not None else None
            return {
                "roots": roots,
                "kept": len(watched.keys) if watched else 0,
                "events": watched.events if watched else 0,
            }

        return await asyncio.get_running_loop().run_in_executor(ls.checker, taken)

    @server.feature(DEBUG_WORKERS)
    def debug_workers(ls: QlintLanguageServer, *args) -> dict:
        """For tests and bug reports: the process ids of the live runtime workers."""
        return {"pids": ls.runtime.workers()}


def _cached(ls: QlintLanguageServer, snap: Snapshot, lsp_diag: types.Diagnostic, doc: DocumentText):
    """For clients that drop `data`: the same finding in the last published result."""
    state = ls.checked.get(snap.uri)
    if state is None or state.version != snap.version or lsp_diag.source != "qlint":
        return None
    rng = doc.range_from_lsp(lsp_diag.range)
    return next((d for d in state.findings() if d.code == lsp_diag.code and d.range == rng), None)


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


def create_server() -> QlintLanguageServer:
    server = QlintLanguageServer()
    register(server)
    return server


def main() -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="qlint server: %(message)s")
    server = create_server()
    try:
        server.start_io()
    finally:
        server.close()
    # LSP: exit code 0 after shutdown, 1 when the client exits (or vanishes) without it.
    return 0 if server.shutdown_requested else 1
