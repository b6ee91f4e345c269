"""What a function body does to a model it holds after the model's build: parts or hooks given
to it (`model.fc = head`, `model[0] = ...`, `setattr(model, ...)`, `add_module`), or the model
handed to a call that may give it some (`swap_linears(model)`), read for the names the model
is bound to there (`capture_content.changed_after_build` asks it of each body).
"""

from __future__ import annotations

import ast

from qlint.analysis import tree_walk
from qlint.analysis.flow.converted_children import CONVERTED, EVALED, replacement_kind
from qlint.analysis.flow.given_parts import changed_roots, model_root
from qlint.analysis.flow.indexed_items import replaced_item, stored_reads
from qlint.analysis.flow.loop_aliases import iterates_only, literal_rows
from qlint.analysis.flow.model_apis import last_name
from qlint.analysis.flow.product_items import product_sources
from qlint.analysis.node_memo import kept_on_node
from qlint.rules.model_bindings import live


def held_names(names: set[str], ends: dict[str, int], row: int) -> set[str]:
    """The names holding the model at a line (`ends`: where each stops, `model_bindings`)."""
    return live(names, ends, row) if ends else names


# Calls that take a model without giving it parts: capture, quantization, copies, checks.
READS = frozenset(
    {"export", "export_for_training", "draft_export", "capture_pre_autograd_graph", "prepare_pt2e"}
    | {"prepare_qat_pt2e", "convert_pt2e", "to_edge", "to_edge_transform_and_lower", "deepcopy"}
    | {"isinstance", "print", "len", "type", "id", "str", "repr", "getattr", "hasattr"}
    # unittest's `self.subTest(msg, **params)` only labels the sub-test's report with them.
    | {"subTest"}
)


def changed_in(
    body: BodyIndex,
    names: set[str],
    helpers: dict[int, ast.AST],
    depth: int,
    ends: dict[str, int] | None = None,
    points: frozenset[int] = frozenset(),
    ignored: frozenset[tuple[str, int]] = frozenset(),
    unswitched: bool = False,
    aliases: frozenset[tuple[str, int, int]] = frozenset(),
) -> bool:
    """Parts or hooks given here to a model bound to `names`, or the model handed to a call
    that may give it some (`swap_linears(model)`): a helper of the module is read for its
    parameters in turn; anything else may do anything. `ends`: the last line at which a name
    holds the model (`model_bindings`). The calls in `points` hand the model to the capture
    being judged (a helper of another module too): what they do is that capture. `ignored`:
    (name, row) changes of this body that give no part (`replaced_parts`); `unswitched`: so
    are the children it stores evaled (`converted_children`). `aliases`: (name, first line,
    last line) of loop targets that hold an item of a container holding the model."""

    def holding(row: int) -> set[str]:
        held = held_names(names, ends, row)
        if aliases:
            held = held | {name for name, first, last in aliases if first <= row <= last}
        return held

    if unswitched and body.evaled:
        ignored = ignored | body.evaled
    changes = [c for c in body.changes if c not in ignored] if ignored else body.changes
    if ends or aliases:
        if any(root in holding(row) for root, row in changes):
            return True
    elif any(root in names for root, _ in changes):
        return True
    for node, roots in body.handed:
        if id(node) in points:
            continue
        held = holding(node.lineno)
        if roots.isdisjoint(held):
            continue
        callee = helpers.get(id(node))
        if callee is None or depth >= 3 or not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return True
        if changed_in(body_index(callee), _receivers(node, callee, held), helpers, depth + 1, unswitched=unswitched):
            return True
    return False


