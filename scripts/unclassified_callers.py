"""List every caller the QL201 caller verdict leaves unclassified for the helpers of one file.

    python scripts/unclassified_callers.py PATH [PATH ...]

A helper that captures its parameter without `eval()` is quiet only when every caller in the
project passes a harmless model (`rules/caller_verdicts.py`); the verdict stops at the first
caller it cannot classify, and a subclass module that takes the method as a value decides
before any call is read. This debug aid runs the check with both short cuts opened: every
caller is read, the ones that pass a harmless model are handed on, and the others are
listed with what they pass (its mode, where it comes from, and for a construction whether
its content is known), with the references no call reads. It changes no verdict of a real
run: it patches the modules of this process only. Used to find what kept ExecuTorch's
`TestQNN.get_qdq_module` (backends/qualcomm/tests/utils.py) reported (issue 14, item 7).
"""

from __future__ import annotations

import ast
import sys
from collections import Counter

from qlint.analysis.flow import method_references, project_callers
from qlint.rules import caller_verdicts
from qlint.rules.harmless_models import harmless_model


def _why(fact, call) -> str:
    origin = fact.origin
    why = f"{fact.state} {origin.kind if origin else None}"
    if origin is not None and origin.built is not None:
        content = origin.built.content()
        why += f" (content {'known' if content.complete else 'not known'}; mode-dependent: {list(content.dependent)})"
    if origin is not None and origin.node is not None:
        why += f" from `{ast.unparse(origin.node).splitlines()[0][:70]}`"
    return why


def _open(found: list[tuple[str, str, int, str]]) -> None:
    """Read every caller and every reference, noting the ones that keep the report."""
    judge = method_references._judge

    def every_reference(other, body, node, owner_qual, resolver, called):
        verdict = judge(other, body, node, owner_qual, resolver, called)
        if verdict == method_references._UNREAD:
            found.append(("reference", other.path, node.lineno, f"`{ast.unparse(node)}` is no call the flow reads"))
            return method_references.NOT_IT
        return verdict

    each = caller_verdicts.each_project_call

    def every_caller(ctx, func, index, verdicts=None):
        # No kept verdict (`kept_caller_verdicts`): every caller module is read.
        for call in each(ctx, func, index):
            if call is None:
                found.append(("use", ctx.path, func.lineno, "a use of the helper that cannot be read"))
                continue
            flows = list(call.flows)
            bad = [f for f in call.facts if not harmless_model(f, flows, call.call, call.flow)]
            if bad and caller_verdicts._never_runs(call):
                continue  # a call unittest skips on every run: it passes nothing
            if bad:
                found.append(("caller", call.path, call.call.lineno, "; ".join(_why(f, call.call) for f in bad)))
            else:
                yield call

    method_references._judge = every_reference
    project_callers.taken_as_value = lambda data, name: False
    project_callers.subclassed_elsewhere = lambda *args, **kwargs: False
    caller_verdicts.each_project_call = every_caller


def main(argv: list[str]) -> int:
    from qlint.cli import main as qlint

    found: list[tuple[str, str, int, str]] = []
    _open(found)
    qlint(["check", "--no-cache", "-j1", "--select", "QL201", "--exit-zero", "--quiet", *argv])
    # A call in a loop is read once per pass of the walk over its body (`project_callers`).
    found = list(dict.fromkeys(found))
    for kind, path, row, why in found:
        print(f"{path}:{row}: {kind}: {why}")
    print(f"{len(found)} unclassified")
    for why, count in Counter(why.partition(" from ")[0] for _, _, _, why in found).most_common():
        print(f"  {count:4}  {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
