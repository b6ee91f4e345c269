"""Exported GraphModules a class keeps in `self.<attr>` and switches in another method (QL203).

`__init__` (or `quantize()`) stores `self.gm = prepare_pt2e(...)`; `calibrate()` later runs
`self.gm.eval()`, which raises on torch 2.13. The model flow reads each method alone: in
`calibrate` the attribute is one it has not seen set (`model_values.ATTRIBUTE`), and the
method names no graph source, so it is not read at all.

A field counts as a graph when every method of the class that assigns it leaves a graph
there on every path out (read from those methods' flows: `Env.vars["self.<attr>"]`), none
allows it (`allow_exported_model_train_eval(self.<attr>)` anywhere in the class keeps the
field quiet: the order of the methods' calls is not known), and no other class of the module
derives from this one (a subclass may store an eager module there). Only fields spelled
`self.<attr>.eval()`/`.train(` in the class are looked at, and fields handed as an argument
(`switch_off(self.gm)`, `run(self.gm, x)`) in a class that names a source of exported graphs:
a method handing one to a helper that switches that parameter (`FunctionFlow.field_handed`)
is reported at that call, as a graph handed to a switching helper is.
"""

from __future__ import annotations

import ast
import re

from qlint.analysis.flow.graph_returns import GRAPH_SOURCES, switched_receivers
from qlint.analysis.flow.model_flow import switchers
from qlint.analysis.flow.model_values import ATTRIBUTE, HandedSwitch, ModeSwitch, Origin
from qlint.analysis.flow.relevant_bodies import functions_of, segment
from qlint.analysis.tree_walk import statement_lists
from qlint.value_classes import replace

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# `self.<attr>` as an argument of a call: `f(self.gm)`, `f(self.gm, x)`, `f(x, self.gm)`.
_ARGUMENT = re.compile(r"[(,]\s*self\.(\w+)\s*[,)]")


def field_switches(ctx, analyse) -> list[ModeSwitch | HandedSwitch]:
    """Switches of a graph field in a method that did not set it (each as a `ModeSwitch` whose
    origins are where the graph came from), and calls there that hand it to a helper that
    switches it (`HandedSwitch`). `analyse((body, class scope) list)` gives flows."""
    if "self." not in ctx.text:
        return []
    switched = {n[5:] for n in switched_receivers(ctx.text)[0] if n.startswith("self.") and n.count(".") == 1}
    handed = set(_ARGUMENT.findall(ctx.text)) if "(self." in ctx.text or ", self." in ctx.text else set()
    if not switched and not handed:
        return []
    methods: dict[int, list] = {}
    for f, cls in functions_of(ctx.tree, ctx.scope):
        if cls is not None and isinstance(f, _FUNCS):
            methods.setdefault(id(cls.node), []).append((f, cls))
    derived: set[str] | None = None  # a whole-tree walk: only once a class has such a field
    assigned: dict[int, frozenset[str]] = {}  # each method walked once, whatever the fields
    out: list[ModeSwitch | HandedSwitch] = []
    for members in methods.values():
        cls = members[0][1]
        text = segment(ctx, cls.node)
        fields = {name for name in switched if f"self.{name}." in text}
        if handed and any(s in text for s in GRAPH_SOURCES):
            fields |= {name for name in handed if _argument(text, name)}
        if not fields:
            continue
        if ctx.text.count(cls.node.name) > 1:  # named only where defined: no class derives from it
            if derived is None:
                derived = _derived_names(ctx.tree)
            if cls.node.name in derived:
                continue
        inherited = _inherited(ctx, cls.node, methods)
        texts = [text, *(segment(ctx, base[0][1].node) for base in inherited)]
        for name in sorted(fields):
            if any(f"allow_exported_model_train_eval(self.{name})" in t for t in texts):
                continue
            out.extend(_switches_of(ctx, name, members, analyse, assigned, inherited))
    return out