class BodyIndex:
    """What `capture_content.changed_after_build` asks of one function body, from one walk of it: the
    assignments whose value holds each node (their line and the names they bind), the names
    given parts or hooks (with the line), and the calls (other than `READS`) handed a model,
    with the names they pass.

    A body is asked once per capture a rule weighs, and a long test module has dozens of
    captures and hundreds of bodies: walking each body for each capture made the rules
    quadratic. Kept on the node (a new parse is a new node, so it is never stale)."""

    __slots__ = ("_rows", "bound_by", "changes", "comprehensions", "evaled", "handed", "loops")

    def __init__(self, fn: ast.AST):
        self.bound_by: dict[int, list[tuple[int, list[str]]]] = {}
        self.changes: list[tuple[str, int]] = []
        self.evaled: frozenset[tuple[str, int]] = frozenset()  # children stored evaled
        self.handed: list[tuple[ast.Call, frozenset[str]]] = []
        self.loops: list[ast.For | ast.AsyncFor] = []  # whose targets may hold a model's container's items
        self._rows: dict[str, list[ast.expr]] | None = None
        self.comprehensions = False  # a list comprehension among them (`product_items`)
        for node in _own_nodes(fn):
            if isinstance(node, (ast.For, ast.AsyncFor)):
                self.loops.append(node)
            elif type(node) is ast.ListComp:
                self.comprehensions = True
            if isinstance(node, ast.Assign) or (isinstance(node, ast.AnnAssign) and node.value is not None):
                # `model: VisionTransformer = timm.create_model(...)` binds it as `=` does.
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                bound = (node.lineno, [t.id for t in targets if isinstance(t, ast.Name)])
                # Any node of the value: a construction may be a factory table's `Net` too
                # (every node but the `Load`/`Store` and operator tokens, never a construction).
                for inner in tree_walk.walk(node.value):
                    self.bound_by.setdefault(id(inner), []).append(bound)
            changed = changed_roots(node)
            if changed and isinstance(node, ast.Assign) and replaced_item(fn, node):
                changed = []  # `modules[i] = m` of a list written here: an item replaced, no part given
            kind = replacement_kind(node, fn) if changed else None
            if kind == CONVERTED:
                continue  # a converted graph put in a child's place: neither a part nor a hand-off
            changed = [(root, node.lineno) for root in changed]
            self.changes.extend(changed)
            if kind == EVALED:
                self.evaled = self.evaled.union(changed)
                continue  # `setattr` is no helper: its one change is the store
            if isinstance(node, ast.Call):
                # `lower(modules[i])` right after `modules[i] = ...`: the value stored (`indexed_items`).
                fresh = stored_reads(fn) if any(type(a) is ast.Subscript for a in _arguments(node)) else ()
                roots = frozenset(
                    r for a in _arguments(node) if id(a) not in fresh and (r := model_root(a)) is not None
                )
                # `enumerate(models)`, `zip(models, inputs)`: the items handed on as they are.
                # `[(m, d) for m, d in itertools.product(ms, ds)]` (`product_items`): the
                # comprehension is walked before the calls it holds.
                walked = roots and self.comprehensions and id(node) in product_sources(fn)[1]
                if roots and last_name(node.func) not in READS and not iterates_only(node) and not walked:
                    self.handed.append((node, roots))

    def rows(self, fn: ast.AST) -> dict[str, list[ast.expr]]:
        """The rows of the literals the names of `fn` (this index's body) hold
        (`loop_aliases.literal_rows`), read once, when a loop over a container holding a model
        is asked about. (The body is not kept here: the index is kept on its node.)"""
        if self._rows is None:
            self._rows = literal_rows(_own_nodes(fn))
        return self._rows


_INDEX = "_qlint_capture_content_index"


def body_index(fn: ast.AST) -> BodyIndex:
    return kept_on_node(fn, _INDEX, BodyIndex)


def _receivers(call: ast.Call, callee: ast.FunctionDef | ast.AsyncFunctionDef, names: set[str]) -> set[str]:
    """The parameters of `callee` that `call` hands a model bound to `names` (all of them
    after a `*args`)."""
    positional = [a.arg for a in [*callee.args.posonlyargs, *callee.args.args]]
    if positional[:1] in (["self"], ["cls"]) and isinstance(call.func, ast.Attribute):
        positional = positional[1:]  # a method called on its object or class
    everything = {*positional, *(a.arg for a in callee.args.kwonlyargs)}
    if callee.args.vararg:
        everything.add(callee.args.vararg.arg)
    if callee.args.kwarg:
        everything.add(callee.args.kwarg.arg)
    out: set[str] = set()
    for i, arg in enumerate(call.args):
        if model_root(arg.value if isinstance(arg, ast.Starred) else arg) not in names:
            continue
        if isinstance(arg, ast.Starred) or i >= len(positional):
            return everything
        out.add(positional[i])
    for kw in call.keywords:
        if model_root(kw.value) in names:
            if kw.arg is None or kw.arg not in everything:
                return everything
            out.add(kw.arg)
    return out


def _arguments(call: ast.Call) -> list[ast.expr]:
    args = [a.value if isinstance(a, ast.Starred) else a for a in call.args]
    return [*args, *(kw.value for kw in call.keywords)]


def _own_nodes(fn: ast.AST) -> list[ast.AST]:
    """The nodes of this function's body, not those of functions or classes written in it
    (each is a flow of its own, with names of its own): the walk every rule shares."""
    return tree_walk.own_nodes(fn)
