"""A wrapper class whose `__init__` evals every part it stores, from its parameters or built there.

`self.encoder = encoder.eval()` is how export scripts wrap one submodule for a capture
(CleverKeys-ML's `EncoderWrapper`); `self.net = resnet18().eval()` (or `Net(cfg).eval()`)
builds the child and evals it in one expression. The instance's own `training` flag stays
True, but a module's flag changes the graph only through what reads it: its children (each
evaled, recursively, by that `.eval()`) and code reading `self.training`. When the class
holds nothing else, a fresh instance is captured as an evaled one would be (and a later
`.train()` of it still switches everything back, as the flow follows).

Read narrowly, by the syntax of the class alone: a direct `nn.Module` subclass (no base
whose `__init__` or methods could add parts or read the flag), whose `__init__` is only
`super().__init__()`, stores of parameters and constants on `self` and `.eval()` of a
parameter or a stored part, or stores of a call's result evaled in the same expression
(`evaled_result`: `Net(cfg).to(d).eval()`, naming no `self`), with every stored parameter
evaled; whose methods set nothing on `self`, switch no mode, and read no `.training`.
Anything else (a part built in the class and stored without an eval, a store without an
eval, a `.train()` anywhere, a subclass) is not this shape. A parameter named in such a
call (`Holder(backbone).eval()`) may end up inside the child: a later `.train()` of what
the caller passed there is followed into the wrapper (`held_parts`), as for a stored one.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.content_syntax import content_syntax
from qlint.analysis.names.resolver import dotted_parts
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import walk

_BASES = (("nn", "Module"), ("torch", "nn", "Module"))
# Calls that switch modes or add parts in ways the syntax does not show.
_FORBIDDEN = frozenset({"train", "apply", "add_module", "register_module", "setattr", "set_submodule", "__setattr__"})
_KEY = "_qlint_init_evals_parts"


def init_evals_parts(cls: ast.ClassDef) -> bool:
    """Everything mode-dependent a fresh instance of `cls` holds is in eval mode (see above).
    Kept on the class node: every construction of the class asks it."""
    return kept_on_node(cls, _KEY, _init_evals_parts)


def _init_evals_parts(cls: ast.ClassDef) -> bool:
    if cls.decorator_list or cls.keywords or len(cls.bases) != 1:
        return False
    if tuple(dotted_parts(cls.bases[0]) or ()) not in _BASES:
        return False
    init = None
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "__init__":
            init = stmt
        elif not (isinstance(stmt, (ast.FunctionDef, ast.Pass)) or _docstring(stmt)):
            return False  # class-level values, nested classes, async methods: not read
    # The `__init__`'s own statements first: asked of every `nn.Module` subclass summarised
    # (ExecuTorch: ~1,000), nearly all of which build a part there, and fail at once; the
    # walks of the whole class are for the few that do not.
    if init is None or init.decorator_list or not _evals_every_part(init):
        return False
    syntax = content_syntax(cls)
    if syntax.dynamic or syntax.reads_any_training:
        return False
    for node in walk(cls):  # `ast.walk`'s order; its tokens are none of these
        if isinstance(node, ast.Call) and _called(node) in _FORBIDDEN:
            return False
        nested = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))
        if nested and node is not cls and node not in cls.body:
            return False  # a nested function could be handed `self` and change it
        if _stores_on_self(node) and not _in(node, init):
            return False
    return True


def _evals_every_part(init: ast.FunctionDef) -> bool:
    params = {a.arg for a in (*init.args.posonlyargs, *init.args.args[1:], *init.args.kwonlyargs)}
    stored: dict[str, str] = {}  # attribute -> the parameter stored there without `.eval()`
    assigned: set[str] = set()
    evaled_params: set[str] = set()
    evaled_attrs: set[str] = set()
    for stmt in init.body:
        if _docstring(stmt) or super_init(stmt):
            continue
        if isinstance(stmt, ast.Expr) and _eval_of(stmt.value) is not None:
            kind, name = _eval_of(stmt.value)
            if kind == "param" and name in params:
                evaled_params.add(name)
            elif kind == "self" and name in assigned:
                evaled_attrs.add(name)
            else:
                return False
            continue
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            return False
        attr = _self_attr(stmt.targets[0])
        if attr is None or attr in assigned:
            return False  # one store per attribute: a later store could replace an evaled part
        assigned.add(attr)
        value = stmt.value
        if isinstance(value, ast.Constant):
            continue
        evaled = _eval_of(value)
        if evaled is not None and evaled[0] == "param" and evaled[1] in params:
            continue
        if isinstance(value, ast.Name) and value.id in params:
            stored[attr] = value.id
            continue
        if evaled_result(value):
            continue  # `self.net = resnet18().eval()`: built and evaled at once
        return False
    return all(attr in evaled_attrs or param in evaled_params for attr, param in stored.items())


def _eval_of(node: ast.expr) -> tuple[str, str] | None:
    """("param", name) for `name.eval()`, ("self", attr) for `self.attr.eval()`."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "eval"
        and not node.args
        and not node.keywords
    ):
        return None
    receiver = node.func.value
    if isinstance(receiver, ast.Name) and receiver.id != "self":
        return "param", receiver.id
    attr = _self_attr(receiver)
    return ("self", attr) if attr is not None else None


def evaled_result(value: ast.expr) -> bool:
    """`resnet18().eval()`, `Net(cfg).to(device).eval()`: `.eval()` of what a call returned
    (through calls on it), in the expression that stores it. `Module.eval` returns the module
    it evaled, so the stored child and everything in it is in eval mode. Naming `self`
    nowhere (`self.build().eval()`, `Net(self).eval()` could reach the wrapper's own parts)."""
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "eval"
        and not value.args
        and not value.keywords
    ):
        return False
    receiver = value.func.value
    if not isinstance(receiver, ast.Call):
        return False  # `p.eval()`, `self.p.eval()`: the stores above; `p.backbone.eval()`: not read
    return not any(isinstance(n, ast.Name) and n.id == "self" for n in ast.walk(receiver))


def _self_attr(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def super_init(stmt: ast.stmt) -> bool:
    """`super().__init__()` or `super(Cls, self).__init__()`, handing nothing on."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    call = stmt.value
    func = call.func
    return (
        not call.args
        and not call.keywords
        and isinstance(func, ast.Attribute)
        and func.attr == "__init__"
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and func.value.func.id == "super"
    )


def _docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _called(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _stores_on_self(node: ast.AST) -> bool:
    """An assignment whose target is rooted at `self` (`self.x = ...`, `self.enc.training = True`)."""
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, ast.Delete):
        targets = node.targets
    elif isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
        targets = (
            [node.target]
            if isinstance(node, (ast.For, ast.AsyncFor))
            else [i.optional_vars for i in node.items if i.optional_vars is not None]
        )
    else:
        return False
    for target in targets:
        for inner in ast.walk(target):
            if isinstance(inner, ast.Name) and inner.id == "self":
                return True
    return False


def _in(node: ast.AST, fn: ast.FunctionDef) -> bool:
    return fn.lineno <= getattr(node, "lineno", -1) <= fn.end_lineno
