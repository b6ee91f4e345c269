"""A method that hands `self` itself to a call (issue 14, item 2): what the callee may do to
the fields of `self`, for the two readings of `self.<attr>` across a class's methods.

    class Exporter:
        def __call__(self, model):
            model.eval()
            self.model = model           # every store evals first: `model_attrs.InMode`
        def tune(self):
            set_train(self)              # `def set_train(e): e.model.train()`
        def export_q(self):
            prepare_model(self)          # likewise, right before the capture below
            capture(self.model)

`model_attrs.attribute_sources` counted the methods handing `self.model` to a call as ones
that may switch it, but not those handing `self`: a helper given the object reaches every
field. So a method handing `self` to a call counts for a field unless the call cannot change
it (`fields_changed`): a builtin or a copy that only reads its argument (`print(self)`,
`isinstance(self, X)`, `copy.copy(self)`), or a plain function of the project whose body, read
here, only reads the field through its parameter (`e.model.training`, `print(e.model)`). A
callee the project does not define, or a body doing anything else with the parameter (handing
it on, keeping it, calling its methods) may change any field: the field's mode becomes
unknown, and the rules quiet, never "train" on a guess.

The walk of the method making the call reads the helper in full (`self_switches`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from qlint.analysis.flow.model_torch_nn import MODE_KEEPING_METHODS
from qlint.analysis.flow.read_only_params import LOOKERS
from qlint.analysis.tree_walk import own_nodes, parents

# The copies, which leave the original's fields as they were.
COPIES = frozenset({"copy.copy", "copy.deepcopy"})
# Methods of a module that read it (or cast it, `MODE_KEEPING_METHODS`) and switch nothing.
_READ_METHODS = frozenset(
    {"parameters", "named_parameters", "buffers", "named_buffers", "state_dict", *MODE_KEEPING_METHODS}
)

# `fields_changed(call)`: the fields of `self` a call handing `self` may change (None: any).
Changed = Callable[[ast.Call], frozenset[str] | None]


def hands_self(call: ast.Call) -> bool:
    """`call` is handed `self` itself, as an argument (`helper(self)`, `f(obj=self)`, `*[self]`)."""
    for arg in (*call.args, *(kw.value for kw in call.keywords)):
        if isinstance(arg, ast.Starred):
            arg = arg.value
        if isinstance(arg, ast.Name) and arg.id == "self":
            return True
        if isinstance(arg, (ast.List, ast.Tuple)) and any(isinstance(e, ast.Name) and e.id == "self" for e in arg.elts):
            return True
    return False


def self_handed(
    calls, names, fields_changed: Callable[[ast.AST], Changed] | None, set_in: dict[str, ast.AST] | None = None
) -> dict[str, set[int]]:
    """Of the attributes `names`, those each method handing `self` to one of `calls` ((call,
    method) pairs) may change there -> the ids of those methods; with no `fields_changed`
    (the method's reading, `fields_changed_in`), every call may change every one. `set_in`:
    the attributes `__init__` sets in a statement of its own body -> that statement (`init_set`);
    a call of `__init__` in an earlier statement (`nn.Module.__init__(self)`, a base's
    initializer) runs before the attribute holds what the class vouches for, and changes none."""
    out: dict[str, set[int]] = {}
    if not names:
        return out
    readings: dict[int, Changed] = {}
    for call, method in calls:
        if not hands_self(call):
            continue
        reached = [n for n in names if not runs_before(call, method, (set_in or {}).get(n))]
        if not reached:
            continue
        changed = None
        if fields_changed is not None:
            reading = readings.get(id(method))
            if reading is None:
                reading = readings[id(method)] = fields_changed(method)
            changed = reading(call)
        for name in reached:
            if changed is None or name[5:] in changed:
                out.setdefault(name, set()).add(id(method))
    return out


def init_set(init: ast.FunctionDef, node: ast.AST) -> ast.stmt | None:
    """The statement of `__init__`'s own body that holds `node` (a store, a switch)."""
    at = (node.lineno, node.col_offset)
    for stmt in init.body:
        if (stmt.lineno, stmt.col_offset) <= at <= (stmt.end_lineno, stmt.end_col_offset):
            return stmt
    return None


def runs_before(call: ast.Call, method: ast.AST, stmt: ast.stmt | None) -> bool:
    """`call` lies in `__init__` (the method holding `stmt`) in a statement before `stmt`."""
    return (
        stmt is not None
        and method.lineno <= stmt.lineno <= method.end_lineno
        and (call.end_lineno, call.end_col_offset) < (stmt.lineno, stmt.col_offset)
    )


def changed_through(helper: ast.FunctionDef, param: str) -> frozenset[str] | None:
    """The attributes of parameter `param` that `helper`'s body may change: those it assigns,
    switches or hands on; None when it does anything with the parameter itself but read an
    attribute of it (or hand it to a reader), or names it in a nested function or lambda."""
    up = parents(helper)
    changed: set[str] = set()
    for node in own_nodes(helper):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            if any(isinstance(n, ast.Name) and n.id == param for n in ast.walk(node)):
                return None
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)) and param in node.names:
            return None
        if not (isinstance(node, ast.Name) and node.id == param):
            continue
        if not isinstance(node.ctx, ast.Load):
            return None  # rebound: what it names later is not what the call handed
        held = up.get(id(node))
        if _read_by_reader(held, node):
            continue
        if not (isinstance(held, ast.Attribute) and held.value is node):
            return None
        if not isinstance(held.ctx, ast.Load) or not _only_read(held, up):
            changed.add(held.attr)
    return frozenset(changed)


def _only_read(field: ast.Attribute, up) -> bool:
    """`e.<attr>` is read and left as it is: a method of it called that switches nothing
    (`e.model.parameters()`), it called (`e.model(x)`), handed to a reader, compared or
    tested, or an attribute of it read so in turn; not handed on, kept, returned or switched."""
    held = up.get(id(field))
    if isinstance(held, ast.Attribute) and held.value is field:
        call = up.get(id(held))
        if isinstance(call, ast.Call) and call.func is held:
            return held.attr in _READ_METHODS
        return isinstance(held.ctx, ast.Load) and _only_read(held, up)  # `e.model.training`, not `e.model.bn`
    if isinstance(held, ast.Call) and held.func is field:
        return True  # `e.model(x)`: its forward, which switches nothing
    return _read_by_reader(held, field) or isinstance(held, (ast.Compare, ast.BoolOp, ast.UnaryOp, ast.If, ast.IfExp))


def _read_by_reader(held: ast.AST | None, node: ast.expr) -> bool:
    """`node` is an argument of a builtin that only reads it, spelled as the builtin's name."""
    return (
        isinstance(held, ast.Call) and node in held.args and isinstance(held.func, ast.Name) and held.func.id in LOOKERS
    )


__all__ = ["COPIES", "Changed", "changed_through", "hands_self", "init_set", "runs_before", "self_handed"]
