"""The suite's check that no answer kept on a syntax-tree node holds a cycle through it
(`node_memo.WITNESS`): every answer computed while the tests run is searched, before it is
kept, for the nodes it holds; one of them being the node itself, or a node above it, would
keep the node's tree alive after its readers let it go (`node_memo`'s docstring). What is
found fails the test that made it (`conftest._no_kept_cycles`), naming the attribute."""

from __future__ import annotations

import ast
import contextlib
import gc
import types
import weakref

# Held by a function, a class or a module: not an answer's own data (a kept answer holding a
# function holds what its closure and defaults hold, searched below).
_NOT_DATA = (type, types.ModuleType, types.CodeType, types.BuiltinFunctionType, weakref.ref)

found: list[str] = []


def _held_nodes(answer: object) -> list[ast.AST]:
    """The syntax-tree nodes `answer` holds, through containers, objects, closures and bound
    methods, without going into a node (a node holds its children: below the answer's)."""
    nodes = []
    seen = set()
    stack = [answer]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, _NOT_DATA):
            continue
        seen.add(id(obj))
        if isinstance(obj, ast.AST):
            nodes.append(obj)
        elif isinstance(obj, types.FunctionType):
            for cell in obj.__closure__ or ():
                with contextlib.suppress(ValueError):  # a cell its function has not filled yet
                    stack.append(cell.cell_contents)
            stack.extend(obj.__defaults__ or ())
            stack.extend((obj.__kwdefaults__ or {}).values())
        elif isinstance(obj, types.MethodType):
            stack.append(obj.__self__)
            stack.append(obj.__func__)
        else:
            stack.extend(gc.get_referents(obj))
    return nodes


def _subtree(node: ast.AST) -> list[ast.AST]:
    """`node` and every node below it: `ast.walk`'s nodes, without asking `ast.walk`, which
    tests count the calls of."""
    nodes = [node]
    for current in nodes:
        nodes.extend(ast.iter_child_nodes(current))
    return nodes


def cycle_through(node: ast.AST, answer: object) -> str | None:
    """What makes `answer`, kept on `node`, a cycle: None when nothing does."""
    below = None
    for held in _held_nodes(answer):
        if held is node:
            return "holds its own node"
        if below is None:
            below = {id(n) for n in _subtree(node)}
        if id(held) not in below and any(n is node for n in _subtree(held)):
            return f"holds a {type(held).__name__} above its node"
    return None


def witness(node: ast.AST, attr: str, answer: object) -> None:
    why = cycle_through(node, answer)
    if why is not None:
        found.append(f"{attr} kept on a {type(node).__name__} (line {getattr(node, 'lineno', '?')}) {why}")
