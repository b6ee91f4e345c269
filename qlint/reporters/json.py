"""ruff-compatible JSON: a list of objects tools that read `ruff --output-format json` accept.

Keys and their order follow ruff 0.17: `cell` is the notebook cell (1-based) or null,
`name` is the kebab name, `severity` the rule's (error, warning, info or hint). `related` and `runtime` appear only
when there is something to say. Rows and columns are 1-based (columns in code points),
`filename` is absolute.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Any

from qlint.diagnostic import Diagnostic
from qlint.registry import severity, url
from qlint.reporters import ReportOptions, location


def to_json(d: Diagnostic) -> dict[str, Any]:
    out: dict[str, Any] = {
        "cell": d.cell,
        "code": d.code,
        "end_location": location(d.range.end.row, d.range.end.col),
        "filename": os.path.abspath(d.path),
        "fix": None,
        "location": location(d.range.start.row, d.range.start.col),
        "message": d.message,
        "name": d.name,
        "noqa_row": d.noqa_row,
        "severity": severity(d.code).value,  # recent ruff releases emit this key too
        "url": url(d.code, d.url),
    }
    if d.fix is not None:
        out["fix"] = {
            "applicability": d.fix.applicability.value,
            "edits": [
                {
                    "content": e.content,
                    "end_location": location(e.range.end.row, e.range.end.col),
                    "location": location(e.range.start.row, e.range.start.col),
                    # Only for an edit in another file: ruff's edits never leave their file.
                    **({"filename": os.path.abspath(e.path)} if e.path else {}),
                }
                for e in d.fix.edits
            ],
            "message": d.fix.message,
        }
    if d.help:  # the explanation the one-sentence message leaves out (not a ruff key)
        out["help"] = d.help
    if d.related:
        out["related"] = [
            {
                "end_location": location(r.range.end.row, r.range.end.col),
                "filename": os.path.abspath(r.path),
                "location": location(r.range.start.row, r.range.start.col),
                "message": r.message,
            }
            for r in d.related
        ]
    if d.runtime is not None:
        rt = d.runtime
        out["runtime"] = {
            "evidence": rt.evidence,
            "fix_verified": rt.fix_verified,
            "seconds": rt.seconds,
            "verdict": rt.verdict,
        }
    return out


def render(diagnostics: list[Diagnostic], options: ReportOptions) -> str:
    if options.statistics:
        return json.dumps(statistics(diagnostics, options), indent=2, ensure_ascii=False) + "\n"
    return json.dumps([to_json(d) for d in diagnostics], indent=2, ensure_ascii=False) + "\n"


def statistics(diagnostics: list[Diagnostic], options: ReportOptions) -> list[dict[str, Any]]:
    """`--statistics --output-format json`, shaped like ruff's: one object per code, most
    frequent first."""
    counts = Counter(d.code for d in diagnostics)
    fixable = Counter(d.code for d in diagnostics if d.fix is not None and d.fix.applies(options.unsafe_fixes))
    names = {d.code: d.name for d in diagnostics}
    return [
        {"code": code, "name": names[code], "count": n, "fixable": fixable[code] > 0, "fixable_count": fixable[code]}
        for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
