"""What a loop over models written in the function binds its target to (issue 14, item 7).

`for m in [A().eval(), B()]`, `for name, m, x in [("a", A(), x1), ...]`, `for i, m in
enumerate(models)` and `for name, m in models.items()` over a list, tuple or dict written in
the function (or filled there by `append`/`insert`/`extend`) bind the target to the models it
holds, each in the mode it is in when the loop runs, instead of to a model of unknown mode.
A helper called with the loop item then has callers it can classify: an unknown one would
be judged as if the helper's callers were unknown.

An element is an `Obj` (a model value), None (a constant: no model), a tuple of elements (a
nested tuple or list written in place, unpacked by position) or `UNREAD` (anything the walk
cannot follow: a spread, a nested dict, a value it has no object for). A name whose list may
change where the walk cannot see it (handed to a call, rebound, sliced into) is not
followed: its items stay unknown. A store `x[i] = m` adds `m` to what it may hold
(`indexed_items`).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.model_values import Obj
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import walk

UNREAD = "<unread>"
_READS = frozenset({"items", "values", "keys", "get", "index", "count", "copy"})
_PASSES = frozenset({"enumerate", "len", "reversed", "list", "tuple"})


def element_of(expr: ast.expr, obj, literal_elements: dict[int, list]):
    """The element `expr` (evaluated to `obj`) adds to a container."""
    if isinstance(expr, ast.Constant):
        return None
    if isinstance(expr, (ast.Tuple, ast.List)) and id(expr) in literal_elements:
        return tuple(literal_elements[id(expr)])
    if obj is None or isinstance(expr, (ast.Starred, ast.Dict, ast.Set)):
        return UNREAD
    return obj


def iterated(it: ast.expr) -> tuple[ast.expr, str]:
    """The container a loop walks and how: "items" (`enumerate(x)`), "pairs" (`d.items()`),
    "values" (`d.values()`) or "elements" (`x`, a list, tuple or set)."""
    if not isinstance(it, ast.Call) or it.keywords:
        return it, "elements"
    func = it.func
    if isinstance(func, ast.Name) and func.id == "enumerate" and len(it.args) == 1:
        return it.args[0], "items"
    if isinstance(func, ast.Attribute) and func.attr in ("items", "values") and not it.args:
        return func.value, "pairs" if func.attr == "items" else "values"
    return it, "elements"


def followed_names(func: ast.AST) -> frozenset[str]:
    """Names bound once in `func` whose every other use reads the container or fills it in
    place (`for`, `enumerate`, `len`, `x[i]`, `x.append(m)`, `x.items()`): what a loop over
    them sees is what the walk saw written into them. Kept on the node: a walk of the whole
    body, asked again by every check whose analysis reaches a helper of another module."""
    return kept_on_node(func, _FOLLOWED, _followed_names)


_FOLLOWED = "_qlint_followed_names"


def _followed_names(func: ast.AST) -> frozenset[str]:
    stores: dict[str, int] = {}
    allowed: set[int] = set()
    loads: list[ast.Name] = []
    for node in walk(func):  # `ast.walk`'s nodes but the tokens, which none of these tests takes
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                loads.append(node)
            else:
                stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) and isinstance(node.iter, ast.Name):
            allowed.add(id(node.iter))
        elif isinstance(node, ast.Call) and (read := _read_in_call(node)) is not None:
            allowed.add(id(read))
        elif isinstance(node, ast.Call) and _zipped(node):
            allowed.update(id(a) for a in node.args)  # `zip(models, inputs)` only walks them
        elif isinstance(node, ast.Assign) and (replaced := _item_stored(node)) is not None:
            allowed.add(id(replaced))  # `x[i] = m`: `m` joins what it holds (`indexed_items`)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name):
            allowed.add(id(node.value))
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                stores[name] = 2
    escaped = {n.id for n in loads if id(n) not in allowed}
    return frozenset(name for name, count in stores.items() if count == 1 and name not in escaped)


def _item_stored(node: ast.Assign) -> ast.Name | None:
    """The container name of `name[index] = value`, its one target, by an index and not a slice."""
    target = node.targets[0] if len(node.targets) == 1 else None
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)):
        return None
    return None if isinstance(target.slice, ast.Slice) else target.value


def _read_in_call(node: ast.Call) -> ast.Name | None:
    """The container name a call only reads or fills in place: `len(x)`, `enumerate(x)`,
    `x.items()`, `x.append(m)`, `x.extend([...])` (an extension by a name could be anything)."""
    func, args = node.func, node.args
    if isinstance(func, ast.Name) and func.id in _PASSES and len(args) == 1 and isinstance(args[0], ast.Name):
        return args[0]
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return None
    if func.attr in _READS or func.attr in ("append", "insert"):
        return func.value
    if func.attr == "extend" and len(args) == 1 and isinstance(args[0], (ast.List, ast.Tuple)):
        return func.value
    return None


def _zipped(node: ast.expr) -> bool:
    """`zip(a, b, ...)` of names, with no `strict=` or other keyword."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "zip"
        and bool(node.args)
        and not node.keywords
        and all(isinstance(a, ast.Name) for a in node.args)
    )


