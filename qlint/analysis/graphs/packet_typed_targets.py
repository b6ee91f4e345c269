"""Comparisons that run only where the node target is known to be an `OpOverloadPacket`.

A converter that names nodes handles each kind of target on its own branch: under
`if isinstance(node.target, torch._ops.OpOverloadPacket):` the target *is* a packet (a graph
from a symbolic trace of code that calls packets), so comparing it with a packet there is the
right test, not a matcher that misses overloads (sdpython's FX-to-ONNX interpreter names
`sym_size` that way). This module reads only the code's shape: whether the comparison of an
expression is reached only after an `isinstance` test of the same expression held, with
`OpOverloadPacket` as its only class (a tuple with `OpOverload` in it proves nothing).

The test counts when, within the function that holds the comparison:
- the comparison lies in the body of `if T:` where T is the test or an `and` of tests one of
  which is, or in the `else:` of `if not <test>:`;
- or an earlier statement of an enclosing block is `if not <test>: <exit>` (`return`,
  `continue`, `break`, `raise`), or an `or` one of whose sides is `not <test>`;
- or the comparison is a later operand of an `and` an earlier operand of which is the test.
"""

from __future__ import annotations

import ast
import itertools

from qlint.analysis.names.resolver import Resolver
from qlint.analysis.tree_walk import isinstance_test

_PACKET_CLASS = "torch._ops.OpOverloadPacket"
_EXITS = (ast.Return, ast.Continue, ast.Break, ast.Raise)


def compared_as_packet(root: ast.AST, compare: ast.Compare, target: ast.expr, resolver: Resolver) -> bool:
    """Whether `compare` (which tests `target`) runs only where `target` is a packet."""
    key = ast.dump(target)
    head = _head(target)
    chain = _ancestors(root, compare)
    if chain is None:
        return False
    for parent, child in itertools.pairwise(chain):
        if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
            earlier = parent.values[: parent.values.index(child)]
            if any(_asserts(value, key, resolver) for value in earlier):
                return True
        elif isinstance(parent, ast.If):
            body, orelse = parent.body, parent.orelse
            if child in body and _asserts(parent.test, key, resolver) and not _rebinds(body[: body.index(child)], head):
                return True
            if (
                child in orelse
                and _denies(parent.test, key, resolver)
                and not _rebinds(orelse[: orelse.index(child)], head)
            ):
                return True
        if isinstance(child, ast.stmt):
            for block in _blocks(parent):
                if child in block:
                    earlier = block[: block.index(child)]
                    for i, stmt in enumerate(earlier):
                        if _exits_unless(stmt, key, resolver) and not _rebinds(earlier[i + 1 :], head):
                            return True
    return False


def _rebinds(stmts: list[ast.stmt], head: str | None) -> bool:
    """Whether `stmts` bind the name the compared expression starts from (the test was of
    another value then)."""
    return head is None or any(
        isinstance(n, ast.Name) and n.id == head and isinstance(n.ctx, (ast.Store, ast.Del))
        for s in stmts
        for n in ast.walk(s)
    )


def _head(expr: ast.expr) -> str | None:
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _ancestors(root: ast.AST, node: ast.AST) -> list[ast.AST] | None:
    """The nodes from `root` down to `node`, not entering nested functions, classes or lambdas
    (their code runs when called, not under the enclosing tests)."""
    path = [root]

    def walk(current: ast.AST) -> bool:
        for child in ast.iter_child_nodes(current):
            if child is node:
                path.append(child)
                return True
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if _spans(child, node):
                path.append(child)
                if walk(child):
                    return True
                path.pop()
        return False

    return path if walk(root) else None


def _spans(outer: ast.AST, inner: ast.AST) -> bool:
    start = getattr(outer, "lineno", None)
    if start is None:  # operators, contexts, comprehensions' parts without positions
        return True
    return start <= inner.lineno <= (getattr(outer, "end_lineno", None) or start)


def _blocks(node: ast.AST) -> list[list[ast.stmt]]:
    blocks = [getattr(node, f, None) for f in ("body", "orelse", "finalbody")]
    blocks += [h.body for h in getattr(node, "handlers", ())]
    blocks += [c.body for c in getattr(node, "cases", ())]
    return [b for b in blocks if isinstance(b, list)]


def _asserts(test: ast.expr, key: str, resolver: Resolver) -> bool:
    """Whether `test` is true only when the expression dumped as `key` is a packet."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_asserts(v, key, resolver) for v in test.values)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return all(_asserts(v, key, resolver) for v in test.values)
    return _is_packet_test(test, key, resolver)


def _denies(test: ast.expr, key: str, resolver: Resolver) -> bool:
    """Whether `test` is false only when the expression is a packet (`not isinstance(...)`,
    or an `or` one of whose sides is)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return any(_denies(v, key, resolver) for v in test.values)
    return isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and _asserts(test.operand, key, resolver)


def _exits_unless(stmt: ast.stmt, key: str, resolver: Resolver) -> bool:
    """`if not isinstance(x, OpOverloadPacket): return` (or continue, break, raise)."""
    return (
        isinstance(stmt, ast.If)
        and not stmt.orelse
        and bool(stmt.body)
        and isinstance(stmt.body[-1], _EXITS)
        and _denies(stmt.test, key, resolver)
    )


def _is_packet_test(test: ast.expr, key: str, resolver: Resolver) -> bool:
    tested = isinstance_test(test)
    if tested is None or ast.dump(tested[0]) != key:
        return False
    kinds = tested[1]
    classes = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    return bool(classes) and all(resolver.qualname(c) == _PACKET_CLASS for c in classes)
