"""Constructor arguments that are plain functions, never modules (issue 14).

A construction that passes a value qlint cannot read leaves the model's content unknown: the
value could be a module the class stores and runs (`Wrapper(backbone)`). A function cannot be
one. `M(add_fn)` with `add_fn = lambda x, y: x.add_(y)` (a PyTorch issue's reproduction,
HBTGen-artifact `issue_127516.py`), `M(torch.add)` or `M(my_add)` hand the class a callable
that `nn.Module.__setattr__` does not register: `model.eval()` does not reach it, and what it
computes depends on the mode only if it reads a mode. So the argument adds nothing to what
the class holds when the function is closed: it reads its parameters, its own locals, torch's
functions (`torch.add`, `torch.nn.functional.relu`, `operator.add`, `math.sqrt`) and a few
builtins, names no `training` flag and switches no mode (`.train()`, `.eval()`), and reaches
no module through a global, a closure or a class of torch (`nn.Dropout`) it could build.

Followed: a lambda written in the call, a name bound once to such a lambda (in the function,
the module or a module of the project it imports), a module-level `def` of the same module
that nothing rebinds (the constructing function's own `def`, parameter or import of the name
comes first, and stays unknown), and a reference to a torch function. What the class does with the
function stays the class's own content, read as before: a call of it in `__init__` (`self.norm
= norm_layer(c)`) is a call of a parameter, which leaves the content unknown, and a read of
`self.training` in the class is a mode-dependent part.
"""

from __future__ import annotations

import ast

from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import parameter_args

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Modules of the standard library whose functions compute on numbers and tensors.
_PURE_ROOTS = frozenset({"operator", "math"})
# Builtins that compute on values (no `getattr`, `eval`, `globals`: those reach anything).
_PURE_BUILTINS = frozenset(
    {"len", "range", "min", "max", "abs", "sum", "int", "float", "bool", "tuple", "list", "zip", "enumerate", "print"}
)
# What would read or switch the model's mode through a value the function is given.
_MODE_ATTRS = frozenset({"training", "train", "eval"})


def closed_function(arg: ast.expr, resolver: Resolver, func: ast.AST | None = None) -> bool:
    """Whether `arg` is a plain function that reads no mode and reaches no module (`func`: the
    function the construction is written in, whose own bindings of the name come first)."""
    if isinstance(arg, ast.Lambda):
        return _closed(arg, resolver)
    if isinstance(arg, ast.Name):
        local = isinstance(func, (*_FUNCTIONS, ast.Lambda)) and _binds(func, arg.id)
        defined = None if local else _module_def(arg.id, resolver)
        if defined is not None:
            return _closed(defined, resolver)
        located = resolver.value_of(arg)
        if located is not None and isinstance(located.node, ast.Lambda):
            return _closed(located.node, resolver.for_scope(located.scope))
    name = resolver.qualname(arg)
    return name is not None and _pure_function(name)


def _module_def(name: str, resolver: Resolver) -> ast.AST | None:
    """The module's own `def name`, when no local, assignment or import binds the name too."""
    scope = resolver.scope
    if name in resolver.local or name in scope.assigns or name in scope.imports:
        return None
    return scope.functions.get(name)


def _binds(func: ast.AST, name: str) -> bool:
    """Whether the function binds `name` itself (a parameter, an assignment, a nested `def`
    or class, an import): the module's `def` of that name is then not what it passes."""
    for node in ast.walk(func):
        if isinstance(node, ast.arg) and node.arg == name:
            return True
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id == name:
            return True
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef)) and node is not func and node.name == name:
            return True
        if isinstance(node, ast.alias) and (node.asname or node.name).split(".")[0] == name:
            return True
    return False


def _closed(func: ast.AST, resolver: Resolver) -> bool:
    own = _own_names(func)
    body = func.body if isinstance(func.body, list) else [func.body]
    parents = {child: node for stmt in body for node in ast.walk(stmt) for child in ast.iter_child_nodes(node)}
    for node in (n for stmt in body for n in ast.walk(stmt)):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return False
        if isinstance(node, ast.Attribute) and node.attr in _MODE_ATTRS:
            return False
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in own:
            if node.id in _PURE_BUILTINS and node.id not in resolver.scope.assigns:
                continue
            if not _pure_reference(node, parents, resolver):
                return False
    return True


def _pure_reference(name: ast.Name, parents: dict, resolver: Resolver) -> bool:
    """The whole attribute chain a free name starts (`torch.nn.functional.relu`, `F.relu`)
    names a pure function."""
    chain: ast.expr = name
    while isinstance(parents.get(chain), ast.Attribute):
        chain = parents[chain]
    qualname = resolver.qualname(chain)
    return qualname is not None and _pure_function(qualname)


def _own_names(func: ast.AST) -> set[str]:
    """The function's own parameters and the names its body binds in its own scope (a nested
    function's, lambda's or comprehension's names are not: a free use of one of them outside
    is then judged as free, which only keeps a report)."""
    names = {a.arg for a in parameter_args(func)}
    work = list(func.body) if isinstance(func.body, list) else [func.body]
    while work:
        node = work.pop()
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        work.extend(ast.iter_child_nodes(node))
    return names


def _pure_function(name: str) -> bool:
    """A function of torch (lowercase: not a class; not a loader or a hub entry, which return
    modules) or of `operator`/`math`."""
    root, _, rest = name.partition(".")
    last = name.rpartition(".")[2]
    if root in _PURE_ROOTS:
        return bool(rest)
    return root == "torch" and bool(rest) and last[:1].islower() and "load" not in last and ".hub." not in name
