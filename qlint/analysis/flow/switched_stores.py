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
by an earlier statement of the same block with nothing between that names it, or the stored
value is the switch itself (`self.model = model.eval()`). The name must not be read again
after the store (no alias left through which the method could switch the stored model later:
no later statement, no nested function or lambda names it, no `global`/`nonlocal` makes it
another scope's), and the store lies in no loop (a later turn could reach statements before
it). `model_attrs.attribute_sources` keeps the attribute's mode only when every store of it
in the class is one of these (or `None`), and nothing else in the class writes or switches it.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_apis import key, mode_call
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


def _mode_at_store(stmts: list[ast.stmt], i: int) -> tuple[str, ast.Call, str] | None:
    """(mode, switch, the switched local's name) of `stmts[i]`'s stored value."""
    value = stmts[i].value
    switch = mode_call(value)
    if switch is not None:
        receiver, mode = switch
        if mode in ("eval", "train") and isinstance(receiver, ast.Name):
            return mode, value, receiver.id
        return None
    if not isinstance(value, ast.Name):
        return None
    for stmt in reversed(stmts[:i]):
        if isinstance(stmt, ast.Expr) and (switch := mode_call(stmt.value)) is not None:
            receiver, mode = switch
            if isinstance(receiver, ast.Name) and receiver.id == value.id:
                return (mode, stmt.value, value.id) if mode in ("eval", "train") else None
        if any(isinstance(n, ast.Name) and n.id == value.id for n in ast.walk(stmt)):
            return None  # named between the switch and the store: it may switch it back
    return None


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


__all__ = ["switched_stores"]
