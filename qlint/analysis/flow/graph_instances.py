"""`isinstance(model, torch.fx.GraphModule)` tests, decided for the exported graphs QL203 follows.

Helpers that serve both eager modules and PT2E graphs often choose the mode switch by the
argument's class (ExecuTorch's Cadence `export_program` of mid-2024):

    if isinstance(model, torch.fx.GraphModule):
        torch.ao.quantization.move_exported_model_to_eval(model)
    else:
        model.eval()

What `prepare_pt2e`, `prepare_qat_pt2e`, `convert_pt2e` and `ExportedProgram.module()` return is
a `torch.fx.GraphModule` (of a subclass torch generates per graph), so for such a graph the test
is known: true for `GraphModule` and `torch.nn.Module`, false for `ExportedProgram` and
`torch.jit.ScriptModule`. Any other class (a project's wrapper, a torch subclass of
`GraphModule`) leaves the test unknown, and so does a tuple holding one unless a known class
in it already makes the test true.

A test on a parameter becomes a guard condition `"<parameter> graph-instance"` whose polarity
is the test's value for an exported graph (`graph_instance_condition`): a call that hands the
parameter an exported graph decides it (`dead_branches.contradicted_at_call` with `graphs`).
A test on a local name that holds an exported graph on every path decides the branch in
place (`graph_instance_truth`).
"""

from __future__ import annotations

import ast

from qlint.analysis.names.resolver import Resolver
from qlint.analysis.tree_walk import isinstance_test

KIND = "graph-instance"

# Whether an exported graph is an instance of the class, by the qualified names code spells it.
_KNOWN = {
    "torch.fx.GraphModule": True,
    "torch.fx.graph_module.GraphModule": True,
    "torch.nn.Module": True,
    "torch.nn.modules.module.Module": True,
    "torch.export.ExportedProgram": False,
    "torch.export.exported_program.ExportedProgram": False,
    "torch.jit.ScriptModule": False,
    "torch.jit._script.ScriptModule": False,
}


def graph_instance_condition(test: ast.expr, resolver: Resolver) -> tuple[str, bool] | None:
    """`isinstance(<name>, <classes>)` (or `not` of it) on a plain name, with classes whose
    verdict for an exported graph is known: `("<name> graph-instance", verdict)`, else None."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = graph_instance_condition(test.operand, resolver)
        return (inner[0], not inner[1]) if inner else None
    tested = _isinstance_of_name(test)
    if tested is None:
        return None
    name, classes = tested
    verdict = instance_verdict(classes, resolver)
    return None if verdict is None else (f"{name} {KIND}", verdict)


def graph_instance_truth(test: ast.expr, is_graph, resolver: Resolver) -> bool | None:
    """The value of `test` when it is `isinstance(<name>, <classes>)` (or `not` of it) on a
    name `is_graph(name)` says holds an exported graph on every path; None otherwise."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = graph_instance_truth(test.operand, is_graph, resolver)
        return None if inner is None else not inner
    tested = _isinstance_of_name(test)
    if tested is None or not is_graph(tested[0]):
        return None
    return instance_verdict(tested[1], resolver)


def is_graph_instance(condition: str) -> bool:
    """The guard condition is one `graph_instance_condition` made."""
    return condition.endswith(" " + KIND)


def instance_verdict(classes: ast.expr, resolver: Resolver) -> bool | None:
    """`isinstance(<exported graph>, classes)`: True/False when known, else None."""
    items = classes.elts if isinstance(classes, ast.Tuple) else [classes]
    verdicts = [_KNOWN.get(resolver.qualname(item) or "") for item in items]
    if any(v is True for v in verdicts):
        return True
    return False if all(v is False for v in verdicts) else None


def _isinstance_of_name(test: ast.expr) -> tuple[str, ast.expr] | None:
    tested = isinstance_test(test)
    if tested is None or not isinstance(tested[0], ast.Name):
        return None
    return tested[0].id, tested[1]


__all__ = ["KIND", "graph_instance_condition", "graph_instance_truth", "instance_verdict", "is_graph_instance"]
