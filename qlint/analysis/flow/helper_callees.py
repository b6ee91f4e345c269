"""Which helper a call names (`callee`: a function or method of the same module, class or
project, which a walk follows) and its summary (`helper`); library calls, the API's stand-ins
and functions under a decorator of the project that is no pass-through are none.

Each takes the walk's `model_calls.CallSemantics` (`sem`): it is not imported here, so that
this module knows neither the call semantics nor the walk above it."""

from __future__ import annotations

import ast

from qlint.analysis.flow.class_calls import class_callee
from qlint.analysis.flow.class_methods import method_of
from qlint.analysis.flow.function_flows import FunctionFlow
from qlint.analysis.flow.model_apis import classify_call
from qlint.analysis.flow.pass_through import opaque
from qlint.analysis.flow.subclass_self_calls import self_method
from qlint.analysis.names.scope import is_property, unique_value

# Calls into these are API calls (`classify_call`) or library internals, never summarised.
_LIBRARIES = ("torch.", "torchao.", "executorch.exir", "copy.")


def helper(sem, func: ast.expr, found=False) -> tuple[FunctionFlow, int] | None:
    """The summary of the function called, and 1 if `self` fills its first parameter
    (`found`: what `callee` answered for it, when asked already)."""
    if found is False:
        found = callee(sem, func)
    if found is None:
        return None
    owner, node, holder, offset = found
    flow = owner.function(node, holder)
    return (flow, offset) if flow is not None else None


def _stands_in_for_api(scope, func: ast.Name) -> bool:
    """`try: from torchao.quantization.pt2e import move_exported_model_to_train / except
    ImportError: def move_exported_model_to_train(model): ...`: the function runs only where
    torchao lacks the API, and the torchao qlint targets (0.18) has every PT2E API
    `classify_call` names under `torchao.`: the call is the library's, read as the API."""
    if func.id not in scope.import_fallbacks:
        return False
    imported = scope.imports.get(func.id)
    return imported is not None and imported.startswith("torchao.") and classify_call(imported, func) is not None


def callee(sem, func: ast.expr, depth: int = 0):
    """(the `ModelFlow` of its module, the def, its class scope, 1 if `self` fills its first
    parameter) of the helper called, without analysing it; None when it is none we follow."""
    found = _callee(sem, func, depth)
    if found is not None and opaque(found[0], found[1]):
        return None  # a function or method under a decorator of the project that is no pass-through
    return found


def _callee(sem, func: ast.expr, depth: int = 0):
    owner = sem.owner
    if isinstance(func, ast.Name) and func.id in sem.resolver.local and depth < 3:
        # `fn = to_eval; fn(gm)`: a local bound once to a function is that function.
        alias = unique_value(sem.resolver.local[func.id])
        if isinstance(alias, (ast.Name, ast.Attribute)):
            found = callee(sem, alias, depth + 1)
            # `fn = self.method; fn(x)`: the call has no `.value` to hand over as `self`.
            return found if found is None or not found[3] else None
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
        found = method_of(sem.class_scope, func.attr, owner.scope) if sem.class_scope else None
        if found is None:
            # A base written in another module, whose callers are read (`subclass_self_calls`).
            inherited = self_method(sem, func.attr)
            if inherited is None:
                return None
            owner, *found = inherited
        method, holder = found  # the class's own method, or one of a base class
        if is_property(method):
            return None  # `self.prop(x)` calls the value the property returns, not its getter
        static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.decorator_list)
        return owner, method, holder, 0 if static else 1
    if isinstance(func, ast.Name) and func.id in sem.nested:  # a helper defined in this function
        return owner, sem.nested[func.id], None, 0
    if (
        isinstance(func, ast.Name)
        and func.id in owner.scope.functions
        and func.id not in sem.resolver.local
        and not _stands_in_for_api(owner.scope, func)
    ):
        return owner, owner.scope.functions[func.id], None, 0
    name = sem.walk.qualname(func)
    if not name or "." not in name:
        return None
    module, _, attr = name.rpartition(".")
    if name.startswith(_LIBRARIES) and (classify_call(name, func) is not None or not _followed(sem, module)):
        return None
    other = owner.for_module(module)
    for _ in range(3):  # `api.qm(...)` where `pkg/api.py` re-exports it (renamed or not)
        if other is None or attr in other.scope.functions or attr not in other.scope.imports:
            break
        module, _, attr = other.scope.imports[attr].rpartition(".")
        other = owner.for_module(module) if module else None
    if other is not None and other is not owner and attr in other.scope.functions:
        return other, other.scope.functions[attr], None, 0
    if other is None and isinstance(func, ast.Attribute):
        return class_callee(owner, module, attr)  # `Ready.apply(model)`, on the class
    return None


def _followed(sem, module: str) -> bool:
    """The module whose callers are being read (`project_callers`): in torchao's own tree
    its helpers are `torchao.*` too, and their calls are what the reading is for."""
    owner = sem.owner
    if module == owner.scope.module:  # `for_module`'s answer: the module itself
        return owner.classes.followed(owner.scope.path)
    return owner.classes.followed_module(module, owner.scope.path)


__all__ = ["callee", "helper"]
