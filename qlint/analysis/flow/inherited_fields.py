"""Graph fields a class inherits from a base written in another module of the project (QL203).

`class Calibrated(Runner)` with `from pkg.base import Runner`, where `Runner.__init__` stores
`self.gm = prepare_pt2e(...)`, and `Calibrated.calibrate` runs `self.gm.eval()`: the subclass
names no graph source, so neither the rule's text trigger nor `graph_fields` (which reads the
bases of the checked module only) sees that the field holds a graph.

This module is the import trigger's half and stays light (no parse of the checked file): a
summary fact lists, per module, the top-level classes that may leave a graph in a field of
`self` (the module names a graph source and the class writes `self.`), or that derive from a class
imported from outside the libraries, whose own module may be such a base (a chain of bases
across modules). A file is read when it switches (or hands on) a field of `self` and writes a
class whose base it imports from a module that lists that base. What the base really stores
is the model flow's business (`graph_fields`), on every setter's real paths.
"""

from __future__ import annotations

import ast
import re

from qlint.analysis.flow.graph_returns import GRAPH_SOURCES, switched_receivers, switches_returned_graph
from qlint.analysis.names.text_imports import file_imports

# Names imported from these are never project classes.
_LIBRARY_ROOTS = frozenset({"torch", "torchao", "numpy", "copy", "typing", "collections", "unittest", "pytest", "abc"})
# `class Name(Base, mod.Other):` (bases over several rows too): the bases' text.
_CLASS = re.compile(r"^[ \t]*class[ \t]+\w+[ \t]*\(([^)]*)\)", re.MULTILINE)
# `self.<attr>` handed to a call, as `graph_fields` reads it.
_ARGUMENT = re.compile(r"[(,]\s*self\.\w+\s*[,)]")


class FieldBases:
    """The top-level classes of a module that may give their subclasses a graph field."""

    key = "ql203.field_bases.v1"

    def compute(self, tree: ast.Module, scope, text: str):
        if "class" not in text:
            return []
        sources = any(s in text for s in GRAPH_SOURCES)
        lines = text.splitlines(keepends=True)
        out = []
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            body = "".join(lines[node.lineno - 1 : node.end_lineno])
            if sources and "self." in body:  # the graph may come from a helper of the module
                out.append(node.name)
            elif any(_imported_base(b, scope) for b in node.bases):
                out.append(node.name)  # its own base, in a third module, may store the graph
        return out

    def load(self, path: str, summary, value):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise TypeError("field bases")
        return frozenset(value)


_FACT = FieldBases()


def _imported_base(base: ast.expr, scope) -> bool:
    head = base
    while isinstance(head, ast.Attribute):
        head = head.value
    if not isinstance(head, ast.Name) or head.id not in scope.imports:
        return False
    return scope.imports[head.id].partition(".")[0] not in _LIBRARY_ROOTS


def inherits_graph_field(text: str, path: str, project) -> bool:
    """The file switches a field of `self` (or hands one to a call) and writes a class whose
    base is imported from a project module that may store a graph in a field."""
    if project is None or "class" not in text or "self." not in text:
        return False
    switched = any(n.startswith("self.") for n in switched_receivers(text)[0])
    if not switched and _ARGUMENT.search(text) is None:
        return False
    bases = {b.strip() for m in _CLASS.finditer(text) for b in m.group(1).split(",")}
    bases = {b for b in bases if b and "=" not in b}  # `metaclass=...` is no base
    if not bases:
        return False
    for local, full in file_imports(text, path):
        if full.partition(".")[0] in _LIBRARY_ROOTS:
            continue
        module, _, attr = full.rpartition(".")
        if local in bases and module:  # `from pkg.base import Runner`
            names = project.module_fact(module, path, _FACT)
            if names and attr in names:
                return True
        attrs = [b.partition(".")[2] for b in bases if b.startswith(f"{local}.") and b.count(".") == 1]
        if attrs:  # `from pkg import base` ... `class C(base.Runner)`
            names = project.module_fact(full, path, _FACT)
            if names and any(a in names for a in attrs):
                return True
    return False


def switches_graph_from_elsewhere(text: str, path: str, project) -> bool:
    """QL203's import trigger: a graph a helper of another module returns, or a field a base
    of another module stores, is switched here."""
    return switches_returned_graph(text, path, project) or inherits_graph_field(text, path, project)


__all__ = ["FieldBases", "inherits_graph_field", "switches_graph_from_elsewhere"]
