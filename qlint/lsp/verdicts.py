"""Runtime verdicts in the editor: which findings to check, and how a verdict looks.

The server never imports torch. `EditorRuntime` drives the runtime worker (a subprocess,
see `qlint.runtime.client`) on a thread of its own, so a check that takes seconds blocks
neither the event loop nor the static checks. It shares the verdict cache with
`qlint check --runtime`: a lookup costs a file read, so verdicts the CLI (or an earlier
save) already established are shown on every check, and the worker runs only when a
buffer is opened or saved (`editor = "on-save"`).

How a verdict changes a diagnostic: `confirmed` appends the evidence to the message;
`refuted` downgrades the finding to a Hint that says why; `inconclusive` says so and keeps
the severity; every verdict is in `data.runtime` (the quick fix reads `fix_verified` from
there for its title).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types

from qlint.diagnostic import Diagnostic, RuntimeVerdict
from qlint.runtime.checks import has_check
from qlint.settings import Settings

MODES = ("off", "on-save")


def editor_mode(settings: Settings, override: str | None) -> str:
    """The editor's own setting (initializationOptions, didChangeConfiguration) wins over
    the project's `[tool.qlint.runtime] editor`: it is the user's choice for their machine."""
    return override if override in MODES else settings.runtime_editor


def verdict_to_json(verdict: RuntimeVerdict) -> dict[str, Any]:
    return {
        "verdict": verdict.verdict,
        "evidence": verdict.evidence,
        "fixVerified": verdict.fix_verified,
        "seconds": verdict.seconds,
    }


def verdict_from_json(data: Any) -> RuntimeVerdict | None:
    """The inverse of `verdict_to_json`; None for anything malformed (it came from the client)."""
    if not isinstance(data, dict) or not isinstance(data.get("verdict"), str):
        return None
    fix_verified = data.get("fixVerified")
    seconds = data.get("seconds")
    return RuntimeVerdict(
        verdict=data["verdict"],
        evidence=str(data.get("evidence") or ""),
        fix_verified=fix_verified if isinstance(fix_verified, bool) else None,
        seconds=float(seconds) if isinstance(seconds, (int, float)) else 0.0,
    )


def decorate(lsp: types.Diagnostic, verdict: RuntimeVerdict | None) -> types.Diagnostic:
    """The published diagnostic with the verdict shown (a copy; `lsp` is not changed)."""
    if verdict is None:
        return lsp
    message, severity = lsp.message, lsp.severity
    evidence = verdict.evidence.rstrip(".")
    sep = " " if message.endswith((".", "!", "?")) else ". "
    if verdict.verdict == "confirmed":
        message = f"{message}{sep}Confirmed on the real pipeline: {evidence}."
    elif verdict.verdict == "refuted":
        message = f"{message}{sep}Refuted on the real pipeline: {evidence}."
        severity = types.DiagnosticSeverity.Hint
    elif verdict.verdict == "inconclusive":
        message = f"{message}{sep}Runtime check inconclusive: {evidence}."
    data = dict(lsp.data) if isinstance(lsp.data, dict) else {}
    fix = data.get("fix")
    if verdict.fix_verified is not None and isinstance(fix, dict) and fix.get("applicability") == "display-only":
        # No quick fix carries the verdict in its title (`fix_title_suffix`): say it here.
        judged = "verified on" if verdict.fix_verified else "refuted by"
        message = f"{message} Its fix (display-only: {fix.get('message')}) is {judged} the real pipeline."
    data["runtime"] = verdict_to_json(verdict)
    return attrs.evolve(lsp, message=message, severity=severity, data=data)


def fix_title_suffix(verdict: RuntimeVerdict | None) -> str:
    if verdict is None or verdict.fix_verified is None:
        return ""
    return " (verified on the real pipeline)" if verdict.fix_verified else " (the real pipeline refutes this fix)"


def checkable(diagnostics: list[Diagnostic]) -> list[int]:
    """Indexes of the findings a runtime check exists for."""
    return [i for i, d in enumerate(diagnostics) if has_check(d.code)]


class EditorRuntime:
    """One warm runtime checker per cache directory, used from one thread."""

    def __init__(self) -> None:
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="qlint-runtime")
        self._checkers: dict[Path, Any] = {}
        self._lock = threading.Lock()

    def _checker(self, settings: Settings):
        # Imported on first use: the client side is torch-free, but a server that never
        # runs a check should not even load it.
        from qlint import runtime

        cache_dir = runtime.runtime_cache_dir(settings)
        with self._lock:
            checker = self._checkers.get(cache_dir)
            if checker is None:
                checker = runtime.RuntimeChecker(cache_dir, models=tuple(settings.runtime_models), root=settings.root)
                self._checkers[cache_dir] = checker
            return checker

    def cached(self, diag: Diagnostic, settings: Settings) -> RuntimeVerdict | None:
        """The verdict `qlint check --runtime` (or an earlier check here) stored, if any.
        Cheap: a hash and a small file read. Runs on the runtime thread."""
        from qlint.runtime.cache import checker_fingerprint
        from qlint.runtime.checks import runs_user_models
        from qlint.runtime.request import build_request, request_key

        checker = self._checker(settings)
        if checker.cache is None or (checker.models and runs_user_models(diag.code)):
            return None  # a check of the user's own model is never answered from the cache
        key = request_key(build_request(diag, verify_fix=True), checker.versions, checker_fingerprint())
        return checker.cache.get(key)

    def check(self, diag: Diagnostic, settings: Settings) -> RuntimeVerdict:
        """Runs the worker when needed (seconds); a crash or timeout gives `inconclusive`
        and the worker restarts on the next check. Runs on the runtime thread."""
        return self._checker(settings).verdict(diag, verify_fix=True)

    def workers(self) -> list[int]:
        """Process ids of the live workers that have finished starting (for tests and bug reports)."""
        with self._lock:
            return [c.worker.pid for c in self._checkers.values() if c.worker.alive and c.worker.hello]

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            for checker in self._checkers.values():
                checker.close()
            self._checkers.clear()
