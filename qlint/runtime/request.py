"""Turn a `Diagnostic` into the JSON a runtime check receives (torch-free, linter side).

A check sees only what the finding carries: the code, the rule's `evidence` dict and the
fix's edits. Edit positions are made relative to the finding's own range, so the request,
and with it the verdict cache key, does not change when the code around a finding moves.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from qlint.diagnostic import Diagnostic, Position


def _relative(pos: Position, origin: Position) -> list[int]:
    # Same row as the finding: keep the column relative to the finding's start column too,
    # so re-indenting the code does not change the request.
    if pos.row == origin.row:
        return [0, pos.col - origin.col]
    return [pos.row - origin.row, pos.col]


def fix_payload(diag: Diagnostic) -> dict[str, Any] | None:
    """The fix as the checks see it: each edit positioned relative to the finding's range.

    `where` names the two shapes QL101/QL102 fixes take: "append" (an insertion at the end
    of the flagged expression, e.g. `.default`) and "replace" (the flagged expression, or the
    comparison around it, replaced, e.g. by a list of overloads); anything else is "other".
    """
    fix = diag.fix
    if fix is None:
        return None
    origin = diag.range.start
    edits = []
    for edit in fix.edits:
        start, end = edit.range.start, edit.range.end
        if edit.path is not None and edit.path != diag.path:
            # In the module that defines the constant: relative positions mean nothing here.
            where = "append" if start == end and edit.content.startswith(".") else "replace"
        elif start == end == diag.range.end:
            where = "append"
        elif start <= diag.range.start and end >= diag.range.end:
            where = "replace"
        else:
            where = "other"
        edits.append(
            {
                "where": where,
                "start": _relative(start, origin),
                "end": _relative(end, origin),
                "content": edit.content,
            }
        )
    return {"applicability": fix.applicability.value, "message": fix.message, "edits": edits}


def build_request(
    diag: Diagnostic, *, verify_fix: bool, models: tuple[str, ...] = (), root: str | None = None
) -> dict[str, Any]:
    """`models`/`root`: the opt-in user model factories and the directory they import from."""
    request: dict[str, Any] = {
        "code": diag.code,
        "evidence": diag.evidence,
        "fix": fix_payload(diag),
        "verify_fix": verify_fix,
    }
    if models:
        request["models"] = list(models)
        request["root"] = root
    return request


def request_key(request: dict[str, Any], versions: dict[str, str | None], checker: str) -> str:
    """Stable hash of everything a verdict depends on: the request, the installed
    torch/torchao/executorch versions and the checker's own source (`checker`)."""
    payload = {"request": request, "versions": versions, "checker": checker}
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()
