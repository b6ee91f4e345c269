"""Runtime checker: confirm findings, and their fixes, on the real torch.export/PT2E pipeline.

The linter never imports torch. This package's client side (`client`, `cache`, `request`,
`checks/__init__`) is torch-free too; torch, torchao and executorch are imported only in a
separate worker process (`python -m qlint.runtime.worker`), once, and the worker serves
many checks. By default no user code is imported or run: a check evaluates what the finding
carries (op names, the fix's edits) against reference graphs the worker builds itself.

Public API:
- `attach_verdicts(diagnostics, settings, verify_fixes=..., timeout=...)`: the diagnostics
  with `runtime=RuntimeVerdict(verdict, evidence, fix_verified, seconds)` set. The CLI
  (`qlint check --runtime`, `qlint fix --verify`) and the language server call this; one
  worker is kept warm for the life of the process.
- `RuntimeChecker`: the same with explicit control over the worker and the cache.
"""

from __future__ import annotations

import atexit
from collections.abc import Sequence
from pathlib import Path

from qlint.diagnostic import Diagnostic, RuntimeVerdict
from qlint.runtime.client import DEFAULT_TIMEOUT, RuntimeChecker

__all__ = [
    "DEFAULT_TIMEOUT",
    "RuntimeChecker",
    "RuntimeVerdict",
    "attach_verdicts",
    "runtime_cache_dir",
    "shared_checker",
    "shutdown",
    "verify_before_fixing",
]

_checkers: dict[tuple, RuntimeChecker] = {}


def runtime_cache_dir(settings) -> Path:
    """The runtime checker's folder in qlint's cache: its verdicts and its worker's log."""
    from qlint.cache_keys import cache_dir_for

    return cache_dir_for(settings) / "runtime"


def shared_checker(settings, cache: bool) -> RuntimeChecker:
    """One checker per cache folder, cache choice and models, kept for the life of the
    process: its worker is slow to start (torch), so every caller reuses the warm one."""
    models = tuple(getattr(settings, "runtime_models", ()) or ())
    cache_dir = runtime_cache_dir(settings)
    key = (cache_dir, cache, models)
    if key not in _checkers:
        # The worker's log lives in the cache directory even with `cache=False`.
        checker = RuntimeChecker(cache_dir, models=models, root=getattr(settings, "root", None))
        if not cache:
            checker.cache = None
        _checkers[key] = checker
    return _checkers[key]


def attach_verdicts(
    diagnostics: Sequence[Diagnostic],
    settings,
    *,
    verify_fixes: bool,
    timeout: float = DEFAULT_TIMEOUT,
    cache: bool = True,
) -> list[Diagnostic]:
    """Every diagnostic with a runtime verdict; findings are never dropped (a refuted one
    stays, marked refuted). `timeout` is per check; `cache=False` neither reads nor writes
    the verdict cache."""
    checker = shared_checker(settings, cache)
    return checker.attach(diagnostics, verify_fixes=verify_fixes, timeout=timeout)


def verify_before_fixing(
    results, settings, *, unsafe: bool, timeout: float = DEFAULT_TIMEOUT, cache: bool = True
) -> tuple[list[str], list[Diagnostic]]:
    """`qlint fix --verify`: check the fixes `qlint fix` would apply before it applies them.

    `results` are the FileResults of a plain check. Returns the files to fix and, for every
    file with a fix the runtime checker shows wrong (`fix_verified` False), all of its
    findings with their verdicts: those files are left alone (the fixer applies a file's
    fixes together). Fixes the checker cannot judge (skipped, inconclusive) are applied.
    """
    to_fix: list[str] = []
    held: list[Diagnostic] = []
    for result in results:
        fixable = [d for d in result.diagnostics if d.fix is not None and d.fix.applies(unsafe)]
        if not fixable:
            continue
        checked = attach_verdicts(fixable, settings, verify_fixes=True, timeout=timeout, cache=cache)
        if any(d.runtime.fix_verified is False for d in checked):
            held.extend(attach_verdicts(result.diagnostics, settings, verify_fixes=True, timeout=timeout, cache=cache))
        else:
            to_fix.append(result.path)
    return to_fix, held


@atexit.register
def shutdown() -> None:
    """Stop the workers this process started."""
    while _checkers:
        _, checker = _checkers.popitem()
        checker.close()
