"""QL101's matchers a class inherits: ops its own attribute, property or method returns,
which a method of a base class (in this module or another one of the project) hands to an
exact sink (`inherited_sinks`). The finding sits on the subclass's packet, where the fix
goes, with the base class's use as its related location.

A class is read whether or not the project is seen to build it: a subclass of a pass
interface is built by whatever registers or lists it (ExecuTorch's cadence passes are
collected by `register_cadence_pass`), and the base's method is what runs on it.
"""

from __future__ import annotations

import ast
import os
from types import SimpleNamespace

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.inherited_sinks import (
    ARG,
    EACH,
    ONE,
    InheritedSinksFact,
    OwnClasses,
    SinkUse,
    inherited_uses,
)
from qlint.analysis.graphs.instance_attrs import with_instance_attrs
from qlint.analysis.graphs.sinks import direct_sink_args, sink_needles
from qlint.analysis.names.functions import Body, bodies
from qlint.analysis.names.resolver import Located, Resolver
from qlint.analysis.names.scope import ClassScope, is_property, parameter_args
from qlint.diagnostic import RelatedInfo
from qlint.rules.overload_fixes import FixSite
from qlint.rules.packet_hits import Hit, arg_hits, collection_hits
from qlint.source import LineIndex


def inherited_matchers(ctx: FileContext, sinks: dict[str, set], key: str) -> dict[int, list[tuple]]:
    """id(body node) -> [(use, hits, related)]: the packets of each value a class of the
    module gives an attribute one of its bases sinks, by the body the value is written in."""
    classes = [c for c in ctx.scope.classes.values() if c.bases]
    if not classes:
        return {}

    def direct(call: ast.Call):
        return direct_sink_args(call, sinks)

    fact = InheritedSinksFact(key, direct, sink_needles(sinks))
    own = OwnClasses(ctx.scope, direct)
    path = os.path.abspath(ctx.path)
    out: dict[int, list[tuple]] = {}
    by_node = {id(b.node): b for b in bodies(ctx.tree, ctx.scope, ctx.cache)}
    for cls in classes:
        # The class's own packets first: its bases (other modules, parsed for the fact when
        # not summarised with it) are read only for a class that gives an attribute one.
        given = _packet_values(ctx, cls, by_node)
        if not given:
            continue
        for attr, use in inherited_uses(ctx.project, path, ctx.scope, cls, fact, own).items():
            related = None
            for holder, value, resolver in given.get(attr, ()):
                found = _hits(value, resolver, use.how)
                if found is not None:
                    if related is None:
                        related = _related(ctx, attr, use)
                    out.setdefault(id(holder), []).append((*found, related))
    return out


def _packet_values(ctx: FileContext, cls: ClassScope, by_node: dict[int, Body]) -> dict[str, list[tuple]]:
    """Attribute (`name`, or `name()` for a method) -> [(the node of the body it is written
    in, value, its resolver)] for the values of the class's attributes, properties and
    methods without parameters that hold a packet, read as a sink's argument or element-wise
    (a packet compared as one op is a sink's argument too)."""
    # `self.<attr>` as the rule reads it in the class's own methods.
    scope = with_instance_attrs(cls, ctx.cache, ctx.lines)
    out: dict[str, list[tuple]] = {}
    for attr, body, value in _candidates(cls, by_node):
        local = body.local if body.node is not cls.node else None
        resolver = Resolver(ctx.scope, ctx.project, ctx.optable, local, scope)
        if _hits(value, resolver, ARG) is not None or _hits(value, resolver, EACH) is not None:
            out.setdefault(attr, []).append((body.node, value, resolver))
    return out


def _candidates(cls: ClassScope, by_node: dict[int, Body]):
    """(attribute, the body it is written in, value) for what `self.<attr>` is (a class
    attribute, or what a property returns) or `self.<attr>()` returns (a method taking no
    argument). A method's returns are found among its statements (`Body.stmts`, the nested
    ones included): no walk of its expressions (test classes hold hundreds of `test_*(self)`)."""
    body = by_node.get(id(cls.node))
    if body is not None:
        for name, values in cls.assigns.items():
            if len(values) == 1 and name not in cls.methods:
                yield name, body, values[0]
    for name, method in cls.methods.items():
        if is_property(method):
            attr = name
        elif len(parameter_args(method)) == 1:
            attr = f"{name}()"
        else:
            continue
        body = by_node.get(id(method))
        if body is None:
            continue
        for stmt in body.stmts:
            if type(stmt) is ast.Return and stmt.value is not None:
                yield attr, body, stmt.value


def _hits(value: ast.expr, resolver: Resolver, how: str):
    """(use, hits): the packets of a value a base class's method meets node targets with, as
    one op (`n.target == self.op`), as a sink's argument (an op or a collection), or each
    element; None without any."""
    if how == ARG:
        return arg_hits(value, resolver)
    if how == ONE:
        ref = resolver.op_ref(value)
        packet = ref is not None and ref.is_packet
        hits = [Hit(ref, Located(value, resolver.scope), FixSite("other"))] if packet else []
    else:
        hits = collection_hits(value, resolver)
    return (value, hits) if hits else None


def _related(ctx: FileContext, attr: str, use: SinkUse) -> RelatedInfo:
    row, col, end_row, end_col = use.span
    lines = LineIndex(ctx.project.text(use.path) or "")
    span = SimpleNamespace(lineno=row, col_offset=col, end_lineno=end_row, end_col_offset=end_col)
    what = f"each element of `self.{attr}`" if use.how == EACH else f"`self.{attr}`"
    return RelatedInfo(use.path, lines.range_of(span), f"{what} meets node targets here, in `{use.owner}.{use.method}`")
