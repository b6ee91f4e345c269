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

The child may be built in one statement and evaled by a later one of `__init__`'s own
(`self.net = Net()`, then `self.net.eval()`, `self.net.train(False)` or
`self.net.requires_grad_(False).eval()`): the same object, and nothing between them can reach
it (every statement there is one of this list, none naming `self` but the switches). A switch
statement is a chain of calls that return the module they are called on, rooted at a
parameter or a stored attribute, every mode switch in it to eval (`.train()` anywhere else in
the class is still not this shape); its arguments run nothing (`arguments_run_nothing`: no
call but `torch.device(...)`).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.content_syntax import content_syntax
from qlint.analysis.flow.model_torch_nn import MODE_KEEPING_METHODS, arguments_run_nothing, given_mode
from qlint.analysis.names.resolver import dotted_parts
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import walk

_BASES = (("nn", "Module"), ("torch", "nn", "Module"))
# Calls that switch modes or add parts in ways the syntax does not show.
_FORBIDDEN = frozenset({"train", "apply", "add_module", "register_module", "setattr", "set_submodule", "__setattr__"})
_KEY = "_qlint_init_evals_parts"
_SWITCHES_KEY = "_qlint_switches_no_part"


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
    switches = _evals_every_part(init) if init is not None and not init.decorator_list else None
    if switches is None:
        return False
    syntax = content_syntax(cls)
    if syntax.dynamic or syntax.reads_any_training:
        return False
    # (`self.net.train(False)` of `__init__`'s own statements is an eval, not a forbidden call.)
    return _changes_no_part(cls, init, switches)


def switches_no_part(cls: ast.ClassDef) -> bool:
    """No code of the class switches a mode or adds parts in ways the syntax does not show
    (`_FORBIDDEN`: `.train(...)`, `apply`, `setattr`, ...), writes on `self` outside
    `__init__`, or is a function written inside a method (which could be handed `self`): what
    `__init__` evals stays evaled whatever method runs later. Kept on the class node."""
    return kept_on_node(cls, _SWITCHES_KEY, _switches_no_part)


def _switches_no_part(cls: ast.ClassDef) -> bool:
    init = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    return _changes_no_part(cls, init, frozenset())


def _changes_no_part(cls: ast.ClassDef, init: ast.FunctionDef | None, allowed: frozenset[int]) -> bool:
    """No call of the class is `_FORBIDDEN` (but the calls whose ids are `allowed`), no function
    is written inside a method (it could be handed `self` and change it), and nothing stores on
    `self` outside `init`."""
    for node in walk(cls):  # `ast.walk`'s order; its tokens are none of these
        if isinstance(node, ast.Call) and _called(node) in _FORBIDDEN and id(node) not in allowed:
            return False
        nested = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))
        if nested and node is not cls and node not in cls.body:
            return False
        if _stores_on_self(node) and (init is None or not _in(node, init)):
            return False
    return True


def _evals_every_part(init: ast.FunctionDef) -> frozenset[int] | None:
    """The ids of the switch calls of `__init__`'s eval statements when it evals every part it
    stores (None when it does not): `self.net.train(False)` is an eval, not the `train` the
    class may not call elsewhere."""
    params = {a.arg for a in (*init.args.posonlyargs, *init.args.args[1:], *init.args.kwonlyargs)}
    stored: dict[str, str] = {}  # attribute -> the parameter stored there without `.eval()`
    built: set[str] = set()  # attributes holding a call's result stored without `.eval()`
    assigned: set[str] = set()
    evaled_params: set[str] = set()
    evaled_attrs: set[str] = set()
    switches: set[int] = set()
    # The attributes an eval statement names: a child stored without an eval is read on only
    # when one of them may eval it (most classes store `self.bn = nn.BatchNorm2d(c)` and none).
    named = {e[1] for s in init.body if isinstance(s, ast.Expr) and (e := _eval_of(s.value)) is not None}
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
                return None
            switches.update(_switch_ids(stmt.value))
            continue
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            return None
        attr = _self_attr(stmt.targets[0])
        if attr is None or attr in assigned:
            return None  # one store per attribute: a later store could replace an evaled part
        assigned.add(attr)
        value = stmt.value
        if isinstance(value, ast.Constant):
            continue
        evaled = _eval_of(value)
        if evaled is not None and evaled[0] == "param" and evaled[1] in params:
            switches.update(_switch_ids(value))
            continue
        if isinstance(value, ast.Name) and value.id in params:
            stored[attr] = value.id
            continue
        if evaled_result(value):
            continue  # `self.net = resnet18().eval()`: built and evaled at once
        if attr in named and stored_build(value):
            built.add(attr)  # `self.net = Net()`: evaled by a later statement, or not this shape
            continue
        return None
    if not built <= evaled_attrs:
        return None
    if not all(attr in evaled_attrs or param in evaled_params for attr, param in stored.items()):
        return None
    return frozenset(switches)


def _eval_of(node: ast.expr) -> tuple[str, str] | None:
    """("param", name) for `name.eval()`, ("self", attr) for `self.attr.eval()`: a chain of
    calls returning the module they are called on (`.train(False)`,
    `.requires_grad_(False).eval()`, `.eval().to(d)`), every mode switch in it to eval, at
    least one, and nothing their arguments run could switch it (`arguments_run_nothing`)."""
    evals = False
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        switch = _eval_switch(node)
        if switch is None and node.func.attr not in MODE_KEEPING_METHODS:
            return None
        if not arguments_run_nothing(node):
            return None
        evals = evals or switch is True
        if switch is False:
            return None
        node = node.func.value
    if not evals:
        return None
    if isinstance(node, ast.Name) and node.id != "self":
        return "param", node.id
    attr = _self_attr(node)
    return ("self", attr) if attr is not None else None


def _eval_switch(call: ast.Call) -> bool | None:
    """True for `.eval()`, `.train(False)`, `.train(mode=False)`; False for any other `.train`;
    None for a call that switches nothing."""
    attr = call.func.attr
    if attr == "eval":
        return not call.args and not call.keywords
    if attr != "train":
        return None
    values = given_mode(call.args, call.keywords)
    if not values:
        return False
    return isinstance(values[0], ast.Constant) and values[0].value is False


def _switch_ids(node: ast.expr) -> set[int]:
    """The calls of an eval chain `_eval_of` accepted (its `.train(False)` among them)."""
    out = set()
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        out.add(id(node))
        node = node.func.value
    return out


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
    return stored_build(receiver)


def stored_build(value: ast.expr) -> bool:
    """A call's result naming `self` nowhere (`Net(cfg)`, `resnet18().to(d)`): a child of the
    wrapper's own (`evaled_result`, or evaled by a later statement of `__init__`)."""
    return isinstance(value, ast.Call) and not any(isinstance(n, ast.Name) and n.id == "self" for n in ast.walk(value))


def _self_attr(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def super_init(stmt: ast.stmt) -> bool:
    """`super().__init__()` or `super(Cls, self).__init__()`, handing nothing on."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    call = stmt.value
    return not call.args and not call.keywords and calls_super_init(call)


def calls_super_init(call: ast.Call) -> bool:
    """`super().__init__(...)`, `super(Cls, self).__init__(...)`: the base's `__init__` run with
    these arguments."""
    func = call.func
    return (
        isinstance(func, ast.Attribute)
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
