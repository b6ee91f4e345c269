"""GitHub Actions workflow commands: each finding becomes an annotation on the PR diff.

Paths are relative to the working directory (the checkout), which is what GitHub maps
onto the repository; data and properties are escaped as the workflow-command syntax needs.
"""

from __future__ import annotations

from qlint.diagnostic import Diagnostic
from qlint.registry import severity
from qlint.reporters import ReportOptions
from qlint.results import display_path
from qlint.rules.base import Severity

# Workflow commands exist for error, warning and notice annotations.
COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice", Severity.HINT: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def to_line(d: Diagnostic) -> str:
    r = d.range
    props = ",".join(
        [
            f"title={escape_property(f'qlint ({d.code})')}",
            f"file={escape_property(display_path(d.path))}",
            f"line={r.start.row}",
            f"col={r.start.col + 1}",
            f"endLine={r.end.row}",
            f"endColumn={r.end.col + 1}",
        ]
    )
    # A notebook's rows count from its cell: say which cell, the annotation cannot.
    cell = f"cell {d.cell}: " if d.cell is not None else ""
    text = f"{d.code} {cell}{d.message}" + (f"\nhelp: {d.help}" if d.help else "")
    return f"::{COMMAND[severity(d.code)]} {props}::{escape_data(text)}"


def render(diagnostics: list[Diagnostic], options: ReportOptions) -> str:
    return "".join(to_line(d) + "\n" for d in diagnostics)
