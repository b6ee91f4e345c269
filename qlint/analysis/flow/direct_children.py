"""A loop setting the `training` flag of each direct child of a model (issue 14):

    for mod in model.children():      # or `for _, mod in model.named_children():`
        mod.training = False          # or `setattr(mod, "training", False)`

sets the flag of each module the model holds directly, and of nothing else: not of the modules
those hold, nor the model's own. Read on torch 2.13 from the exported graph's `batch_norm` and
`dropout`: with Net's batch norm and dropout stored as its own attributes they capture in eval
mode; with Net stored inside another model's attribute they capture in train mode. So the loop
is that model's switch exactly when every module of it whose mode matters is a direct child
whose mode is its own flag alone (`model_torch_nn.OWN_FLAG`: batch norm, dropout, ...) and
nothing else of it reads a flag. That is read from the model's construction:

- one construction of a class of the project, read in full, running an `__init__` (its own
  or inherited) past which no class of it adds or switches a part
  (`inherited_inits.plain_init`), and given no part after its build (where the walk sees it:
  `model.bn = ...`, `model.add_module(...)` in the function, strictly read, `given_parts`, or
  a part a helper gave it);
- the class's content with the builds `self.<name> = nn.<OWN_FLAG class>(...)`, statements of
  that `__init__`'s own body, left out is known in full and holds nothing whose behaviour
  depends on the mode: no other batch norm or dropout (one inside a child stays in train
  mode), no `self.training` (the model's own flag, or a child's child's, keeps its mode).

Anything else leaves the loop unread, and the model in the mode it had.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.given_parts import given_to
from qlint.analysis.flow.given_setters import gives_part
from qlint.analysis.flow.held_parts import part_build
from qlint.analysis.flow.inherited_inits import plain_init
from qlint.analysis.flow.model_classes import in_check
from qlint.analysis.flow.model_torch_nn import OWN_FLAG
from qlint.analysis.flow.resolved_classes import NO_PROJECT
from qlint.analysis.flow.sequential_children import flags_reach_all
from qlint.analysis.names.resolver import Resolver


def every_part_direct(sem, over: ast.expr, root, steps: tuple[str, ...], facts: frozenset) -> bool:
    """Every mode-dependent module of the model `root` (or of its part at attribute `steps`),
    which the loop reaches as `over` and whose facts are `facts`, is a direct child of it
    whose mode is its own flag, and nothing of it reads a flag."""
    if len(root.origins) != 1 or any(step.startswith("[") for step in steps):
        return False
    if any(gives_part(f.node) for f in facts) or given_to(sem.walk.func, over):
        return False  # given a part after its build (`model_builds.given_part`): it may hold more
    built = part_build(sem.owner, (root, steps))
    if built is None or built.given or built.slots:
        return False
    if built.cls is None:
        # `self.body = nn.Sequential(...)`, or the model itself (`nn.Sequential(conv, bn)`),
        # read with its arguments.
        return flags_reach_all(built)
    if built.parts != ():
        return False
    found = plain_init(built)
    if found is None:
        return False
    home, init = found
    leaves = _own_flag_children(init, Resolver(home.scope, NO_PROJECT, None))
    dependent, complete = in_check(built.index).contents.content_inheriting(built.cls, home.node, leaves, frozenset())
    return complete and not dependent


def _own_flag_children(init: ast.FunctionDef, resolver: Resolver) -> frozenset[int]:
    """The ids of the calls `self.<name> = nn.<OWN_FLAG class>(...)` of `init`'s own body."""
    params = init.args.posonlyargs or init.args.args
    me = params[0].arg if params else None
    out = set()
    for s in init.body:
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.value, ast.Call)):
            continue
        target = s.targets[0]
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me):
            continue
        name = resolver.qualname(s.value.func) or ""
        if name.startswith("torch.nn.") and name.count(".") == 2 and name.rpartition(".")[2] in OWN_FLAG:
            out.add(id(s.value))
    return frozenset(out)


__all__ = ["every_part_direct"]
