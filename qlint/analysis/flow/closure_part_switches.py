"""`.train(...)` of a name whose parts a class written in the function holds (`closure_parts`):
whether the walk hands each such switch to the wrapper built there. One before the
construction on the name itself is in the value the walk holds; one after it that is a
statement of the function's own body `held_parts` follows; any other must be undone by a later
`name.eval()` of the function's own body before anything reads the wrapper."""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_apis import switch_mode
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import parents, walk_kinds

_TRAINED = "_qlint_train_switches"
_NAMES = frozenset({ast.Name})
_CALLS = frozenset({ast.Call})
_TRAIN_NODES = frozenset({ast.Call, ast.For, ast.AsyncFor})
_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _train_switches(func: ast.AST) -> dict[str, tuple[tuple[ast.Call, bool], ...]]:
    """The `.train(...)` calls anywhere in `func` switching the module a name holds, or a part
    of it (`model.train()`, `model.model.layers[0].train()`), also through a loop over what a
    name holds (`for p in model.children(): p.train()`: under `p` and `model`), by name; each
    with whether it is called on a chain of attributes and items of the name itself."""
    out: dict[str, list[tuple[ast.Call, bool]]] = {}
    loops: list[ast.For | ast.AsyncFor] = []
    for node in walk_kinds(func, _TRAIN_NODES):
        if isinstance(node, ast.For | ast.AsyncFor):
            loops.append(node)
        elif _trains(node):
            receiver = _root_name(node.func.value)
            if receiver is not None:
                out.setdefault(receiver, []).append((node, _chain(node.func.value, items=True)))
    for loop in loops:
        over = _root_name(loop.iter)
        targets = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)} & out.keys()
        if over is None or not targets:
            continue
        calls = (n for s in loop.body for n in walk_kinds(s, _CALLS))
        # (`for name, p in model.named_children()` too)
        out.setdefault(over, []).extend((n, False) for n in calls if _trains(n) and _root_name(n.func.value) in targets)
    return {name: tuple(found) for name, found in out.items()}


def switch_not_followed(func: ast.AST, call: ast.AST, names: frozenset[str]) -> bool:
    """A `.train(...)` of one of `names` (or of a part of it) the walk does not hand to the
    wrapper built at `call`. Handed on: one on the names themselves before the construction on
    every path through it (the walk's value there has its mode); an unconditional `.train()`
    after it, a statement of the function's own body on a chain of attributes of the name
    (`held_parts` switches the wrapper with it, and back at a later `.eval()`); and any other
    (in a branch, a loop, a nested function of the function's code aside) when an `.eval()` of
    the name, a statement of the function's own body, follows it before anything reads the
    name the wrapper is bound to."""
    trains = kept_on_node(func, _TRAINED, _train_switches)
    found = [(name, t) for name in names for t in trains.get(name, ())]
    if not found:
        return False
    up = parents(func)
    built_at = _outer_chain(call, up, func)
    if built_at is None:
        return True
    body = func.body
    index = {id(s): i for i, s in enumerate(body)}
    at = index.get(id(built_at[-1]))
    if at is None:
        return True
    for name, (switch, direct) in found:
        chain = _outer_chain(switch, up, func)
        if chain is None:
            return True  # in a function or class written there: it runs when that is called
        where = index.get(id(chain[-1]))
        if where is None:
            return True  # (a decorator's or a default's)
        if where < at or (where == at and _before(switch, call, chain, built_at)):
            if direct:
                continue  # the walk's value for the name at the construction has its mode
        elif where > at and _statement_switch(switch, chain[-1]):
            continue  # `held_parts` follows it
        if not _evaled_after(body, name, where, at, call, up):
            return True
    return False


def _outer_chain(node: ast.AST, up, func: ast.AST) -> list[ast.AST] | None:
    """The nodes above `node` up to the statement of `func`'s own body holding it (the last);
    None when a function, lambda or class written in `func` holds it."""
    chain = []
    parent = up.get(id(node))
    while parent is not None and parent is not func:
        if isinstance(parent, _SCOPE_NODES):
            return None
        chain.append(parent)
        parent = up.get(id(parent))
    return chain if chain and parent is func else None


def _before(switch: ast.AST, call: ast.AST, chain: list[ast.AST], built_at: list[ast.AST]) -> bool:
    """`switch` runs before `call` whenever both run: written before it, in no loop holding both."""
    around = {id(n) for n in built_at}
    if any(id(n) in around and isinstance(n, _LOOPS) for n in chain):
        return False
    return (switch.lineno, switch.col_offset) < (call.lineno, call.col_offset)


def _statement_switch(switch: ast.Call, stmt: ast.stmt) -> bool:
    """`m.train()` (`m.encoder.train()`, `m.train().to(d)`, `m.train(True)`) is the call of the
    statement `stmt` of the function's own body, on a chain of attributes of a name: a switch
    `held_parts` follows."""
    if switch_mode(switch, "train") != "train" or not _chain(switch.func.value, items=False):
        return False
    expr = stmt.value if isinstance(stmt, ast.Expr | ast.Assign) else None
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr is not switch:
        expr = expr.func.value
    return expr is switch


def _evaled_after(body: list[ast.stmt], name: str, where: int, at: int, call: ast.AST, up) -> bool:
    """A statement `name.eval()` of the function's own body after the statement `where`, and no
    read of the name the construction `call` is bound to (`w = W()`) from the construction's
    statement `at` to it: nothing captured the wrapper in between."""
    end = next((i for i in range(where + 1, len(body)) if _evals(body[i], name)), None)
    if end is None:
        return False
    if end < at:
        return True
    stmt = up.get(id(call))
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    bound = stmt.targets[0].id
    return not any(_reads(s, bound) for s in body[at:end])


def _evals(stmt: ast.stmt, name: str) -> bool:
    """`name.eval()` or `name.train(False)`."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        return False
    receiver, attr = call.func.value, call.func.attr
    if not (isinstance(receiver, ast.Name) and receiver.id == name and attr in ("eval", "train")):
        return False
    return switch_mode(call, attr) == "eval"


def _reads(stmt: ast.stmt, name: str) -> bool:
    return any(isinstance(n.ctx, ast.Load) and n.id == name for n in walk_kinds(stmt, _NAMES))


def _chain(expr: ast.expr, items: bool) -> bool:
    """`net`, `net.body`, with `items` also `net.layers[0]`: a name and parts read off it."""
    while isinstance(expr, ast.Attribute) or (items and isinstance(expr, ast.Subscript)):
        expr = expr.value
    return isinstance(expr, ast.Name)


def _trains(call: ast.Call) -> bool:
    """`.train(...)`, not `.train(False)`."""
    return isinstance(call.func, ast.Attribute) and call.func.attr == "train" and switch_mode(call, "train") != "eval"


def _root_name(expr: ast.expr) -> str | None:
    """`model` for `model.model.layers[0]`, `model.children()`, ..."""
    while isinstance(expr, ast.Attribute | ast.Subscript | ast.Call):
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    return expr.id if isinstance(expr, ast.Name) else None


__all__ = ["switch_not_followed"]
