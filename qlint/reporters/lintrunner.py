"""lintrunner's JSON lint messages, one per line (ExecuTorch and PyTorch lint with it).

lintrunner applies a fix by swapping a whole file's `original` for its `replacement`, so
per file the first fixable finding carries the text `qlint fix` would produce (computed
with `qlint.fixes`, to a fixpoint, without writing) and the others carry none: two
messages with the same whole-file patch would make the second one stale.
"""

from __future__ import annotations

import json
from typing import Any

from qlint.diagnostic import Diagnostic
from qlint.engine import display_path
from qlint.reporters import ReportOptions
from qlint.settings import Settings

LINTER_CODE = "QLINT"


def _message(d: Diagnostic, original: str | None = None, replacement: str | None = None) -> dict[str, Any]:
    return {
        "path": display_path(d.path),
        "line": d.range.start.row,
        "char": d.range.start.col + 1,
        "code": LINTER_CODE,
        "severity": "error" if d.code == "QL001" else "warning",
        "name": d.code,
        "original": original,
        "replacement": replacement,
        "description": f"{d.message}\nSee {d.url}",
    }


def _whole_file_fix(path: str, settings: Settings, unsafe: bool) -> tuple[str, str] | None:
    from qlint.fixes import fix_file

    outcome = fix_file(path, settings, unsafe=unsafe, write=False)
    if outcome.error is not None or outcome.fixed == outcome.original:
        return None
    return outcome.original, outcome.fixed


def render(diagnostics: list[Diagnostic], options: ReportOptions) -> str:
    settings = options.settings or Settings()
    lines = []
    patched: set[str] = set()
    for d in diagnostics:
        original = replacement = None
        if d.path not in patched and d.fix is not None and d.fix.applies(options.unsafe_fixes):
            patched.add(d.path)
            own = options.settings_for(d.path) if options.settings_for is not None else settings
            patch = _whole_file_fix(d.path, own, options.unsafe_fixes)
            if patch is not None:
                original, replacement = patch
        lines.append(json.dumps(_message(d, original, replacement), ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


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
