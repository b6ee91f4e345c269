"""Another name left on a stored model before its switch (issue 14, item 2):

    def __call__(self, model):
        keep = model                 # or `parts = [model]`, `enc = model.encoder`
        model.eval()
        self.model = model           # `switched_stores`: stored in eval mode
        keep.train()                 # the stored model, through the other name

`switched_stores` makes sure the stored local is not read after the store, so that the method
cannot switch the model later through it; a name bound to the same module (or to a part of it,
or to a container holding it) before the switch reaches it as well. Such a store says no mode
(`model_attrs` then leaves the attribute unknown) when one of those names is read after the
store, or in a function or lambda written in the method (which may run later).

What binds such a name: an assignment, `:=` or loop over a value that is the local itself, an
attribute or item of it, a torch step that returns the module itself (`model.half()`, `.to()`)
or its submodules (`model.modules()`), or a conditional or container holding one, and so on,
names bound so in turn. What a call returns is not (`y = model(x)` is its output, `helper(model)`
what the helper makes): the calls a model is handed to are `model_attrs`' concern.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_torch_nn import MODE_KEEPING_METHODS, MODULE_ITERATORS
from qlint.analysis.statement_walk import target_names
from qlint.analysis.tree_walk import name_loads, own_nodes, walk_kinds

# Methods of a module that return it, or its submodules.
_SAME_MODULES = MODE_KEEPING_METHODS | MODULE_ITERATORS
_BINDERS = frozenset({ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.AsyncFor})
_HOLDERS = (ast.List, ast.Tuple, ast.Set, ast.Starred, ast.BoolOp, ast.Dict)


def alias_left(method: ast.AST, store: ast.Assign) -> bool:
    """A name other than the local `store` stores was bound to that module before the store
    (see above) and is read after it, or in a function or lambda written in `method`."""
    local = _stored_local(store.value)
    if local is None:
        return False
    at = (store.lineno, store.col_offset)
    binders = sorted(
        (n for n in walk_kinds(method, _BINDERS) if (n.lineno, n.col_offset) < at),
        key=lambda n: (n.lineno, n.col_offset),
    )
    bound = [(node, _names_bound(node)) for node in binders]
    # The local's last binding before the store made the module it stores: names bound before
    # that hold another one (`keep = model; model = deepcopy(model)`).
    start = max((i for i, (_, names) in enumerate(bound) if local in names), default=-1)
    names = {local}
    aliases: set[str] = set()
    grown = True
    while grown:
        grown = False
        for i, (node, targets) in enumerate(bound[start + 1 :], start + 1):
            value = node.iter if isinstance(node, (ast.For, ast.AsyncFor)) else node.value
            if value is None or not any(_reaches(value, name) for name in names):
                continue
            for name in targets:
                # Held until the store: no later binding before it names something else.
                if name not in names and not any(name in later for _, later in bound[i + 1 :]):
                    names.add(name)
                    aliases.add(name)
                    grown = True
    if not aliases:
        return False
    end = (store.end_lineno, store.end_col_offset)
    own = {id(n) for n in own_nodes(method)}
    reads = [read for name in aliases for read in name_loads(method, name)]
    return any(id(read) not in own or (read.lineno, read.col_offset) > end for read in reads)


def _names_bound(node: ast.AST) -> set[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {name for target in targets for name in target_names(target)}


def _stored_local(value: ast.expr) -> str | None:
    """The local `self.<attr> = <value>` stores: `model`, or the receiver of `model.eval()`,
    `model.eval().half()`."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        value = value.func.value
    return value.id if isinstance(value, ast.Name) else None


def _reaches(value: ast.expr, name: str) -> bool:
    """`value` is the module `name` holds, a part of it, or a holder of either."""
    if isinstance(value, ast.Name):
        return value.id == name
    if isinstance(value, (ast.Attribute, ast.Subscript)):
        return _reaches(value.value, name)
    if isinstance(value, ast.Call):
        func = value.func
        return isinstance(func, ast.Attribute) and func.attr in _SAME_MODULES and _reaches(func.value, name)
    if isinstance(value, ast.IfExp):
        return _reaches(value.body, name) or _reaches(value.orelse, name)
    if isinstance(value, _HOLDERS):
        return any(_reaches(child, name) for child in ast.iter_child_nodes(value) if isinstance(child, ast.expr))
    return False


__all__ = ["alias_left"]
