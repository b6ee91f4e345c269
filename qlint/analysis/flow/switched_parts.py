"""Whether an attribute of a model a caller switched to eval is still in eval mode at a call.

A helper that captures a part of its parameter (`export(model.model, ...)`, the base model of a
Transformers `...ForCausalLM`; `export(net.backbone, ...)`) is right when its callers hand it a
model they switched with `.eval()`: `nn.Module.train(False)` sets every registered submodule,
and a module stored as an attribute of a module is registered. What can undo that between the
switch and the call is the caller giving the model new parts or switching a part back
(`model.model = Net()`, `setattr(model, ...)`, `model.add_module(...)`, `model.apply(fn)`,
`model.backbone.train()`), or handing a part to a call that may (`freeze(model.backbone)`).
Any of those anywhere in the caller's body, before or after the switch, keeps the part's mode
unknown: the body is read as a whole, not in order.

Only an explicit switch of the object passed counts (`model.eval()`, `model.train(False)`,
also chained, as in `model.eval().to(device)`): a mode known some other way (a wrapper's, a
method's that switches `self`) is not read back to the object it was set on.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_values import ATTR, ModeFact
from qlint.analysis.flow.read_only_params import LOOKERS

# Methods that give a module parts or run code on each of them (which may switch them).
_REBUILDS = frozenset({"add_module", "register_module", "set_submodule", "apply", "__setattr__", "__delattr__"})
_SETTERS = frozenset({"setattr", "delattr"})


def eval_switched_part(fact: ModeFact, path: tuple | None, argument: ast.expr | None, body: ast.AST | None) -> bool:
    """`fact` (what a call passes as `argument`) is a model in eval mode from an explicit
    switch, `path` only takes attributes of it, and nothing in `body` (the caller's function,
    or module) gives that model new parts, switches one back, or hands one to a call."""
    if not path or any(step[0] != ATTR for step in path) or fact.state != "eval":
        return False
    if not _explicit_switch(fact.node) or argument is None or body is None:
        return False
    if argument is fact.node:
        return True  # `helper(Net().eval())`: no name holds it for anything else to change
    if not isinstance(argument, ast.Name) or not _switches_name(fact.node, argument.id, body):
        return False
    return not any(_touches_parts(node, argument.id) for node in ast.walk(body))


def _switches_name(switch: ast.Call, name: str, body: ast.AST) -> bool:
    """The switch is of the object `name` holds, not of one a bundle `name` holds was given:
    `name.eval()`, or `name = <the switch>` or a method chain on it (`.eval().to(device)`)."""
    receiver = switch.func.value
    if isinstance(receiver, ast.Name) and receiver.id == name:
        return True
    for node in ast.walk(body):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            value = node.value
            while isinstance(value, ast.Call) and value is not switch and isinstance(value.func, ast.Attribute):
                value = value.func.value
            if value is switch:
                return True
    return False


def _explicit_switch(node: ast.AST | None) -> bool:
    """`m.eval()` or `m.train(False)`."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) or node.keywords:
        return False
    if node.func.attr == "eval":
        return not node.args
    if node.func.attr == "train" and len(node.args) == 1:
        arg = node.args[0]
        return isinstance(arg, ast.Constant) and arg.value is False
    return False


def _touches_parts(node: ast.AST, name: str) -> bool:
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return _depth(node, name) >= 1  # `name.x = ...`, `name.x.y = ...`, `del name.x`
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Name) and func.id in _SETTERS:
        return bool(node.args) and _depth(node.args[0], name) >= 0
    if isinstance(func, ast.Attribute):
        owner = _depth(func.value, name)
        if func.attr in _REBUILDS and owner >= 0:
            return True
        if func.attr == "train" and owner >= 1:
            return True  # `name.backbone.train()` switches that part back
    if isinstance(func, ast.Name) and func.id in LOOKERS:
        return False  # `print(name.training)`, `isinstance(name.model, ...)` only look
    # A part handed to a call, which may switch it or replace what it holds.
    return any(_depth(arg, name) >= 1 for arg in [*node.args, *(kw.value for kw in node.keywords)])


def _depth(node: ast.AST, name: str) -> int:
    """How many attributes `node` takes from the variable `name` (`name`: 0, `name.a.b`: 2),
    or -1 when it is not such a chain."""
    depth = 0
    while isinstance(node, ast.Attribute):
        node = node.value
        depth += 1
    return depth if isinstance(node, ast.Name) and node.id == name else -1
