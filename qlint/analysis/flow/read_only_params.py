"""Whether a function only reads the container one of its parameters holds.

A helper that iterates over a dict or list of models (`for name, m in models.items()`)
captures what its callers put in it, unless the helper puts more in it itself
(`models["extra"] = Net()`, `models.update(...)`), changes what its items hold
(`m.bn = nn.BatchNorm1d(4)`, `m.add_module(...)`), or hands the container itself to a
call that might (`register(models)`). Any of those, through any name that holds the
parameter or a part of it, and the items are no longer only the caller's. Handing an item
on (`export(m, ...)`, `helper(m)`) is what the helper is for, as for a model parameter.
"""

from __future__ import annotations

import ast

from qlint.analysis.names.scope import parameter_args
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import own_nodes

# Methods that add to a dict, list or set, or change what a module holds.
MUTATORS = frozenset(
    {
        "update",
        "setdefault",
        "append",
        "extend",
        "insert",
        "add",
        "__setitem__",
        "__setattr__",
        "__ior__",
        "__iadd__",
        "add_module",
        "register_module",
        "apply",
    }
)
# Builtins that hand out the items of a container (a copy of it, an iterator), and those
# that only look at it: none changes what it holds.
_COPIES = frozenset({"enumerate", "sorted", "list", "tuple", "iter", "reversed", "zip", "next"})
LOOKERS = frozenset({"len", "isinstance", "print", "repr", "str", "type", "id", "bool"})
_READERS = _COPIES | LOOKERS
# Calls that take a model without adding to it or changing what it holds: a capture handed
# `artifact.model` (an attribute of the parameter, which is the container itself to `_root`)
# takes the model the helper is for, as `export(m, ...)` takes a loop item.
_TAKERS = frozenset(
    {"export", "export_for_training", "draft_export", "capture_pre_autograd_graph", "prepare_pt2e"}
    | {"prepare_qat_pt2e", "convert_pt2e", "deepcopy"}
)
_STORES = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)


def reads_only(func: ast.AST, index: int) -> bool:
    """The parameter at `index` of `func` (counted as `FunctionFlow.params` counts) is only
    read: nothing is added to it or stored into what it holds."""
    answers = kept_on_node(func, "_qlint_reads_only", _reads_only)
    return index < len(answers) and answers[index]


def _reads_only(func: ast.AST) -> tuple[bool, ...]:
    names = [p.arg for p in parameter_args(func, star=False)]
    nodes = own_nodes(func, scopes=False)
    return tuple(_only_read(nodes, name) for name in names)


def _only_read(nodes: list[ast.AST], name: str) -> bool:
    whole, items = _aliases(nodes, name)
    held = whole | items
    for node in nodes:
        if isinstance(node, _STORES):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            value = getattr(node, "value", None)
            if value is not None and _root(value, whole_only=True) in whole and not all(_plain(t) for t in targets):
                return False  # `CACHE["last"] = models`: stored where it may be filled later
            for target in targets:
                for part in ast.walk(target):
                    if isinstance(part, (ast.Attribute, ast.Subscript)) and _root(part.value) in held:
                        return False
                if isinstance(node, ast.AugAssign) and _root(target) in held:
                    return False  # `models |= extra`, `models += [m]`
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in MUTATORS and _root(func.value) in held:
                return False
            callee = func.id if isinstance(func, ast.Name) else None
            if callee in ("setattr", "delattr") and node.args and _root(node.args[0]) in held:
                return False
            if callee in _READERS or (func.attr if isinstance(func, ast.Attribute) else callee) in _TAKERS:
                continue
            passed = [*node.args, *(kw.value for kw in node.keywords)]
            if any(_root(a.value if isinstance(a, ast.Starred) else a, whole_only=True) in whole for a in passed):
                return False  # the container itself goes where it may be filled
    return True


def _aliases(nodes: list[ast.AST], name: str) -> tuple[set[str], set[str]]:
    """Names holding the container (`whole`: the parameter, `data = param.data`,
    `views = param.values()`) and names holding its items (loop variables, `m = param["a"]`)."""
    whole, items = {name}, set()
    for _ in range(3):  # an alias of an alias: a few rounds settle it
        before = len(whole) + len(items)
        for node in nodes:
            if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                if _root(node.iter) in whole | items:
                    items |= _names(node.target)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                same = _root(node.value, whole_only=True) in whole
                for target in targets:
                    if same and isinstance(target, ast.Name):
                        whole.add(target.id)  # `data = artifact.data`: the container itself
                    elif same or _root(node.value) in whole | items:
                        items |= _names(target)  # unpacked, an item, a copy of the items
        if len(whole) + len(items) == before:
            break
    return whole, items


def _root(expr: ast.AST, whole_only: bool = False) -> str | None:
    """The name an expression reads through attributes, subscripts, method calls and the
    builtins that hand out items (`list(models.values())`). With `whole_only`, only
    attributes: what still is the container itself (not an item, a view or a copy)."""
    while True:
        if isinstance(expr, ast.Name):
            return expr.id
        if isinstance(expr, ast.Attribute):
            expr = expr.value
        elif whole_only:
            return None
        elif isinstance(expr, ast.Subscript):
            expr = expr.value
        elif isinstance(expr, ast.Call):
            func = expr.func
            if isinstance(func, ast.Attribute):
                expr = func.value
            elif isinstance(func, ast.Name) and func.id in _COPIES and expr.args:
                expr = expr.args[0]
            else:
                return None
        else:
            return None


def _names(target: ast.AST) -> set[str]:
    """The names a target binds (`a`, `a, (b, *c)`), not those it stores into (`self.x`, `d[k]`)."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return {n for elt in target.elts for n in _names(elt)}
    if isinstance(target, ast.Starred):
        return _names(target.value)
    return set()


def _plain(target: ast.AST) -> bool:
    """A target that only binds names."""
    if isinstance(target, ast.Name):
        return True
    if isinstance(target, (ast.Tuple, ast.List)):
        return all(_plain(e) for e in target.elts)
    return isinstance(target, ast.Starred) and _plain(target.value)


__all__ = ["LOOKERS", "MUTATORS", "reads_only"]