def _inherited(ctx, cls: ast.ClassDef, methods: dict[int, list]) -> list:
    """The methods (as `methods` holds them) of the classes of this module `cls` derives from,
    nearest first, each class once: they run on its instances too: a wrapper without its own `__init__` keeps the
    graph its base's `__init__` stored. A base named otherwise (another module's, `nn.Module`)
    is not read, as no class's unread bases are."""
    found: list = []
    pending = list(cls.bases)
    seen = {id(cls)}
    while pending:
        base = pending.pop(0)
        known = ctx.scope.classes.get(base.id) if isinstance(base, ast.Name) else None
        if known is None or id(known.node) in seen:
            continue
        seen.add(id(known.node))
        found.append(known)
        pending.extend(known.node.bases)
    return [methods[id(c.node)] for c in found if id(c.node) in methods]


def _switches_of(
    ctx, name: str, members: list, analyse, assigned: dict, inherited: list = ()
) -> list[ModeSwitch | HandedSwitch]:
    attr = f"self.{name}"
    # Methods that switch the field, or hand it to a function that may switch it.
    readers = [(f, cls) for f, cls in members if _switches(segment(ctx, f), attr, switchers(ctx))]
    if not readers:
        return []
    # Every method that may set it, the bases' included (an override that does not set the
    # field either calls the base's or leaves the field unset: counting the base's setter
    # asks only that it, too, leave a graph).
    chain = [*members, *(m for base in inherited for m in base)]
    setters = [(f, cls) for f, cls in chain if attr in segment(ctx, f) and name in _assigned(f, assigned)]
    flows = analyse(setters) if setters else []
    if not flows or len(flows) != len(setters):
        return []  # nothing sets it, or a setter the flow does not read
    origins: set[Origin] = set()
    for flow in flows:
        ends = [env for env, _ in flow.returns]
        values = [env.vars.get(attr) for env in ends]
        if not ends or any(
            v is None or not v.is_graph or v in env.patched for v, env in zip(values, ends, strict=True)
        ):
            return []
        for v in values:
            origins |= v.origins
    out: list[ModeSwitch | HandedSwitch] = []
    for flow in analyse(readers):
        for switch in flow.switches:
            kinds = {(o.kind, o.name) for o in switch.origins}
            if kinds == {(ATTRIBUTE, attr)} and not switch.patched:
                out.append(replace(switch, origins=frozenset(origins)))
        for found in flow.field_handed.values():
            kinds = {(o.kind, o.name) for o in found.origins}
            if kinds == {(ATTRIBUTE, attr)}:  # the callee's flags were read at the call
                out.append(replace(found, origins=frozenset(origins)))
    return out


def _assigned(func: ast.AST, memo: dict[int, frozenset[str]]) -> frozenset[str]:
    """The names `self.<name> = ...` (also augmented or annotated) sets in `func`."""
    found = memo.get(id(func))
    if found is None:
        names = set()
        for node in ast.walk(func):
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    names.add(t.attr)
        found = memo[id(func)] = frozenset(names)
    return found


def _switches(text: str, attr: str, names: tuple[str, ...]) -> bool:
    if f"{attr}.eval()" in text or f"{attr}.train(" in text:
        return True
    return _argument(text, attr[5:]) and any(f"{name}(" in text for name in names)


def _argument(text: str, name: str) -> bool:
    return f"self.{name})" in text or f"self.{name}," in text


def _derived_names(tree: ast.Module) -> set[str]:
    """Names used as a base class somewhere in the module."""
    out = set()
    for node in _class_defs(tree.body):
        for base in node.bases:
            if isinstance(base, ast.Name):
                out.add(base.id)
            elif isinstance(base, ast.Attribute):
                out.add(base.attr)
    return out


def _class_defs(body: list[ast.stmt]):
    """Class statements at any depth: a class is a statement, so only statement lists are
    walked, not the expressions that make up most of a module's nodes."""
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            yield stmt
        for block in statement_lists(stmt):
            yield from _class_defs(block)


__all__ = ["field_switches"]
