"""`Ready.apply(model)`: a method called on its class, not on an instance.

A static method runs with the call's arguments as they are written; a class method gets the
class first (`cls`), then them; a plain function of the class called on the class
(`Ready.apply(r, model)`) gets its `self` from the first argument. Any other decorator (a
property, a cache, anything wrapped) may run something else, and is not followed. The class
is one of the module walked or of another project module (`inherited_methods.project_class`,
from the module that makes the call), and the method is the one its lookup finds there,
through bases of other project modules too.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.factory_methods import builds_a_model
from qlint.analysis.flow.inherited_methods import inherited_method, project_class
from qlint.analysis.flow.method_words import names_a_step

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def class_callee(owner, module: str, attr: str):
    """(the `ModelFlow` of the module holding the method, the def, its class scope, 1 if the
    class fills its first parameter) for `<module>.<Class>.<attr>(...)` (`module` names the
    class: `pkg.ready.Ready`; only `Ready` for a module without a name), or None."""
    head, _, name = module.rpartition(".")
    if not name[:1].isupper():
        # `os.path.join`, `np.random.rand`: a module's function, whose module no lookup finds
        # (classes are named in CapWords: a lookup of every such module cost ExecuTorch's run
        # a tenth of its project lookups).
        return None
    found = project_class(owner, head, name) if head else _own_class(owner, name)
    if found is None:
        return None
    method = inherited_method(*found, attr)
    if method is None or not isinstance(method[1], _DEFS):
        return None
    holder_flow, func, holder = method
    if holder_flow is not owner and not (names_a_step(holder_flow, func) or builds_a_model(holder_flow, func, holder)):
        return None  # names no step (`method_words`) and builds nothing it returns (`factory_methods`)
    offset = _offset(func)
    return None if offset is None else (holder_flow, func, holder, offset)


def _own_class(owner, name: str):
    scope = owner.scope
    if scope.module or name not in scope.classes or name in scope.imports or name in scope.assigns:
        return None
    return owner, scope.classes[name]


def _offset(func: ast.AST) -> int | None:
    """How many parameters the class call fills before the written arguments (None: a
    decorator that is neither `staticmethod` nor `classmethod`)."""
    decorators = func.decorator_list
    if not decorators:
        return 0
    if len(decorators) == 1 and isinstance(decorators[0], ast.Name):
        return {"staticmethod": 0, "classmethod": 1}.get(decorators[0].id)
    return None


__all__ = ["class_callee"]
