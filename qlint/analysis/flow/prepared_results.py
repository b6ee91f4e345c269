"""What a function's prepare/convert results are made of, for its callers and for QL202.

Two facts `CallSemantics` (`sem`) records as results are made:

- a result built from a parameter (`prepare_qat_pt2e(exported.module(), q)` in a helper handed
  the `ExportedProgram`): the caller's capture flows into what the helper returns, so a
  caller's `move_exported_model_to_train` on it retrains that capture;
- a QAT-prepared graph that goes to `convert_pt2e` or `move_exported_model_to_eval` in the
  statement that made it or the next one: nothing trained it; the QAT graph was only rebuilt
  to be converted (loading trained weights, comparing with the PTQ graph), and eval mode is
  right for that capture (issue 14 item 17).
"""

from __future__ import annotations

import ast
import weakref

from qlint.analysis.flow.model_values import PARAM, PREPARED_QAT, Obj


class PreparedResults:
    def __init__(self, sem):
        # `model_calls.CallSemantics` (not imported: it imports this module), which owns this:
        # a weak reference, so the walk's objects are freed with it and not by the cyclic collector.
        self.sem = weakref.proxy(sem)
        self.fresh_qat: dict[Obj, ast.stmt] = {}  # QAT-prepared graphs -> the statement that made them

    def note(self, result: Obj, arg: Obj | None) -> None:
        """A prepare/convert result (or a helper's result) made here, from `arg`."""
        walk = self.sem.walk
        if PREPARED_QAT in result.kinds:
            self.fresh_qat[result] = walk.stmt_stack[-1]
        origins = arg.origins if arg is not None else ()
        params = frozenset(o.index for o in origins if o.kind == PARAM and o.node is walk.func)
        if params:
            walk.flow.param_results[result] = params

    def rebuilt_for_conversion(self, graph: Obj) -> None:
        """`convert_pt2e` / `move_exported_model_to_eval` on `graph`: a QAT graph made in this or
        the previous statement was never trained."""
        walk = self.sem.walk
        made = self.fresh_qat.get(graph)
        if made is None or made not in (walk.stmt_stack[-1], walk.previous[-1]):
            return
        nodes = {o.node for o in graph.origins if o.kind == PREPARED_QAT}
        for index in graph.captures:
            walk.flow.captures[index].rebuilt |= nodes


__all__ = ["PreparedResults"]
