"""Whether a value a caller hands on is what a project function without a result returned.

`aten = to_executorch(model); quantize_4_executorch(aten)` where `to_executorch` ends without
`return <value>` on every path: the helper gets None, no model, so that caller can hand it no
model in train mode (ETH-PBL/Nano-VS-SLAM, issue 14). The flow analysis gives such a call's
value the origin "call" (`helper_calls.apply` found no result to translate); this module says
when that value is None for certain, from the call site the analysis recorded and the text of
the function it resolved the call to.

Only a plain function of the module that defines it, called by its own name, counts: a
decorator may wrap it into anything, a generator or coroutine function returns an iterator
or a coroutine whatever its body says, a method may be overridden by a subclass the caller's
object belongs to, a construction returns an instance (its `__init__` returns nothing), a
function handed to a relay returns through the relay, and a name also bound by an assignment
or an import of its module may denote something else at the call.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.function_flows import FunctionFlow
from qlint.analysis.flow.model_values import CALL, ModeFact
from qlint.analysis.tree_walk import own_nodes


def none_result(fact: ModeFact, flows: list[FunctionFlow]) -> bool:
    """`fact` is the value of a call, read in `flows`, of a project function that returns
    None on every path."""
    origin = fact.origin
    if fact.state != "unset" or origin is None or origin.kind != CALL:
        return False
    call = origin.node
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return False
    found = [(flow, path, site) for flow in flows for path, site in _sites(flow) if site.call is call]
    # A loop body analysed twice records its call twice: the same callee each time.
    return bool(found) and all(_plain_without_result(flow, path, site) for flow, path, site in found)


def _sites(flow: FunctionFlow):
    for site in flow.calls:
        yield None, site
    yield from flow.foreign_calls


def _plain_without_result(flow: FunctionFlow, path: str | None, site) -> bool:
    func, call = site.callee, site.call
    if site.via is not None or not isinstance(func, ast.FunctionDef) or func.decorator_list:
        return False
    name = call.func.id
    resolver = flow.resolver
    if func.name != name or resolver is None or name in resolver.local or name in resolver.scope.assigns:
        return False  # the caller's module may rebind the name it imported
    scope = resolver.scope if path is None else _defining_scope(resolver, call.func, flow.path)
    if scope is None or scope.functions.get(name) is not func:
        return False  # a nested function, a method, `__init__` of a construction, a re-export
    if name in scope.assigns or name in scope.imports or name in scope.classes:
        return False
    for node in own_nodes(func, scopes=False):
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
            return False
        value = node.value if isinstance(node, ast.Return) else None
        if value is not None and not (isinstance(value, ast.Constant) and value.value is None):
            return False
    return True


def _defining_scope(resolver, name: ast.Name, requester: str):
    """The scope of the module the caller's name resolves into (`from quantize import f`)."""
    full = resolver.qualname(name)
    if not full or "." not in full:
        return None
    module, _, attr = full.rpartition(".")
    if attr != name.id:
        return None  # imported under another name
    return resolver.project.module_scope(module, requester)


__all__ = ["none_result"]
