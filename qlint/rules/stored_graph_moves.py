"""QL202 for a QAT graph held on the instance: `self.prepared = prepare_qat_pt2e(...)` in one
method of a trainer class, moved and trained in others (issue 14, item 2).

Checked on torch 2.13 + torchao 0.18 (XNNPACK QAT config, Linear→BatchNorm1d→Dropout captured
after `.eval()`): a `fit` method training `self.prepared` leaves the batch norm's running mean
unchanged and dropout drops nothing; with `move_exported_model_to_train(self.prepared)` first
in `fit` (or a method of the class, or a function of another module, that moves it) the running
mean moves and about half the activations are dropped.

Such a capture is excused only when every way to the graph is read:

- each QAT graph of the capture is stored as `self.<attr>` by the method holding it, in a
  top-level class whose bases (if any) are classes of its module;
- nothing but that class's methods reads `<attr>`, each on its own `self`: no other `.<attr>`
  in the module (a subclass, an instance's `t.prepared`), no string of it (`getattr`), no other
  module of the project loading it (`named_elsewhere`); nothing else is stored there but `None`;
- and either the storing method moves it after the store on every path to its end, before any
  use of it and before anything that could use it (another method of the instance that names
  it, `self` handed on, `super()`): every other method runs later; or the storing method
  uses it only after a move, and so does every other method that names it, from its start,
  some move being found (the order test of `moved_graphs.moved_first`, whose moves include
  those made by a function handed the graph: `moving_callees`).

Anything else keeps the report: a method using it before moving it may run first. Where the
storing method's own move (which alone excused the capture before) leaves a way out unmoved,
that use is what the report names (`stored_verdict` answers it).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.method_references import owner_class
from qlint.analysis.flow.model_flow import Capture, FunctionFlow, capture_holder
from qlint.analysis.flow.project_search import named_elsewhere
from qlint.analysis.tree_walk import parents
from qlint.rules.base import FileContext
from qlint.rules.moved_graphs import moved_first, self_name

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_UNUSED = "unused"  # `moved_first`'s answer for a method that neither uses nor moves the graph


def stored_verdict(ctx: FileContext, cap: Capture, flows: list[FunctionFlow]):
    """The capture's QAT graphs are held on the instance: True when they are moved (or
    converted) before any method could train them; the first use of one that a method makes
    before any move when that is known (`self.prepared(x)` in `fit`); None when not read."""
    holder = capture_holder(flows, cap)
    method = holder.node if holder is not None else None
    cls = owner_class(ctx, method) if isinstance(method, _FUNCS) else None
    me = self_name(method)
    sinks = cap.flows("qat")
    if cls is None or me is None or not sinks:
        return None
    up = parents(method)
    stores = {_stored(up, sink.node, me) for sink in sinks}
    attr = stores.pop() if len(stores) == 1 else None
    if attr is None or not _confined(ctx, cls, attr):
        return None
    touching = _touching(cls, attr)
    for sink in sinks:
        binding = up[id(sink.node)]
        also = _SelfUses(method, me, attr, touching, frozenset(cls.methods))
        if moved_first(ctx, method, f"{me}.{attr}", binding, also=also) is True:
            continue  # moved on every way out of the method: the others run later
        found = [moved_first(ctx, method, f"{me}.{attr}", binding, unused=_UNUSED)]
        found += [_moved_from_start(ctx, m, attr) for m in cls.methods.values() if m is not method]
        late = next((f for f in found if isinstance(f, ast.expr)), None)
        if late is not None or not all(found) or True not in found:
            return late
    return True


def _stored(up, sink: ast.AST, me: str) -> str | None:
    """`self.<attr> = <sink>`: the attribute."""
    stmt = up.get(id(sink))
    if not isinstance(stmt, ast.Assign) or stmt.value is not sink or len(stmt.targets) != 1:
        return None
    target = stmt.targets[0]
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me:
        return target.attr
    return None


def _confined(ctx: FileContext, cls, attr: str) -> bool:
    """Only the class's own methods read `attr`, each on its own `self`, and its bases are
    classes of the module (whose methods the module's text shows)."""
    if any(not (isinstance(b, ast.Name) and (b.id == "object" or _local_class(ctx, b.id))) for b in cls.bases):
        return False
    if f'"{attr}"' in ctx.text or f"'{attr}'" in ctx.text:
        return False  # `getattr(self, "prepared")`
    own = 0
    for method in cls.methods.values():
        me = self_name(method)
        if method.decorator_list and any(_named(d, ("staticmethod", "classmethod")) for d in method.decorator_list):
            continue
        own += sum(
            1
            for n in ast.walk(method)
            if isinstance(n, ast.Attribute) and n.attr == attr and isinstance(n.value, ast.Name) and n.value.id == me
        )
    every = sum(1 for n in ast.walk(ctx.tree) if isinstance(n, ast.Attribute) and n.attr == attr)
    return every == own and named_elsewhere(ctx, attr, ctx.path) is False


def _local_class(ctx: FileContext, name: str) -> bool:
    return name in ctx.scope.classes and name not in ctx.scope.imports and not ctx.scope.assigns.get(name)


def _named(node: ast.AST, names: tuple[str, ...]) -> bool:
    return isinstance(node, ast.Name) and node.id in names


def _touching(cls, attr: str) -> frozenset[str]:
    """The class's methods that name `self.<attr>`, or call one that does on their `self`."""
    calls: dict[str, set[str]] = {}
    found = set()
    for name, method in cls.methods.items():
        me = self_name(method)
        called = calls[name] = set()
        for n in ast.walk(method):
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == me:
                if n.attr == attr:
                    found.add(name)
                called.add(n.attr)
    grown = True
    while grown:
        more = {name for name, called in calls.items() if called & found} - found
        found |= more
        grown = bool(more)
    return frozenset(found)


class _SelfUses:
    """What else in the storing method may use the graph held on `self`: a call of a method of
    the instance that names it (or of one the class does not define), `self` handed on,
    `super()`; and the method's ends (its `return`s, its last statement), which other methods
    follow."""

    def __init__(self, method: ast.AST, me: str, attr: str, touching: frozenset[str], own: frozenset[str]):
        self.method, self.me, self.attr, self.touching, self.own = method, me, attr, touching, own

    def __call__(self, node: ast.AST, up) -> bool:
        if node is self.method or isinstance(node, ast.Return):
            return True
        if not isinstance(node, ast.Name) or type(node.ctx) is not ast.Load:
            return False
        if node.id == "super":
            return True
        if node.id != self.me:
            return False
        parent = up.get(id(node))
        if not (isinstance(parent, ast.Attribute) and parent.value is node):
            return True  # `self` handed on
        if parent.attr == self.attr:
            return False  # the graph itself: read as a use by the order test
        call = up.get(id(parent))
        called = isinstance(call, ast.Call) and call.func is parent
        return called and (parent.attr in self.touching or parent.attr not in self.own)


def _moved_from_start(ctx: FileContext, method: ast.AST, attr: str):
    """Another method names the graph only after moving it, or not at all (`_UNUSED`); a
    store of `None` there is no graph."""
    me = self_name(method)
    if me is None:
        return _UNUSED
    named = [n for n in ast.walk(method) if isinstance(n, ast.Attribute) and n.attr == attr]
    if not named:
        return _UNUSED
    up = parents(method)
    if all(type(n.ctx) is ast.Store and _stores_none(up.get(id(n)), n) for n in named):
        return _UNUSED
    return moved_first(ctx, method, f"{me}.{attr}", None, unused=_UNUSED)


def _stores_none(stmt: ast.AST, target: ast.AST) -> bool:
    return (
        isinstance(stmt, ast.Assign)
        and stmt.targets == [target]
        and isinstance(stmt.value, ast.Constant)
        and stmt.value.value is None
    )


__all__ = ["stored_verdict"]
