"""Whether a method of another module's class builds the model it returns (QL201/QL202; issue 14,
items 3-6).

`m = Factory.make()` (a static or class method) or `m = Factory().create()`, where the method
only returns `Net()`, then `prepare_pt2e(export(m, ...).module(), q)`: the model starts in train
mode. Another module's method is read only when its body names a mode switch, a capture or a
PT2E step (`method_words`: reading every such method cost ExecuTorch's cold run ~11% more
bodies), so a factory that only builds was left unread and its model unknown.

Such a method is read too when one of its returns builds: a call of a class or a function of
its module (`Net()`, `build_net(cfg)`), of a name its module imports from the project (the model
flow resolves which it is), or of a method on `cls`/`self` or on such a class (`cls._make()`,
`Nets.tiny()`), with calls on the result in a chain (`Net().to(device)`); or a name the method
binds only to such calls (`model = Net()` ... `return model`). Exact and cheap: the method's
return statements and its assignments to the returned names, no lookup. The model flow then
decides what the return really is (`Net().eval()` is an eval-mode model, a mode-free class keeps
the capture quiet, a loaded program is unknown). Not `cls(...)`: the flow does not know which
class a class method's `cls` is.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.forwarded_graphs import LIBRARY_ROOTS
from qlint.analysis.tree_walk import walk, walk_kinds

_KEY = "_qlint_factory_methods"  # on the scope's `__dict__`: one walk per method and module content
_OWN = frozenset({"cls", "self"})
_KINDS = frozenset({ast.Return, ast.Assign, ast.AugAssign, ast.AnnAssign})


def builds_a_model(owner, method: ast.AST) -> bool:
    """Whether one of `method`'s returns (a def of `owner`'s module; `owner` is that module's
    `ModelFlow`) builds what it returns from a class or function of its module or the project."""
    scope = owner.scope
    known = scope.__dict__.setdefault(_KEY, {})
    found = known.get(id(method))
    if found is None or found[0] is not method:
        found = known[id(method)] = (method, _builds(method, scope))
    return found[1]


def _builds(method: ast.AST, scope) -> bool:
    args = method.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)} - _OWN
    returned: set[str] = set()
    bound: dict[str, bool] = {}
    for node in walk_kinds(method, _KINDS):
        if isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            if isinstance(value, ast.Call) and _built(value, scope, params):
                return True
            if isinstance(value, ast.Name):
                returned.add(value.id)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            built = isinstance(node.value, ast.Call) and _built(node.value, scope, params)
            bound[name] = bound.get(name, True) and built
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
            bound[node.target.id] = False  # rebound some other way: not only such calls
    return any(bound.get(name, False) for name in returned)


def _built(call: ast.Call, scope, params: set[str]) -> bool:
    """The call, or the head of its chain of calls (`Net().to(device)`), calls a class or a
    function of the module or of the project, a method on such a class, or one on `cls`
    or `self` handed none of the method's parameters (`cls._make()`; not `self.net(x)`, a
    forward pass)."""
    while isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Call):
        call = call.func.value  # `Net().to(device)`: the chain's head builds
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        head = func.value.id  # `cls._make()`, `Nets.tiny()`, `self._build()`
        if head in _OWN:
            return not any(isinstance(n, ast.Name) and n.id in params for n in walk(call))
        return head[:1].isupper() and _project_name(head, scope)
    # Not `cls(...)`: the model flow does not know which class a class method's `cls` is.
    return isinstance(func, ast.Name) and _project_name(func.id, scope)


def _project_name(name: str, scope) -> bool:
    if name in scope.assigns:
        return False  # a module-level value: what it holds is not read here
    full = scope.imports.get(name)
    if full is not None:
        return full.partition(".")[0] not in LIBRARY_ROOTS
    return name in scope.classes or name in scope.functions


__all__ = ["builds_a_model"]
