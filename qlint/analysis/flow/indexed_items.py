"""Items of a list written in the function, read and replaced by an index the walk does not
know (issue 14, item 7).

ExecuTorch's Qualcomm embedding test writes

    modules = [Embedding(), Embedding()]
    for i, qdtype in enumerate(quant_dtype):
        modules[i] = self.get_qdq_module(modules[i], sample_input, quant_dtype=qdtype)

`modules[i]` is one of the list's elements, whichever `i` is: one written into the literal
(or appended, `loop_items`), or one a store `modules[j] = value` put there since. The read is
then a model in the mode its element is in, instead of a value the walk has no object for
(the helper's caller was unclassified).

What is followed is the name `loop_items.followed_names` follows (bound once, to a list or
tuple literal, every other use a read or an in-place fill), which counts a plain
`name[index] = value` store among those uses: the store puts `value` among the elements, and the element it
replaces stays among them too (which index it was is not known). A read by a variable index
(`modules[0]` and `graphs[-1]` read the element the walk knows by its place, `graph_parts`), of a
list whose elements are all read (no spread, no value the walk cannot follow), is a value
of its own holding any of them. A switch through it (`modules[i].train()`) leaves the list
unread from then on, as one through a loop item does (`Containers.switched`).

A store made later in a loop body reaches the reads of the next iteration: the walk's second
pass over the body reads them with it, and the callers of a helper are read from every pass
(`project_callers`).
"""

from __future__ import annotations

import ast
import itertools

from qlint.analysis.flow.loop_items import Containers, element_of, followed_names, models_of
from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.model_values import Obj
from qlint.analysis.names.scope import parameter_args
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.statement_walk import statement_lists
from qlint.analysis.tree_walk import walk, walk_kinds

_ASSIGNS = frozenset({ast.Assign})


def stored(containers: Containers, target: ast.Subscript, value: ast.expr | None, obj: Obj | None, env: Env) -> None:
    """`name[index] = value` on a followed container: `value` is among what it may hold."""
    if value is None or not isinstance(target.value, ast.Name) or isinstance(target.slice, ast.Slice):
        return
    held = containers.held_by(target.value, env)
    if held is not None:
        held[1].append(element_of(value, obj, containers.literals))


def item(containers: Containers, e: ast.Subscript, env: Env) -> Obj | None:
    """`name[index]`, by a variable index, of a followed list or tuple whose elements are all
    models the walk reads: one of them, in the mode it is in now."""
    if not isinstance(e.value, ast.Name) or not isinstance(e.slice, ast.Name):
        return None  # `pair[0]`, `graphs[-1]`: the element the walk knows by its place (`graph_parts`)
    held = containers.held_by(e.value, env)
    if held is None or held[0]:
        return None  # not followed, or a dict (its reads by key are another matter)
    objs = models_of(held[1])
    if objs is None:
        return None
    origins = frozenset().union(*(o.origins for o in objs))
    value = Obj(e, "", origins, frozenset().union(*(o.captures for o in objs)))
    env.modes[value] = frozenset().union(*(env.facts(o) for o in objs))
    containers.items_from[value] = held  # a switch through it: the list is no longer as written
    return value


def replaced_item(fn: ast.AST, node: ast.Assign) -> bool:
    """`name[index] = value` of a list or dict that `fn` binds `name` to (a literal, once, and
    nothing else: `followed_names`): `list.__setitem__` puts another object in the list and
    gives no model a part, as `model[0] = layer` of an `nn.Sequential` would."""
    if len(node.targets) != 1:
        return False
    target = node.targets[0]
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)):
        return False
    name = target.value.id
    if name not in followed_names(fn):
        return False
    return any(
        isinstance(a.value, (ast.List, ast.Dict))
        for a in walk_kinds(fn, _ASSIGNS)
        if any(isinstance(t, ast.Name) and t.id == name for t in a.targets)
    )


def stored_reads(fn: ast.AST) -> frozenset[int]:
    """The ids of the reads `name[index]` that are the value a store puts there in the
    statement right before, in the same block: `modules[i] = quantize(modules[i], x)` then
    `lower(modules[i], x)` hands on the result, not an element written into the list. Of a
    list or dict `fn` binds once (`replaced_item`), by the same index, a name or a constant,
    with no assignment expression in the reading statement (which could rebind the index)."""
    return kept_on_node(fn, _STORED_READS, _stored_reads)


_STORED_READS = "_qlint_indexed_items_stored_reads"


def _stored_reads(fn: ast.AST) -> frozenset[int]:
    out: set[int] = set()
    for node in walk(fn):
        for block in statement_lists(node) if isinstance(node, ast.stmt) else ():
            for before, after in itertools.pairwise(block):
                if isinstance(before, ast.Assign) and replaced_item(fn, before):
                    out.update(_reads_of(fn, before.targets[0], after))
    return frozenset(out)


def _reads_of(fn: ast.AST, target: ast.Subscript, stmt: ast.stmt) -> list[int]:
    index = target.slice
    if isinstance(stmt, _COMPOUND) or not (isinstance(index, ast.Constant) or _local(fn, index)):
        return []
    nodes = walk(stmt)
    if any(isinstance(n, (ast.NamedExpr, ast.Lambda, *_SCOPES)) for n in nodes):
        return []
    wanted = ast.dump(index)
    return [
        id(n)
        for n in nodes
        if isinstance(n, ast.Subscript)
        and isinstance(n.ctx, ast.Load)
        and isinstance(n.value, ast.Name)
        and n.value.id == target.value.id
        and ast.dump(n.slice) == wanted
    ]


def _local(fn: ast.AST, index: ast.expr) -> bool:
    """A name `fn` binds itself (a parameter, a loop target), never declared global or
    nonlocal: nothing another function runs can rebind it between two of its statements."""
    if not isinstance(index, ast.Name) or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    name = index.id
    nodes = walk(fn)
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in nodes):
        return False
    params = {a.arg for a in parameter_args(fn)}
    stored = (n for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return name in params or any(n.id == name for n in stored)


# A statement holding blocks runs them later, or many times: only a simple statement reads right after.
_COMPOUND = (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try, ast.TryStar, ast.Match)
_SCOPES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


__all__ = ["item", "replaced_item", "stored", "stored_reads"]
