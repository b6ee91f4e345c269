"""SARIF 2.1.0 for GitHub code scanning and other SARIF viewers, fixes included.

Columns are declared as `unicodeCodePoints` (what the engine counts), so viewers need no
UTF-16 guessing; regions are 1-based with an exclusive end column, as SARIF specifies.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from qlint import __version__, registry
from qlint.diagnostic import Diagnostic, Range
from qlint.reporters import ReportOptions, rule_url
from qlint.rules.base import FixAvailability, Severity

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
# SARIF's levels: error, warning, note (and none).
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note", Severity.HINT: "note"}


def region(r: Range) -> dict[str, int]:
    return {
        "startLine": r.start.row,
        "startColumn": r.start.col + 1,
        "endLine": r.end.row,
        "endColumn": r.end.col + 1,
    }


def _uri(path: str) -> str:
    return Path(os.path.abspath(path)).as_uri()


def _physical(path: str, r: Range) -> dict[str, Any]:
    return {"artifactLocation": {"uri": _uri(path)}, "region": region(r)}


def _rules(options: ReportOptions) -> list[dict[str, Any]]:
    return [
        {
            "id": code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            **({"helpUri": link} if (link := registry.url(code, rule_url(code, options))) else {}),
            "defaultConfiguration": {"level": LEVEL[Severity(rule.severity)]},
            "properties": {
                "fixAvailability": FixAvailability(rule.fix_availability).value,
                "package": registry.origin(code).package,
            },
        }
        for code, rule in sorted(registry.rules().items())
    ]


def _text(d: Diagnostic) -> str:
    """A notebook's rows count from its cell, which SARIF regions cannot say: the text does."""
    cell = f"cell {d.cell}: " if d.cell is not None else ""
    return f"{cell}{d.message}. {d.help}" if d.help else f"{cell}{d.message}"


def _result(d: Diagnostic, index: dict[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ruleId": d.code,
        "level": LEVEL[registry.severity(d.code)],
        # The message, then the explanation: viewers show only this text.
        "message": {"text": _text(d)},
        "locations": [{"physicalLocation": _physical(d.path, d.range)}],
    }
    if d.code in index:
        out["ruleIndex"] = index[d.code]
    if d.fix is not None and d.fix.edits:
        out["fixes"] = [
            {
                "description": {"text": d.fix.message},
                "artifactChanges": [
                    {
                        "artifactLocation": {"uri": _uri(path)},
                        "replacements": [
                            {"deletedRegion": region(e.range), "insertedContent": {"text": e.content}}
                            for e in d.fix.edits
                            if (e.path or d.path) == path
                        ],
                    }
                    for path in dict.fromkeys(e.path or d.path for e in d.fix.edits)
                ],
                "properties": {"applicability": d.fix.applicability.value},
            }
        ]
    if d.related:
        out["relatedLocations"] = [
            {"id": i, "message": {"text": r.message}, "physicalLocation": _physical(r.path, r.range)}
            for i, r in enumerate(d.related)
        ]
    if d.runtime is not None:
        rt = d.runtime
        out["properties"] = {
            "runtime": {
                "verdict": rt.verdict,
                "evidence": rt.evidence,
                "fix_verified": rt.fix_verified,
                "seconds": rt.seconds,
            }
        }
    return out


def to_sarif(diagnostics: list[Diagnostic], options: ReportOptions | None = None) -> dict[str, Any]:
    options = options or ReportOptions()
    rules = _rules(options)
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "qlint",
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": [_result(d, index) for d in diagnostics],
            }
        ],
    }


def render(diagnostics: list[Diagnostic], options: ReportOptions) -> str:
    return json.dumps(to_sarif(diagnostics, options), indent=2, ensure_ascii=False) + "\n"
