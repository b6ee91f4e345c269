"""Output formats: one `render(diagnostics, options) -> str` per module, chosen by name.

Reporters get plain diagnostics plus `ReportOptions`, never the run itself, so the CLI,
tests and other tools can feed them anything. Columns are converted from the engine's
0-based code points to each format's own convention here, at the edge.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from qlint.diagnostic import Diagnostic, Range
from qlint.settings import Settings

FORMATS: dict[str, str] = {
    "text": "text",
    "json": "json",
    "json-lines": "json_lines",
    "sarif": "sarif",
    "github": "github",
    "lintrunner": "lintrunner",
}


@dataclass(frozen=True)
class ReportOptions:
    unsafe_fixes: bool = False
    statistics: bool = False
    quiet: bool = False
    mode: str = "check"  # "check", or "fix" when the diagnostics are what a fix left over
    fixed: int = 0  # fixes applied by the run (mode "fix")
    settings: Settings | None = None  # for formats that compute whole-file fixes
    # A run over several repositories: the settings of the repository a path belongs to.
    settings_for: Callable[[str], Settings] | None = None


def render(fmt: str, diagnostics: Sequence[Diagnostic], options: ReportOptions) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r}; choose from {', '.join(FORMATS)}")
    module = importlib.import_module(f"qlint.reporters.{FORMATS[fmt]}")
    return module.render(list(diagnostics), options)


def rule_url(code: str) -> str:
    """The documentation URL of a rule, from the one place `Diagnostic.url` defines it."""
    return Diagnostic(code, "", "", "", Range.of(1, 0, 1, 0)).url


def location(row: int, col: int) -> dict[str, int]:
    """ruff's `{row, column}` with a 1-based column."""
    return {"column": col + 1, "row": row}
