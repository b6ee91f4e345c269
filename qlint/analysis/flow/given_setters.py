"""A part given to a model through a setter call, read as the assignment it stands for.

`model.add_module("head", m)`, `model.register_module("head", m)`, `model.__setattr__("head",
m)`, `setattr(model, "head", m)` and `model.set_submodule("head", m)` each register `m` in
`model` as `model.head = m` does (torch 2.13: the module lands in `_modules`, in the mode it
was built in, whatever mode `model` is in). A part built right there in train mode then holds
the model's capture in train mode (`model_builds.Builds.given_part`), whatever later switches
another part of it: `model.body.eval()` leaves a dropout given as `head` in train mode. A name
not known here (`add_module(name, m)`) still gives the part, under some name; a dotted
`set_submodule` path stores in a part of a part, as `model.body.head = m` does, which the walk
does not follow either.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.mode_keeping import argument
from qlint.analysis.flow.model_apis import key
from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.model_values import Obj
from qlint.analysis.flow.part_modes import switched

# The methods of `nn.Module` that register a module under a name, and where the module is passed.
_METHODS = {
    "add_module": (1, "module"),
    "register_module": (1, "module"),
    "set_submodule": (1, "module"),
    "__setattr__": (1, "value"),
}


def given_by_setter(calls, node: ast.Call, args: list[Obj | None], kwargs: dict, env: Env) -> None:
    """Give the model a setter call at `node` registers a part in (`args`, `kwargs`: the walk's
    values of its arguments) the part it passes, as `model_builds.Builds.given_part` gives one
    an assignment stores."""
    found = _setter(node)
    if found is None:
        return
    holder_expr, (position, keyword) = found
    holder = env.vars.get(key(holder_expr) or "")  # as `model.head = m` finds its holder
    if holder is None:
        return
    name = _name_of(node)
    steps = (name,) if name is not None else None
    calls.builds.given_part(holder, _passed(node, args, kwargs, position, keyword), env, node, steps)


def given_in(holder_facts: frozenset, given: frozenset, steps: tuple[str, ...], at: ast.Call, dependent) -> frozenset:
    """The facts of a model a setter at `at` gave, under the name `steps`, a part in train mode
    holding `dependent`: on an evaled whole, a part in train mode (`part_modes`), so a later
    switch of that part or of the whole undoes it, and a capture of another part of the model
    is not concerned (`switched_parts`); on any other, `given` (the part's own facts, named by
    the setter), as an assignment leaves them."""
    out: set = set()
    for fact in holder_facts:
        if fact.state == "eval":
            out.add(switched(fact, steps, "train", at, dependent))
        else:
            out |= given
    return frozenset(out)


def gives_part(node: ast.AST | None) -> bool:
    """`node` (what a `ModeFact` names) is where a part was given: the assignment storing it, or
    the setter call registering it."""
    return isinstance(node, ast.Assign) or (isinstance(node, ast.Call) and _setter(node) is not None)


def given_target(node: ast.AST, source_of) -> str:
    """The text naming where `gives_part`'s `node` put the part: `model.head`, or the setter's
    call when its name is not a constant (`source_of`: the file's text of a node)."""
    if isinstance(node, ast.Assign):
        return source_of(node.targets[0])
    holder, _ = _setter(node)
    name = _name_of(node)
    return f"{source_of(holder)}.{name}" if name is not None else source_of(node)


def _setter(node: ast.Call) -> tuple[ast.expr, tuple[int, str]] | None:
    """The model a setter call registers a part in, and where it passes the part."""
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in _METHODS:
        if func.attr == "set_submodule" and "." in (_name_of(node) or "."):
            return None  # a part of a part, as `model.body.drop = m` is (or where, not known)
        return func.value, _METHODS[func.attr]
    plain = len(node.args) == 3 and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args)
    if isinstance(func, ast.Name) and func.id == "setattr" and plain:
        return node.args[0], (2, "")
    return None


def _name_of(node: ast.Call) -> str | None:
    """The constant name the setter registers the part under."""
    first = node.args[1] if isinstance(node.func, ast.Name) else (node.args[0] if node.args else None)
    if first is None and isinstance(node.func, ast.Attribute):
        first = next((kw.value for kw in node.keywords if kw.arg in ("name", "target")), None)
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def _passed(node: ast.Call, args: list, kwargs: dict, position: int, keyword: str) -> Obj | None:
    """The walk's value of the argument at `position` or named `keyword` (`mode_keeping.argument`)."""
    expr = argument(node, position, keyword)
    if expr is None:
        return None
    return args[position] if position < len(node.args) and node.args[position] is expr else kwargs.get(keyword)


__all__ = ["given_by_setter", "given_in", "given_target", "gives_part"]
