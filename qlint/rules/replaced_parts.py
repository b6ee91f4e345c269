"""Parts of a model replaced by a converted graph before the whole model is captured.

torchao's `test_reentrant` (and ExecuTorch's copy of it) quantizes the batch-norm part of a
model first (`m.conv_bn_relu = convert_pt2e(m.conv_bn_relu)`, after that part's own QAT
capture) and then captures the whole `m` for PTQ. The converted graph's behaviour was fixed by
the capture that made it (judged there, as a graph handed to a helper is,
`harmless_models.harmless_model`), and a whole-model `.train()`/`.eval()` changes no graph: only the
rest of the class can make the mode matter. `mode_free` then judges the construction with the
replaced parts left out (`content_without`), and the replacing stores are no parts given after
the build (`Replaced.rows`).

Read narrowly. In the capturing function: top-level statements before the capture's own
statement, each `name.attr = <...>` alone on its lines, the last store of the attribute being
`convert_pt2e(...)`, and nothing rebinding `name` from the first such store up to the capture
(the replaced object is the one captured). In the class: one store of the attribute, a
statement of its own `__init__`, and the part read nowhere but called (`self.attr(x)`): an
alias (`self.bn = self.conv_bn_relu.bn`) keeps the part in the model whatever replaces it.
The construction passes constants only (a module passed in may be stored anywhere).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.built_models import Built
from qlint.analysis.flow.class_contents import Content
from qlint.analysis.flow.converted_children import EVERY_CHILD, looped_children
from qlint.analysis.flow.model_apis import api_kind
from qlint.analysis.flow.model_classes import in_check
from qlint.analysis.flow.model_flow import Capture, FunctionFlow, capture_holder
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import function_assigns
from qlint.analysis.tree_walk import binds_name
from qlint.rules.base import FileContext
from qlint.value_classes import value_class

_BODIES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)


@value_class(frozen=True)
class Replaced:
    """`name`'s parts at `attrs` hold converted graphs at the capture; `rows`: the statements
    storing those attributes (their changes of `name` are these replacements)."""

    name: str
    attrs: frozenset[str]
    rows: frozenset[int]


def graph_replaced(ctx: FileContext, cap: Capture, flows: list[FunctionFlow]) -> Replaced | None:
    """The parts of the captured name replaced by `convert_pt2e` results before the capture."""
    holder = capture_holder(flows, cap)
    if holder is None or not isinstance(cap.model, ast.Name) or not isinstance(holder.node, _BODIES):
        return None
    name = cap.model.id
    body = holder.node.body
    at = next((i for i, stmt in enumerate(body) if any(n is cap.call for n in ast.walk(stmt))), None)
    if at is None:
        return None
    qualname = Resolver(ctx.scope, ctx.project, ctx.optable, function_assigns(holder.node)).qualname
    stores: dict[str, list[int]] = {}
    looped: dict[int, tuple[frozenset[str], list[int]]] = {}  # loops replacing children (`converted_children`)
    for i, stmt in enumerate(body[:at]):
        attr = _stored_attr(stmt, name)
        if attr is not None:
            stores.setdefault(attr, []).append(i)
        elif (loop := looped_children(stmt, name, holder.node)) is not None:
            looped[i] = loop
            for attr in loop[0]:
                stores.setdefault(attr, []).append(i)
    replaced = {
        attr: found
        for attr, found in stores.items()
        if found[-1] in looped or api_kind(body[found[-1]].value, qualname) == "convert"
    }
    if EVERY_CHILD in replaced and len(replaced) > 1:
        return None  # a child stored besides a loop over all of them: read simply
    if not replaced:
        return None
    first = min(found[0] for found in replaced.values())
    if any(binds_name(stmt, name) for stmt in body[first:at]):
        return None  # `name` names another object at the capture
    indices = sorted(i for found in replaced.values() for i in found)
    if not all(_alone(body, i) for i in indices):
        return None  # another change of the model on the same line would pass as a replacement
    rows = {row for i in indices for row in (looped[i][1] if i in looped else [body[i].lineno])}
    return Replaced(name, frozenset(replaced), frozenset(rows))


def content_without(built: Built, attrs: frozenset[str]) -> Content | None:
    """What the construction holds with the parts its class stores at `attrs` left out, or None
    when the class is not of the narrow shape the module docstring describes."""
    call = built.call
    if built.parts is None or built.parts or built.given or not isinstance(call, ast.Call):
        return None
    if not all(isinstance(v, ast.Constant) for v in [*call.args, *(kw.value for kw in call.keywords)]):
        return None
    index = in_check(built.index)
    cls = built.cls if built.cls is not None else index.installed(built.resolver.qualname(call.func))
    if cls is None:
        return None
    skipped = _part_calls(cls.node, attrs)
    if skipped is None:
        return None
    dependent, complete = index.contents.content_without(cls, skipped)
    return Content(built.name, dependent, complete)


def _stored_attr(stmt: ast.stmt, name: str) -> str | None:
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return None
    target = stmt.targets[0]
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == name:
        return target.attr
    return None


def _alone(body: list[ast.stmt], i: int) -> bool:
    before = body[i - 1].end_lineno if i > 0 else 0
    after = body[i + 1].lineno if i + 1 < len(body) else None
    return before < body[i].lineno and (after is None or body[i].end_lineno < after)


def _part_calls(cls: ast.ClassDef, attrs: frozenset[str]) -> frozenset[int] | None:
    """The ids of the calls building the parts at `attrs` in the class's own `__init__`."""
    init = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    if init is None:
        return None
    if EVERY_CHILD in attrs:
        # Every child: each part `__init__` builds and stores on `self` (held some other way,
        # a part stays in the content).
        attrs = frozenset(
            target.attr
            for s in init.body
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.value, ast.Call)
            for target in s.targets
            if isinstance(target, ast.Attribute) and _self_attr(target, target.attr)
        )
    skipped: set[int] = set()
    for attr in attrs:
        stores = []
        for node in ast.walk(cls):
            if not _self_attr(node, attr):
                continue
            if isinstance(node.ctx, ast.Store):
                stores.append(node)
            elif not isinstance(node.ctx, ast.Load):
                return None  # `del self.attr`
        if len(stores) != 1:
            return None
        stmt = next((s for s in init.body if isinstance(s, ast.Assign) and s.targets == [stores[0]]), None)
        if stmt is None:
            return None  # stored in a branch, a loop, another method, or with other targets
        if not _only_called(cls, attr):
            return None
        skipped.update(id(n) for n in ast.walk(stmt.value) if isinstance(n, ast.Call))
    return frozenset(skipped)


def _self_attr(node: ast.AST, attr: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == attr
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def _only_called(cls: ast.ClassDef, attr: str) -> bool:
    """Every read of `self.<attr>` calls it: the part is never aliased, handed on or reached into."""
    called = {id(n.func) for n in ast.walk(cls) if isinstance(n, ast.Call)}
    return all(id(n) in called for n in ast.walk(cls) if _self_attr(n, attr) and isinstance(n.ctx, ast.Load))


__all__ = ["Replaced", "content_without", "graph_replaced"]
