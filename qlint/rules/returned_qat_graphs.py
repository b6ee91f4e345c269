"""QL202 through a helper's callers: the QAT graph of an eval-mode capture, returned to them.

A helper that captures `Net().eval()` for QAT and returns the prepared graph leaves what
happens to that graph to its callers (Autoware's `_prepare` and `_build_prepared_model`).
`move_exported_model_to_train` on it restores training batch norm and dropout (checked on
torch 2.13 and torchao 0.18), and `move_exported_model_to_eval` or `convert_pt2e` before any
run means it is only rebuilt to be converted or evaluated: after either move the graph no
longer behaves as the mode it was captured in, which is what QL202 already accepts when these
steps follow the capture in its own function.

Quiet only when every step is seen: the helper is a module-level function, each QAT graph of
the capture is bound once and returned by every `return` (whole, or at one position of the
tuple it returns), and used before that only in ways that neither run it nor hand it on
(`_NEUTRAL`); every use of the helper in the project is a call the caller search reads
(`unread_use`, `each_project_call`; none at all is no vouching); and each call binds the graph
to a name of its caller, whose every use, up to a move (or convert) that precedes it in the
same block, is such a neutral use, or a call of a function of that module that only makes
such uses of the parameter it is handed. A run (`model(x)`), a copy that is not converted, a
store, a return or a rebinding before the move keeps the report.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_apis import classify_call
from qlint.analysis.flow.model_flow import Capture, FunctionFlow
from qlint.analysis.flow.project_callers import KeptCalls, each_project_call
from qlint.analysis.flow.unread_uses import unread_use
from qlint.analysis.tree_walk import SCOPES, own_nodes, parents, statement_around, statement_lists
from qlint.rules.base import FileContext
from qlint.rules.caller_verdicts import holding_flow

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
_SELF_RETURNING = frozenset({"to", "cpu", "cuda", "apply", "requires_grad_", "half", "float", "double"})
_READ = frozenset({"graph", "code"})  # `model.graph.nodes`: the graph's nodes, not a run
_MAX_DEPTH = 2  # functions handed the graph, followed that deep


def returned_and_moved(ctx: FileContext, cap: Capture, flows: list[FunctionFlow]) -> bool:
    """The capture's QAT graphs are returned by the helper holding it, and every caller in the
    project moves what it gets (to train or to eval) or converts it before running it."""
    holder = next((f for f in flows if any(c is cap for c in f.captures)), None)
    func = holder.node if holder is not None else None
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or ctx.scope.functions.get(func.name) is not func:
        return False
    sinks = [s.node for s in cap.flows("qat")]
    position = _returned_at(func, sinks)
    if position is None or unread_use(ctx, flows, func):
        return False
    called = False
    for site in (c for f in flows for c in f.calls if c.callee is func):
        caller = holding_flow(flows, site.call)
        if caller is None or not _moves_result(ctx, caller, site.call, position):
            return False
        called = True
    for found in each_project_call(ctx, func, 0):
        if found is None or isinstance(found, KeptCalls) or found.module is None:
            return False
        if not _moves_result(found.module[0], found.flow, found.call, position):
            return False
        called = True
    return called


def _returned_at(func: ast.AST, sinks: list[ast.AST]) -> int | None:
    """The position the prepared graphs `sinks` are returned at by every return of `func`
    (-1: returned whole), when nothing else in it runs or hands them on; None otherwise."""
    if not sinks or not func.body or not isinstance(func.body[-1], ast.Return):
        return None  # a path that falls off the end returns None
    nodes = own_nodes(func)
    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in nodes):
        return None
    returns = [n for n in nodes if isinstance(n, ast.Return)]
    up = parents(func)
    names: dict[str, ast.stmt] = {}
    for sink in sinks:
        stmt = up.get(id(sink))
        if isinstance(stmt, ast.Assign) and stmt.value is sink and _one_name(stmt.targets) is not None:
            names[stmt.targets[0].id] = stmt
        elif not (isinstance(stmt, ast.Return) and stmt.value is sink):
            return None
    found = set()
    for ret in returns:
        value = ret.value
        items = value.elts if isinstance(value, ast.Tuple) else None
        spots = [(-1, value)] if items is None else list(enumerate(items))
        hits = [i for i, e in spots if e in sinks or (isinstance(e, ast.Name) and e.id in names)]
        if len(hits) != 1:
            return None
        found.add(hits[0])
    if len(found) != 1:
        return None
    position = found.pop()
    for name, stmt in names.items():
        if not _neutral_uses(func, name, stmt, up, _returned):
            return None
    return position


def _returned(node: ast.Name, up) -> bool:
    """`return prepared` or `return prepared, quantizer`."""
    parent = up.get(id(node))
    if isinstance(parent, ast.Tuple) and type(node.ctx) is ast.Load:
        parent = up.get(id(parent))
    return isinstance(parent, ast.Return)


def _one_name(targets: list[ast.expr]) -> str | None:
    return targets[0].id if len(targets) == 1 and isinstance(targets[0], ast.Name) else None


def _moves_result(home: FileContext, caller: FunctionFlow, call: ast.Call, position: int) -> bool:
    """The caller binds what `call` returns (its item `position`) to a name, and moves or
    converts it before any use that could run it or hand it on."""
    body = caller.node
    if not isinstance(body, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        return False
    up = parents(body)
    stmt = up.get(id(call))
    if not isinstance(stmt, ast.Assign) or stmt.value is not call or len(stmt.targets) != 1:
        return False
    target = stmt.targets[0]
    if position >= 0:
        items = target.elts if isinstance(target, (ast.Tuple, ast.List)) else None
        if items is None or position >= len(items) or any(isinstance(e, ast.Starred) for e in items):
            return False
        target = items[position]
    if not isinstance(target, ast.Name):
        return False
    chains = _chains(body)
    covers: list[tuple] = []
    resolver = caller.resolver

    def moves(call: ast.AST, name: str) -> bool:
        """`call` is `move_exported_model_to_*(name)` or `convert_pt2e(name)`."""
        if not isinstance(call, ast.Call) or not call.args or not isinstance(call.args[0], ast.Name):
            return False
        api = classify_call(resolver.qualname(call.func) if resolver is not None else None, call.func)
        return call.args[0].id == name and api is not None and api.kind in ("move", "convert")

    def moved(node: ast.Name, use_up) -> bool:
        """`node` is the model of a move or convert that is a statement of its own: a cover."""
        parent = use_up.get(id(node))
        if type(node.ctx) is ast.Store:
            # `model = move_exported_model_to_train(model)`: the move itself, read next.
            return isinstance(parent, ast.Assign) and len(parent.targets) == 1 and moves(parent.value, node.id)
        if not isinstance(parent, ast.Call) or parent.args[:1] != [node] or not moves(parent, node.id):
            return False
        around = use_up.get(id(parent))
        if not (isinstance(around, (ast.Expr, ast.Assign)) and around.value is parent):
            return False
        if (around.lineno, around.col_offset) <= (stmt.lineno, stmt.col_offset):
            return False  # before the binding: another graph
        covers.append(chains.get(id(around)))
        return True

    def allowed(node: ast.Name, use_up) -> bool:
        chain = chains.get(id(statement_around(node, use_up)))
        if any(_covered(c, chain) for c in covers):
            return True
        return moved(node, use_up) or _handed_to_neutral(home, node, use_up, 1)

    return _neutral_uses(body, target.id, stmt, up, allowed) and bool(covers)


def _neutral_uses(func: ast.AST, name: str, binding: ast.stmt, up, other) -> bool:
    """Every use of `name` in `func` (source order) but its binding at `binding` is neutral
    (`_neutral_use`) or one `other(node, up)` accepts; no nested function names it."""
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
        if not (_neutral_use(node, up) or other(node, up)):
            return False
    return True


def _in_target(node: ast.Name, binding: ast.stmt) -> bool:
    return isinstance(binding, ast.Assign) and any(node is n for t in binding.targets for n in ast.walk(t))


def _neutral_use(node: ast.Name, up) -> bool:
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
    while isinstance(outer, ast.Attribute) and outer.attr in ("cpu", "to", "cuda"):
        call = up.get(id(outer))
        if not isinstance(call, ast.Call) or call.func is not outer:
            return False
        value, outer = call, up.get(id(call))
    if not (isinstance(outer, ast.Call) and outer.args and outer.args[0] is value):
        return False
    func = outer.func
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return last == "convert_pt2e"


def _handed_to_neutral(home: FileContext, node: ast.Name, up, depth: int) -> bool:
    """`freeze(model, path)` with `freeze` a function of the module whose every use of that
    parameter is neutral, which returns nothing of it."""
    call = up.get(id(node))
    if depth > _MAX_DEPTH or not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return False
    if call.func is node or any(isinstance(a, ast.Starred) for a in call.args):
        return False
    func = home.scope.functions.get(call.func.id)
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or func.args.vararg or func.args.kwarg:
        return False
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    index = next((i for i, a in enumerate(call.args) if a is node), None)
    if index is not None:
        name = params[index] if index < len(params) else None
    else:
        name = next((kw.arg for kw in call.keywords if kw.value is node), None)
        if name not in params and name not in [a.arg for a in func.args.kwonlyargs]:
            name = None
    if name is None:
        return False
    inner = parents(func)
    return _neutral_uses(func, name, None, inner, lambda n, u: _handed_to_neutral(home, n, u, depth + 1))


def _chains(body: ast.AST) -> dict[int, tuple]:
    """Statement id -> the (block, index) steps that lead to it from `body`."""
    out: dict[int, tuple] = {}
    stack = [(body.body, ())]
    while stack:
        block, chain = stack.pop()
        for i, stmt in enumerate(block):
            here = (*chain, (id(block), i))
            out[id(stmt)] = here
            if isinstance(stmt, SCOPES):
                continue
            stack.extend((inner, here) for inner in statement_lists(stmt))
    return out


def _covered(cover: tuple | None, chain: tuple | None) -> bool:
    """A use at `chain` follows the cover's statement in the cover's own block: every path to
    it runs the cover first."""
    if cover is None or chain is None or len(chain) < len(cover):
        return False
    block, index = cover[-1]
    return (
        chain[: len(cover) - 1] == cover[:-1] and chain[len(cover) - 1][0] == block and chain[len(cover) - 1][1] > index
    )


__all__ = ["returned_and_moved"]
