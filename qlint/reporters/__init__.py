"""Output formats: one `render(diagnostics, options) -> str` per module, chosen by name.

Reporters get plain diagnostics plus `ReportOptions`, never the run itself, so the CLI,
tests and other tools can feed them anything. Columns are converted from the engine's
0-based code points to each format's own convention here, at the edge.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from qlint.diagnostic import Diagnostic, Range
from qlint.settings import Settings
from qlint.value_classes import replace, value_class

FORMATS: dict[str, str] = {
    "full": "text",  # the default: each finding with its source line, caret and help (ruff's)
    "concise": "text",  # one line per finding
    "text": "text",  # the name of `concise` before `full` existed
    "json": "json",
    "json-lines": "json_lines",
    "sarif": "sarif",
    "github": "github",
    "lintrunner": "lintrunner",
}


@value_class(frozen=True)
class ReportOptions:
    unsafe_fixes: bool = False
    statistics: bool = False
    quiet: bool = False
    mode: str = "check"  # "check", or "fix" when the diagnostics are what a fix left over
    fixed: int = 0  # fixes applied by the run (mode "fix")
    settings: Settings | None = None  # for formats that compute whole-file fixes
    fix_session: Any = None  # qlint.fix_session.FixSession of the run, when it fixed
    errors: int = 0  # problems printed apart (unreadable paths...): never "All checks passed!" then
    full: bool = False  # text: source line, caret and help under each finding
    color: bool | None = None  # text: None decides from standard output (a terminal, NO_COLOR, FORCE_COLOR)
    sources: Mapping[str, str] | None = None  # texts that are not on disk (standard input), by path
    # A run over several repositories: the settings of the repository a path belongs to.
    settings_for: Callable[[str], Settings] | None = None


def render(fmt: str, diagnostics: Sequence[Diagnostic], options: ReportOptions) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r}; choose from {', '.join(FORMATS)}")
    module = importlib.import_module(f"qlint.reporters.{FORMATS[fmt]}")
    if fmt == "full":
        options = replace(options, full=True)
    template = options.settings.rule_url if options.settings is not None else None
    if template:  # cached results do not carry the link: stamp it here for every format
        diagnostics = [replace(d, url_template=template) for d in diagnostics]
    return module.render(list(diagnostics), options)


def rule_url(code: str, options: ReportOptions | None = None) -> str:
    """The documentation URL of a rule, from the one place `Diagnostic.url` defines it."""
    from qlint.registry import facts

    template = options.settings.rule_url if options is not None and options.settings is not None else None
    known = facts().get(code)
    name = known.name if known is not None else ""
    return Diagnostic(code, name, "", "", Range.of(1, 0, 1, 0), url_template=template).url


def location(row: int, col: int) -> dict[str, int]:
    """ruff's `{row, column}` with a 1-based column."""
    return {"column": col + 1, "row": row}
