"""Which rule codes have a runtime check, and the worker module that implements each.

This module is imported by the linter side (to know, without torch, which findings need
the worker) and by the worker (to find the implementation). It must stay torch-free: the
check modules it names are only imported inside the worker process.
"""

from __future__ import annotations

CHECKS: dict[str, str] = {
    "QL101": "qlint.runtime.checks.ql101",
    "QL102": "qlint.runtime.checks.ql101",
    "QL103": "qlint.runtime.checks.capture_apis",
    "QL201": "qlint.runtime.checks.capture",
    "QL202": "qlint.runtime.checks.capture",
    "QL203": "qlint.runtime.checks.capture",
    "QL204": "qlint.runtime.checks.calibration",
    "QL301": "qlint.runtime.checks.recipes",
    "QL401": "qlint.runtime.checks.imports",
    "QL402": "qlint.runtime.checks.capture_apis",
}


def has_check(code: str) -> bool:
    return code in CHECKS
