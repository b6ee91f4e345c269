"""References in another module to a class whose `__init__` stores the model it is given
(issue 14, item 2): the constructions there are the callers of that `__init__`.

`self.model = model` in `__init__`, captured in another method (`quantize()` of a builder,
`__enter__` of a context manager), holds what each construction passed: `Builder(net.eval())`
in a script is what vouches for the capture. A reference that resolves to the class and is
the callee of a call is such a construction, read by the model flow of that module with the
modes it passes (`model_builds.Builds.instantiation`); any other reference to it (a base of a
subclass, the class handed on as a value, a name that cannot be resolved) may build it
out of sight, and the constructions are then not all known.
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.flow.foreign_references import imported_here
from qlint.analysis.names.functions import bodies
from qlint.analysis.names.resolver import Resolver


def construction_uses(other: FileContext, target: str, word: str, rows: frozenset[int] | set[int]):
    """[(body, {id(reference): reference})] of the constructions of the class `target`
    (spelled `word`) in `other`, or None when a reference to it is not one. References that
    resolve to something else (the module's own class of that name, another library's) are
    left out."""
    out = []
    for body in bodies(other.tree, other.scope, other.cache):
        refs: dict[int, ast.AST] = {}
        called: set[int] = set()
        resolver = None
        passive: set[int] = set()  # type tests and annotations: they build nothing
        for node in body.nodes(rows):
            if isinstance(node, ast.Call):
                called.add(id(node.func))  # walked before its callee expression
                _type_test(node, passive)
                continue
            if isinstance(node, (ast.arg, ast.AnnAssign, ast.FunctionDef, ast.AsyncFunctionDef)):
                _annotations(node, passive)
            if id(node) in passive:
                continue
            named = node.id == word if isinstance(node, ast.Name) else getattr(node, "attr", None) == word
            if not named or not isinstance(getattr(node, "ctx", None), ast.Load):
                continue
            if resolver is None:
                resolver = Resolver(other.scope, other.project, other.optable, body.local, body.class_scope)
            qual = resolver.qualname(node)
            if qual is None and isinstance(node, ast.Name):
                qual = imported_here(other, body, node.id)
            if qual is None:
                return None  # an attribute of an object, a name bound out of sight: it may be the class
            if qual != target:
                continue
            if id(node) not in called or isinstance(body.node, ast.ClassDef):
                return None  # a base, a value handed on, a construction in a class body
            refs[id(node)] = node
        if refs:
            out.append((body, refs))
    return out


def _type_test(call: ast.Call, passive: set[int]) -> None:
    """`isinstance(obj, Builder)`, `issubclass(t, (Builder, Other))`: the class is compared."""
    func = call.func
    if isinstance(func, ast.Name) and func.id in ("isinstance", "issubclass") and len(call.args) == 2:
        passive.update(id(n) for n in ast.walk(call.args[1]))


def _annotations(node: ast.AST, passive: set[int]) -> None:
    """The annotation of a parameter, of an assignment, or a function's return."""
    found = node.returns if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else node.annotation
    if found is not None:
        passive.update(id(n) for n in ast.walk(found))


__all__ = ["construction_uses"]
