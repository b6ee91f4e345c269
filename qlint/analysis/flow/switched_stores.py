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
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.grad_loops import freezes_only
from qlint.analysis.flow.model_apis import key, mode_call
from qlint.analysis.flow.model_torch_nn import MODE_KEEPING_METHODS, arguments_run_nothing
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import statement_lists

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def switched_stores(method: ast.AST) -> dict[int, tuple[str, ast.Call]]:
    """id of each `self.<attr> = ...` statement of `method` whose stored model's mode is known
    -> (its mode, "eval" or "train"; the switch). One walk per method, kept on its node."""
    return kept_on_node(method, "_qlint_switched_stores", _switched_stores)


def _switched_stores(method: ast.AST) -> dict[int, tuple[str, ast.Call]]:
    found: dict[int, tuple[str, ast.Call]] = {}
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
    return found


def mode_before_store(stmts: list[ast.stmt], i: int) -> tuple[str, ast.Call] | None:
    """(mode, switch) of the model `stmts[i]` (`self.<attr> = model`) stores, as the statements
    before it in the same block set it, whatever follows the store (`init_calls` reads only
    the statements up to a call right after it)."""
    known = _mode_at_store(stmts, i) if isinstance(stmts[i], ast.Assign) and len(stmts[i].targets) == 1 else None
    return known[:2] if known is not None else None


def _mode_at_store(stmts: list[ast.stmt], i: int) -> tuple[str, ast.Call, str] | None:
    """(mode, switch, the switched local's name) of `stmts[i]`'s stored value."""
    value = _kept(stmts[i].value)
    switch = mode_call(value)
    if switch is not None:
        receiver, mode = switch
        receiver = _kept(receiver)
        if mode in ("eval", "train") and isinstance(receiver, ast.Name):
            return mode, value, receiver.id
        return None
    if not isinstance(value, ast.Name):
        return None
    for stmt in reversed(stmts[:i]):
        rebound = isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and key(stmt.targets[0]) == value.id
        if (isinstance(stmt, ast.Expr) or rebound) and (switch := mode_call(_kept(stmt.value))) is not None:
            receiver, mode = switch
            if isinstance(_kept(receiver), ast.Name) and _kept(receiver).id == value.id:
                return (mode, _switch_node(stmt.value), value.id) if mode in ("eval", "train") else None
        if _keeps_mode_of(stmt, value.id) or freezes_only(stmt, value.id):
            continue  # `model.float()`, `model = model.to(device)`, a loop freezing its parameters
        if any(isinstance(n, ast.Name) and n.id == value.id for n in ast.walk(stmt)):
            return None  # named between the switch and the store: it may switch it back
    return None


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
    rebinds = isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and key(stmt.targets[0]) == name
    if not (isinstance(stmt, ast.Expr) or rebinds):
        return False
    kept = _kept(stmt.value)
    return kept is not stmt.value and isinstance(kept, ast.Name) and kept.id == name


def _not_read_after(method: ast.AST, name: str, store: ast.Assign) -> bool:
    """`name` appears in `method` after `store` nowhere, in no nested function or lambda, and is
    not declared global or nonlocal."""
    end = (store.end_lineno, store.end_col_offset)
    stack = list(ast.iter_child_nodes(method))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return False
        if isinstance(node, _SCOPES):
            if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node)):
                return False
            continue
        if isinstance(node, ast.Name) and node.id == name and (node.lineno, node.col_offset) > end:
            return False
        stack.extend(ast.iter_child_nodes(node))
    return True


__all__ = ["mode_before_store", "switched_stores"]
