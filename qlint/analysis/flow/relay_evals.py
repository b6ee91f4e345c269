"""The evals a relay helper (`callback_relays`) may make before it calls its callback, and what
undoes them.

`def run_evaled(helper, model, *args): model.eval(); return helper(model, *args)` hands its
callback the module in eval mode, whatever its caller passed: `callback_relays` reads such an
eval as a state key of its path (`EVALED`), kept while the path joins others that made it too.
A statement-level eval of a name (`model.eval()`, `model.train(False)`, `m = model.eval()`), or
one handed straight to the callback (`helper(model.eval(), *args)`), is the only switch allowed
(`evals`); what may switch the module again afterwards drops the key:
the module, or a name holding it or a part, handed to a call (`prep(model)`, `freeze(model.bn)`,
`setattr(model, ...)`), a method called on it (`model.fuse()`), a part given to or taken from it
(`model.bn = ...`), but the callback's own calls, the helper's recursion, methods that leave the
mode as it is (`NEUTRAL`: `.to(device)`, `.parameters()`) and builtins that only look (`INERT`).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_torch_nn import SWITCHING_METHODS
from qlint.analysis.tree_walk import walk_kinds

_CALLS = frozenset({ast.Call})
EVALED = "<evaled {}>"  # a state key (no identifier): the module parameter was evaled on this path
_EVALS = frozenset({"eval", "train"})
# Methods of a module that leave its mode as it is (and hand back itself, its parts or tensors).
NEUTRAL = frozenset(
    {
        "to", "cuda", "cpu", "float", "half", "double", "bfloat16", "requires_grad_", "zero_grad",
        "parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children",
        "modules", "named_modules", "state_dict", "eval",
    }
)  # fmt: skip
# Those that hand back the module itself.
ITSELF = frozenset({"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "requires_grad_", "eval"})
INERT = frozenset({"isinstance", "hasattr", "len", "id", "type", "print", "repr", "str"})


def evals(func: ast.AST) -> frozenset[int] | None:
    """The ids of the statement-level evals of a name in `func` (`m.eval()`, `m.train(False)`,
    `x = m.eval()`) and of those a call of a plain name is handed as a positional argument
    (`helper(m.eval(), q)`: `Module.eval` returns the module itself), which the reading may
    take for evals of the module parameter; None when anything else switches a mode."""
    allowed = set()
    switches = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SWITCHING_METHODS:
            switches.add(id(node))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            allowed.update(id(a) for a in node.args if eval_of_name(a) is not None)
        value = node.value if isinstance(node, (ast.Expr, ast.Assign)) else None
        if isinstance(node, ast.Assign) and not all(isinstance(t, ast.Name) for t in node.targets):
            value = None
        if eval_of_name(value) is not None:
            allowed.add(id(value))
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Attribute) and t.attr == "training" for t in targets):
            return None
    if not switches <= allowed:
        return None
    return frozenset(allowed)


def eval_of_name(node: ast.AST | None) -> str | None:
    """The name `node` puts in eval mode: `<name>.eval()` or `<name>.train(False)`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.keywords):
        return None
    receiver, attr = node.func.value, node.func.attr
    if not isinstance(receiver, ast.Name) or attr not in _EVALS:
        return None
    if attr == "eval" and not node.args:
        return receiver.id
    off = attr == "train" and len(node.args) == 1
    return receiver.id if off and isinstance(node.args[0], ast.Constant) and node.args[0].value is False else None


def module_of(expr: ast.AST, state: dict) -> set[int]:
    """The module parameters whose module (or a part) a name in `expr` may hold."""
    return {state[n.id][1] for n in ast.walk(expr) if isinstance(n, ast.Name) and n.id in state}


def escape(node: ast.AST, state: dict, callbacks: dict, own: str) -> None:
    """Undo the evals of the modules that a call in `node` (nested scopes included, which may
    run at any time) may switch: one handed the module or a part, or a method called on it,
    but the callback's calls, the helper's recursion, `NEUTRAL` methods and `INERT` builtins."""
    if not any(k.startswith("<") for k in state):
        return
    for call in walk_kinds(node, _CALLS):
        func = call.func
        if isinstance(func, ast.Name) and (func.id in callbacks or func.id == own):
            continue
        if isinstance(func, ast.Name) and func.id in INERT:
            continue
        touched = set().union(*(module_of(a, state) for a in [*call.args, *(k.value for k in call.keywords)]))
        if isinstance(func, ast.Attribute) and func.attr not in NEUTRAL:
            touched |= module_of(func.value, state)
        for m in touched:
            state.pop(EVALED.format(m), None)


def untouched(nodes: list[ast.AST], state: dict, model: int, callbacks: dict, own: str) -> bool:
    """No call in `nodes` may switch module parameter `model` (`escape`): what a statement
    handing it over evaled (`helper(model.eval(), q)`) leaves evaled."""
    probe = {k: v for k, v in state.items() if not k.startswith("<")}
    probe[EVALED.format(model)] = ("whole", model)
    for node in nodes:
        escape(node, probe, callbacks, own)
    return EVALED.format(model) in probe


def touch(s: ast.stmt, state: dict) -> None:
    """A part given to the module, or taken from it (`model.bn = nn.BatchNorm2d(3)`,
    `del model.head`, `model.layers[0] = ...`), undoes its eval: the part is in its own mode."""
    if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = s.targets if isinstance(s, ast.Assign) else [s.target]
    elif isinstance(s, ast.Delete):
        targets = s.targets
    else:
        return
    for target in targets:
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            for m in module_of(target, state):
                state.pop(EVALED.format(m), None)


__all__ = [
    "EVALED",
    "INERT",
    "ITSELF",
    "NEUTRAL",
    "escape",
    "eval_of_name",
    "evals",
    "module_of",
    "touch",
    "untouched",
]
