"""A wrapper holding nothing but the modules it was given, evaled after it was built.

`w = Wrapper(net); net.eval()` (an export script wrapping a model for its outputs, then
evaling the model it still names): `Module.eval` switches the very object `w` stores, and a
wrapper's own `training` flag changes its graph only through what reads it, so `w` is in
eval mode when it holds nothing else whose behaviour depends on the mode. `held_parts`
follows the other direction (a `.train()` of what a wrapper holds) and keeps an `.eval()` of
a part out of the wrapper, whose other content may still be in train mode; here the wrapper
has no other content:

- the class keeps the modes of what it is given (`given_modes.keeps_given_modes`), its own
  content is known in full and holds nothing found to depend on the mode, and no code of it
  switches or adds a part later (`evaled_parts.switches_no_part`); or it is `nn.Sequential`;
- every argument of the construction is a module the wrapper stores as it came, named by a
  local the walk follows (`HeldParts.path`: not a part such as `m.encoder`, not a copy), or
  is no module (`Built.hyperparameter`);
- the `.eval()` (or `.train(False)`) runs whenever the function reaches it (`HeldParts`
  decides), and once every module the wrapper holds is in eval mode on every path the walk
  holds (no part of it switched back), the wrapper is, named by that switch. A wrapper
  holding such a wrapper follows.

A store on the wrapper (`w.model = other`, `setattr(w, ...)`) forgets it. A helper, a loop or
an `apply` evaling the module is not followed: the report stays.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.built_models import Built
from qlint.analysis.flow.evaled_parts import switches_no_part
from qlint.analysis.flow.given_modes import keeps_given_modes
from qlint.analysis.flow.model_classes import in_check
from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.model_values import ModeFact, Obj

_SEQUENTIAL = frozenset({"torch.nn.Sequential", "torch.nn.modules.container.Sequential"})


def candidate(mirrors: dict, wrapper: Obj, built: Built, node: ast.Call, held: list, path_of, env: Env) -> None:
    """Keep `wrapper`, built at `node`, in `mirrors` when it holds the whole modules `held`
    (the paths `HeldParts` follows); `path_of` is `HeldParts.path`. Whether the other arguments
    are no module and its class holds only what it is given is asked at an `.eval()` that
    leaves all of them evaled (rare), not at every construction."""
    roots = [root for root, steps in held if not steps]
    if not roots or len(roots) != len(held):
        return
    exprs = [*node.args, *(kw.value for kw in node.keywords)]
    slots = [*((i, None) for i in range(len(node.args))), *((None, kw.arg) for kw in node.keywords)]
    others = []
    for (position, keyword), arg in zip(slots, exprs, strict=True):
        path = path_of(arg, env)
        if path is None or path[1] or path[0] not in roots:
            others.append((arg, position, keyword))
    mirrors[wrapper] = (built, tuple(dict.fromkeys(roots)), tuple(others))


def evaled(mirrors: dict, node: ast.Call, env: Env) -> None:
    """An `.eval()` at `node` that runs whenever the function reaches it: each wrapper of
    `mirrors` whose modules are all in eval mode now is too, and so on outwards."""
    changed = True
    while changed:
        changed = False
        for wrapper, (built, roots, others) in list(mirrors.items()):
            if _in_eval(env, wrapper) or not all(_in_eval(env, root) for root in roots):
                continue
            if not all(built.hyperparameter(*other) for other in others) or not _holds_only_them(built):
                del mirrors[wrapper]  # another module it may hold, or content of its own
                continue
            env.modes[wrapper] = frozenset({ModeFact("eval", node)})
            changed = True


def _in_eval(env: Env, obj: Obj) -> bool:
    facts = env.facts(obj)
    return bool(facts) and all(f.state == "eval" and not f.parts for f in facts)


def _holds_only_them(built: Built) -> bool:
    """The construction holds nothing but what it was given (see above)."""
    cls = built.cls
    if cls is None:
        return built.resolver.qualname(built.call.func) in _SEQUENTIAL
    if cls.summarised or not keeps_given_modes(built, False) or not switches_no_part(cls.node):
        return False
    own = in_check(built.index).contents.content_without_installed(built.call, cls, built.resolver, built.name)
    return own.complete and not own.dependent
