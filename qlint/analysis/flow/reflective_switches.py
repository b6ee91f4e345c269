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
- `m.eval()` on a model of a project class whose bases define `train` but no `eval`:
  `Module.eval` runs that `train` with `mode=False`, as `nn.Module.eval(m)` does (its body
  decides: one doing nothing leaves the capture in train mode). Read as `m.train(False)`.
- `w.eval()` running an `eval` of its class that evals one field (`self.model.eval(); return
  self`, `return self.model.eval()`): read as `w.model.eval()` (`delegating_evals`).
- `super().train(mode)` (`nn.Module.train(self, mode)`) in a method whose parameter `mode` is:
  `Module`'s switch to whatever its callers pass, which they read where they pass a constant
  (`carried_flags`); a mode they pass otherwise is unknown there.
- `setattr(m, "training", False)` (and `m.training = False`) sets the root's flag alone: its
  batch norms and dropouts still capture in train mode. No switch.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.applied_lambdas import MODULE_SWITCHES
from qlint.analysis.flow.class_methods import mro_lookup
from qlint.analysis.flow.dead_branches import rebound
from qlint.analysis.flow.delegating_evals import delegated_field
from qlint.analysis.flow.inherited_methods import base_class
from qlint.analysis.flow.instance_methods import defines_method, method_summary
from qlint.analysis.flow.library_calls import method_call
from qlint.analysis.flow.model_torch_nn import given_mode
from qlint.analysis.names.scope import parameter_args
from qlint.analysis.node_memo import kept_on_node

SWITCHES = frozenset({"eval", "train"})  # the method names the forms above spell
_KEY = "_qlint_reflective_switch"  # on the call: (spelled call, dispatched) or False
_EVAL_KEY = "_qlint_eval_through_train"  # on `m.eval()`: the `m.train(False)` walked in its place
_FIELD_KEY = "_qlint_eval_through_field"  # on `w.eval()`: the `w.model.eval()` walked in its place
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
        if receiver is None or not _known_mode(node.args, node.keywords, sem.walk.func):
            return None
        return _call(node, receiver, func.attr, node.args, node.keywords), False
    if not node.args or isinstance(node.args[0], ast.Starred) or sem.walk.qualname(func) not in MODULE_SWITCHES:
        return None
    receiver, rest = node.args[0], node.args[1:]
    if func.attr == "eval":  # `nn.Module.eval(m)` is `m.train(False)`
        if rest or node.keywords:
            return None
        return _call(node, receiver, "train", [ast.copy_location(ast.Constant(False), node)], []), True
    if not _known_mode(rest, node.keywords, sem.walk.func):
        return None
    return _call(node, receiver, "train", rest, node.keywords), False


def eval_through_train(sem, node: ast.Call, receiver) -> ast.Call | None:
    """`m.eval()`, `m` a name holding a model of a project class (`receiver`) that defines or
    inherits from the project a `train` but no `eval`: the call `m.train(False)` to walk in its
    place (kept on `node`: a loop body is walked twice)."""
    if node.args or node.keywords or not isinstance(node.func.value, ast.Name):
        return None
    if defines_method(sem, "eval", receiver) is not False or method_summary(sem, "train", receiver, node) is None:
        return None
    return kept_on_node(node, _EVAL_KEY, _train_false)


def eval_through_field(node: ast.Call, callee, offset: int, flow) -> tuple[ast.Call, bool] | None:
    """`w.eval()`, `w` a name, running `callee` (its summary; `offset` 1 for the `self` it
    fills), an `eval` of its class that evals one field (`delegating_evals`): the call
    `w.<field>.eval()` to walk in its place (kept on `node`), and whether `w.eval()` returns
    what that call does (`return self.model.eval()`) rather than `w`. Reports quote the field
    as the override writes it (`self.model`) when it is in the file of `flow` (the walk's), else
    `w`."""
    func = node.func
    if node.args or node.keywords or offset != 1 or not (isinstance(func, ast.Attribute) and func.attr == "eval"):
        return None
    if not isinstance(func.value, ast.Name):
        return None
    field = delegated_field(callee.node)
    if field is None:
        return None
    returned = callee.node.body[-1].value
    # `return self.model.eval()`, or `self.model.eval()` then `return self`
    evaled = returned if isinstance(returned, ast.Call) else callee.node.body[-2].value
    quoted = evaled.func.value if callee.path == flow.path else func.value
    return kept_on_node(node, _FIELD_KEY, lambda call: _field_eval(call, field, quoted)), evaled is returned


def _field_eval(node: ast.Call, field: str, quoted: ast.expr) -> ast.Call:
    held = ast.copy_location(ast.Attribute(node.func.value, field, ast.Load()), quoted)
    return _call(node, held, "eval", [], [])


def _train_false(node: ast.Call) -> ast.Call:
    return _call(node, node.func.value, "train", [ast.copy_location(ast.Constant(False), node)], [])


def _known_mode(args, keywords, func) -> bool:
    """`train()`, `train(False)`, `train(mode=True)`: a `Module` switch to a mode written there,
    or to a parameter of `func`, the method it is written in, that the method does not rebind
    (`super().train(mode)` in a `train` override: what its callers pass, `carried_flags`)."""
    given = given_mode(args, keywords)
    if given is None:
        return False
    if given and isinstance(given[0], ast.Name):
        name = given[0].id
        return any(a.arg == name for a in parameter_args(func, star=False)) and not rebound(func, name)
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


__all__ = ["SPELLED", "SWITCHES", "eval_through_field", "eval_through_train", "reflective_switch"]
