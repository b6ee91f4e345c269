"""Runtime verdicts for open buffers, on the server's event loop: when to ask, when to stop.

After a buffer's static result is published (with the editor's runtime mode on), a job
looks up the verdicts the shared cache already holds (`qlint check --runtime` wrote them,
or an earlier save did) and republishes once; when the buffer was opened or saved it then
asks the worker for the rest, one finding at a time, with work-done progress, and
republishes after each verdict. Every republish is for the version the job started from:
as soon as the buffer moves on (an edit, a newer result) the job stops and its verdicts
are never shown on the newer text. The slow part runs on `EditorRuntime`'s thread.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

from lsprotocol import types

from qlint.diagnostic import Diagnostic, RuntimeVerdict
from qlint.lsp.verdicts import checkable, editor_mode
from qlint.settings import Settings

log = logging.getLogger(__name__)


class RuntimeJobs:
    """Mixed into `QlintLanguageServer` (uses its `checked`, `current`, `send`, `runtime`)."""

    def cancel_runtime(self, uri: str) -> None:
        job = self.runtime_jobs.pop(uri, None)
        if job is not None:
            job.cancel()

    def start_runtime(self, uri: str, run_worker: bool) -> None:
        state = self.checked.get(uri)
        if state is None or state.settings is None:
            return
        if editor_mode(state.settings, self.runtime_override) == "off" or not checkable(state.diagnostics):
            return
        previous = self.runtime_jobs.pop(uri, None)
        if previous is not None:
            previous.cancel()
        job = asyncio.ensure_future(self._runtime_job(uri, state, run_worker))
        self.runtime_jobs[uri] = job
        job.add_done_callback(lambda _: self.runtime_jobs.pop(uri) if self.runtime_jobs.get(uri) is job else None)

    async def _runtime_job(self, uri: str, state, run_worker: bool) -> None:
        """Cached verdicts first (one republish), then the worker for the rest, one
        republish per verdict; stops as soon as the buffer has moved on."""
        loop = asyncio.get_running_loop()
        settings = state.settings
        indexes = checkable(state.diagnostics)

        def still_current() -> bool:
            return self.checked.get(uri) is state and self.current(uri, state.version)

        def lookup_all() -> dict[int, RuntimeVerdict]:
            found = {}
            for i in indexes:
                verdict = self.runtime.cached(state.diagnostics[i], settings)
                if verdict is not None:
                    found[i] = verdict
            return found

        token = None
        try:
            cached = await loop.run_in_executor(self.runtime.executor, lookup_all)
            if cached and still_current():
                state.verdicts.update(cached)
                state.generation += 1
                self.send(uri)
            todo = [i for i in indexes if i not in state.verdicts]
            if not run_worker or not todo:
                return
            token = await self._progress_begin(len(todo))
            for done, i in enumerate(todo):
                if not still_current():
                    return
                self._progress_report(token, done, len(todo), state.diagnostics[i])
                diag = state.diagnostics[i]
                verdict = await loop.run_in_executor(self.runtime.executor, self._verdict, diag, settings)
                if not still_current():
                    return  # computed for an older version: never shown on a newer one
                state.verdicts[i] = verdict
                state.generation += 1
                self.send(uri)
        finally:
            self._progress_end(token)

    def _verdict(self, diag: Diagnostic, settings: Settings) -> RuntimeVerdict:
        try:
            return self.runtime.check(diag, settings)
        except Exception as exc:  # a bug in the client side must cost this verdict only
            log.exception("runtime check of %s failed", diag.code)
            return RuntimeVerdict("inconclusive", f"the runtime check failed: {type(exc).__name__}: {exc}")

    async def _progress_begin(self, total: int) -> str | None:
        caps = self.client_capabilities.window
        if not (caps and caps.work_done_progress):
            return None
        token = f"qlint-runtime-{uuid.uuid4().hex[:12]}"
        try:
            await asyncio.wait_for(self.work_done_progress.create_async(token), 5.0)
        except Exception:  # a client that refuses the token gets no progress, nothing else changes
            return None
        begin = types.WorkDoneProgressBegin(
            title="qlint runtime checks", message=f"0/{total}", percentage=0, cancellable=False
        )
        self.work_done_progress.begin(token, begin)
        return token

    def _progress_report(self, token: str | None, done: int, total: int, diag: Diagnostic) -> None:
        if token is not None:
            report = types.WorkDoneProgressReport(
                message=f"{done}/{total}: {diag.code} line {diag.range.start.row}",
                percentage=int(100 * done / total),
            )
            self.work_done_progress.report(token, report)

    def _progress_end(self, token: str | None) -> None:
        if token is not None:
            self.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
