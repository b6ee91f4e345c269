"""A wrapper evaled through the one field that holds a module (`w = Wrapper(Net());
w.model.eval()`, then `w` captured).

`Module.eval` of the field switches every module in it; the wrapper's own `training` flag
changes its graph only through what reads it. So when the field holds the wrapper's only
mode-dependent content, the wrapper is in eval mode for a capture, as after `w.eval()`.
`part_modes` keeps such a switch as a part of a train-mode whole (the wrapper may hold other
parts still in train mode); here it has none:

- the wrapper is one construction of a class of the project, read in full (not a summarised
  class of another module), whose code switches or adds no part after `__init__`
  (`evaled_parts.switches_no_part`);
- `__init__` (its own, or the one it inherits, `inherited_inits`) stores the field once, as a
  statement of its own body: from its parameter as it came (`self.model = model`), or from a
  construction (`self.model = Net()`, `self.body = nn.Sequential(nn.Conv2d(...),
  nn.BatchNorm2d(...))`: every module the statement builds is the field's, unless a method of
  `self` or a name bound in it may hand one elsewhere too);
- the model was given no mode-dependent part after its build (`model.head = nn.Dropout()`);
- the class's content beside that field holds nothing found to depend on the mode, read in
  full (no `self.training`, no dropout or batch norm of its own), and every other argument of
  the construction is no module (`Built.hyperparameter`).

The QAT mirror (`model.eval(); model.body.train()`, `holds_the_mode`): the field then trains
everything whose mode matters (read on torch 2.13: the exported batch norm and dropout train),
so a QAT capture is a train-mode one. It is kept as a part in train mode that decides the
model's mode (`part_modes.PartMode.decides`), so a PTQ capture is still named by that switch.

A loop switching every module of the field (`for m in w.model.modules(): m.eval()`, or each of
its children, `loop_effects`) is read as `w.model.eval()`.

`evaled_holders` reads the other order (`net = Net(); w = Wrapper(net); net.eval()`) for a
module the walk names; a field reassigned later is given a part in its own mode
(`model_attrs.given_parts`), as after `w.eval()`.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.given_setters import gives_part
from qlint.analysis.flow.inherited_inits import plain_init
from qlint.analysis.flow.model_classes import in_check
from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.model_values import CONSTRUCTED, ModeFact, Obj
from qlint.analysis.names.scope import parameter_at


def evaled_whole(root: Obj, steps: tuple[str, ...], node: ast.Call, env: Env) -> bool:
    """Put `root` in eval mode, named by `node` (the `.eval()` of its part at `steps`), when
    that part is the only content of the wrapper whose mode matters; False otherwise."""
    if not holds_the_mode(root, steps, env, "train"):
        return False
    env.modes[root] = frozenset({ModeFact("eval", node)})
    return True


def holds_the_mode(root: Obj, steps: tuple[str, ...], env: Env, whole: str) -> bool:
    """The part of `root` at `steps` holds all of its mode-dependent content (see above), and
    `root` is in mode `whole` on every path, with no part switched apart."""
    facts = env.modes.get(root)
    if len(steps) != 1 or not facts or any(f.state != whole or f.parts for f in facts):
        return False
    if any(gives_part(f.node) for f in facts):
        return False  # given a mode-dependent part after its build (`model_builds.given_part`)
    if len(root.origins) != 1:
        return False
    (origin,) = root.origins
    built = origin.built if origin.kind == CONSTRUCTED else None
    found = plain_init(built)
    store = _store(found[1], steps[0]) if found is not None else None
    if store is None:
        return False
    (home, init), index = found, in_check(built.index)
    params = {a.arg for a in (*init.args.posonlyargs, *init.args.args[1:], *init.args.kwonlyargs)}
    if isinstance(store, ast.Name) and store.id in params:
        given, skipped = store.id, frozenset()  # the argument passed for it is the field's module
    elif isinstance(store, ast.Call) and (skipped := _built_in_place(store)) is not None:
        given = None  # the field's content: every module the statement builds
    else:
        return False
    evaled = frozenset({given}) if given is not None else frozenset()
    dependent, complete = index.contents.content_inheriting(built.cls, home.node, skipped, evaled)
    if not complete or dependent:
        return False
    call = built.call
    if any(isinstance(a, ast.Starred) for a in call.args) or any(kw.arg is None for kw in call.keywords):
        return False
    slots = [*((a, i, None) for i, a in enumerate(call.args)), *((kw.value, None, kw.arg) for kw in call.keywords)]
    for arg, position, keyword in slots:
        if given is not None and parameter_at(init.args, 1, position, keyword) == given:
            continue
        if not built.hyperparameter(arg, position, keyword):
            return False
    return True


def _built_in_place(store: ast.Call) -> frozenset[int] | None:
    """The ids of the calls of the construction stored in the field (`nn.Sequential(nn.Conv2d(...),
    nn.BatchNorm2d(...))`): each module they build is held by the field, and switched with it
    (checked on torch 2.13). None when one of them may also hand a module elsewhere: a method of
    `self` (`self.register(nn.Dropout())`), or a name bound in the expression (`(d :=
    nn.Dropout())`) that another field may then store."""
    calls = []
    for node in ast.walk(store):
        if isinstance(node, (ast.NamedExpr, ast.Lambda)):
            return None
        if isinstance(node, ast.Call):
            calls.append(id(node))
            head = node.func
            while isinstance(head, ast.Attribute):
                head = head.value
            if isinstance(head, ast.Name) and head.id == "self" and node.func is not head:
                return None
    return frozenset(calls)


def _store(init: ast.FunctionDef, attr: str) -> ast.expr | None:
    """The value `__init__` stores in `self.<attr>` by the one statement of its body naming it
    as a target; None when it stores it otherwise or more than once."""
    found = [
        n
        for n in ast.walk(init)
        if isinstance(n, ast.Attribute)
        and n.attr == attr
        and isinstance(n.value, ast.Name)
        and n.value.id == "self"
        and not isinstance(n.ctx, ast.Load)
    ]
    if len(found) != 1:
        return None
    for stmt in init.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is found[0]:
            return stmt.value
    return None


__all__ = ["evaled_whole", "holds_the_mode"]
