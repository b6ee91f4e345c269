"""lintrunner's JSON lint messages, one per line (ExecuTorch and PyTorch lint with it).

lintrunner applies a fix by swapping a whole file's `original` for its `replacement`, so
per file the first fixable finding carries the text `qlint fix` would produce and the
others carry none: two messages with the same whole-file patch would make the second one
stale. The texts come from the run's `FixSession` (`qlint fix` already holds them; for
`qlint check` the session fixes each file once, to a fixpoint, without writing).
"""

from __future__ import annotations

import json
from typing import Any

from qlint.diagnostic import Diagnostic
from qlint.registry import severity, url
from qlint.reporters import ReportOptions
from qlint.results import display_path
from qlint.rules.base import Severity
from qlint.settings import Settings

LINTER_CODE = "QLINT"
# lintrunner knows error, warning, advice and disabled.
SEVERITY = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "advice", Severity.HINT: "advice"}


def _message(d: Diagnostic, original: str | None = None, replacement: str | None = None) -> dict[str, Any]:
    link = url(d.code, d.url)
    return {
        "path": display_path(d.path),
        "line": d.range.start.row,
        "char": d.range.start.col + 1,
        "code": LINTER_CODE,
        "severity": SEVERITY[severity(d.code)],
        "name": d.code,
        "original": original,
        "replacement": replacement,
        "description": "\n".join(p for p in (_cell(d) + d.message, d.help, f"See {link}" if link else "") if p),
    }


def render(diagnostics: list[Diagnostic], options: ReportOptions) -> str:
    from qlint.fix_session import FixSession

    # One session per repository's settings when a run spans several (`settings_for`).
    sessions: dict[Settings, FixSession] = {}

    def session_for(path: str):
        if options.fix_session is not None:
            return options.fix_session
        own = options.settings_for(path) if options.settings_for is not None else options.settings or Settings()
        return sessions.setdefault(own, FixSession(own, options.unsafe_fixes))

    lines = []
    patched: set[str] = set()
    for d in diagnostics:
        original = replacement = None
        if d.path not in patched and d.fix is not None and d.fix.applies(options.unsafe_fixes):
            patched.add(d.path)
            patch = session_for(d.path).patch(d.path)
            if patch is not None:
                original, replacement = patch
        lines.append(json.dumps(_message(d, original, replacement), ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def _cell(d: Diagnostic) -> str:
    return f"cell {d.cell}: " if d.cell is not None else ""


def render_errors(errors: list[str]) -> str:
    """Problems that are not findings (an unreadable file, a rule that crashed), as lintrunner
    messages: lintrunner drops every message of a linter that exits nonzero, so a single bad
    file would otherwise hide the findings of all the others."""
    lines = []
    for error in errors:
        first, _, rest = error.partition("\n")
        message = {
            "path": None,
            "line": None,
            "char": None,
            "code": LINTER_CODE,
            "severity": "error",
            "name": "qlint error",
            "original": None,
            "replacement": None,
            "description": error if rest else first,
        }
        lines.append(json.dumps(message, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)
