"""The uses of a QAT graph that neither run it nor switch its mode, for QL202's order test
(`moved_graphs.moved_first`) and the callers it vouches for (`returned_qat_graphs`): weight
loads, parameter lists, the graph's `.graph` and `.code`, mode-keeping methods (`.to(dev)`)
as statements, `convert_pt2e(copy.deepcopy(model))`, and a function of the module that makes
only such uses of what it is handed.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_torch_nn import MODE_KEEPING_METHODS
from qlint.analysis.tree_walk import SCOPES, own_nodes, parents
from qlint.rules.base import FileContext
from qlint.rules.moving_callees import MAX_DEPTH, parameter, spells

__all__ = ["handed_to_neutral", "neutral_use", "neutral_uses", "self_returned"]

# Module methods that neither run the graph nor switch its mode; the result of those that
# return the module itself would be another name for it: neutral only as statements.
_NEUTRAL = frozenset(
    {
        "load_state_dict",
        "state_dict",
        "parameters",
        "named_parameters",
        "buffers",
        "named_buffers",
        "modules",
        "named_modules",
        "children",
        "named_children",
        "recompile",
        "print_readable",
        "zero_grad",
    }
)
# Module methods that return the graph module itself and leave its captured ops as they are:
# torch's mode-keeping ones, and `apply`. Its function may call `train()` on an eager module's
# children (so it keeps no eager module's mode), but on an exported graph `train()` does not move
# the captured ops to train mode (only `move_exported_model_to_train` does: the rule's point), and
# what QAT code applies (`torch.ao.quantization.disable_observer`) sets its observers' flags.
_SELF_RETURNING = MODE_KEEPING_METHODS | {"apply"}
_READ = frozenset({"graph", "code"})  # `model.graph.nodes`: the graph's nodes, not a run
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def self_returned(value: ast.AST, name: str) -> bool:
    """`name.to(dev)`, `name.cpu()`: the module itself, in the same mode."""
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in _SELF_RETURNING
        and spells(value.func.value, name)
    )


def neutral_uses(func: ast.AST, name: str, binding: ast.stmt | None, up, other) -> bool:
    """Every use of `name` in `func` (source order) but its binding at `binding` is neutral
    (`neutral_use`) or one `other(node, up)` accepts; no nested function names it."""
    for node in own_nodes(func):
        if isinstance(node, SCOPES):
            if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node)):
                return False
            continue
        if not isinstance(node, ast.Name) or node.id != name:
            continue
        if type(node.ctx) is not ast.Load:
            if up.get(id(node)) is binding or _in_target(node, binding):
                continue
            if other(node, up):
                continue
            return False
        if not (neutral_use(node, up) or other(node, up)):
            return False
    return True


def _in_target(node: ast.Name, binding: ast.stmt | None) -> bool:
    return isinstance(binding, ast.Assign) and any(node is n for t in binding.targets for n in ast.walk(t))


def neutral_use(node: ast.Name, up) -> bool:
    """`model.load_state_dict(...)`, `model.parameters()`, `model.to(dev)` as a statement,
    `model.graph`, `convert_pt2e(copy.deepcopy(model).cpu())`: nothing runs or trains it."""
    parent = up.get(id(node))
    if isinstance(parent, ast.Attribute) and parent.value is node:
        if parent.attr in _READ:
            return True
        call = up.get(id(parent))
        if not isinstance(call, ast.Call) or call.func is not parent:
            return False
        if parent.attr in _NEUTRAL:
            return True
        around = up.get(id(call))
        return parent.attr in _SELF_RETURNING and isinstance(around, ast.Expr)
    return _converted_copy(node, up)


def _converted_copy(node: ast.Name, up) -> bool:
    """`convert_pt2e(copy.deepcopy(model))`, with `.cpu()`/`.to(...)` on the copy: converted,
    never run."""
    parent = up.get(id(node))
    if not (isinstance(parent, ast.Call) and parent.args and parent.args[0] is node and len(parent.args) == 1):
        return False
    if not (isinstance(parent.func, ast.Attribute) and parent.func.attr in ("deepcopy", "copy")):
        return False
    if not (isinstance(parent.func.value, ast.Name) and parent.func.value.id == "copy"):
        return False
    value: ast.AST = parent
    outer = up.get(id(value))
    while isinstance(outer, ast.Attribute) and outer.attr in MODE_KEEPING_METHODS:
        call = up.get(id(outer))
        if not isinstance(call, ast.Call) or call.func is not outer:
            return False
        value, outer = call, up.get(id(call))
    if not (isinstance(outer, ast.Call) and outer.args and outer.args[0] is value):
        return False
    func = outer.func
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return last == "convert_pt2e"


def handed_to_neutral(home: FileContext, node: ast.Name, up, depth: int) -> bool:
    """`freeze(model, path)` with `freeze` a function of the module whose every use of that
    parameter is neutral, which returns nothing of it."""
    call = up.get(id(node))
    if depth > MAX_DEPTH or not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return False
    if call.func is node or any(isinstance(a, ast.Starred) for a in call.args):
        return False
    func = home.scope.functions.get(call.func.id)
    if not isinstance(func, _FUNCS) or func.args.vararg or func.args.kwarg:
        return False
    name = parameter(func, call, node)
    if name is None:
        return False
    inner = parents(func)
    return neutral_uses(func, name, None, inner, lambda n, u: handed_to_neutral(home, n, u, depth + 1))
