"""`self.<attr>` stores whose model's mode the method sets right before it stores it (issue 14,
items 2 and 7).

An exporter keeps the model it is handed in an attribute set outside `__init__`:

    def __call__(self, model):
        model = deepcopy(model)
        model.eval()
        self.model = model
        return self.export_q()

and another method hands `self.model` to a helper that captures it. The store says the mode
of what it stores: the name was switched (`model.eval()` / `model.train()`, a constant mode)
by an earlier statement of the same block with nothing between that names it but torch's
`nn.Module` methods that return the module itself in the mode it was in (`model.float()`,
`model = model.to(device)`: they move or cast parameters and buffers, never touch
`training`) and loops that only freeze its parameters (`for p in model.parameters():
p.requires_grad = False`, `grad_loops`), or the stored value is the switch itself (`self.model = model.eval()`,
`model.eval().half()`). The name must not be read again after the store (no alias left
through which the method could switch the stored model later: no later statement, no nested
function or lambda names it, no `global`/`nonlocal` makes it another scope's), and the store
lies in no loop (a later turn could reach statements before it).
`model_attrs.attribute_sources` keeps the attribute's mode only when every store of it in the
class is one of these (or `None`), and nothing else in the class writes or switches it.

Between the switch and the store, an `if` whose test does not name the model and whose arms
hold only such steps (`if half: model = model.half()`) is one too, as is a pair assignment
whose element for the model is one (`im, model = im.half(), model.half()`); and, when the
caller says which calls hand the model back as it came (`keeps`: a project function returning
its first parameter, a project method returning `self`, `kept_rebindings`), `model =
wrap(model)`, `wrap(model)`, `model = model.fuse()` and `model.fuse()` of such calls. Dry runs
(`y = model(im)`, in a loop or a `with` too) and loops over `model.modules()` setting flags
other than the mode (`m.export = True`) are steps as well (`kept_steps`); such a loop leaves
its module's name bound to a part of the model, so that name, like the local, is read neither
after the loop nor after the store.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from qlint.analysis.flow.grad_loops import freezes_only
from qlint.analysis.flow.kept_steps import kept_step
from qlint.analysis.flow.model_apis import key, mode_call
from qlint.analysis.flow.model_torch_nn import MODE_KEEPING_METHODS, arguments_run_nothing
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.statement_walk import statement_lists
from qlint.analysis.tree_walk import mentions_name

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


# `keeps(call, name)`: `call`, a statement's whole value, hands `name` back as it came.
Keeps = Callable[[ast.Call, str], bool]


def switched_stores(method: ast.AST, keeps: Keeps | None = None) -> dict[int, tuple[str, ast.Call]]:
    """id of each `self.<attr> = ...` statement of `method` whose stored model's mode is known
    -> (its mode, "eval" or "train"; the switch). One walk per method, kept on its node; the
    stores that a call between their switch and them left unknown are read again with `keeps`
    (its answers rest on other bodies, so they are not kept on the node)."""
    found, pending = kept_on_node(method, "_qlint_switched_stores", _switched_stores)
    if keeps is None or not pending:
        return found
    more = dict(found)
    for stmts, i in pending:
        known = _mode_at_store(stmts, i, keeps)
        if known is not None and _not_read_after(method, known[2], stmts[i]):
            more[id(stmts[i])] = known[:2]
    return more


def _switched_stores(method: ast.AST):
    """(the stores' modes; the (block, index) of each store a call between its switch and it
    left unknown, when a switch of its value comes earlier in that block)."""
    found: dict[int, tuple[str, ast.Call]] = {}
    pending: list[tuple[list[ast.stmt], int]] = []
    stack: list[tuple[list[ast.stmt], bool]] = [(method.body, False)]
    while stack:
        stmts, looped = stack.pop()
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, _SCOPES):
                continue
            inner = looped or isinstance(stmt, _LOOPS)
            stack.extend((block, inner) for block in statement_lists(stmt))
            if looped or not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
                continue
            name = key(stmt.targets[0])
            if name is None or not name.startswith("self.") or name.count(".") != 1:
                continue
            known = _mode_at_store(stmts, i)
            if known is not None and _not_read_after(method, known[2], stmt):
                found[id(stmt)] = known[:2]
            elif known is None and _switched_earlier(stmts, i):
                pending.append((stmts, i))
    return found, tuple(pending)


def _switched_earlier(stmts: list[ast.stmt], i: int) -> bool:
    """A statement before `stmts[i]` in its block switches the local it stores (the only
    stores a call between could be all that keeps from a known mode)."""
    value = stmts[i].value
    if not isinstance(value, ast.Name):
        return False
    for stmt in stmts[:i]:
        if isinstance(stmt, (ast.Expr, ast.Assign)) and (switch := mode_call(_kept(stmt.value))) is not None:
            receiver = _kept(switch[0])
            if isinstance(receiver, ast.Name) and receiver.id == value.id:
                return True
    return False


def mode_before_store(stmts: list[ast.stmt], i: int) -> tuple[str, ast.Call] | None:
    """(mode, switch) of the model `stmts[i]` (`self.<attr> = model`) stores, as the statements
    before it in the same block set it, whatever follows the store (`init_calls` reads only
    the statements up to a call right after it)."""
    known = _mode_at_store(stmts, i) if isinstance(stmts[i], ast.Assign) and len(stmts[i].targets) == 1 else None
    return known[:2] if known is not None else None


def _mode_at_store(
    stmts: list[ast.stmt], i: int, keeps: Keeps | None = None
) -> tuple[str, ast.Call, tuple[str, ...]] | None:
    """(mode, switch, the switched local's name and the names steps bound to its modules) of
    `stmts[i]`'s stored value."""
    value = _kept(stmts[i].value)
    switch = mode_call(value)
    if switch is not None:
        receiver, mode = switch
        receiver = _kept(receiver)
        if mode in ("eval", "train") and isinstance(receiver, ast.Name):
            return mode, value, (receiver.id,)
        return None
    if not isinstance(value, ast.Name):
        return None
    loose: list[tuple[str, int]] = []  # names a step binds to modules of the model, and where
    for j in range(i - 1, -1, -1):
        stmt = stmts[j]
        rebound = isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and key(stmt.targets[0]) == value.id
        if (isinstance(stmt, ast.Expr) or rebound) and (switch := mode_call(_kept(stmt.value))) is not None:
            receiver, mode = switch
            if isinstance(_kept(receiver), ast.Name) and _kept(receiver).id == value.id:
                names = _unread_names(stmts, i, value.id, loose)
                return (mode, _switch_node(stmt.value), names) if mode in ("eval", "train") and names else None
        bound: list[str] = []
        if _step_keeps(stmt, value.id, keeps, bound):
            loose += [(item, j) for item in bound]
            continue  # `model.float()`, `model = model.to(device)`, a loop freezing its parameters
        if mentions_name(stmt, value.id):
            return None  # named between the switch and the store: it may switch it back
    return None


def _unread_names(stmts: list[ast.stmt], i: int, name: str, loose: list[tuple[str, int]]) -> tuple[str, ...]:
    """The stored local and the modules' names its flag loops leave bound, when no statement
    between a loop and the store (`stmts[i]`) names that loop's module; else ()."""
    for item, j in loose:
        if any(mentions_name(s, item) for s in stmts[j + 1 : i]):
            return ()  # the last module of the loop, switched or handed on after it
    return (name, *(item for item, _ in loose))


def _step_keeps(stmt: ast.stmt, name: str, keeps: Keeps | None, bound: list[str] | None = None) -> bool:
    """`stmt`, between the switch and the store, leaves `name` the same module in the same
    mode: a mode-keeping method, a loop freezing its parameters, a call `keeps` vouches for,
    an `if` whose arms hold only such steps (or statements not naming it), or a `kept_steps`
    step (a flag loop only with `bound`, which gets its module's name)."""
    if _keeps_mode_of(stmt, name) or freezes_only(stmt, name) or _kept_pair(stmt, name):
        return True
    if keeps is not None and _kept_call(stmt, name, keeps):
        return True
    if isinstance(stmt, ast.If) and not mentions_name(stmt.test, name):
        return all(_step_keeps(s, name, keeps) or not mentions_name(s, name) for s in (*stmt.body, *stmt.orelse))
    return kept_step(stmt, name, _judge(name, keeps), bound)


def _judge(name: str, keeps: Keeps | None) -> Callable[[ast.stmt], bool]:
    return lambda stmt: _step_keeps(stmt, name, keeps)


def _kept_call(stmt: ast.stmt, name: str, keeps: Keeps) -> bool:
    """`wrap(model)`, `model = wrap(model)`, `model.fuse()` or `model = model.fuse()`: a call
    naming `name` once, as its receiver or first argument, that `keeps` says hands it back."""
    if not _steps_on(stmt, name) or not isinstance(stmt.value, ast.Call):
        return False
    call = stmt.value
    func = call.func
    receiver = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == name
    first = bool(call.args) and isinstance(call.args[0], ast.Name) and call.args[0].id == name
    if receiver == first or sum(isinstance(n, ast.Name) and n.id == name for n in ast.walk(call)) != 1:
        return False
    return keeps(call, name)


def _steps_on(stmt: ast.stmt, name: str) -> bool:
    """`stmt` is an expression statement or `name = ...`: the shapes a step on `name` between
    its switch and its store may take (`name.float()`, `name = wrap(name)`)."""
    rebinds = isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and key(stmt.targets[0]) == name
    return isinstance(stmt, ast.Expr) or rebinds


def _kept_pair(stmt: ast.stmt, name: str) -> bool:
    """`im, model = im.half(), model.half()`: the element bound to `name` is a mode-keeping
    step of it, and no other element names it."""
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return False
    target, value = stmt.targets[0], stmt.value
    if not isinstance(target, ast.Tuple) or not isinstance(value, ast.Tuple) or len(target.elts) != len(value.elts):
        return False
    own = [j for j, t in enumerate(target.elts) if isinstance(t, ast.Name) and t.id == name]
    if len(own) != 1 or any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts)):
        return False
    j = own[0]
    kept = _kept(value.elts[j])
    if kept is value.elts[j] or not isinstance(kept, ast.Name) or kept.id != name:
        return False
    others = (*target.elts[:j], *target.elts[j + 1 :], *value.elts[:j], *value.elts[j + 1 :])
    return not any(mentions_name(e, name) for e in others)


