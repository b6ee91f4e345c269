"""Mode switches written without the plain `model.eval()` spelling (issue 14).

Checked on torch 2.13 by exporting a Conv→BN→Dropout model after each form, and reading the
`training` arguments of the graph's `batch_norm` and `dropout`:

- `getattr(m, "eval")()`, `getattr(m, "train")(False)`: the bound method, as `m.eval()` is,
  the class's own override included. Read as that call.
- `nn.Module.eval(m)`: `Module.eval` is `return self.train(False)`, so it passes over an
  `eval` of the class but runs its `train` (a `train` that does nothing leaves the capture in
  train mode; `eval()` on an exported graph raises, through its patched `train`). Read as
  `m.train(False)`.
- `nn.Module.train(m, False)` and `super().eval()` / `super().train(False)` in a method of a
  class whose project bases define neither: `Module`'s own switch of every submodule, whatever
  the class overrides (`nn.Module.train(gm, False)` on an exported graph raises nothing either:
  its `train` is patched on the instance, not on `Module`). Recorded as a switch of that
  value, without looking the method up. A project base that defines the method
  (or, for `eval`, a `train` the class inherits from one) runs instead: left unread, as is a
  mode not written there (`super().train(mode)` in a `train` override, `_known_mode`).
- `setattr(m, "training", False)` (and `m.training = False`) sets the root's flag alone: its
  batch norms and dropouts still capture in train mode. No switch.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.applied_lambdas import MODULE_SWITCHES
from qlint.analysis.flow.class_methods import mro_lookup
from qlint.analysis.flow.inherited_methods import base_class
from qlint.analysis.flow.library_calls import method_call
from qlint.analysis.names.scope import parameter_args
from qlint.analysis.node_memo import kept_on_node

SWITCHES = frozenset({"eval", "train"})  # the method names the forms above spell
_KEY = "_qlint_reflective_switch"  # on the call: (spelled call, dispatched) or False
# On a spelled call: what reports it quotes the call as written, not `.train(False)`.
SPELLED = "_qlint_spelled_switch"


def reflective_switch(sem, node: ast.Call, env):
    """None when `node` is none of the forms above; else (the call to walk in its place,
    `R.eval()` for `getattr(R, "eval")()`, or None when the switch is made here, the value).
    `sem` is the walk's `CallSemantics`."""
    found = kept_on_node(node, _KEY, lambda call: _spelling(sem, call) or False)
    if not found:
        return None
    call, dispatched = found
    if dispatched:
        return call, None
    receiver = sem.walk.expr(call.func.value, env)
    for arg in (*call.args, *(kw.value for kw in call.keywords)):
        sem.walk.expr(arg, env)
    if receiver is None or receiver.is_graph:
        return None, receiver
    return None, method_call(sem, call, call.func.attr, receiver, env)


def _spelling(sem, node: ast.Call) -> tuple[ast.Call, bool] | None:
    func = node.func
    if type(func) is ast.Call:  # `getattr(m, "eval")()`
        inner = func.func
        if not (isinstance(inner, ast.Name) and inner.id == "getattr" and len(func.args) == 2 and not func.keywords):
            return None
        receiver, name = func.args
        if not (isinstance(name, ast.Constant) and name.value in SWITCHES) or isinstance(receiver, ast.Starred):
            return None
        if "getattr" in sem.resolver.local:
            return None
        return _call(node, receiver, name.value, node.args, node.keywords), True
    if type(func) is not ast.Attribute or func.attr not in SWITCHES:
        return None
    value = func.value
    if isinstance(value, ast.Call):  # `super().eval()`
        receiver = _super_self(sem, value, func.attr)
        if receiver is None or not _known_mode(node.args, node.keywords):
            return None
        return _call(node, receiver, func.attr, node.args, node.keywords), False
    if not node.args or isinstance(node.args[0], ast.Starred) or sem.walk.qualname(func) not in MODULE_SWITCHES:
        return None
    receiver, rest = node.args[0], node.args[1:]
    if func.attr == "eval":  # `nn.Module.eval(m)` is `m.train(False)`
        if rest or node.keywords:
            return None
        return _call(node, receiver, "train", [ast.copy_location(ast.Constant(False), node)], []), True
    return (_call(node, receiver, "train", rest, node.keywords), False) if _known_mode(rest, node.keywords) else None


def _known_mode(args, keywords) -> bool:
    """`train()`, `train(False)`, `train(mode=True)`: a `Module` switch to a mode written there.
    A flag (`super().train(mode)` in a `train` override) would make the model's mode unknown
    where today's reading keeps it; such an override is still read as before."""
    given = [*args, *(kw.value for kw in keywords if kw.arg == "mode")]
    if len(given) != len(args) + len(keywords) or len(given) > 1:
        return False
    return not given or (isinstance(given[0], ast.Constant) and isinstance(given[0].value, bool))


def _super_self(sem, value: ast.Call, attr: str) -> ast.Name | None:
    """`self` of `super()` (or `super(Cls, self)`) in a method of the class walked, when what it
    runs is `Module`'s switch: no base of the project defines it."""
    cls = sem.class_scope
    if not (isinstance(value.func, ast.Name) and value.func.id == "super") or cls is None or value.keywords:
        return None
    method = sem.walk.func
    if not any(method is s for s in cls.node.body):
        return None
    params = parameter_args(method, star=False)
    if not params:
        return None
    name = params[0].arg
    if value.args and not (len(value.args) == 2 and isinstance(value.args[1], ast.Name) and value.args[1].id == name):
        return None
    if value.args and not (isinstance(value.args[0], ast.Name) and value.args[0].id == cls.node.name):
        return None
    owner = sem.owner
    ran = ("train",) if attr == "train" else ("eval", "train")
    for base in cls.bases:
        placed = base_class(owner, base)
        if placed is not None and any(mro_lookup(*placed, m, base_class) for m in ran):
            return None  # a project base's own switch runs
    if attr == "eval" and "train" in cls.methods:
        return None  # `Module.eval` runs the class's own `train`
    return ast.copy_location(ast.Name(name, ast.Load()), value)


def _call(node: ast.Call, receiver: ast.expr, attr: str, args, keywords) -> ast.Call:
    """`<receiver>.<attr>(args)` at `node`'s position, which what reports the switch names."""
    func = ast.copy_location(ast.Attribute(receiver, attr, ast.Load()), node.func)
    call = ast.copy_location(ast.Call(func, list(args), list(keywords)), node)
    setattr(call, SPELLED, True)
    return call


__all__ = ["SPELLED", "SWITCHES", "reflective_switch"]
