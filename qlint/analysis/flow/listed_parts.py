"""Calls of a loop name over a model's own `nn.ModuleList`: a part it holds, run (issue 14,
item 8).

ExecuTorch's llama models run their layers so:

    self.layers = nn.ModuleList([LlamaDecoderLayer(i, config) for i in range(n)])
    ...
    for ind, decoder_layer in enumerate(self.layers):
        h = decoder_layer(h, ...)

Reading what a model holds (`model_classes`), a call of a name held in a variable may build
anything (`block(c)` of a class handed in), so such a model was never known in full. A
`ModuleList` (or `Sequential`) holds modules only (`add_module` raises on anything else), so
an item of it called runs a part the model holds, whose content is read where it was built,
as `self.conv(x)` is. Only when every binding of the attribute in the class is such a
container's construction, the loop walks the attribute itself (or `enumerate` of it), and the
method binds the loop's name in no other way (no parameter, second loop or assignment, in it
or in a function written in it). A `ModuleDict` walks its keys, a list may hold classes:
neither is read so.
"""

from __future__ import annotations

import ast

from qlint.analysis.names.resolver import Resolver
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import walk

_KEY = "_qlint_listed_parts"
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_CONTAINERS = frozenset({"torch.nn.ModuleList", "torch.nn.Sequential"})


def runs_listed_part(owner: ast.ClassDef, call: ast.Call, resolver: Resolver) -> bool:
    """`call` (one of `owner`'s) calls an item of one of its own module containers."""
    if not isinstance(call.func, ast.Name):
        return False
    return id(call) in kept_on_node(owner, _KEY, lambda cls: _item_calls(cls, resolver))


def _item_calls(cls: ast.ClassDef, resolver: Resolver) -> frozenset[int]:
    methods = [m for m in cls.body if isinstance(m, _FUNCTIONS) and not m.decorator_list and m.args.args]
    listed = _containers(cls, methods, resolver)
    if not listed:
        return frozenset()
    out: set[int] = set()
    for method in methods:
        me = method.args.args[0].arg
        nodes = walk(method)
        stores: dict[str, int] = {}
        items: set[str] = set()
        for node in nodes:
            if isinstance(node, ast.arg):
                stores[node.arg] = stores.get(node.arg, 0) + 2  # a parameter: anything handed in
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                stores[node.id] = stores.get(node.id, 0) + 1
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                for name in node.names:
                    stores[name] = stores.get(name, 0) + 2
            if isinstance(node, (ast.For, ast.comprehension)):
                name = _item_name(node.target, node.iter, me, listed, resolver)
                if name is not None:
                    items.add(name)
        once = {name for name in items if stores.get(name) == 1}
        out.update(id(n) for n in nodes if type(n) is ast.Call and isinstance(n.func, ast.Name) and n.func.id in once)
    return frozenset(out)


def _containers(cls: ast.ClassDef, methods: list, resolver: Resolver) -> frozenset[str]:
    """The attributes every store of which in the class is an assignment of a module
    container's construction to `self.<attr>` in a plain method. One stored any other way
    (`+=`, a loop or `with` target, a tuple unpacked, a plain list, on another object, in a
    decorated method), or named in the class body too, is not read."""
    stores: dict[str, int] = {}
    for node in walk(cls):
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
            stores[node.attr] = stores.get(node.attr, 0) + 1
    builds: dict[str, int] = {}
    for method in methods:
        me = method.args.args[0].arg
        for node in walk(method):
            if _container_build(node, resolver):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Attribute) and _on(target, me):
                        builds[target.attr] = builds.get(target.attr, 0) + 1
    # A name the class body binds too (`layers = [Block]`) is what `self.<attr>` reads until the
    # method storing the container has run.
    own = {n.id for s in cls.body if not isinstance(s, _FUNCTIONS) for n in walk(s) if isinstance(n, ast.Name)}
    own |= {s.name for s in cls.body if isinstance(s, (*_FUNCTIONS, ast.ClassDef))}
    return frozenset(a for a, n in builds.items() if stores.get(a) == n and a not in own)


def _container_build(node: ast.AST, resolver: Resolver) -> bool:
    """`<target> = nn.ModuleList(...)` (or `nn.Sequential(...)`), annotated or not."""
    return (
        isinstance(node, (ast.Assign, ast.AnnAssign))
        and isinstance(node.value, ast.Call)
        and resolver.qualname(node.value.func) in _CONTAINERS
    )


def _on(node: ast.Attribute, me: str) -> bool:
    return isinstance(node.value, ast.Name) and node.value.id == me


def _item_name(target: ast.expr, source: ast.expr, me: str, listed: frozenset[str], resolver: Resolver) -> str | None:
    """The name a loop binds to each item of `self.<listed>` (`for m in self.layers`, `for i, m
    in enumerate(self.layers)`), or None."""
    if (
        isinstance(source, ast.Call)
        and isinstance(source.func, ast.Name)
        and source.func.id == "enumerate"
        and resolver.qualname(source.func) in (None, "enumerate")
        and len(source.args) == 1
        and not source.keywords
        and isinstance(target, ast.Tuple)
        and len(target.elts) == 2
    ):
        source, target = source.args[0], target.elts[1]
    if not (isinstance(source, ast.Attribute) and _on(source, me) and source.attr in listed):
        return None
    return target.id if isinstance(target, ast.Name) else None


__all__ = ["runs_listed_part"]
