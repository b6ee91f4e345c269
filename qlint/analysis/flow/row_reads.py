"""How a function reads the rows a loop binds (`keyed_rows`), from its syntax alone: the keys of
the items it takes from a row and where each goes (a loop's iterable, a call's argument, an
f-string, a call of the item, a list handed to a call, an attribute handed on, `row.get(key,
default)`), and whether the rows' own name is only ever looped over. What the keys are, and
what the rows hold under them, `keyed_rows` asks at each loop (keys may live in another module)."""

from __future__ import annotations

import ast

from qlint.analysis.node_memo import kept_on_node_by
from qlint.analysis.statement_walk import statements
from qlint.analysis.tree_walk import Parents, name_loads, names_by_id
from qlint.analysis.tree_walk import parents as tree_parents


def read_by_key(func: ast.AST, name: str) -> tuple | None:
    """(the key of each `name[<key>]` load, (key, default or None) of each `name.get(<key>,
    <default>)`, the key of each `name[<key>](...)` call, the key of each `[name[<key>]]`
    literal handed to a call), when `name` is bound once in `func` (by the loop asked about)
    and loaded only so: the subscripts handed to a loop as its iterable, to a call as an
    argument (or in a list or tuple literal that is one) or to an f-string to format (which
    changes nothing of what it formats), and the items called; None otherwise. The syntax is kept on the node;
    the keys are read at each ask (they may live in another module)."""
    found = kept_on_node_by(func, _READ_BY_KEY, name, _MAX_NAMES, lambda: _reads(func, name))
    return found or None


def _reads(func: ast.AST, name: str) -> tuple | tuple[()]:
    # The function's names by identifier, in walk order (kept on it for every name asked),
    # and its statements alone for a `global`/`nonlocal`: each name asked walked every node.
    named = names_by_id(func).get(name)
    if not named or any(name in s.names for s in statements(func) if isinstance(s, _DECLARATIONS)):
        return ()  # never bound here (not the loop's name), or bound in another scope
    parents = tree_parents(func)
    stores = 0
    slices = []
    gets = []
    called = []
    listed = []
    fields = []
    for node in named:
        if not isinstance(node.ctx, ast.Load):
            stores += 1
            continue
        item = parents.get(id(node))
        if isinstance(item, ast.Subscript) and item.value is node and _attribute_handed(item, parents):
            fields.append((item.slice, parents[id(item)].attr))  # `row[key].flag` handed on
        elif isinstance(item, ast.Subscript) and item.value is node and _handed(item, parents):
            slices.append(item.slice)
        elif isinstance(item, ast.Subscript) and item.value is node and _callee(item, parents):
            called.append(item.slice)
        elif isinstance(item, ast.Subscript) and item.value is node and _listed(item, parents):
            listed.append(item.slice)
        elif (got := _got(item, parents)) is not None:
            gets.append(got)
        else:
            return ()
    return (tuple(slices), tuple(gets), tuple(called), tuple(listed), tuple(fields)) if stores == 1 else ()


def _listed(item: ast.Subscript, parents: Parents) -> bool:
    """`[row[key]]` or `(row[key],)` written as a call's argument."""
    holder = parents.get(id(item))
    if not isinstance(holder, (ast.List, ast.Tuple)) or not isinstance(holder.ctx, ast.Load):
        return False
    call = parents.get(id(holder))
    return isinstance(call, ast.Call) and any(a is holder for a in call.args)


def _callee(item: ast.Subscript, parents: Parents) -> bool:
    call = parents.get(id(item))
    return isinstance(call, ast.Call) and call.func is item


def _got(item: ast.AST | None, parents: Parents) -> tuple | None:
    """(key, default or None) of `<row>.get(key[, default])`, `item` being its `.get`."""
    call = parents.get(id(item))
    if not (isinstance(item, ast.Attribute) and item.attr == "get" and isinstance(call, ast.Call)):
        return None
    if call.func is not item or call.keywords or not 1 <= len(call.args) <= 2:
        return None
    return call.args[0], call.args[1] if len(call.args) == 2 else None


def _attribute_handed(item: ast.Subscript, parents: Parents) -> bool:
    """`row[key].attr` loaded and handed to a call as an argument (`skip_mutable_buffer=
    test[QCOM_MODULE].skip_mutable_buffer`, ExecuTorch's index_copy test); not a method
    called on it, nor a store. What the attribute holds is asked of the rows (`dicts`)."""
    attribute = parents.get(id(item))
    if not (isinstance(attribute, ast.Attribute) and attribute.value is item and isinstance(attribute.ctx, ast.Load)):
        return False
    holder = parents.get(id(attribute))
    if isinstance(holder, ast.keyword):
        return isinstance(parents.get(id(holder)), ast.Call)
    return isinstance(holder, ast.Call) and any(a is attribute for a in holder.args)


def _handed(item: ast.Subscript, parents: Parents) -> bool:
    """`item` is a loop's iterable, a call's argument (not its callee), or an f-string's value."""
    holder = parents.get(id(item))
    if isinstance(holder, (ast.For, ast.AsyncFor)):
        return holder.iter is item
    if isinstance(holder, ast.FormattedValue):
        return holder.value is item  # `f"{case['msg']}"`: formatted, as a call's argument is read
    if isinstance(holder, ast.keyword):
        return isinstance(parents.get(id(holder)), ast.Call)
    return isinstance(holder, ast.Call) and any(a is item for a in holder.args)


def only_looped(func: ast.AST, name: str) -> bool:
    """Every load of `name` in `func` is the iterable of a loop, or `enumerate`'s argument there."""
    return kept_on_node_by(func, _LOOPED, name, _MAX_NAMES, lambda: _looped(func, name))


def _looped(func: ast.AST, name: str) -> bool:
    loops = set()
    for node in statements(func):
        if isinstance(node, (ast.For, ast.AsyncFor)):
            it = node.iter
            if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate":
                it = it.args[0] if len(it.args) == 1 and not it.keywords else it
            loops.add(id(it))
    return all(id(n) in loops for n in name_loads(func, name))


_MAX_NAMES = 64  # names asked about per function, kept on its node
_DECLARATIONS = (ast.Global, ast.Nonlocal)
_READ_BY_KEY = "_qlint_keyed_rows_read_by_key"
_LOOPED = "_qlint_keyed_rows_looped"

__all__ = ["only_looped", "read_by_key"]
