"""What a function's prepare/convert results are made of, for its callers and for QL202.

Two facts `CallSemantics` (`sem`) records as results are made:

- a result built from a parameter (`prepare_qat_pt2e(exported.module(), q)` in a helper handed
  the `ExportedProgram`): the caller's capture flows into what the helper returns, so a
  caller's `move_exported_model_to_train` on it retrains that capture;
- a QAT-prepared graph that goes to `convert_pt2e` or `move_exported_model_to_eval` in the
  statement that made it or the next one (calibration passes `prepared(*inputs)` between
  them aside): nothing trained it; the QAT graph was only rebuilt to be converted (loading
  trained weights, comparing with the PTQ graph), and eval mode is right for that capture
  (issue 14 item 17). Made in a helper from its parameter, the caller's capture handed in
  was rebuilt so too (`rebuilt_sinks`).
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
        self.from_params: set[Obj] = set()  # those made from a parameter of the function
        # The same by the `prepare_qat_pt2e` call that made them (id), and its statement: a
        # value merged from it (`prepare_qat_pt2e(gm, q) if is_qat else prepare_pt2e(gm, q)`)
        # is that graph on its QAT paths.
        self.fresh_calls: dict[int, ast.stmt] = {}
        self.param_calls: set[int] = set()

    def note(self, result: Obj, arg: Obj | None) -> None:
        """A prepare/convert result (or a helper's result) made here, from `arg`."""
        walk = self.sem.walk
        if PREPARED_QAT in result.kinds:
            self.fresh_qat[result] = walk.stmt_stack[-1]
            self.fresh_calls.update((id(n), walk.stmt_stack[-1]) for n in _qat_calls(result))
        origins = arg.origins if arg is not None else ()
        params = frozenset(o.index for o in origins if o.kind == PARAM and o.node is walk.func)
        if params and PREPARED_QAT in result.kinds:
            self.from_params.add(result)
            self.param_calls.update(id(n) for n in _qat_calls(result))
        if params:
            walk.flow.param_results[result] = params

    def forward(self, graph: Obj, call: ast.Call) -> None:
        """`prepared(*inputs)` as a statement of its own right after the QAT graph was made:
        one forward pass (observers calibrated, nothing trained) keeps it fresh, so that a
        `convert_pt2e` in the next statement still finds it never trained."""
        walk = self.sem.walk
        made = self._made(graph)
        stmt = walk.stmt_stack[-1]
        if made is None or not (isinstance(stmt, ast.Expr) and stmt.value is call):
            return
        if made in (stmt, walk.previous[-1]):
            self.fresh_qat[graph] = stmt

    def rebuilt_for_conversion(self, graph: Obj) -> None:
        """`convert_pt2e` / `move_exported_model_to_eval` on `graph`: a QAT graph made in this or
        the previous statement was never trained."""
        walk = self.sem.walk
        made = self._made(graph)
        if made is None or made not in (walk.stmt_stack[-1], walk.previous[-1]):
            return
        nodes = _qat_calls(graph)
        for index in graph.captures:
            walk.flow.captures[index].rebuilt |= nodes
        if graph in self.from_params or (nodes and all(id(n) in self.param_calls for n in nodes)):
            walk.flow.rebuilt_sinks |= nodes  # the caller's capture, handed in, was rebuilt here

    def _made(self, graph: Obj) -> ast.stmt | None:
        """The statement a fresh QAT graph was made (or last calibrated) in; for a value merged
        from one, the statement of the `prepare_qat_pt2e` calls it may be, when they agree."""
        made = self.fresh_qat.get(graph)
        if made is not None or not self.fresh_calls:
            return made
        stmts = {self.fresh_calls.get(id(n)) for n in _qat_calls(graph)}
        return stmts.pop() if len(stmts) == 1 else None

    def rebuilt_in_helper(self, obj: Obj, node: ast.AST) -> None:
        """A helper converts right away the QAT graph it prepares from `obj` (`node`)."""
        walk = self.sem.walk
        for index in obj.captures:
            walk.flow.captures[index].rebuilt.add(node)
        if any(o.kind == PARAM and o.node is walk.func for o in obj.origins):
            walk.flow.rebuilt_sinks.add(node)  # and from this function's parameter: its callers'


def _qat_calls(graph: Obj) -> set[ast.AST]:
    return {o.node for o in graph.origins if o.kind == PREPARED_QAT}


__all__ = ["PreparedResults"]
