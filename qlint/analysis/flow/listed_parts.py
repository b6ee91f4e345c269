"""Calls of a loop name over a model's own `nn.ModuleList`: a part it holds, run (issue 14,
item 8).

ExecuTorch's llama models run their layers so:

    self.layers = nn.ModuleList([LlamaDecoderLayer(i, config) for i in range(n)])
    ...
    for ind, decoder_layer in enumerate(self.layers):
        h = decoder_layer(h, ...)

Reading what a model holds (`class_contents`), a call of a name held in a variable may build
anything (`block(c)` of a class handed in), so such a model was never known in full. A
`ModuleList` (or `Sequential`) holds modules only (`add_module` raises on anything else), so
an item of it called runs a part the model holds, whose content is read where it was built,
as `self.conv(x)` is. Only when every binding of the attribute in the class is such a
container's construction, the loop walks the attribute itself (or `enumerate` of it), and the
method binds the loop's name in no other way (no parameter, second loop or assignment, in it
or in a function written in it). A `ModuleDict` walks its keys, a list may hold classes:
neither is read so.

The attribute may be bound by a base class of the project (`super().__init__()` of a class
storing `self.layers = nn.ModuleList(...)`, the subclass's `forward` looping over it): when
every base above the class resolves (to a class of the project, or `nn.Module` / `object`),
the stores and class-level names of the whole hierarchy are read as one class's are: every
store of the attribute in any of them such a construction, at least one, none of them
binding the name in its body (where a base's `layers = [Block]` is what the subclass reads
until the store runs). A base that does not resolve keeps the reading of the class alone.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from qlint.analysis.names.resolver import Resolver
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import walk

_KEY = "_qlint_listed_parts"
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_CONTAINERS = frozenset({"torch.nn.ModuleList", "torch.nn.Sequential"})

# The bases above a class, each with a resolver of its module (None: one does not resolve).
Above = Callable[[], "list[tuple[ast.ClassDef, Resolver]] | None"]


def runs_listed_part(owner: ast.ClassDef, call: ast.Call, resolver: Resolver, above: Above | None = None) -> bool:
    """`call` (one of `owner`'s) calls an item of one of its own module containers, stored by
    the class or by a base of the project (`above`, asked only for such a call)."""
    if not isinstance(call.func, ast.Name):
        return False
    facts = _facts(owner, resolver)
    attr = facts.looped.get(id(call))
    if attr is None or not facts.only_builds(attr):
        return False
    bases = above() if above is not None else None
    if bases is None:
        return attr in facts.builds  # no base of the project known: the class's own stores
    built = attr in facts.builds
    for base, base_resolver in bases:
        theirs = _facts(base, base_resolver)
        if not theirs.only_builds(attr):
            return False
        built = built or attr in theirs.builds
    return built


class _ClassFacts:
    """What one class body says of its attributes, whatever its bases: the attributes loop
    names in its methods walk, with the calls of those names; how many times each attribute
    is stored, and built as a module container; the names its body binds."""

    __slots__ = ("body_names", "builds", "looped", "stores")

    def __init__(self, cls: ast.ClassDef, resolver: Resolver):
        self.stores: dict[str, int] = {}
        for node in walk(cls):
            if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
                self.stores[node.attr] = self.stores.get(node.attr, 0) + 1
        self.builds: dict[str, int] = {}
        self.looped: dict[int, str] = {}
        for method in cls.body:
            if isinstance(method, _FUNCTIONS) and not method.decorator_list and method.args.args:
                self._read(method, resolver)
        # A name the class body binds too (`layers = [Block]`) is what `self.<attr>` reads until
        # the method storing the container has run.
        own = {n.id for s in cls.body if not isinstance(s, _FUNCTIONS) for n in walk(s) if isinstance(n, ast.Name)}
        own |= {s.name for s in cls.body if isinstance(s, (*_FUNCTIONS, ast.ClassDef))}
        self.body_names = frozenset(own)

    def _read(self, method: ast.FunctionDef, resolver: Resolver) -> None:
        """One walk of a plain method: its container builds on `self.<attr>`, and the calls of
        a loop name over `self.<attr>` bound by that loop only (in it or in a function written
        in it)."""
        me = method.args.args[0].arg
        nodes = walk(method)
        stores: dict[str, int] = {}
        items: dict[str, str] = {}
        for node in nodes:
            if isinstance(node, ast.arg):
                stores[node.arg] = stores.get(node.arg, 0) + 2  # a parameter: anything handed in
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                stores[node.id] = stores.get(node.id, 0) + 1
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                for name in node.names:
                    stores[name] = stores.get(name, 0) + 2
            elif _container_build(node, resolver):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(target, ast.Attribute) and _on(target, me):
                        self.builds[target.attr] = self.builds.get(target.attr, 0) + 1
            if isinstance(node, (ast.For, ast.comprehension)):
                found = _item_name(node.target, node.iter, me, resolver)
                if found is not None:
                    items[found[0]] = found[1]
        once = {name: attr for name, attr in items.items() if stores.get(name) == 1}
        if once:
            for n in nodes:
                if type(n) is ast.Call and isinstance(n.func, ast.Name) and n.func.id in once:
                    self.looped[id(n)] = once[n.func.id]

    def only_builds(self, attr: str) -> bool:
        """Every store of `attr` in the class (none at all, too) is a container's construction
        in a plain method, and its body binds no such name."""
        return self.stores.get(attr, 0) == self.builds.get(attr, 0) and attr not in self.body_names


def _facts(cls: ast.ClassDef, resolver: Resolver) -> _ClassFacts:
    return kept_on_node(cls, _KEY, lambda node: _ClassFacts(node, resolver))


def _container_build(node: ast.AST, resolver: Resolver) -> bool:
    """`<target> = nn.ModuleList(...)` (or `nn.Sequential(...)`), annotated or not."""
    return (
        isinstance(node, (ast.Assign, ast.AnnAssign))
        and isinstance(node.value, ast.Call)
        and resolver.qualname(node.value.func) in _CONTAINERS
    )


def _on(node: ast.Attribute, me: str) -> bool:
    return isinstance(node.value, ast.Name) and node.value.id == me


def _item_name(target: ast.expr, source: ast.expr, me: str, resolver: Resolver) -> tuple[str, str] | None:
    """(the name a loop binds to each item of `self.<attr>`, attr): `for m in self.layers`, `for
    i, m in enumerate(self.layers)`; None for any other loop."""
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
    if not (isinstance(source, ast.Attribute) and _on(source, me)):
        return None
    return (target.id, source.attr) if isinstance(target, ast.Name) else None


__all__ = ["runs_listed_part"]
