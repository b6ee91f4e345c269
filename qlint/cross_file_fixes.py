"""Fixes whose edits belong to another file of the run (QL101: a packet held by a constant
that one module defines and another compares with node targets).

Per-file fixing cannot apply them: the defining file may be fixed by another worker at the
same moment. After the per-file pass, this step re-checks the comparing files against the
texts the run's `FixSession` holds (every file as the per-file pass left it, nothing
re-read or re-fixed), applies their edits there (only to files the run covers),
re-parses, and hands the new texts back to the session, which writes or diffs them.
"""

from __future__ import annotations

import os

from qlint.analysis.names.project import ProjectIndex
from qlint.diagnostic import Diagnostic
from qlint.engine import FileResult, check_source, parse_module
from qlint.fix_session import FixSession
from qlint.fixes import MAX_ROUNDS, apply_edits
from qlint.notebook import is_notebook
from qlint.settings import Settings
from qlint.source import DecodeError
from qlint.value_classes import replace


def foreign_fixes(diagnostics: list[Diagnostic], path: str, unsafe: bool) -> list[Diagnostic]:
    return [d for d in diagnostics if d.fix and d.fix.applies(unsafe) and d.fix.foreign(path)]


def apply_cross_file_fixes(reports: dict, session: FixSession, settings: Settings, unsafe: bool) -> None:
    """Update `reports` (path -> FixReport) and the session's texts with the edits applied across files."""
    # Notebooks compare too, but their rows are cell rows: their edits elsewhere wait for a person.
    sites = [p for p, r in reports.items() if not is_notebook(p) and foreign_fixes(r.remaining.diagnostics, p, unsafe)]
    if not sites:
        return
    # Every file the per-file pass changed is seen as changed, also by the modules it serves.
    project = ProjectIndex({f.path: f.fixed for f in session.changed()})

    def current(path: str) -> str:
        key = os.path.abspath(path)
        if key not in project.overlay:
            project.set_overlay(path, session.text(path))
        return project.overlay[key]

    def check_sites() -> dict[str, FileResult]:
        return {site: check_source(current(site), site, settings, project) for site in sites}

    touched: set[str] = set()
    sources: dict[str, set[str]] = {}
    try:
        for _ in range(MAX_ROUNDS):
            results = check_sites()
            pending: dict[str, list[Diagnostic]] = {}
            for site, result in results.items():
                for diag in foreign_fixes(result.diagnostics, site, unsafe):
                    target = diag.fix.edits[0].path
                    if target not in reports or any(e.path != target for e in diag.fix.edits):
                        continue  # never edit a file the run was not asked to fix
                    local = replace(diag.fix, edits=tuple(replace(e, path=None) for e in diag.fix.edits))
                    pending.setdefault(target, []).append(replace(diag, path=target, fix=local))
                    sources.setdefault(target, set()).add(site)
            progressed = False
            for target, diags in pending.items():
                new, count = apply_edits(current(target), diags, unsafe)
                if count:
                    parse_module(new, target)  # SyntaxError: nothing is changed at all
                    project.set_overlay(target, new)
                    touched.add(target)
                    progressed = True
            if not progressed:
                break
        else:
            results = check_sites()  # the rounds ran out after a change: see the final text
    except (OSError, DecodeError, SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        for site in sites:
            reports[site] = replace(reports[site], error=f"cross-file fix not applied: {exc}")
        return
    for target in touched:
        session.update(target, project.overlay[os.path.abspath(target)])
        session.cross_sources[target] = sources[target]
        reports[target] = replace(reports[target], changed=True)
    for site, remaining in results.items():
        before = len(foreign_fixes(reports[site].remaining.diagnostics, site, unsafe))
        fixed = before - len(foreign_fixes(remaining.diagnostics, site, unsafe))
        reports[site] = replace(reports[site], applied=reports[site].applied + fixed, remaining=remaining)
