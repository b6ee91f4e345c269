"""Constructor values a model class keeps on itself only to test them later.

`Model(m, n, mul_arg_pos)` whose `__init__` stores `self.mul_arg_pos = mul_arg_pos` and whose
methods only compare or test that attribute (`if self.mul_arg_pos == 0:`) never calls what it
holds: even a module handed in there is registered but never run by `forward`, so its mode
cannot reach the captured graph (zentorch's PT2E tests build such models in a loop over a
table of positions). Anything that may run the stored value keeps it unknown: a read that is
kept, passed or called (`self.head(x)`, `f(self.flag)`, `x = self.flag or m`), a method that
reaches the class's modules without naming them (`self.children()`, `self._modules`,
`getattr(self, name)`), or a base class other than `torch.nn.Module`, whose methods are not
read here. A value stored and never read again stays unknown too: the class shows no use of
it at all (a wrapper's `self.inner = inner` in a class whose `forward` is elsewhere).
"""

from __future__ import annotations

import ast

from qlint.analysis.names.resolver import Resolver

_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
# Ways a method reaches the modules it holds without naming the attribute.
_GENERIC_ATTRS = frozenset(
    {"children", "named_children", "modules", "named_modules", "_modules", "__dict__", "get_submodule"}
)
_GENERIC_CALLS = frozenset({"getattr", "vars"})


def only_tested_attribute(cls_node: ast.ClassDef, resolver: Resolver, attr: str) -> bool:
    """`self.<attr>` is read in the class's methods, every read only tests its value, and no
    method reaches the class's modules in another way (a class of `torch.nn.Module` alone)."""
    if attr == "training" or not _plain_module(cls_node, resolver):
        return False
    tested = False
    for method in cls_node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        positional = [*method.args.posonlyargs, *method.args.args]
        if not positional:
            continue  # a static method: it has no instance to read
        me = positional[0].arg
        parents = {child: node for node in ast.walk(method) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(method):
            if _generic_read(node, me):
                return False
            if (
                isinstance(node, ast.Attribute)
                and node.attr == attr
                and isinstance(node.value, ast.Name)
                and node.value.id == me
                and isinstance(node.ctx, ast.Load)
            ):
                if not tested_value(node, parents):
                    return False
                tested = True
    return tested


def tested_value(node: ast.expr, parents: dict) -> bool:
    """`node`'s value is only tested, whatever it is: the test of an `if`, `while`, conditional
    expression or `assert`, an operand of a comparison or of `not`, or of an `and`/`or` that is
    itself only tested (`x = flag or m` keeps `m`)."""
    parent = parents.get(node)
    if isinstance(parent, (ast.If, ast.IfExp, ast.While, ast.Assert)) and parent.test is node:
        return True
    if isinstance(parent, ast.Compare) or (isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)):
        return True  # a bool, whatever the value
    if not isinstance(parent, ast.BoolOp):
        return False
    while isinstance(parent, ast.BoolOp):
        node, parent = parent, parents.get(parent)
    return isinstance(parent, (ast.If, ast.IfExp, ast.While, ast.Assert)) and parent.test is node


def _plain_module(cls_node: ast.ClassDef, resolver: Resolver) -> bool:
    """The class derives from `torch.nn.Module` alone: no other base brings methods that read
    its attributes."""
    if not cls_node.bases or cls_node.keywords:
        return False
    return all(resolver.qualname(base) in _MODULE_BASES for base in cls_node.bases)


def _generic_read(node: ast.AST, me: str) -> bool:
    if isinstance(node, ast.Attribute) and node.attr in _GENERIC_ATTRS:
        return isinstance(node.value, ast.Name) and node.value.id == me
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _GENERIC_CALLS:
        return any(isinstance(a, ast.Name) and a.id == me for a in node.args)
    return False