def split(target: ast.expr, elements: list) -> list[tuple[ast.expr, list]] | None:
    """(name target, its elements) pairs for a target that unpacks the elements by position;
    None when some element does not have the target's shape."""
    if isinstance(target, ast.Name):
        return [(target, elements)]
    if not isinstance(target, (ast.Tuple, ast.List)) or any(isinstance(t, ast.Starred) for t in target.elts):
        return None
    size = len(target.elts)
    columns: list[list] = [[] for _ in range(size)]
    for element in elements:
        if not (isinstance(element, tuple) and len(element) == size):
            return None
        for column, item in zip(columns, element, strict=True):
            column.append(item)
    out: list[tuple[ast.expr, list]] = []
    for t, column in zip(target.elts, columns, strict=True):
        inner = split(t, column)
        if inner is None:
            return None
        out.extend(inner)
    return out


def models_of(elements: list) -> list | None:
    """The model values a name bound to one of `elements` may be (None: some cannot be read)."""
    objs = [e for e in elements if e is not None]
    if not objs or any(e is UNREAD or isinstance(e, tuple) for e in objs):
        return None
    return list(dict.fromkeys(objs))


class Containers:
    """The containers one function's walk writes, and the loop items taken from them."""

    def __init__(self, func: ast.AST):
        self.func = func
        self.literals: dict[int, list] = {}  # id(list/tuple/dict/set literal) -> its elements
        self.held: dict[Obj, tuple[bool, list]] = {}  # a name's value -> (a dict?, its elements)
        self.items_from: dict[Obj, tuple[bool, list]] = {}  # a loop item -> its container
        self.zipped_from: dict[Obj, list[tuple[bool, list]]] = {}  # a loop item of `zip(...)` -> its containers
        self._followed: frozenset[str] | None = None  # `followed_names`, when first asked
        self.written: dict[Obj, ast.expr] = {}  # a name's value -> the literal it was bound to
        self.keyed = None  # `keyed_rows.KeyedRows` of the walk: rows of dicts read by key

    def literal(self, e: ast.expr, spread: bool) -> list:
        """The element list of a literal the walk is reading (it appends to it)."""
        elements: list = [UNREAD] if spread else []
        self.literals[id(e)] = elements
        return elements

    def bound(self, obj: Obj, value: ast.expr) -> None:
        """A name was bound to the literal `value` (its value is `obj`)."""
        elements = self.literals.get(id(value))
        if elements is not None:
            self.held[obj] = (isinstance(value, ast.Dict), list(elements))
            self.written[obj] = value

    def filled(self, node: ast.Call, receiver: Obj, args: list) -> bool:
        """`models.append(m)`, `.insert(i, m)`, `.extend([...])` on a list written here."""
        held = self.held.get(receiver)
        attr = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        if held is None or held[0] or attr not in ("append", "insert", "extend") or node.keywords:
            return False
        position = 1 if attr == "insert" else 0
        if len(node.args) != position + 1:
            return False
        arg = node.args[position]
        if attr == "extend":
            held[1].extend(self.literals.get(id(arg), [UNREAD]))
        else:
            held[1].append(element_of(arg, args[position], self.literals))
        return True

    def switched(self, obj: Obj) -> None:
        """The mode of `obj` changed: if it is a loop item of a container written here, what
        the container holds is no longer what was written into it."""
        held = self.items_from.get(obj)
        if held is not None:
            held[1][:] = [UNREAD]
        for held in self.zipped_from.get(obj, ()):
            held[1][:] = [UNREAD]
        if self.keyed is not None:
            self.keyed.switched(obj)

    def loop(self, s: ast.For | ast.AsyncFor, env: Env) -> list[tuple[ast.expr, Obj | None]] | None:
        """(name target, the loop item or None for one not followed) for a loop over a
        container written here; None for any other loop."""
        container, how = iterated(s.iter)
        rows = self.keyed.listed(container, env) if isinstance(container, ast.Subscript) and self.keyed else None
        zipped = self._zip(container, env) if how in ("elements", "items") and _zipped(container) else None
        if zipped is not None:
            held = (False, _by_position([h[1] for h in zipped]))
        else:
            held = (False, rows[1]) if rows is not None else self._container(container, env)
        if held is None:
            return None
        is_dict, elements = held
        target = s.target
        out: list[tuple[ast.expr, Obj | None]] = []
        if how in ("items", "pairs"):
            if not (isinstance(target, ast.Tuple) and len(target.elts) == 2) or (how == "pairs") != is_dict:
                return None
            out.append((target.elts[0], None))  # an index or a key
            target = target.elts[1]
        elif (how == "values") != is_dict:
            return None
        names = split(target, elements)
        if names is None:
            return None
        for name, column in names:
            objs = models_of(column)
            if objs is None:
                out.append((name, None))
                continue
            # A value of its own, not one of the elements: a switch on the item in the body
            # is then no switch of an element on the path that skips the loop.
            origins = frozenset().union(*(o.origins for o in objs))
            item = Obj(s, name.id, origins, frozenset().union(*(o.captures for o in objs)))
            env.modes[item] = frozenset().union(*(env.facts(o) for o in objs))
            if not isinstance(container, LITERALS):
                self.items_from[item] = held
            if rows is not None:
                self.keyed.looped(item, rows[0])
            if zipped is not None:
                self.zipped_from[item] = zipped
            out.append((name, item))
        return out

    def rows(self, s: ast.For | ast.AsyncFor, env: Env) -> tuple[ast.Name, list[ast.Dict]] | None:
        """(the target, the dict literals) for a loop over rows of dicts written here that the
        walk reads by key (`keyed_rows`)."""
        container, how = iterated(s.iter)
        if self.keyed is None or how not in ("elements", "items"):
            return None
        literal = container
        if isinstance(container, ast.Name):
            obj = env.vars.get(container.id)
            literal = self.written.get(obj) if obj is not None else None
        dicts = self.keyed.dicts(s, container, literal)
        if dicts is None:
            return None
        return (s.target.elts[1] if how == "items" else s.target), dicts

    def _zip(self, call: ast.Call, env: Env) -> list[tuple[bool, list]] | None:
        """The lists or tuples `zip(a, b, ...)` walks, each written here (`_container`)."""
        held = [self._container(a, env) for a in call.args]
        if any(h is None or h[0] for h in held):
            return None  # one not followed, or a dict (its keys are what zip walks)
        return held

    def held_by(self, expr: ast.expr, env: Env) -> tuple[bool, list] | None:
        """(a dict?, elements) of the container `expr` names, when it is followed."""
        return self._container(expr, env)

    def _container(self, expr: ast.expr, env: Env) -> tuple[bool, list] | None:
        """(a dict?, elements) of a literal, or of a name bound to one here that nothing
        else can change."""
        if isinstance(expr, LITERALS):
            elements = self.literals.get(id(expr))
            return (isinstance(expr, ast.Dict), elements) if elements is not None else None
        obj = env.vars.get(expr.id) if isinstance(expr, ast.Name) else None
        held = self.held.get(obj) if obj is not None else None
        if held is None:
            return None
        if self._followed is None:
            self._followed = followed_names(self.func)
        return held if expr.id in self._followed else None


def _by_position(columns: list[list]) -> list:
    """The tuples `zip` makes of these element lists, up to the shortest; none is read when
    one holds `UNREAD` (a spread: where its elements sit, and so which pair up, is not known)."""
    if any(e is UNREAD for column in columns for e in column):
        return [tuple(UNREAD for _ in columns)]
    size = min(len(column) for column in columns)
    return [tuple(column[i] for column in columns) for i in range(size)]


# Containers written as literals, whose items the walk reads.
LITERALS = (ast.List, ast.Tuple, ast.Set, ast.Dict)

__all__ = ["LITERALS", "UNREAD", "Containers", "followed_names", "split"]
