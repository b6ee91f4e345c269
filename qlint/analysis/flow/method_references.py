"""References in another module to the name of a method that captures its parameter
(issue 14, item 7): which ones may run it, and which cannot.

`Builder(q).quantize(m)` and `builder.quantize(m)` (with `builder = Builder(q)`) run the
method of the checked module's `Builder`; the model flow of the caller's module reads such a
call when it is following that module (`instance_methods`), and the call is then read with
the modes it passes. A reference that is none of those is decided here, from what it names:

- `self.quantize(...)` in a class of that module that defines the method itself, or whose
  bases define it first (a test suite's own `self._quantize` helper), is not the method;
- `torch.quantize`, `other_module.quantize`: what the name resolves to is a module's
  function or a library's object, not the method;
- `self.quantize(...)` in a subclass written in another module runs the method when the
  lookup along its bases finds the method's class first, and is then read as a call
  (`subclass_self_calls`); an override found first is not the method;
- anything else (an object handed in as a parameter, a subclass whose bases cannot all be
  placed, `super().quantize`, an attribute of an attribute) may be an instance of the class:
  the callers are not all known, and the method is judged as if they were unknown.
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.flow import subclass_self_calls as self_calls
from qlint.analysis.flow.built_classes import may_run
from qlint.analysis.flow.constructor_relays import mode_free_relay
from qlint.analysis.flow.pass_through import transparent
from qlint.analysis.names.functions import bodies
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import ClassScope, unique_value
from qlint.analysis.names.text_imports import class_bases

_SELF = ("self", "cls")
_MAX_DEPTH = 6  # base classes followed from a class of the caller's module
# A reference the walk must read: the flow's calls decide whether it is one of the method.
MAYBE = "maybe"
NOT_IT = "not-it"
_DEFINED = "defined"
_UNREAD = "unread"  # may be the method, in a call the flow never reads as one
_ABSENT = "absent"


def owner_class(ctx: FileContext, func: ast.AST) -> ClassScope | None:
    """The top-level class of the checked module whose undecorated method `func` is (a
    static, class or wrapped method is called in ways the flow does not read; one under
    `torch.no_grad()` and its kin, or a project decorator that hands it its callers' arguments
    unchanged, is called as written: `pass_through`)."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    if func.decorator_list and not transparent(ctx, func.decorator_list):
        return None
    return next((c for c in ctx.scope.classes.values() if c.methods.get(func.name) is func), None)


def subclassed_in(data: bytes, cls: str) -> bool:
    """The module's text writes a class statement with a base named `cls` (`class T(TestQNN)`,
    `class T(utils.TestQNN)`): its `self.<method>` calls are no call the flow reads, so the
    callers are unknown, which is known without parsing the module (ExecuTorch's
    `test_qnn_delegate.py`, 11,757 lines, subclasses the suite whose `get_qdq_module` captures)."""
    if cls.encode() not in data:
        return False
    return any(parts[-1] == cls for parts in class_bases(data.decode("utf-8", "replace")))


def method_uses(other: FileContext, owner_qual: str, name: str, rows: set[int]):
    """[(body, {id(reference): reference})] of the references of `other` that may run the
    method `owner_qual`.`name`, or None when one may and no flow reads it as a call (in a
    class body, on a parameter, on a subclass's `self`): decided before any body of the
    module is analysed. The references judged not to be the method are left out."""
    out = []
    for body in bodies(other.tree, other.scope, other.cache):
        refs: dict[int, ast.AST] = {}
        resolver = None
        called = None
        for node in body.nodes(rows):
            if not (isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.ctx, ast.Load)):
                continue
            if isinstance(body.node, ast.ClassDef):
                return None
            resolver = resolver or Resolver(other.scope, other.project, other.optable, body.local, body.class_scope)
            if called is None:  # a call starts on its callee's row
                called = {id(n.func) for n in body.nodes(rows) if isinstance(n, ast.Call)}
            found = _judge(other, body, node, owner_qual, resolver, id(node) in called)
            if found == _UNREAD:
                return None  # known before any body of the module is analysed
            if found == MAYBE:
                refs[id(node)] = node
        if refs:
            out.append((body, refs))
    return out


def _judge(other: FileContext, body, node: ast.Attribute, owner_qual: str, resolver: Resolver, called: bool) -> str:
    value = node.value
    name = node.attr
    if isinstance(value, ast.Name) and value.id in _SELF and body.class_scope is not None:
        if _through_bases(other, body.class_scope, name, owner_qual) != MAYBE:
            return NOT_IT
        if not called:
            # `quantize_method=self.quantize` handed on: no call the flow reads, unless a class
            # that calls it only on models with nothing mode-dependent is given it.
            return NOT_IT if mode_free_relay(other, body, node, resolver) else _UNREAD
        # A subclass's `self`: read when the lookup along its bases, through the modules that
        # write them, finds the method's own class first (`subclass_self_calls`).
        return {self_calls.MAYBE: MAYBE, self_calls.NOT_IT: NOT_IT}.get(
            self_calls.judge_self(other, body.class_scope, name, owner_qual), _UNREAD
        )
    if isinstance(value, ast.Name) and _parameter(body, value.id):
        return _UNREAD  # any instance a caller hands in
    built = _construction(value, body)
    if built is not None:
        return _class_built(other, built, name, owner_qual, resolver)
    qual = resolver.qualname(node)
    if qual is None:
        return MAYBE  # an object the walk may know or not
    holder = qual.rpartition(".")[0]
    if holder == owner_qual or _project_class(other, holder) is not None:
        return MAYBE  # `Builder.quantize(b, m)`, `Sub.quantize`: a class's method, unbound
    return NOT_IT


