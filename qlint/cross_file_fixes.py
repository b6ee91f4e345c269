"""Fixes whose edits belong to another file of the run (QL101: a packet held by a constant
that one module defines and another compares with node targets).

Per-file fixing cannot apply them: the defining file may be fixed by another worker at the
same moment. After the per-file pass, this step re-checks the comparing files against the
current text of the defining ones, applies their edits there (only to files the run
covers), re-parses, and writes atomically or, for `--diff`, reports the diff.
"""

from __future__ import annotations

import ast
import os
from dataclasses import replace

from qlint.analysis.project import ProjectIndex
from qlint.diagnostic import Diagnostic
from qlint.engine import FileResult, check_source
from qlint.fixes import MAX_ROUNDS, FixOutcome, apply_edits, fix_text, unified_diff, write_atomic
from qlint.settings import Settings
from qlint.source import DecodeError, decode_source


def foreign_fixes(diagnostics: list[Diagnostic], path: str, unsafe: bool) -> list[Diagnostic]:
    return [d for d in diagnostics if d.fix and d.fix.applies(unsafe) and d.fix.foreign(path)]


def apply_cross_file_fixes(
    reports: dict, settings: Settings, unsafe: bool, diff_only: bool, keep_texts: bool = False
) -> None:
    """Update `reports` (path -> FixReport) in place with the edits applied across files."""
    sites = [p for p, r in reports.items() if foreign_fixes(r.remaining.diagnostics, p, unsafe)]
    if not sites:
        return
    project = ProjectIndex()
    originals: dict[str, tuple[bytes, str]] = {}

    def current(path: str) -> str:
        """The file's text after the per-file pass (recomputed in memory for `--diff`)."""
        key = os.path.abspath(path)
        if key not in project.overlay:
            with open(path, "rb") as fh:
                data = fh.read()
            text = decode_source(data)
            originals[path] = (data, text)
            if diff_only:
                text = fix_text(text, path, settings, unsafe, project).fixed
            project.set_overlay(path, text)
        return project.overlay[key]

    def check_sites() -> dict[str, FileResult]:
        return {site: check_source(current(site), site, settings, project) for site in sites}

    touched: set[str] = set()
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
            progressed = False
            for target, diags in pending.items():
                new, count = apply_edits(current(target), diags, unsafe)
                if count:
                    ast.parse(new, filename=target)  # SyntaxError: nothing is written at all
                    project.set_overlay(target, new)
                    touched.add(target)
                    progressed = True
            if not progressed:
                break
        else:
            results = check_sites()  # the rounds ran out after a change: see the final text
    except (OSError, DecodeError, SyntaxError, ValueError) as exc:
        for site in sites:
            reports[site] = replace(reports[site], error=f"cross-file fix not applied: {exc}")
        return
    for target in touched:
        data, original = originals[target]
        final = project.overlay[os.path.abspath(target)]
        if keep_texts:
            # Written by the per-file pass already: its original is the one before both passes.
            first = reports[target].texts[0] if reports[target].texts is not None else original
            reports[target] = replace(reports[target], texts=(first, final))
        if diff_only:
            diff = unified_diff(FixOutcome(os.path.relpath(target), original, final, 0, reports[target].remaining))
            reports[target] = replace(reports[target], changed=True, diff=diff)
        else:
            write_atomic(target, final, data)
            reports[target] = replace(reports[target], changed=True)
    for site, remaining in results.items():
        before = len(foreign_fixes(reports[site].remaining.diagnostics, site, unsafe))
        remaining.text = None
        fixed = before - len(foreign_fixes(remaining.diagnostics, site, unsafe))
        reports[site] = replace(reports[site], applied=reports[site].applied + fixed, remaining=remaining)
