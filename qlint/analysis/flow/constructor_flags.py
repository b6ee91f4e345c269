"""Whether every construction of a class selects the eval arm of its `__init__`'s branch on a
flag (`switched_params.Branch`).

`Tester(module, inputs, training=False)` whose `__init__` runs `if training: module.train()
else: module.eval()` before storing the module: the other arm's mode (train, or the module
as it came) is that of no instance when every construction of the class in the project
passes a constant that selects the eval arm, or leaves the flag to a default that does
(`Tester(net, x)`). One construction that passes anything else (`training=True`, a name, a
`**kwargs`), a reference to the class that is no construction (a base of a subclass, the
class handed on as a value: `construction_references`), or a module whose constructions
cannot be read, and the other arm stays possible.
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.flow.call_sites import rows_naming
from qlint.analysis.flow.dead_branches import defaults, open_ended
from qlint.analysis.flow.model_values import STORED, ModeFact
from qlint.analysis.flow.switched_params import Branch, switched_before_store


def other_arm_ruled_out(home: FileContext, fact: ModeFact) -> bool:
    """`fact` is the other arm's mode of a `__init__` of module `home` that switches the model
    it stores in a branch on a flag, and every construction of its class selects the eval arm."""
    origin = fact.origin
    if origin is None or origin.kind != STORED or fact.state == "eval" or origin.name is None:
        return False
    init = origin.node
    branch = _branch(init, origin.name)
    if branch is None:
        return False
    # Imported here, as project_callers does: most captures never ask this, and the first
    # questions of a check must not pay for the verdicts' modules (test_lazy_verdict_imports).
    from qlint.analysis.flow.construction_references import construction_uses
    from qlint.analysis.flow.method_references import owner_class
    from qlint.analysis.flow.project_callers import each_project_call

    owner = owner_class(home, init)
    if owner is None or not home.module:
        return False
    name = owner.node.name
    own = construction_uses(home, f"{home.module}.{name}", name, rows_naming(home, name))
    if own is None:
        return False
    for _, refs in own:
        for call in _calls_of(home.tree, refs):
            if not _selects_eval(init, branch, call):
                return False
    for found in each_project_call(home, init, branch.index):
        if found is None or not _selects_eval(init, branch, found.call):
            return False
    return True


def _branch(init: ast.FunctionDef, param: str) -> Branch | None:
    """The branch `switched_params` followed for `param` (read again from `__init__`)."""
    store = next(
        (
            t
            for s in init.body
            if isinstance(s, ast.Assign) and isinstance(s.value, ast.Name) and s.value.id == param
            for t in s.targets
            if isinstance(t, ast.Attribute)
        ),
        None,
    )
    found = switched_before_store(init, param, store) if store is not None else None
    return found[2] if found is not None else None


def _calls_of(tree: ast.Module, refs: dict[int, ast.AST]) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and id(n.func) in refs]


def _selects_eval(init: ast.FunctionDef, branch: Branch, call: ast.Call) -> bool:
    """The construction passes for the flag a constant whose truth runs the eval arm, or
    leaves it to such a default; `*args` or `**kwargs` may pass anything."""
    if open_ended(call):
        return False
    positional = [*init.args.posonlyargs, *init.args.args]
    at = branch.index - 1  # `self` is not among the call's arguments
    if 0 <= at < len(call.args) and branch.index < len(positional):
        value = call.args[at]
    else:
        value = next((kw.value for kw in call.keywords if kw.arg == branch.flag), None)
    if value is None:
        value = defaults(init).get(branch.flag)
    return isinstance(value, ast.Constant) and bool(value.value) == branch.evals_when


__all__ = ["other_arm_ruled_out"]
