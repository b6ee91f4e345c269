"""Which calls on a `cls(...)` result the model flow leaves unread (QL201/QL202; issue 13).

A classmethod's `cls(...)` of a class known to be a module (`class_constructors`) builds an
instance whose methods, in the walk of its own module, were all read, as a construction's are.
Most of those calls are made for what they do to weights: on ExecuTorch,
`StaticAttention.from_attention_mha` (whose nn base is imported, followed since stop 66) calls
`instance.load_weights_from_attention_mha(other)`, and its caller `static_attn.adopt_hf_rope()`
and `static_attn.linear_to_conv2d()`: 5 bodies more, and the class-wide reading of the
800-line class's attributes they start (`model_attrs.attribute_sources`), most of the +0.49%
of a cold run's instructions stop 66 measured. Leaving them unread: 64,716.5 M against
fcc65d81's 64,936.3 M (engine -0.32%); what is left of that cost is the construction itself
(the parts `from_attention_mha` gives it, `instance.wo = LoRALinear(...)`: `built_models`).

Such a call is left unread when a reading could not change what the walk follows:
- its value is not used (the call is a statement of its own: what the method returns reaches
  nothing, as for `helper_calls.unread_result`);
- the method's text, the functions written in it included, names no mode switch, capture or
  PT2E step (`method_words`);
- and it names nothing of the project a walk would read on: no method called on `self`, `cls`
  or `super()`, no attribute by the name of a method a class of its module defines
  (`other.freeze()`), no function, class or module-level value of its module, no project
  import (by name or through its module);
- and it reaches `self` only as `self.<attr>` (no dunder) or `return self`: `setattr(self,
  "training", False)`, `getattr(self, name)()`, `self.__dict__[...]`, `nn.Module.eval(self)`
  or `me = self` may switch a mode no word of the text names (stop 68: the walk follows none
  of these as a switch yet, so a reading answers as the gate did; the gate no longer relies
  on that).
The method then switches, captures and hands on nothing, so its receiver and its arguments are
what they were before the call, which is what the walk assumes of a call it does not read.

Not a reading on demand (read only when the result reaches a capture): what a method can switch
is not only its receiver. `load_weights_from_attention_mha(other)` is handed a part of the
caller's model, which a capture may reach whatever becomes of the new instance; the test above
holds for the receiver and the arguments alike.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.class_constructors import made_by_cls
from qlint.analysis.flow.forwarded_graphs import LIBRARY_ROOTS
from qlint.analysis.flow.method_words import names_a_step
from qlint.analysis.tree_walk import walk

_KEY = "_qlint_cls_result_methods"  # on the module scope's `__dict__`: per method and module content
_NAMES = "_qlint_class_method_names"  # on the module scope's `__dict__`
_OWN = frozenset({"self", "cls"})


def left_unread(sem, call: ast.Call | None, origin, owner, method: ast.AST) -> bool:
    """The call `call` of `method` (a def of `owner`'s module, the module walked) on the
    instance `origin` is left unread: a `cls(...)` built it (`class_constructors.made_by_cls`),
    the call's value is unused and the method could change nothing the walk follows (see
    above). `sem` is the walk's `CallSemantics`."""
    stmts = sem.walk.stmt_stack
    if call is None or not stmts or not isinstance(stmts[-1], ast.Expr) or stmts[-1].value is not call:
        return False
    if not made_by_cls(origin):
        return False
    scope = owner.scope
    known = scope.__dict__.setdefault(_KEY, {})
    found = known.get(id(method))
    if found is None or found[0] is not method:
        found = known[id(method)] = (method, not _names_the_project(method, scope) and not names_a_step(owner, method))
    return found[1]


def _names_the_project(method: ast.AST, scope) -> bool:
    """`method`'s text names something of the project a walk of it would read, or reaches
    `self` in a way it does not spell out (`_reflective`)."""
    methods = _method_names(scope)
    nodes = walk(method)
    hints = _annotations(nodes)
    plain: set[int] = set()  # the `self` of `self.<attr>` and of `return self`
    for node in nodes:
        if id(node) in hints:
            continue
        if isinstance(node, ast.Attribute):
            if node.attr in methods:
                return True  # `other.freeze()`, `fn = self.freeze`: a method of the module's classes
            if _own(node.value):
                if node.attr.startswith("__"):
                    return True  # `self.__dict__["training"] = False`, `self.__class__.eval(self)`
                plain.add(id(node.value))
        elif isinstance(node, ast.Return) and _own(node.value):
            plain.add(id(node.value))
        elif _reflective(node, plain):
            return True
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and _own(node.func.value):
                return True  # `self.reset()`, `super().load(...)`: maybe a base's, of another module
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            name = node.id
            if name in scope.functions or name in scope.classes or name in scope.assigns:
                return True  # a function, class or table of the module, called or handed on
            full = scope.imports.get(name)
            if full is not None and full.partition(".")[0] not in LIBRARY_ROOTS:
                return True  # a project import, or a module of the project (`helpers.settle`)
    return False


def _reflective(node: ast.AST, plain: set[int]) -> bool:
    """`self` (or `cls`) read other than as `self.<attr>` or `return self`: handed to a call
    (`setattr(self, "training", False)`, `getattr(self, name)()`, `nn.Module.eval(self)`,
    `vars(self)`), bound to another name or put in a container. Any of these may switch the
    mode in a way no word of the text names; such a method is read, as any other is. (Nodes
    come in `ast.walk`'s order, a parent before its children, so `plain` is complete for it.)"""
    return type(node) is ast.Name and node.id in _OWN and type(node.ctx) is ast.Load and id(node) not in plain


def _annotations(nodes: list[ast.AST]) -> set[int]:
    """The ids of the nodes of type hints (`other: AttentionMHA`): names no code runs on."""
    hints = [n.annotation for n in nodes if isinstance(n, (ast.arg, ast.AnnAssign)) and n.annotation is not None]
    hints += [n.returns for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.returns]
    return {id(sub) for hint in hints for sub in walk(hint)}


def _own(value: ast.expr) -> bool:
    """`self`, `cls` or `super()`: a method called on it may be any of the class's."""
    if isinstance(value, ast.Name):
        return value.id in _OWN
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super"


def _method_names(scope) -> frozenset[str]:
    """The names of the methods the module's top-level classes define (once per scope): the
    module's outline, which an edit of one body leaves as it was (no body is read for it; a
    summarised module's from its summary)."""
    known = scope.__dict__.get(_NAMES)
    if known is None:
        table = scope.classes
        summarised = getattr(table, "method_names", None)
        out: set[str] = set()
        for name in dict.keys(table) if isinstance(table, dict) else table:
            names = summarised(name) if summarised is not None else None
            if names is None:
                cls = dict.__getitem__(table, name) if isinstance(table, dict) else table[name]
                names = dict.keys(cls.methods) if isinstance(cls.methods, dict) else cls.methods
            out.update(names)
        known = scope.__dict__[_NAMES] = frozenset(out)
    return known


__all__ = ["left_unread"]
