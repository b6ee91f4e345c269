"""Which classes a module's uses of a registry's decorator can register, for `registry_closure`
(issue 14; Samsung TICO's `test_quantizer_registry.py`).

A decorator used on class statements registers exactly the classes it decorates. A test of the
registry itself also calls it by hand, and often through a helper and a fake module:

    def _install_fake_quantizer_module(module_name, config_cls, quantizer_cls):
        mod = types.ModuleType(module_name)
        mod.register_quantizer = register_quantizer
        mod.quantizer_cls = quantizer_cls

        def _auto_register():
            mod.register_quantizer(mod.config_cls)(mod.quantizer_cls)
        ...

    _install_fake_quantizer_module(name, config_cls=_LazyConfig, quantizer_cls=_AnotherDummyQuantizer)

What that registers under a key nobody can see is only ever a class the module defines (a test
double). Registering another class can take a key from the class whose callers are read, never
give it one, so the keys its decorators show still say which callers reach it. The values of
the class argument are followed through names bound in the enclosing functions, attributes
stored on a local object, and the parameters of a module-level function every call of which is
in this module; anything else (a class imported, a call's result, a name bound by a loop) may
be the class whose callers are read, and the registry stays open.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_DEPTH = 8


def registers_own_classes_only(
    tree: ast.Module, decorator: str, cls: str, named_elsewhere: Callable[[str], bool]
) -> bool:
    """Every load of `decorator` (a name, or an attribute of that name) decorates a class
    statement, is stored under its own name on an object (`mod.register = register`, whose
    uses then spell it too), or is called as `decorator(key)(value)` with `value` only ever a
    class statement of this module other than `cls` (a module that also names `cls` is not
    trusted: it can hand it on in ways not followed). `named_elsewhere(name)`: whether another
    module of the project names `name`."""
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    decorating: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            decorating.update(id(d.func) for d in node.decorator_list if isinstance(d, ast.Call))
    reader = _Values(tree, parents, cls, named_elsewhere)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
            a.asname and a.name.rpartition(".")[2] == decorator for a in node.names
        ):
            return False  # imported under another name: its uses do not spell it
        if (
            not (isinstance(node, (ast.Name, ast.Attribute)) and ends_with_name(node, decorator))
            or id(node) in decorating
        ):
            continue
        parent = parents.get(id(node))
        if _alias(node, parent, decorator) or (
            isinstance(parent, ast.Assign) and parent.value is node and _alias(parent.targets[0], parent, decorator)
        ):
            continue
        if not isinstance(node.ctx, ast.Load):
            return False
        registered = _registered(node, parents)
        if registered is None or not reader.own_classes(registered):
            return False
    return True


def _alias(target: ast.AST, parent: ast.AST | None, decorator: str) -> bool:
    """`obj.<decorator> = <decorator>`: the decorator kept under its own name."""
    return (
        isinstance(parent, ast.Assign)
        and len(parent.targets) == 1
        and parent.targets[0] is target
        and isinstance(target, ast.Attribute)
        and target.attr == decorator
        and isinstance(target.value, ast.Name)
        and isinstance(parent.value, ast.Name)
        and parent.value.id == decorator
    )


def _registered(node: ast.AST, parents) -> ast.expr | None:
    """`value` of `decorator(key)(value)`, when `node` is that callee."""
    key_call = parents.get(id(node))
    if not (isinstance(key_call, ast.Call) and key_call.func is node and len(key_call.args) == 1):
        return None
    if key_call.keywords or isinstance(key_call.args[0], ast.Starred):
        return None
    call = parents.get(id(key_call))
    if not (isinstance(call, ast.Call) and call.func is key_call and len(call.args) == 1 and not call.keywords):
        return None
    return None if isinstance(call.args[0], ast.Starred) else call.args[0]


class _Values:
    """The class statements of the module an expression can evaluate to (None: not only those)."""

    def __init__(self, tree: ast.Module, parents, cls: str, named_elsewhere) -> None:
        self.tree, self.parents, self.cls, self.named_elsewhere = tree, parents, cls, named_elsewhere
        self.names_cls = any(
            (isinstance(n, ast.Name) and n.id == cls) or (isinstance(n, ast.Attribute) and n.attr == cls)
            for n in ast.walk(tree)
        ) or any(isinstance(n, ast.alias) and n.name.rpartition(".")[2] == cls for n in ast.walk(tree))

    def own_classes(self, expr: ast.expr) -> bool:
        if self.names_cls:
            return False
        found = self._values(expr, _DEPTH)
        return found is not None and bool(found) and self.cls not in found

    def _values(self, expr: ast.expr, depth: int) -> set[str] | None:
        if depth <= 0:
            return None
        if isinstance(expr, ast.Name):
            return self._name(expr, expr.id, depth)
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            return self._attribute(expr, depth)
        return None

    def _scope_binding(self, node: ast.AST, name: str) -> ast.AST | None:
        """The innermost enclosing function binding `name` (a parameter or a store), or the module."""
        scope = self.parents.get(id(node))
        while scope is not None:
            if isinstance(scope, _FUNCS) and (name in _params(scope) or _stores(scope, name)):
                return scope
            scope = self.parents.get(id(scope))
        return self.tree

    def _name(self, at: ast.AST, name: str, depth: int) -> set[str] | None:
        scope = self._scope_binding(at, name)
        if scope is self.tree:
            binds = [s for s in self.tree.body if _binds_at_top(s, name)]
            if len(binds) == 1 and isinstance(binds[0], ast.ClassDef):
                return {name}
            return None
        if name in _params(scope):
            return self._arguments(scope, name, depth)
        out: set[str] = set()
        for store in _stores(scope, name):
            assign = self.parents.get(id(store))
            if not (isinstance(assign, ast.Assign) and assign.targets == [store]):
                return None  # a loop, a `with`, an unpacking, an augmented assignment
            found = self._values(assign.value, depth - 1)
            if found is None:
                return None
            out |= found
        return out

    def _attribute(self, expr: ast.Attribute, depth: int) -> set[str] | None:
        holder = expr.value.id
        scope = self._scope_binding(expr, holder)
        if scope is self.tree or holder in _params(scope) or not self._private(scope):
            return None  # an object others can reach and write
        # The object may still leave the function (`sys.modules[name] = mod`, `return mod`); who
        # writes the attribute later has to reach it through this module's private function,
        # and this module never names the class whose callers are read (`own_classes`).
        out: set[str] = set()
        for node in ast.walk(scope):
            if _handed_to_builtin(node, holder):
                return None  # `setattr(mod, name, value)`: a store no attribute spells
            if not (isinstance(node, ast.Attribute) and node.attr == expr.attr and ends_with_name(node.value, holder)):
                continue
            if isinstance(node.ctx, ast.Load):
                continue
            assign = self.parents.get(id(node))
            if not (isinstance(assign, ast.Assign) and assign.targets == [node]):
                return None
            found = self._values(assign.value, depth - 1)
            if found is None:
                return None
            out |= found
        return out or None

    def _private(self, scope: ast.AST) -> bool:
        """The module-level function holding `scope` is named by no other module (what it
        makes and hands out is written by no one else)."""
        while scope is not None and scope not in self.tree.body:
            scope = self.parents.get(id(scope))
        return isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and not self.named_elsewhere(scope.name)

    def _arguments(self, func: ast.AST, name: str, depth: int) -> set[str] | None:
        """What every call of module-level `func` passes for its parameter `name`."""
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or func not in self.tree.body:
            return None
        if func.decorator_list or self.named_elsewhere(func.name):
            return None
        params = func.args
        if params.posonlyargs or params.vararg or params.kwarg or params.kwonlyargs:
            return None
        positional = [a.arg for a in params.args]
        index = positional.index(name)
        defaults = dict(zip(positional[len(positional) - len(params.defaults) :], params.defaults, strict=True))
        out: set[str] = set()
        for node in ast.walk(self.tree):
            if not (isinstance(node, ast.Name) and node.id == func.name) or node is func:
                continue
            call = self.parents.get(id(node))
            if not (isinstance(call, ast.Call) and call.func is node):
                return None  # handed on: called where this module does not show
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return None
            given = next((k.value for k in call.keywords if k.arg == name), None)
            if given is None and index < len(call.args):
                given = call.args[index]
            if given is None:
                given = defaults.get(name)
            if given is None:
                continue  # the call raises
            found = self._values(given, depth - 1)
            if found is None:
                return None
            out |= found
        return out


def _handed_to_builtin(node: ast.AST, holder: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("setattr", "vars")
        and bool(node.args)
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id == holder
    )


def _params(func: ast.AST) -> set[str]:
    a = func.args
    names = [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, (a.vararg, a.kwarg))]
    return {p.arg for p in names}


def _stores(func: ast.AST, name: str) -> list[ast.Name]:
    """The stores of `name` in `func`'s own scope (not in the functions it holds)."""
    out = []
    todo = list(ast.iter_child_nodes(func))
    while todo:
        node = todo.pop()
        if isinstance(node, (*_FUNCS, ast.ClassDef)):
            if getattr(node, "name", None) == name:
                out.append(node)
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            out.append(node)
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            out.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return out


def _binds_at_top(stmt: ast.stmt, name: str) -> bool:
    if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        return stmt.name == name
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return any((a.asname or a.name.partition(".")[0]) == name for a in stmt.names)
    return any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load) for n in ast.walk(stmt))


def ends_with_name(node: ast.expr, name: str) -> bool:
    """`name` or `<anything>.name`: a decorator or class spelled as imported or through its module."""
    return (isinstance(node, ast.Name) and node.id == name) or (isinstance(node, ast.Attribute) and node.attr == name)


__all__ = ["ends_with_name", "registers_own_classes_only"]
