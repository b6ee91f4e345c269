"""Ops an insertion takes from an item of a tuple or list (QL101, QL102).

pytorch-shir's rewriter picks the activation it inserts after a quantized linear or conv as
the first item of a tuple: its match method binds `relu_op = (aten.relu, (), {})` in one
branch and `relu_op = (shin.sra_leaky_relu, (3,), {})` in the other, returns it first in a
tuple, and the rewrite method unpacks that (`[relu_op, x, ...] = node_map`, `node_map` bound
once to `self._match_qlinear(anchor)`) and inserts `graph.call_function(relu_op[0], ...)`.
`name[k]` (`k` a constant) reads item `k` of each value the name may hold:

- every binding of the name in the function is a tuple or list literal, or None (which no
  call inserts), and the literals sit in exclusive branches of one `if` chain: a literal bound
  after another in the same run of statements replaces it, and which one the insertion reads
  would need the order of the code, so none is read;
- or the name is bound once, by unpacking the result of a call of a method of its own class
  (`[a, b] = self._match(n)`, directly or through a name bound once to that call), whose every
  return is None or a tuple literal whose item at that position is None, a literal, or a name
  of that method answered the same way (a tuple: a list handed out may be changed);
- a list is read only by subscripts in its function (an `append`, a store into it, a hand-off
  may change its items).

Anything else reads nothing: an index that is not a constant, a parameter, a loop target,
`+=`, a walrus, an unpacking of anything but such a call, a method its module subclasses.
"""

from __future__ import annotations

import ast

from qlint.analysis.names.functions import Body, bodies
from qlint.analysis.names.scope import parameter_args
from qlint.analysis.statement_walk import own_statements, statement_lists
from qlint.analysis.tree_walk import own_nodes

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_DEPTH = 3
# (literal, the function holding it)
Held = tuple[ast.Tuple | ast.List, ast.AST]


def item_ops(ctx, body: Body, expr: ast.expr) -> list[tuple[ast.expr, Body]]:
    """The expressions `expr` (`name[k]` in the function `body`) may read, each with the body
    holding it (to resolve it in); empty when any value the name may hold is not known."""
    if not isinstance(expr, ast.Subscript) or not isinstance(expr.value, ast.Name) or not isinstance(body.node, _FUNCS):
        return []
    index = _constant_index(expr.slice)
    if index is None:
        return []
    held = _held(ctx, body.node, expr.value.id, 0)
    if not held:
        return []
    found: list[tuple[ast.expr, ast.AST]] = []
    for literal, owner in held:
        if any(isinstance(e, ast.Starred) for e in literal.elts) or not -len(literal.elts) <= index < len(literal.elts):
            return []
        found.append((literal.elts[index], owner))
    by_node = {id(b.node): b for b in bodies(ctx.tree, ctx.scope, ctx.cache)}
    return [(item, by_node[id(owner)]) for item, owner in found if id(owner) in by_node]


def _constant_index(index: ast.expr) -> int | None:
    """`0`, `-1`: an index written as an integer."""
    negative = isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub)
    value = index.operand if negative else index
    if isinstance(value, ast.Constant) and type(value.value) is int:
        return -value.value if negative else value.value
    return None


def _held(ctx, func: ast.AST, name: str, depth: int) -> list[Held] | None:
    """The tuple and list literals the local `name` of `func` may hold (None: not known)."""
    if depth > _DEPTH:
        return None
    bindings = _bindings(func, name)
    if not bindings:
        return None
    held: list[Held] = []
    literal_rows: list[ast.stmt] = []
    for stmt, position in bindings:
        value = stmt.value
        if position is not None:
            if len(bindings) != 1:
                return None
            returned = _returned(ctx, func, value, position, depth)
            if returned is None:
                return None
            held.extend(returned)
        elif _is_none(value):
            continue
        elif isinstance(value, (ast.Tuple, ast.List)):
            held.append((value, func))
            literal_rows.append(stmt)
        else:
            return None
    if not _exclusive(func, literal_rows):
        return None
    if any(isinstance(lit, ast.List) for lit, _ in held) and not _read_by_subscripts(func, name):
        return None
    return held


def _bindings(func: ast.AST, name: str) -> list[tuple[ast.Assign, int | None]] | None:
    """The assignments binding `name` in `func`'s own body, each with the position it is
    unpacked from (None: bound whole); None when anything else binds it."""
    if any(a.arg == name for a in parameter_args(func)):
        return None
    found: list[tuple[ast.Assign, int | None]] = []
    accounted: set[int] = set()
    for stmt in own_statements(func.body):
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    found.append((stmt, None))
                    accounted.add(id(target))
                elif isinstance(target, (ast.Tuple, ast.List)):
                    for i, elt in enumerate(target.elts):
                        if isinstance(elt, ast.Name) and elt.id == name:
                            if any(isinstance(e, ast.Starred) for e in target.elts):
                                return None
                            found.append((stmt, i))
                            accounted.add(id(elt))
        elif _binds_otherwise(stmt, name):
            return None
    for node in ast.walk(func):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return None
    names = (n for n in own_nodes(func) if isinstance(n, ast.Name) and n.id == name)
    stores = (n for n in names if not isinstance(n.ctx, ast.Load))
    if any(id(n) not in accounted for n in stores):
        return None  # a loop target, `+=`, a walrus, a `with` or `del`
    return found


