"""Graph fields a class inherits from a base written in another module of the project (QL203).

`class Calibrated(Runner)` with `from pkg.base import Runner`, where `Runner.__init__` stores
`self.gm = prepare_pt2e(...)`, and `Calibrated.calibrate` runs `self.gm.eval()`: the subclass
names no graph source, so neither the rule's text trigger nor `graph_fields` (which reads the
bases of the checked module only) sees that the field holds a graph.

This module is the import trigger's half and stays light (no parse of the checked file): a
summary fact lists, per module, the top-level classes that may leave a graph in a field of
`self` (the module names a graph source and the class writes `self.`), and those that derive
from a class imported from outside the libraries, with those bases, which the trigger follows
up a few modules (a chain of bases across modules). A file is read when it switches (or
hands on) a field of `self` and writes a class whose base it imports from a module that lists
that base as one that may store a graph, itself or further up. What the base really stores is
the model flow's business (`graph_fields`), on every setter's real paths.
"""

from __future__ import annotations

import ast
import re

from qlint.analysis.flow.graph_returns import GRAPH_SOURCES, switches_returned_graph
from qlint.analysis.flow.switched_callees import switched_receivers
from qlint.analysis.names.text_imports import file_imports
from qlint.analysis.text_needles import holds_any
from qlint.lazy_patterns import lazy

# Names imported from these are never project classes.
_LIBRARY_ROOTS = frozenset({"torch", "torchao", "numpy", "copy", "typing", "collections", "unittest", "pytest", "abc"})
# `class Name(Base, mod.Other):` (bases over several rows too): the bases' text.
_CLASS = lazy(r"^[ \t]*class[ \t]+\w+[ \t]*\(([^)]*)\)", re.MULTILINE)
_SWITCHES = (".eval()", ".train(")
# `self.<attr>` handed to a call, as `graph_fields` reads it.
_ARGUMENT = lazy(r"[(,]\s*self\.\w+\s*[,)]")


class FieldBases:
    """The top-level classes of a module that may give their subclasses a graph field:
    name -> [] when the class itself may store one, else the dotted names of its bases
    imported from other modules (one of which, further up, may)."""

    # Lazy: asked only of the modules a switching file's bases are imported from (ExecuTorch,
    # cold: computed with 527 summaries made for other readers, read for 15).
    key = "ql203.field_bases.v2"
    lazy = True

    def compute(self, tree: ast.Module, scope, text: str):
        if "class" not in text:
            return {}
        # The module's text is sliced only where it names a graph source.
        sources = "self." in text and any(s in text for s in GRAPH_SOURCES)
        starts = _row_starts(text) if sources else None
        out = {}
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            if starts is not None and "self." in text[starts[node.lineno - 1] : starts[node.end_lineno]]:
                out[node.name] = []  # the graph may come from a helper of the module
            elif bases := [b for b in (_imported_base(b, scope) for b in node.bases) if b]:
                out[node.name] = bases  # its own base, in a third module, may store the graph
        return out

    def load(self, path: str, summary, value):
        if not isinstance(value, dict) or not all(isinstance(v, list) for v in value.values()):
            raise TypeError("field bases")
        return value


_FACT = FieldBases()


def _row_starts(text: str) -> list[int]:
    starts = [0]
    at = text.find("\n")
    while at != -1:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    starts.append(len(text))
    return starts


def _imported_base(base: ast.expr, scope) -> str:
    """The dotted name a base imported from outside the libraries stands for, or ""."""
    if not isinstance(base, ast.Name) or base.id not in scope.imports:
        return ""
    full = scope.imports[base.id]
    return full if full.partition(".")[0] not in _LIBRARY_ROOTS else ""


def _stores(project, path: str, full: str, hops: int = 3) -> bool:
    """The class `full` (`pkg.base.Runner`) is listed by its module as one that may store a
    graph field itself, or derives (up to `hops` modules away) from one that is."""
    module, _, name = full.rpartition(".")
    listed = project.module_fact(module, path, _FACT) if module else None
    if not listed or name not in listed:
        return False
    bases = listed[name]
    return not bases or (hops > 0 and any(_stores(project, path, b, hops - 1) for b in bases))


def inherits_graph_field(text: str, path: str, project) -> bool:
    """The file switches a field of `self` (or hands one to a call) and writes a class whose
    base is imported from a project module that may store a graph in a field."""
    # A field handed on is switched by a helper of this module (the only ones `graph_fields`
    # reads where the class names no graph source): either way the text switches something.
    if project is None or "self." not in text or not holds_any(text, _SWITCHES) or "class" not in text:
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
        if local in bases and _stores(project, path, full):  # `from pkg.base import Runner`
            return True
        attrs = [b.partition(".")[2] for b in bases if b.startswith(f"{local}.") and b.count(".") == 1]
        if any(_stores(project, path, f"{full}.{a}") for a in attrs):  # `class C(base.Runner)`
            return True
    return False


def switches_graph_from_elsewhere(text: str, path: str, project) -> bool:
    """QL203's import trigger: a graph a helper of another module returns, or a field a base
    of another module stores, is switched here (both ask for a switch: asked of most files,
    whose text is searched for one once). The switches are QL203's triggers, which the registry
    searched the text for a moment ago (`text_needles`): most files are answered from that."""
    if not holds_any(text, _SWITCHES):
        return False
    return switches_returned_graph(text, path, project) or inherits_graph_field(text, path, project)


__all__ = ["FieldBases", "inherits_graph_field", "switches_graph_from_elsewhere"]
