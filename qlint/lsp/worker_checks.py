"""A buffer's check and its fixes, on the server's checker thread: the project index is not
thread-safe, so everything that reads or changes it runs here, one check at a time, with the
cycle collector paused (`gc_paused`)."""

from __future__ import annotations

import time

from qlint.engine import check_source
from qlint.fixes import fix_text
from qlint.gc_pause import gc_paused
from qlint.lsp.check_results import CheckOutcome, Snapshot
from qlint.lsp.convert import DocumentText, to_lsp_diagnostic


class WorkerChecks:
    """Mixed into `QlintLanguageServer` (uses its `project`, `settings_cache`, `watch_roots`,
    `workspace_roots`)."""

    def _check(self, snap: Snapshot, encoding: str, cancelled=None) -> CheckOutcome:
        with gc_paused():
            return self._check_paused(snap, encoding, cancelled)

    def _check_paused(self, snap: Snapshot, encoding: str, cancelled=None) -> CheckOutcome:
        start = time.perf_counter()
        if self.watch_roots is not None:
            roots = self.workspace_roots()
            if roots != self.watch_roots:  # folders added or removed: the watcher sees others now
                self.watch_roots = roots
                self.project.watch(roots)
        self.project.set_overlay(snap.path, snap.text)
        loaded = self.settings_cache.get(snap.path)
        config_error = None
        if loaded.error and not loaded.reported:
            loaded.reported = True
            config_error = loaded.error
        if loaded.excludes(snap.path):
            return CheckOutcome(snap, [], [], frozenset(), config_error, [], loaded.settings)
        engine_start, cpu_start = time.perf_counter(), time.thread_time()
        result = check_source(snap.text, snap.path, loaded.settings, self.project, cancelled=cancelled)
        engine_seconds, engine_cpu = time.perf_counter() - engine_start, time.thread_time() - cpu_start
        doc = DocumentText(snap.text, encoding, snap.path)
        lsp = [to_lsp_diagnostic(d, doc, snap.version, self.text_of) for d in result.diagnostics]
        deps = frozenset(result.dependencies)
        seconds = time.perf_counter() - start
        return CheckOutcome(
            snap,
            result.diagnostics,
            lsp,
            deps,
            config_error,
            result.errors,
            loaded.settings,
            seconds,
            engine_seconds,
            engine_cpu,
        )

    def text_of(self, path: str) -> str | None:
        """An open buffer's text, else the file's (for related information elsewhere)."""
        return self.project.text(path)

    def fixed_text(self, snap: Snapshot) -> str | None:
        """The buffer with every applicable fix applied to a fixpoint (None: nothing to do)."""
        loaded = self.settings_cache.get(snap.path)
        if loaded.excludes(snap.path):
            return None
        self.project.set_overlay(snap.path, snap.text)
        try:
            with gc_paused():
                outcome = fix_text(snap.text, snap.path, loaded.settings, loaded.settings.unsafe_fixes, self.project)
        finally:
            self.project.set_overlay(snap.path, snap.text)  # fix_text moves the overlay along
        return outcome.fixed if outcome.changed else None