def _binds_otherwise(stmt: ast.stmt, name: str) -> bool:
    """An import, a definition or an `except ... as` binding `name`."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return any((a.asname or a.name.partition(".")[0]) == name for a in stmt.names)
    if isinstance(stmt, (*_FUNCS, ast.ClassDef)):
        return stmt.name == name
    return isinstance(stmt, ast.Try) and any(h.name == name for h in stmt.handlers)


def _returned(ctx, func: ast.AST, value: ast.expr, position: int, depth: int) -> list[Held] | None:
    """The tuples item `position` of what `value` (a call of a method of `func`'s class, or a
    name bound once to one) returns may hold."""
    if isinstance(value, ast.Name):
        bound = _bindings(func, value.id)
        if not bound or len(bound) != 1 or bound[0][1] is not None:
            return None
        value = bound[0][0].value
    method = _own_method(ctx, func, value)
    if method is None or any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(method)):
        return None
    returns = [s for s in own_statements(method.body) if isinstance(s, ast.Return)]
    held: list[Held] = []
    for ret in returns:
        if ret.value is None or _is_none(ret.value):
            continue
        if not isinstance(ret.value, (ast.Tuple, ast.List)) or any(isinstance(e, ast.Starred) for e in ret.value.elts):
            return None
        if position >= len(ret.value.elts):
            return None
        item = ret.value.elts[position]
        if _is_none(item):
            continue
        if isinstance(item, ast.Tuple):
            held.append((item, method))
        elif isinstance(item, ast.Name):
            inner = _held(ctx, method, item.id, depth + 1)
            if inner is None or any(isinstance(lit, ast.List) for lit, _ in inner):
                return None
            held.extend(inner)
        else:
            return None
    return held or None


def _own_method(ctx, func: ast.AST, call: ast.expr) -> ast.AST | None:
    """The method `self.<name>(...)` calls, `func` being a method of the same class (one the
    module does not subclass: a subclass's override would be called instead)."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        return None
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    receiver = call.func.value
    if not params or not isinstance(receiver, ast.Name) or receiver.id != params[0]:
        return None
    cls = next((c for c in ast.walk(ctx.tree) if isinstance(c, ast.ClassDef) and any(s is func for s in c.body)), None)
    if cls is None or func.decorator_list:
        return None
    for other in ast.walk(ctx.tree):
        if isinstance(other, ast.ClassDef) and any(_base_name(b) == cls.name for b in other.bases):
            return None
    methods = [s for s in cls.body if isinstance(s, _FUNCS) and s.name == call.func.attr]
    if len(methods) != 1 or methods[0].decorator_list:
        return None
    return methods[0]


def _base_name(base: ast.expr) -> str | None:
    if isinstance(base, ast.Attribute):
        return base.attr
    return base.id if isinstance(base, ast.Name) else None


def _is_none(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and value.value is None


def _exclusive(func: ast.AST, stmts: list[ast.stmt]) -> bool:
    """Every two of `stmts` sit in different branches of one `if` (an `elif` chain too)."""
    if len(stmts) < 2:
        return True
    paths = _paths(func)
    for i, a in enumerate(stmts):
        for b in stmts[i + 1 :]:
            pa, pb = paths[id(a)], paths[id(b)]
            split = next((k for k, (x, y) in enumerate(zip(pa, pb, strict=False)) if x != y), None)
            if split is None:
                return False  # one holds the other's block, or they share one
            (owner_a, block_a), (owner_b, block_b) = pa[split], pb[split]
            if owner_a is not owner_b or not isinstance(owner_a, ast.If) or block_a == block_b:
                return False
    return True


def _paths(func: ast.AST) -> dict[int, tuple[tuple[ast.stmt, int], ...]]:
    """Each own statement of `func` by id: the (compound statement, block number) pairs
    leading to it from the function's body."""
    found: dict[int, tuple[tuple[ast.stmt, int], ...]] = {}
    stack: list[tuple[list[ast.stmt], tuple[tuple[ast.stmt, int], ...]]] = [(func.body, ())]
    while stack:
        block, path = stack.pop()
        for stmt in block:
            found[id(stmt)] = path
            if not isinstance(stmt, (*_FUNCS, ast.ClassDef)):
                for number, inner in enumerate(statement_lists(stmt)):
                    stack.append((inner, (*path, (stmt, number))))
    return found


def _read_by_subscripts(func: ast.AST, name: str) -> bool:
    """Every read of `name` in `func` is the value of a subscript that reads (`name[0]`)."""
    reads = [n for n in own_nodes(func) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    subscripted = {
        id(n.value)
        for n in own_nodes(func)
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and isinstance(n.value, ast.Name)
    }
    return all(id(r) in subscripted for r in reads)