def _kept(expr: ast.expr) -> ast.expr:
    """`expr` with the `MODE_KEEPING_METHODS` calls on it peeled off (`model.to(device).half()`,
    `model.to(torch.device("cpu"))` -> `model`), as long as their arguments run nothing that
    could switch it before the cast (`model.to(pick(model))`: `arguments_run_nothing`)."""
    while (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr in MODE_KEEPING_METHODS
        and arguments_run_nothing(expr)
    ):
        expr = expr.func.value
    return expr


def _switch_node(expr: ast.expr) -> ast.Call:
    """The `.eval()`/`.train()` call itself in a statement `_kept` peels to one."""
    kept = _kept(expr)
    return kept if isinstance(kept, ast.Call) else expr


def _keeps_mode_of(stmt: ast.stmt, name: str) -> bool:
    """`name.float()` or `name = name.to(device)` (`MODE_KEEPING_METHODS` calls only): the statement
    hands `name` back as the same module in the same mode."""
    if not _steps_on(stmt, name):
        return False
    kept = _kept(stmt.value)
    return kept is not stmt.value and isinstance(kept, ast.Name) and kept.id == name


def _not_read_after(method: ast.AST, names: tuple[str, ...], store: ast.Assign) -> bool:
    """`names` (the stored local, and the names `kept_steps` bound to its modules) appear in
    `method` after `store` nowhere, in no nested function or lambda, and are not declared
    global or nonlocal."""
    end = (store.end_lineno, store.end_col_offset)
    stack = list(ast.iter_child_nodes(method))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Global, ast.Nonlocal)) and set(names) & set(node.names):
            return False
        if isinstance(node, _SCOPES):
            if any(mentions_name(node, name) for name in names):
                return False
            continue
        if isinstance(node, ast.Name) and node.id in names and (node.lineno, node.col_offset) > end:
            return False
        stack.extend(ast.iter_child_nodes(node))
    return True


__all__ = ["mode_before_store", "switched_stores"]
