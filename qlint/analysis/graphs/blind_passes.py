"""Passes blind to an inserted op: a function that never names the op (so cannot be keyed
on its overload) and hands its graph to no other function may run between a pass inserting
a packet and the strip of its graph (`stripped_later`) or its compilation (`compiled_next`).
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.names.op_refs import OpRef
from qlint.analysis.tree_walk import mentions_name

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def blind_pass(ctx: FileContext, name: str, ref: OpRef) -> bool:
    """A function of the module that never names the inserted op (so cannot be keyed on its
    overload) and hands its graph to no other function."""
    return blind_function(ctx.scope.functions.get(name), ref)


def blind_function(func: ast.AST | None, ref: OpRef, returned: bool = False) -> bool:
    """`blind_pass` of a function found (of the project or of an installed package); with
    `returned`, whose result is kept: it must not return its graph (a name for it the caller
    could hand on)."""
    if not isinstance(func, _FUNCS):
        return False
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    if not params:
        return False
    for node in ast.walk(func):
        if _spells_op(node, ref, func):
            return False
        if isinstance(node, ast.Call) and _hands_on(node, params[0]):
            return False
        if (
            returned
            and isinstance(node, ast.Return)
            and node.value is not None
            and mentions_name(node.value, params[0])
        ):
            return False
    return True


def _spells_op(node: ast.AST, ref: OpRef, func: ast.AST) -> bool:
    """`x.<op>`, or a string holding the op's name that is not a docstring of `func` or of what
    it defines: a docstring is never a key (gaudi's `remove_duplicated_outputs` shows a graph of
    `add_.Tensor` nodes in its own, and keys on nothing but the output node)."""
    if isinstance(node, ast.Attribute):
        return node.attr == ref.op
    text = node.value if isinstance(node, ast.Constant) else None
    return isinstance(text, str) and ref.op in text and not any(d is node for d in _docstrings(func))


def _docstrings(func: ast.AST) -> list[ast.Constant]:
    """The docstrings of `func` and of the functions and classes defined in it."""
    found = []
    for node in ast.walk(func):
        body = node.body if isinstance(node, (*_FUNCS, ast.ClassDef)) else None
        first = body[0].value if body and isinstance(body[0], ast.Expr) else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            found.append(first)
    return found


def _hands_on(call: ast.Call, graph: str) -> bool:
    """`f(graph)`, `obj.save(graph)`, `f(x, module=graph)`, `legalize(graph.graph)`: the graph
    (or a part of it: its Graph, its nodes) an argument of a call, which may key on its nodes'
    overloads, export or serialise it; only the builtins that collect or count the nodes
    (`list(graph.graph.nodes)`) read nothing of them. A call of the graph's own methods
    (`graph.graph.lint()`) is not handed it, and such upkeep is what a blind pass may do."""
    if isinstance(call.func, ast.Name) and call.func.id in _COLLECTING:
        return False
    return any(mentions_name(value, graph) for value in (*call.args, *(k.value for k in call.keywords)))


# Builtins that only gather or count what they are handed.
_COLLECTING = frozenset({"list", "tuple", "len", "enumerate", "reversed", "iter", "set"})
