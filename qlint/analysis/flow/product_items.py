"""A list comprehension over `itertools.product` of lists written in the function, bound to
a name: the combinations it holds (issue 14, item 7).

ExecuTorch's Qualcomm max-pool test writes

    modules = [MaxPool2d(3, 1, 0, True), MaxPool2d(3, 1, 0, False)]
    test_quants = [QuantDtype.use_8a8w, QuantDtype.use_16a4w]
    test_pairs = [(module, quant_type) for module, quant_type in itertools.product(modules, test_quants)]
    for i, (test_module, qtype) in enumerate(test_pairs):
        qdq_module = self.get_qdq_module(test_module, sample_input, quant_dtype=qtype)

The comprehension runs once, where the name is bound: it holds, for each combination of the
lists' elements, the element it writes (a target's value, or a tuple of them). A loop over
the name then binds its target to those (`loop_items`), instead of to models of unknown mode.

What is followed is strict: one generator without conditions, over `itertools.product` of
names bound once to list or tuple literals and read nowhere else (nothing fills them, and no
switch through another read changes the models the combinations hold out of their sight),
with names for targets and names of those targets, or tuples of them, for the element, bound
to a name. `capture_content` reads the loops over that name as loops over those lists
(`product_sources`), and the product call as one that only walks them.
"""

from __future__ import annotations

import ast
import itertools

from qlint.analysis.flow.loop_items import Containers
from qlint.analysis.flow.model_env import Env
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import walk

_MAX_COMBINATIONS = 256


def combinations(containers: Containers, comp: ast.ListComp, qualname, env: Env) -> list | None:
    """The elements the comprehension `comp` makes, or None when it is not of that form.
    `qualname` is the walk's name resolution (the product must be `itertools.product`)."""
    shape = _shape(comp)
    if shape is None or qualname(comp.generators[0].iter.func) != "itertools.product":
        return None
    call, names, written = shape
    # Each list is bound once, to a literal, and read nowhere else: nothing fills it, and no
    # switch through another read of it (`for m in modules: m.train()`) changes models the
    # combinations hold out of their sight.
    nodes = [n for n in walk(containers.func) if isinstance(n, ast.Name)]
    columns = []
    for arg in call.args:
        uses = [n for n in nodes if n.id == arg.id]
        if len(uses) != 2 or sum(isinstance(n.ctx, ast.Load) for n in uses) != 1:
            return None
        obj = env.vars.get(arg.id)
        held = containers.held.get(obj) if obj is not None else None
        if held is None or held[0]:
            return None  # not bound to a literal, or a dict (product walks its keys)
        columns.append(held[1])
    size = 1
    for column in columns:
        size *= len(column)
    if size > _MAX_COMBINATIONS:
        return None
    # An element the walk cannot read (`loop_items.UNREAD`: a spread, `torch.float`) stays so
    # in each combination: the loop's target it unpacks to is unknown, the others are read.
    out = []
    for combination in itertools.product(*columns):
        value = dict(zip(names, combination, strict=True))
        made = tuple(value[w.id] for w in written)
        out.append(made if isinstance(comp.elt, ast.Tuple) else made[0])
    return out


def _shape(comp: ast.ListComp) -> tuple[ast.Call, list[str], list[ast.Name]] | None:
    """(the product call, the targets' names, the names the element writes) of
    `[(a, b) for a, b in itertools.product(x, y)]` (or `[a for a, b in ...]`); None otherwise."""
    if len(comp.generators) != 1:
        return None
    gen = comp.generators[0]
    call = gen.iter
    if gen.ifs or gen.is_async or not _product_call(call):
        return None
    targets = gen.target.elts if isinstance(gen.target, ast.Tuple) else [gen.target]
    if len(targets) != len(call.args) or not all(isinstance(t, ast.Name) for t in targets):
        return None
    names = [t.id for t in targets]
    if len(set(names)) != len(names):
        return None
    written = comp.elt.elts if isinstance(comp.elt, ast.Tuple) else [comp.elt]
    if not all(isinstance(w, ast.Name) and w.id in names for w in written):
        return None
    return call, names, written


def _product_call(call: ast.expr) -> bool:
    func = call.func if isinstance(call, ast.Call) else None
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "product"
        and isinstance(func.value, ast.Name)
        and func.value.id == "itertools"
        and not call.keywords
        and bool(call.args)
        and all(isinstance(a, ast.Name) for a in call.args)
    )


def product_sources(fn: ast.AST) -> tuple[dict[str, tuple[frozenset[str], ...]], frozenset[int]]:
    """For `capture_content`, from syntax alone: ({name: the lists each place of its elements
    comes from}, the ids of those comprehensions' product calls) for the names `fn` binds once
    to such a comprehension and reads only as what a `for` loop iterates (directly or through
    `enumerate`): a loop target there holds an item of those lists (`loop_aliases`), and the
    product call only walks them. The element's places are one (a name) or a tuple's."""
    return kept_on_node(fn, _SOURCES, _product_sources)


_SOURCES = "_qlint_product_items_sources"


def _product_sources(fn: ast.AST) -> tuple[dict[str, tuple[frozenset[str], ...]], frozenset[int]]:
    nodes = walk(fn)
    stores: dict[str, int] = {}
    found: dict[str, tuple[ast.Call, tuple[frozenset[str], ...]]] = {}
    looped: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            stores.update((name, 2) for name in node.names)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            it = node.iter
            if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate":
                it = it.args[0] if len(it.args) == 1 and not it.keywords else it
            looped.add(id(it))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            shape = _shape(node.value) if isinstance(node.value, ast.ListComp) else None
            if shape is not None:
                call, names, written = shape
                source = {name: frozenset({arg.id}) for name, arg in zip(names, call.args, strict=True)}
                found[node.targets[0].id] = (call, tuple(source[w.id] for w in written))
    loads = [n for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in found]
    kept = {
        name: held
        for name, held in found.items()
        if stores.get(name) == 1 and all(id(n) in looped for n in loads if n.id == name)
    }
    return {name: held[1] for name, held in kept.items()}, frozenset(id(held[0]) for held in kept.values())


__all__ = ["combinations", "product_sources"]
