"""Which rule codes have a runtime check, and the worker module that implements each.

The rule class names its check (`Rule.runtime_check`, a module with `run(params)`), so a
plugin rule can ship its own; this module asks the registry. It is imported by the linter
side (to know, without torch, which findings need the worker) and by the worker (to find
the implementation), and must stay torch-free: the check modules are only imported inside
the worker process.
"""

from __future__ import annotations

# Checks that no rule class names (a test's stand-in), by code; they win over the registry.
CHECKS: dict[str, str] = {}


def check_module(code: str) -> str | None:
    if code in CHECKS:
        return CHECKS[code]
    from qlint import registry

    rule = registry.rules().get(code)
    return rule.runtime_check if rule is not None else None


def has_check(code: str) -> bool:
    return check_module(code) is not None


def evidence_problem(code: str, data: object) -> str | None:
    """Why the evidence of a request for `code` does not fit its rule's evidence type, or
    None (also for rules that declare no type). The worker asks before running a check."""
    from qlint import registry
    from qlint.evidence import EvidenceError

    rule = registry.rules().get(code)
    if rule is None or rule.evidence_type is None or code in CHECKS:
        return None
    try:
        rule.evidence_type.from_json(data)
    except EvidenceError as exc:
        return str(exc)
    return None


def runs_user_models(code: str) -> bool:
    """True for the checks that may also run the user's opt-in model factories."""
    from qlint import registry

    rule = registry.rules().get(code)
    return rule is not None and rule.runtime_models