def _construction(value: ast.expr, body) -> ast.Call | None:
    """The call `value` is (`Other(q).quantize`), or the one call a local it names is bound to
    and nothing else (`o = Other(q)`)."""
    if isinstance(value, ast.Name) and value.id in body.local:
        value = unique_value(body.local[value.id])
    return value if isinstance(value, ast.Call) else None


def _class_built(other: FileContext, call: ast.Call, name: str, owner_qual: str, resolver: Resolver) -> str:
    """A method called on a construction: not the method when the class built is a class of
    that module or of the project that defines `name` first, or a library's class; the
    method's class (read by the flow), a subclass, or a call that builds no class we know
    (a factory) may be."""
    func = call.func
    # A class of the project none of whose bases is the method's class (`TosaPipelineFP[T](...)`
    # built from a base of its own module that defines `run`): no instance of it runs the method.
    if may_run(other, func, owner_qual, resolver) is False:
        return NOT_IT
    local = other.scope.classes.get(func.id) if isinstance(func, ast.Name) else None
    if local is not None and func.id not in other.scope.imports and func.id not in resolver.local:
        return MAYBE if _lookup(other, local, name, owner_qual, 0) == MAYBE else NOT_IT
    return MAYBE if _base(other, func, name, owner_qual, resolver) == MAYBE else NOT_IT


def _parameter(body, name: str) -> bool:
    """`name` is a parameter of the function `body` that nothing in it rebinds."""
    bound = body.local.get(name)
    return bool(bound) and all(isinstance(b, ast.arg) for b in bound)


def _through_bases(other: FileContext, cls: ClassScope, name: str, owner_qual: str) -> str:
    """`self.<name>` in `cls`: not the method when `cls` or the bases before the class that
    holds it define `name` themselves, or none of them is a class of the project (a library
    class cannot derive from the project's). A base that is the method's class, or one that
    cannot be read: it may be."""
    return MAYBE if _lookup(other, cls, name, owner_qual, 0) == MAYBE else NOT_IT


def _lookup(other: FileContext, cls: ClassScope, name: str, owner_qual: str, depth: int) -> str:
    """_DEFINED: found before any base that may be the method's class; MAYBE; _ABSENT: no
    class of the lookup (this module's, then the project's) defines it."""
    if name in cls.methods or name in cls.assigns:
        return _DEFINED
    if depth > _MAX_DEPTH:
        return MAYBE
    scope = other.scope
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id == "object":
            continue
        local = scope.classes.get(base.id) if isinstance(base, ast.Name) else None
        if local is not None and base.id not in scope.imports and not scope.assigns.get(base.id):
            found = _lookup(other, local, name, owner_qual, depth + 1)
        else:
            found = _base(other, base, name, owner_qual)
        if found != _ABSENT:
            return found
    return _ABSENT


def _base(other: FileContext, base: ast.expr, name: str, owner_qual: str, resolver: Resolver | None = None) -> str:
    """A class written in another module (a base, or the class a call builds, read with the
    resolver of its body): the method's class or an unreadable name may be it; a class of the
    project is read one level (what it defines itself); a library's class cannot derive from
    the project's."""
    qual = (resolver or Resolver(other.scope, other.project, other.optable)).qualname(base)
    if qual is None or qual == owner_qual:
        return MAYBE
    project = _project_class(other, qual)
    if project is not None and _canonical(other, qual) == owner_qual:
        return MAYBE  # the method's class, imported under another dotted name of its module
    if project is not None:
        return _DEFINED if name in project.methods or name in project.assigns else MAYBE
    return MAYBE if _project_module(other, qual.rpartition(".")[0]) else _ABSENT


def _project_class(other: FileContext, qual: str) -> ClassScope | None:
    module, _, attr = qual.rpartition(".")
    scope = other.project.module_scope(module, other.path) if module else None
    return scope.classes.get(attr) if scope is not None else None


def _canonical(other: FileContext, qual: str) -> str:
    """`module.Class` named by the module's own dotted name (`module_name_for` its path): the
    name the checked module knows itself by. ExecuTorch's Qualcomm tests import their suite as
    `executorch.backends.qualcomm.tests.utils.TestQNN` from a directory without
    `__init__.py`, whose module is `utils` to the check of utils.py itself."""
    module, _, attr = qual.rpartition(".")
    scope = other.project.module_scope(module, other.path) if module else None
    return f"{scope.module}.{attr}" if scope is not None and scope.module else qual


def _project_module(other: FileContext, module: str) -> bool:
    return bool(module) and other.project.module_scope(module, other.path) is not None


__all__ = ["MAYBE", "NOT_IT", "method_uses", "owner_class", "subclassed_in"]
