"""Calls between a model's switch and its store in `self.<attr>` that hand the model back as it
came (issue 14, item 2: Ultralytics' exporter evals its copy, then `model = model.fuse()` and
`model = executorch_wrapper(model)` before `self.model = model`).

`switched_stores` asks of a call that names the stored local once, as its receiver or as its
first argument, whether the local is after it the same module in the same mode. Yes when the
call runs a project function or method (`kept_calls.keeps`) that returns its first parameter
(the module handed in, or `self`) as it came on every path, switches no module, and gives that
module's parts only kept stores; the function is resolved as the storing method's walk
resolves it (`helper_callees.callee`: its module, its imports, the method's own imports), and
`self` must not fill its first parameter there (the model is not what it returns). A method
is resolved on the receiver's class, known when every binding of the local in the storing
method builds one project class (`Net()`, `copy.deepcopy(Net())`, a mode-keeping torch step
of either: `copy.deepcopy` of a module is an instance of its class with its `training` flag,
checked on torch 2.13) or is itself such a call of the local: a method that returns `self`
leaves the class as it was, and so does a mode-keeping torch step of the local itself
(`model = model.half()` after `model = model.fuse()`). Its def is the one the class's own
module's bases reach (`class_methods.method_of`), undecorated. Anything else (a model of unknown class, a method
returning something other than `self`, a wrapper the project does not define) is no answer.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from qlint.analysis.flow import helper_callees
from qlint.analysis.flow.class_methods import method_of
from qlint.analysis.flow.kept_calls import keeps
from qlint.analysis.flow.mode_keeping import bindings
from qlint.analysis.flow.model_torch_nn import MODE_KEEPING_METHODS

_COPIES = frozenset({"copy.deepcopy", "copy.copy"})


def hands_back_in(method: ast.AST, walk_of: Callable[[], object]) -> Callable[[ast.Call, str], bool]:
    """`keeps(call, name)` for the calls of `method`; `walk_of()` makes its walk
    (`model_interp.Interpreter`, held here: its call semantics hold it weakly), asked at the
    first call only (most stores need none)."""
    made: list = []

    def hands_back(call: ast.Call, name: str) -> bool:
        if not made:
            made.append(walk_of())
        return _hands_back(made[0].calls, method, call, name)

    return hands_back


def _hands_back(sem, method: ast.AST, call: ast.Call, name: str) -> bool:
    return _keeps_call(sem, call.func, name, lambda: _receiver_class(sem, method, name))


def _keeps_call(sem, func: ast.expr, name: str, receiver: Callable[[], object]) -> bool:
    """Whether a call of `func` hands `name` back as it came: a method of `receiver()` (the
    local's class, asked only for `name.meth(...)`) or a project function `name` is handed to."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == name:
        cls = receiver()
        found = _method(sem, cls, func.attr) if cls is not None else None
    else:
        found = helper_callees.callee(sem, func)
        if found is not None and found[3]:
            return False  # `self.prepare(model)`: `self` fills the first parameter, not the model
    return found is not None and keeps(sem, found)


def _receiver_class(sem, method: ast.AST, name: str):
    """The project class every binding of `name` in `method` builds, when each binding builds
    it or hands `name` back through a call of its own (`model = model.fuse()`,
    `model = wrap(model)`) that keeps it; None otherwise."""
    values = bindings(method, name)
    if not values:
        return None
    classes = []
    rebindings = []
    for value in values:
        if _torch_step_on(value, name):
            continue  # `model = model.half()`: torch's step hands back the object it is called on
        if _calls_on(value, name):
            rebindings.append(value)
            continue
        built = _built(sem, value)
        if built is None:
            return None
        classes.append(built)
    if not classes or any(c.node is not classes[0].node for c in classes):
        return None
    cls = classes[0]
    return cls if all(_keeps_call(sem, value.func, name, lambda: cls) for value in rebindings) else None


def _torch_step_on(value: ast.expr, name: str) -> bool:
    """`name.half()`, `name.to(device).float()`: torch's mode-keeping steps on `name` itself."""
    stepped = False
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        if value.func.attr not in MODE_KEEPING_METHODS:
            return False
        value, stepped = value.func.value, True
    return stepped and isinstance(value, ast.Name) and value.id == name


def _calls_on(value: ast.expr, name: str) -> bool:
    """`name.meth(...)` or `f(name, ...)`: a call that may hand `name` back."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == name:
        return True
    return bool(value.args) and isinstance(value.args[0], ast.Name) and value.args[0].id == name


def _built(sem, value: ast.expr):
    """The resolved class of the construction `value` is, through copies and torch's
    mode-keeping steps (`copy.deepcopy(Net()).to(device)`); None for anything else."""
    while True:
        if not isinstance(value, ast.Call):
            return None
        func = value.func
        if isinstance(func, ast.Attribute) and func.attr in MODE_KEEPING_METHODS:
            value = func.value
            continue
        name = sem.walk.qualname(func)
        if name in _COPIES and len(value.args) == 1 and not value.keywords:
            value = value.args[0]
            continue
        built = sem.builds.construction(value, name)
        return built.cls if built is not None else None


def _method(sem, cls, attr: str):
    """(its module's flow, the def, the class holding it, 1) of the method `attr` an instance
    of `cls` runs, undecorated, in a class of its module's top level; None otherwise."""
    node = cls.node
    scope = cls.scope
    if node is None or scope is None:
        return None
    top = scope.classes.get(node.name)
    if top is None or top.node is not node:
        return None
    found = method_of(top, attr, scope)
    if found is None or getattr(found[0], "decorator_list", None):
        return None
    owner = sem.owner.for_module(scope.module)
    return (owner, found[0], found[1], 1) if owner is not None else None


__all__ = ["hands_back_in"]
