"""The bindings of a function's own names (`all_bindings`), as the shapes of its values
(`constant_values`) read them: each assignment, loop target and list filled in place
(`name.append(x)`, `fills_list`); a name bound any other way (a parameter, `+=`, `with`, an
import, `:=`, `global`/`nonlocal`, a nested function or class) is bound to what is not read.
"""

from __future__ import annotations

import ast

from qlint.analysis.statement_walk import target_names
from qlint.analysis.tree_walk import walk

_FILLS = frozenset({"append", "insert", "extend"})
# The nodes that open a scope of their own: their names are not the function's.
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def fills_list(node: ast.AST, name: str) -> bool:
    """`name.append(x)`, `name.insert(i, x)` or `name.extend(x)`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    func = node.func
    if func.attr not in _FILLS or not (isinstance(func.value, ast.Name) and func.value.id == name):
        return False
    if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
        return False
    return len(node.args) == (2 if func.attr == "insert" else 1)


def _match_names(node: ast.AST) -> set[str]:
    if isinstance(node, ast.MatchMapping):
        return {node.rest} if node.rest else set()
    return {node.name} if node.name else set()


def _arguments(node: ast.arguments) -> list[ast.arg]:
    out = [*node.posonlyargs, *node.args, *node.kwonlyargs]
    return out + [a for a in (node.vararg, node.kwarg) if a is not None]


def all_bindings(func: ast.AST) -> dict[str, list | None]:
    """`constant_values._Shapes._bindings` of every name `func` binds: a list of ("assign", target, value),
    ("for", loop, None) and ("fill", call, name), or None for a name bound some other way."""
    out: dict[str, list | None] = {}

    def add(name: str, binding) -> None:
        found = out.setdefault(name, [])
        if found is not None:
            found.append(binding)

    for node in walk(func):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(dict.fromkeys(node.names))
        elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            out[node.target.id] = None
    for node in _own_nodes(func):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for name in _target_names(target):
                    add(name, ("assign", target, node.value))
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                for name in _target_names(node.target):
                    add(name, ("assign", node.target, node.value))
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            for name in _target_names(node.target):
                add(name, ("for", node, None))
        elif isinstance(node, ast.Call) and _filled_name(node) is not None:
            add(_filled_name(node), ("fill", node, _filled_name(node)))
        else:
            for name in _other_names(node):
                out[name] = None
    return out


def _target_names(target: ast.expr) -> dict[str, None]:
    """The names an assignment's or loop's target binds (once each, in order)."""
    return dict.fromkeys(target_names(target))


def _filled_name(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and fills_list(node, func.value.id):
        return func.value.id
    return None


def _other_names(node: ast.AST) -> list[str]:
    """The names `node` binds in a way whose value is not read here (`_other_binding`)."""
    if isinstance(node, ast.AugAssign):
        return [n.id for n in walk(node.target) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)]
    if isinstance(node, ast.withitem):
        return list(_target_names(node.optional_vars)) if node.optional_vars is not None else []
    if isinstance(node, (ast.ExceptHandler, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name] if node.name else []
    if isinstance(node, ast.alias):
        return [node.asname or node.name.split(".")[0]]
    if isinstance(node, (ast.MatchAs, ast.MatchStar, ast.MatchMapping)):
        return list(_match_names(node))
    if isinstance(node, ast.arguments):
        return [a.arg for a in _arguments(node)]
    return []


def _own_nodes(func: ast.AST) -> list[ast.AST]:
    """The nodes of `func`'s own scope: not those of nested functions, classes, lambdas or
    comprehensions (whose targets are their own), but the parameters of `func` itself."""
    out: list[ast.AST] = []
    stack = [func]
    while stack:
        node = stack.pop()
        if node is not func:
            out.append(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (*SCOPES, *COMPREHENSIONS)):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    out.append(child)  # its name is bound here
                continue
            stack.append(child)
    return out


def name_targets(target: ast.expr) -> bool:
    """The target binds names only (`a`, `a, (b, c)`): no attribute, item or starred name."""
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(name_targets(t) for t in target.elts)


def target_binds(target: ast.expr, name: str) -> bool:
    """An assignment's or loop's target binds `name` (also by position or starred)."""
    if isinstance(target, ast.Name):
        return target.id == name
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(target_binds(t, name) for t in target.elts)
    if isinstance(target, ast.Starred):
        return target_binds(target.value, name)
    return False
