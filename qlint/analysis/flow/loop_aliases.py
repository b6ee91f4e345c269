"""The names a `for` loop binds to the items of a container that holds a model, and the lines
over which they hold one (issue 14, item 7).

`modules = [Conv2dSingle(), Net()]` and then `for i, module in enumerate(modules):
module.bn = nn.BatchNorm2d(4)`: the part is given to a model the list holds, through the
loop's target, which no name bound to the construction spells. Whether a model was changed
after its build (`capture_content.changed_after_build`) reads the loop's targets as the
container's own while they hold its items:

- in a loop that hands an item to the capture (ExecuTorch's Qualcomm tests: `for i, module in
  enumerate(modules): module = self.get_qdq_module(module, x)` and then
  `self.lower_module_and_test_output(module, x)`), up to the end of the first statement of
  its body that holds the capture point: what the body does after it is done to a model
  already captured (or to the name rebound to the capture's result);
- in any other loop, over the whole loop.

What the loop iterates is followed through the builtins that only hand a container's items
on (`enumerate(models)`, `zip(models, inputs)`, `reversed(models)`), a dict's views
(`table.values()`, `table.items()`) and an item or attribute of the container
(`comb[QCOM_MODULE]`). A target of such a loop over another loop's target is one too (`for
comb in combs: for module in comb[QCOM_MODULE]`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from qlint.analysis.tree_walk import contains_any_id

# Builtins whose result yields the items of their arguments as they are (written bare: a
# method of that name, `self.zip(...)`, is anything).
ITERATES = frozenset({"enumerate", "zip", "reversed", "iter"})
_ROUNDS = 4  # loops nested in loops over the container, followed this deep


def iterates_only(call: ast.Call) -> bool:
    """`call` is one of the builtins that hand items on unchanged (`ITERATES`)."""
    return isinstance(call.func, ast.Name) and call.func.id in ITERATES


def loop_aliases(
    loops: list[ast.For | ast.AsyncFor],
    holds: Callable[[str, int], bool],
    points: frozenset[int],
    rows: dict[str, list[ast.expr]] | None = None,
    products: dict[str, tuple[frozenset[str], ...]] | None = None,
) -> frozenset[tuple[str, int, int]]:
    """(name, first line, last line) for each target of these loops (a body's own) that holds,
    over those lines, an item of a container holding the model (`holds(name, row)`: the name
    holds the model at that line). `points`: ids of the calls that take the model for the
    capture; `rows`: the elements of the literals names are bound to (`literal_rows`);
    `products`: the lists each place of a product comprehension's elements comes from
    (`product_items.product_sources`)."""
    found: set[tuple[str, int, int]] = set()
    # Each loop's last line, worked out once: every round asks it again of the loops it binds.
    lasts: dict[int, int] = {}

    def held(name: str, row: int) -> bool:
        return holds(name, row) or any(n == name and first <= row <= last for n, first, last in found)

    # What each loop binds to which containers' items: the same in every round.
    targets = [(loop, item_targets(loop.target, loop.iter, rows, products)) for loop in loops]
    for _ in range(_ROUNDS if loops else 0):
        size = len(found)
        for loop, items in targets:
            bound = [t for t, source in items if any(held(r, loop.lineno) for r in source)]
            if bound:
                last = lasts.get(id(loop))
                if last is None:
                    last = lasts[id(loop)] = _last_row(loop, points)
                found.update((n.id, loop.lineno, last) for t in bound for n in ast.walk(t) if isinstance(n, ast.Name))
        if len(found) == size:
            break
    return frozenset(found)


def item_targets(
    target: ast.expr, it: ast.expr, rows: dict[str, list[ast.expr]] | None = None, products=None
) -> list[tuple[ast.expr, set[str]]]:
    """(a part of the loop's target, the names whose containers' items it is bound to): the
    index of `enumerate` and the keys of `.items()` are no items; `zip`'s parts go by position;
    over a literal of rows (`rows`: `cases = [("a", Net(), x), ...]`), a part whose place
    holds a constant in every row (the case's name) is none. A target whose shape does not
    match is bound to all of them."""
    parts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else None
    if isinstance(it, ast.Call) and iterates_only(it) and it.args and not it.keywords:
        name = it.func.id
        if name == "enumerate" and len(it.args) == 1 and parts is not None and len(parts) == 2:
            return item_targets(parts[1], it.args[0], rows, products)
        if name == "zip" and parts is not None and len(parts) == len(it.args):
            return [
                pair
                for part, arg in zip(parts, it.args, strict=True)
                for pair in item_targets(part, arg, rows, products)
            ]
        if name in ("reversed", "iter") and len(it.args) == 1:
            return item_targets(target, it.args[0], rows, products)
    if _view(it, "items") and parts is not None and len(parts) == 2:
        return item_targets(parts[1], it.func.value, rows, products)
    sources = products.get(it.id) if products and isinstance(it, ast.Name) else None
    if sources is not None:  # a product comprehension: each place holds items of its lists
        if len(sources) == 1:
            return [(target, set(sources[0]))]
        if parts is not None and len(parts) == len(sources):
            return [(part, set(source)) for part, source in zip(parts, sources, strict=True)]
        return [(target, set().union(*sources))]
    elements = rows.get(it.id) if rows and isinstance(it, ast.Name) and parts is not None else None
    if elements and all(isinstance(e, (ast.Tuple, ast.List)) and len(e.elts) == len(parts) for e in elements):
        kept = [i for i in range(len(parts)) if not all(_plain(e.elts[i]) for e in elements)]
        return [(parts[i], {it.id}) for i in kept]
    roots = iterated_roots(it)
    return [(target, roots)] if roots else []


def iterated_roots(node: ast.expr) -> set[str]:
    """The names whose containers `node` iterates over (none: it is no iteration followed)."""
    if isinstance(node, ast.Call):
        if iterates_only(node):
            return set().union(*(iterated_roots(a) for a in node.args))
        return iterated_roots(node.func.value) if _view(node, "items", "values") else set()
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return {node.id} if isinstance(node, ast.Name) else set()


def literal_rows(nodes: list[ast.AST]) -> dict[str, list[ast.expr]]:
    """name -> the elements of the list or tuple literal a function's one binding of it holds,
    for a name read nowhere but as what a `for` loop iterates, directly or through
    `enumerate` and its kin (nothing can add rows to it).
    `nodes`: the function's own nodes."""
    bound: dict[str, list[ast.expr] | None] = {}
    # Read as a loop's iterable, or stored as the one target of an `=` (a loop's or a
    # `with`'s target, an augmented assignment rebind it otherwise).
    allowed = {id(it) for n in nodes if isinstance(n, (ast.For, ast.AsyncFor)) for it in _iterated(n.iter)}
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            allowed.add(id(node.targets[0]))
            value = node.value
            rows = list(value.elts) if isinstance(value, (ast.List, ast.Tuple)) else None
            bound[name] = rows if name not in bound else None
    for node in nodes:
        if isinstance(node, ast.Name) and node.id in bound and id(node) not in allowed:
            bound[node.id] = None
    return {name: rows for name, rows in bound.items() if rows}


def _iterated(node: ast.expr) -> Iterator[ast.expr]:
    """A loop's iterable and, through `enumerate(...)`, `zip(...)` and their kin, what they iterate."""
    yield node
    if isinstance(node, ast.Call) and iterates_only(node):
        for arg in node.args:
            yield from _iterated(arg)


def _plain(node: ast.expr) -> bool:
    """A constant, an f-string, or a tuple of those: never a model."""
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_plain(e) for e in node.elts)
    return isinstance(node, (ast.Constant, ast.JoinedStr))


def _view(node: ast.expr, *names: str) -> bool:
    """`node` is `<container>.<one of names>()`."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in names
        and not node.args
        and not node.keywords
    )


def _last_row(loop: ast.For | ast.AsyncFor, points: frozenset[int]) -> int:
    """The end of the first statement of the loop's body (through `with` blocks) holding a
    capture point; the loop's end when none does. When that statement is a loop over
    something else whose body rebinds every target of this one to what the capture returns
    (`for module in comb[MODULE]: for x in comb[INPUTS]: module = quantize(module, x)`,
    ExecuTorch's Qualcomm tests), the end of that rebinding: the inner loop's later
    statements and iterations see the result, never the item again."""
    if points:
        for part, row in _in_order(loop.body):
            if contains_any_id(part, points):
                rebound = _rebound_in(part, points, _names(loop.target)) if isinstance(part, _LOOPS) else None
                return rebound if rebound is not None else row
    return loop.end_lineno or loop.lineno


_LOOPS = (ast.For, ast.AsyncFor)


def _rebound_in(inner: ast.For | ast.AsyncFor, points: frozenset[int], names: set[str]) -> int | None:
    """The end row of the statement of `inner`'s body (through `with` blocks) holding the
    capture point, when it is `name = <the capture's call>` for every one of `names` and
    `inner` binds none of them itself."""
    if not names or names & _names(inner.target):
        return None
    for part, row in _in_order(inner.body):
        if not contains_any_id(part, points):
            continue
        if not isinstance(part, ast.Assign) or not (isinstance(part.value, ast.Call) and id(part.value) in points):
            return None
        targets = {t.id for t in part.targets if isinstance(t, ast.Name)}
        return row if names <= targets else None
    return None


def _names(target: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _in_order(body: list[ast.stmt]) -> Iterator[tuple[ast.AST, int]]:
    """(what runs, the line it ends on) in the order of the statements: a `with` block's
    items (the whole block, when they hold the point), then its statements one by one (`with
    self.subTest(i=i):` around the capture)."""
    for stmt in body:
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            end = stmt.end_lineno or stmt.lineno
            for item in stmt.items:
                yield item, end
            yield from _in_order(stmt.body)
        else:
            yield stmt, stmt.end_lineno or stmt.lineno


__all__ = ["ITERATES", "item_targets", "iterated_roots", "iterates_only", "literal_rows", "loop_aliases"]
