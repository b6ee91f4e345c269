"""Steps between a model's switch and its store in `self.<attr>` that leave its mode as it was
(issue 14, item 2: Ultralytics' exporter evals its copy, marks its heads for export in a loop
over `model.modules()`, runs the copy twice on a dummy input, then stores it).

Two shapes, read by syntax alone, for `switched_stores`:

- **Dry runs**: `model(im)` or `y = model(im)`, the model called on arguments that do not name
  it, the result bound to another name. A forward call reads `training` and sets none: on
  torch 2.13 every module's flag is as before after forward calls in either mode (train mode
  updates batch-norm running statistics, a value and not a mode; after an `eval()` it does not
  even that). The walk that judges a capture in one body reads forward calls the same way. A
  loop or a `with` whose header does not name the model, holding only such steps (`for _ in
  range(2): y = model(im)`, `with torch.no_grad(): ...`), is one too.
- **Flag loops**: `for m in model.modules(): ...` (`named_modules`, `children`,
  `named_children`) whose body only sets attributes of the loop's module other than its mode
  (`m.export = True`, `m.dynamic = flag`, `m.forward = m.forward_split`), binds other local
  names, and tests the module, under `if`s. The module is read only as `isinstance`/`hasattr`'s
  first argument, in a comparison or a test, or, through an attribute, as what an
  attribute of the loop's module is set to; no call runs on it or hands it elsewhere. A loop
  setting `training` (or `train`, `eval`, `__class__`, `__dict__`, or any `setattr`) or calling
  a method of its module (`m.train()`, `m.fuse()`) is none (`looped_switches` reads the
  switching ones).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from qlint.analysis.flow.model_apis import key
from qlint.analysis.flow.model_torch_nn import MODULE_ITERATORS, SWITCHING_METHODS
from qlint.analysis.tree_walk import binds_name, mentions_name, parents

# What a store into a module could change its mode, or the methods that switch it, through.
_MODE_FIELDS = frozenset({"training", "train", "eval", "__class__", "__dict__"})
# Builtins that read an object's class or attributes and answer a bool (`getattr` answers a
# value that may be called: `getattr(m, "train")()`).
_PROBES = frozenset({"isinstance", "hasattr"})
_TESTS = (ast.If, ast.IfExp, ast.While, ast.Assert)


def kept_step(stmt: ast.stmt, name: str, keeps: Callable[[ast.stmt], bool], bound: list[str] | None = None) -> bool:
    """`stmt` is a dry run of `name`, a flag loop over its modules, or a loop or `with` not
    naming it in its header whose statements each `keeps` (the caller's judgement of one
    step) or do not name it. A flag loop counts only in the store's own block (`bound`
    given): its module's name outlives it, bound to the last module, so it joins `bound`, for
    the caller to check that nothing names it after the loop."""
    if _dry_run(stmt, name):
        return True
    if isinstance(stmt, ast.For) and not stmt.orelse and mentions_name(stmt.iter, name):
        item = _flag_loop(stmt, name) if bound is not None else None
        if item is None:
            return False
        bound.append(item)
        return True
    if isinstance(stmt, ast.For) and not stmt.orelse and not binds_name(stmt.target, name):
        head = [stmt.iter]
    elif isinstance(stmt, ast.With):
        head = [item.context_expr for item in stmt.items]
        head += [item.optional_vars for item in stmt.items if item.optional_vars is not None]
    else:
        return False
    if any(mentions_name(part, name) for part in head):
        return False
    return all(keeps(s) or not mentions_name(s, name) for s in stmt.body)


def _dry_run(stmt: ast.stmt, name: str) -> bool:
    """`name(im)` or `y = name(im)`: a forward call on arguments not naming `name`."""
    if isinstance(stmt, ast.Assign):
        if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name) or stmt.targets[0].id == name:
            return False
    elif not isinstance(stmt, ast.Expr):
        return False
    call = stmt.value
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.func.id != name:
        return False
    return not any(mentions_name(a, name) for a in (*call.args, *call.keywords))


def _flag_loop(loop: ast.For, name: str) -> str | None:
    """The name of the loop's module, when the loop is `for m in name.modules(): ...` and its
    body only sets non-mode attributes of `m`."""
    it = loop.iter
    if not (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Attribute)
        and it.func.attr in MODULE_ITERATORS
        and key(it.func.value) == name
        and not it.args
        and not it.keywords
    ):
        return None
    target = loop.target
    if it.func.attr.startswith("named_"):
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
            return None
        label, target = target.elts
        if not isinstance(label, ast.Name) or label.id == name:
            return None
    if not isinstance(target, ast.Name) or target.id == name:
        return None
    item = target.id
    tree = parents(loop)
    return item if all(_sets_flags(s, item, name, tree) for s in loop.body) else None


def _sets_flags(stmt: ast.stmt, item: str, name: str, tree) -> bool:
    """A statement of a flag loop's body: `m.<field> = value`, `local = value`, `pass`,
    `continue`, or an `if` of such statements; every read of `m` or `name` a probe."""
    if isinstance(stmt, (ast.Pass, ast.Continue)):
        return True
    if isinstance(stmt, ast.If):
        return _probes_only(stmt.test, item, name, tree) and all(
            _sets_flags(s, item, name, tree) for s in (*stmt.body, *stmt.orelse)
        )
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return False
    target = stmt.targets[0]
    field = isinstance(target, ast.Attribute)
    if isinstance(target, ast.Name):
        if target.id in (item, name):
            return False  # the loop's module or the model rebound
    elif not (
        isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id == item
        and target.attr not in _MODE_FIELDS
    ):
        return False
    return _probes_only(stmt.value, item, name, tree, stored=field)


def _probes_only(expr: ast.expr, item: str, name: str, tree, stored: bool = False) -> bool:
    """Every occurrence of `item` or `name` in `expr` is read and handed to no call: the first
    argument of `isinstance`/`hasattr`, an operand of a comparison or a test, or an attribute
    of it read for a flag or (`stored`) as the whole value of a `m.<field> = ...` store
    (`m.forward_split`; a local bound to a part could switch it after the loop)."""
    for node in ast.walk(expr):
        if not (isinstance(node, ast.Name) and node.id in (item, name)):
            continue
        top, depth = node, 0
        parent = tree.get(id(top))
        while isinstance(parent, (ast.Attribute, ast.Subscript)) and parent.value is top:
            if isinstance(parent, ast.Attribute) and parent.attr in SWITCHING_METHODS:
                return False  # `m.forward = m.train`: a switch the next forward call runs
            top, depth = parent, depth + 1
            parent = tree.get(id(top))
        if not _probed(top, depth, parent, expr if stored else None):
            return False
    return True


def _probed(top: ast.expr, depth: int, parent, whole: ast.expr | None) -> bool:
    if isinstance(parent, ast.Call):
        func = parent.func
        return bool(parent.args) and parent.args[0] is top and isinstance(func, ast.Name) and func.id in _PROBES
    if isinstance(parent, ast.Compare):
        return True
    if not depth:
        return False  # the module itself, bare: handed on or aliased
    if top is whole:
        return True  # the whole value of a store: an attribute read, no part of it called
    if isinstance(parent, (ast.BoolOp, ast.FormattedValue)) or (
        isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)
    ):
        return True
    return isinstance(parent, _TESTS) and parent.test is top


__all__ = ["kept_step"]
