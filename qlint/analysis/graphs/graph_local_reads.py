"""What `self_traced_graphs` reads of one function's own body about a graph it holds in a
local: the values the local is bound to, whether it is stored where others may take it,
whether the function returns a value, and whether it calls anything that exports, lowers or
serialises (after which a graph's packets are overloads, or its nodes someone else's).
"""

from __future__ import annotations

import ast

from qlint.analysis.names.resolver import dotted_parts
from qlint.analysis.tree_walk import own_nodes, walk_kinds
from qlint.lazy_patterns import lazy

__all__ = ["LEAVING", "body_nodes", "calls_leaving", "local_bindings", "returns_value", "stores_local"]

# Calls after which a graph's packets are overloads, or its nodes are someone else's: an
# export, a lowering, a serialisation.
_LEAVES = frozenset(
    {
        "export",
        "export_for_training",
        "to_edge",
        "to_edge_transform_and_lower",
        "to_backend",
        "to_executorch",
        "run_decompositions",
        "save",
        "dump",
        "dumps",
        "serialize",
        "script",
    }
)
LEAVING = lazy(rf"\b(?:{'|'.join(sorted(_LEAVES))})\s*\(")
# The node kind `calls_leaving` reads (`tree_walk.walk_kinds`: the nodes of `ast.walk`, in its
# order, without queueing attribute chains nothing in them is asked of).
_CALL = frozenset({ast.Call})


def local_bindings(func: ast.AST, name: str) -> list[tuple[ast.expr, int | None]] | None:
    """The values `name` is bound to in `func`'s own body (not its nested functions), each
    with its position when a flat tuple of names unpacks it; None when a binding is of another
    kind (a loop, a `with`, a nested or starred unpacking, an augmented one)."""
    values: list[tuple[ast.expr, int | None]] = []
    for node in body_nodes(func):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if not any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)):
                    continue
                if len(node.targets) != 1:
                    return None
                if isinstance(target, ast.Name):
                    values.append((node.value, None))
                elif isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
                    values.append((node.value, [e.id for e in target.elts].index(name)))
                elif not isinstance(target, (ast.Attribute, ast.Subscript)):
                    return None
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            if node.value is not None:
                values.append((node.value, None))
        elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.NamedExpr)):
            targets = (
                [i.optional_vars for i in node.items] if isinstance(node, (ast.With, ast.AsyncWith)) else [node.target]
            )
            if any(isinstance(n, ast.Name) and n.id == name for t in targets if t is not None for n in ast.walk(t)):
                return None
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return None
    return values


def body_nodes(func: ast.AST) -> list[ast.AST]:
    """The nodes of `func` outside nested functions, lambdas and classes: its body, and its
    signature and decorators too."""
    return own_nodes(list(ast.iter_child_nodes(func)))


def calls_leaving(func: ast.AST) -> bool:
    """The function calls something that exports, lowers or serialises."""
    for node in walk_kinds(func, _CALL):
        parts = dotted_parts(node.func)
        if parts is not None and parts[-1] in _LEAVES:
            return True
    return False


def stores_local(func: ast.AST, name: str) -> bool:
    """The graph is kept where others may take it: an attribute or an item."""
    for node in body_nodes(func):
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in node.targets)
            and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node.value))
        ):
            return True
    return False


def returns_value(func: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Return) and n.value is not None and not isinstance(n.value, ast.Constant)
        for n in body_nodes(func)
    )
