"""Whether a function spells an overload of some op (`torch.ops.aten.add.Tensor`): a pass that
does may set nodes to overloads, so a packet it inserts can sit beside them (QL101, QL102).
Apart from `stripped_here` and `stripped_later`, which both ask it and read each other."""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.names.functions import Body
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.tree_walk import own_nodes


def writes_an_overload(ctx: FileContext, body: Body, func: ast.AST) -> bool:
    """Whether the function itself (not what it defines) names an overload of any op."""
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope)
    return names_an_overload(resolver, function_nodes(func))


def names_an_overload(resolver: Resolver, nodes: list[ast.AST]) -> bool:
    """Whether one of `nodes` names an overload of an op (`torch.ops.aten.add.Tensor`)."""
    for node in nodes:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            ref = resolver.op_ref(node)
            if ref is not None and not ref.is_packet:
                return True
    return False


def function_nodes(func: ast.AST) -> list[ast.AST]:
    """The nodes of a function (its decorators and parameters' defaults included), not those
    of the functions, classes and lambdas it defines."""
    return own_nodes(list(ast.iter_child_nodes(func)), scopes=False)
