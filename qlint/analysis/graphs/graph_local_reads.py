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

__all__ = [
    "LEAVING",
    "body_nodes",
    "calls_leaving",
    "local_bindings",
    "may_return_local",
    "stores_local",
]

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
# `torch.onnx.export(gm, args)` is not one: the exporter runs the graph module under
# `torch.jit.trace`, or re-exports it (`dynamo=True`) before translating, so a packet node
# becomes the same ONNX node as its overload would (torch 2.13: `torch.jit.trace` and
# `torch.export` of such a graph module record the same op for `aten.sign` and
# `aten.sign.default`); the graph itself stays the project's. Spelled so only: a bare
# `export(...)` may be `torch.export`'s.
_ONNX_EXPORT = ["torch", "onnx", "export"]
LEAVING = lazy(rf"\b(?<!torch\.onnx\.)(?:{'|'.join(sorted(_LEAVES))})\s*\(")
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
        if parts is not None and parts[-1] in _LEAVES and parts != _ONNX_EXPORT:
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


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def may_return_local(func: ast.AST, name: str) -> bool:
    """Whether a value `func` returns may hold the graph its local `name` holds. A function
    returning nothing, or constants only, holds nothing out. Otherwise the locals the graph may
    reach are followed through the function's own body: what is bound from an expression naming
    one (`outs = gm(x)` too, conservatively), a nested function or class reading one, the
    receiver and the other locals handed to a call beside one (`holder.append(gm)`,
    `keep(gm, box)`), except the file `torch.onnx.export(gm, args, f)` writes the ONNX program
    to; a return naming one answers yes, and so does one stored in an attribute or item or handed
    to a call on anything but a plain name. traininglib's export traces a training step with
    `make_fx`, rewrites it, writes it to ONNX bytes twice and returns the bytes: no caller can
    get the graph back."""
    nodes = body_nodes(func)
    returns = [n.value for n in nodes if isinstance(n, ast.Return) and n.value is not None]
    returns = [value for value in returns if not isinstance(value, ast.Constant)]
    if not returns:
        return False
    reached = {name}
    changed = True
    while changed:
        changed = False
        for node in nodes:
            for found in _reached_from(node, reached):
                if found is None:
                    return True
                if found not in reached:
                    reached.add(found)
                    changed = True
    return any(_names(value) & reached for value in returns)


def _reached_from(node: ast.AST, reached: set[str]):
    """The locals `node` hands one of `reached` to (None: somewhere not followed)."""
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
        if node.value is not None and _names(node.value) & reached:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for part in ast.walk(target):
                    if isinstance(part, (ast.Attribute, ast.Subscript)):
                        yield None
                    elif isinstance(part, ast.Name):
                        yield part.id
    elif isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
        pairs = (
            [(i.context_expr, i.optional_vars) for i in node.items]
            if isinstance(node, (ast.With, ast.AsyncWith))
            else [(node.iter, node.target)]
        )
        for value, target in pairs:
            if target is not None and _names(value) & reached:
                yield from (n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    elif isinstance(node, _DEFINITIONS):
        if _free_names(node) & reached:
            yield node.name
    elif isinstance(node, ast.Call):
        handed = [*node.args, *(k.value for k in node.keywords)]
        if not any(_names(arg) & reached for arg in handed):
            return
        receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
        if dotted_parts(node.func) == _ONNX_EXPORT:
            # The file argument gets the ONNX program's bytes, not the graph.
            handed = [a for i, a in enumerate(node.args) if i != 2] + [k.value for k in node.keywords if k.arg != "f"]
            receiver = None
        yield from (part.id for part in handed if isinstance(part, ast.Name))
        if receiver is not None:
            yield receiver.id if isinstance(receiver, ast.Name) else None


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _free_names(node: ast.AST) -> set[str]:
    """The names a nested definition reads that it does not bind itself."""
    walked = list(ast.walk(node))
    bound = {a.arg for a in walked if isinstance(a, ast.arg)}
    bound |= {n.id for n in walked if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    return {n.id for n in walked if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound
