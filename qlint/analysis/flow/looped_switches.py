"""Switches of every module of a model, or of those of some classes, made one module at a time:
a loop over `m.modules()` (or `named_modules()`, `children()`, `named_children()`) whose body
calls `.eval()`/`.train()` on the loop's module, and a function `m.apply(fn)` hands every module
(`def freeze_bn(mod): if isinstance(mod, nn.BatchNorm2d): mod.eval()`, the classic QAT
batch-norm freeze).

The summary is syntactic and strict, so that it holds for every module the loop meets: one
switch of the loop's module (itself, not an attribute of it), under `isinstance` tests of it at
most; no `break`, `return` (in a loop) or `raise` that could stop the loop before the last
module, no other mode switch, and no rebinding of the module's name. A test that is not an
`isinstance` of the module (`if "bn" in name:`) selects modules the analysis cannot name: no
summary. What the switch does to the model's facts is `part_modes`' (`kinds_switched`) and the
walk's (`loop_effects`).

A loop over `m.modules()` may set each module's flag instead (`mod.training = False`,
`setattr(mod, "training", False)`): read on torch 2.13 from the exported graph's `batch_norm` and
`dropout`, it is what `m.train(False)` does, without any class's own `train` running. Read as
that switch. Over `children()` it sets the direct children's flags alone (what they hold keeps
its mode, and so does the model's own flag): marked `flag`, for the walk to read only where
every mode-dependent module of the model is such a child (`direct_children`). A flag that is
not a literal is not read.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_apis import switch_mode
from qlint.analysis.flow.model_torch_nn import SWITCHING_METHODS
from qlint.analysis.tree_walk import isinstance_test
from qlint.value_classes import value_class

# What each iteration reaches: every module (the model itself too), or its direct children.
_ITERATIONS = {"modules": "all", "named_modules": "all", "children": "children", "named_children": "children"}
_STOPS = (ast.Break, ast.Return, ast.Raise)


@value_class(frozen=True)
class ClassName:
    """A test of the module's class name: equal to `text` (`whole`), or holding it."""

    text: str
    whole: bool


@value_class(frozen=True)
class LoopSwitch:
    """`switch` sets the loop's module to `mode` (None: `.train(flag)`); `filters`: the classes
    of the `isinstance` test it runs under, or the `ClassName` test (None: every module);
    `flag`: it sets the module's `training` flag alone, not its submodules'."""

    switch: ast.Call
    mode: str | None
    filters: tuple[ast.expr | ClassName, ...] | None
    flag: bool = False


def looped_modules(s: ast.For | ast.AsyncFor) -> tuple[ast.expr, str, LoopSwitch] | None:
    """(the model whose modules the loop walks, "all" or "children", its switch) of a loop
    `for mod in X.modules(): ...` (`for name, mod in X.named_modules():`) that switches them."""
    it = s.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and not it.args and not it.keywords):
        return None
    reach = _ITERATIONS.get(it.func.attr)
    if reach is None:
        return None
    target = s.target
    if it.func.attr.startswith("named_"):
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
            return None
        target = target.elts[1]
    if not isinstance(target, ast.Name) or s.orelse:
        return None
    found = body_switch(s.body, target.id, in_loop=True, flags=True)
    return (it.func.value, reach, found) if found is not None else None


def applied_function(func: ast.AST) -> LoopSwitch | None:
    """The switch of a function `Module.apply` hands each module to (its one parameter)."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or func.decorator_list:
        return None
    args = func.args
    if len(args.args) != 1 or args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg:
        return None
    return body_switch(func.body, args.args[0].arg, in_loop=False)


def module_test(test: ast.expr, name: str) -> tuple[ast.expr | ClassName, ...] | None:
    """The classes an `isinstance(name, ...)` test, or a test of `name`'s class name written on
    it (`"BatchNorm" in type(name).__name__`), selects; None for any other test."""
    return _isinstance_of(test, name) or _name_test(test, name, set())


def body_switch(body: list[ast.stmt], name: str, in_loop: bool, flags: bool = False) -> LoopSwitch | None:
    """The one switch of `name` in `body`, under `isinstance(name, ...)` tests only (`flags`:
    a literal set of its `training` flag counts as one)."""
    found: list[LoopSwitch] = []
    if not _collect(body, name, (), found, in_loop, flags):
        return None
    return found[0] if len(found) == 1 else None


def _collect(body, name: str, filters: tuple, found: list, in_loop: bool, flags: bool) -> bool:
    spelled: set[str] = set()  # names bound to the module's class name (`classname = m.__class__.__name__`)
    for s in body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            if _class_name_of(s.value, name):
                spelled.add(s.targets[0].id)
                continue
            spelled.discard(s.targets[0].id)
        if isinstance(s, ast.If):
            classes = _isinstance_of(s.test, name) or _name_test(s.test, name, spelled)
            if classes is None or filters:
                return False  # a test the analysis cannot read (or a nested one) may select any module
            if not _collect(s.body, name, classes, found, in_loop, flags) or not _plain(s.orelse, name, in_loop):
                return False
            continue
        if isinstance(s, ast.Expr) and _is_switch(s.value, name):
            attr = s.value.func.attr
            if attr == "apply":
                return False
            found.append(LoopSwitch(s.value, switch_mode(s.value, attr), filters or None))
            continue
        if flags and (flag := _flag_set(s, name)) is not None:
            found.append(LoopSwitch(flag, switch_mode(flag, "train"), filters or None, flag=True))
            continue
        if not _plain([s], name, in_loop):
            return False
    return True


def _plain(body, name: str, in_loop: bool) -> bool:
    """No switch, no stop of the loop, no rebinding of the module's name."""
    for s in body:
        for node in ast.walk(s):
            if isinstance(node, _STOPS) and (in_loop or not isinstance(node, ast.Return)):
                return False
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                return False
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Store, ast.Del)):
                return False
            if isinstance(node, ast.Attribute) and node.attr in SWITCHING_METHODS | {"training"}:
                return False
    return True


def _is_switch(call: ast.expr, name: str) -> bool:
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in SWITCHING_METHODS
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == name
    )


def _flag_set(s: ast.stmt, name: str) -> ast.Call | None:
    """`name.training = <bool>` or `setattr(name, "training", <bool>)`: as the call
    `name.train(<bool>)` written there, which the messages quote as the statement is written."""
    if isinstance(s, ast.Assign) and len(s.targets) == 1:
        target, value, at = s.targets[0], s.value, s
        if not (isinstance(target, ast.Attribute) and target.attr == "training"):
            return None
        receiver = target.value
    elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
        call, at = s.value, s.value
        if not (isinstance(call.func, ast.Name) and call.func.id == "setattr" and len(call.args) == 3):
            return None
        receiver, attr, value = call.args
        if call.keywords or not (isinstance(attr, ast.Constant) and attr.value == "training"):
            return None
    else:
        return None
    if not (isinstance(receiver, ast.Name) and receiver.id == name):
        return None
    if not (isinstance(value, ast.Constant) and isinstance(value.value, bool)):
        return None
    func = ast.copy_location(ast.Attribute(receiver, "train", ast.Load()), at)
    return ast.copy_location(ast.Call(func, [value], []), at)


def _class_name_of(expr: ast.expr, name: str) -> bool:
    """`name.__class__.__name__` or `type(name).__name__`."""
    if not (isinstance(expr, ast.Attribute) and expr.attr == "__name__"):
        return False
    inner = expr.value
    if isinstance(inner, ast.Attribute) and inner.attr == "__class__":
        return isinstance(inner.value, ast.Name) and inner.value.id == name
    return (
        isinstance(inner, ast.Call)
        and isinstance(inner.func, ast.Name)
        and inner.func.id == "type"
        and len(inner.args) == 1
        and isinstance(inner.args[0], ast.Name)
        and inner.args[0].id == name
    )


def _name_test(test: ast.expr, name: str, spelled: set[str]) -> tuple[ClassName, ...] | None:
    """A test of the module's class name: `"BatchNorm" in classname`, `classname.find("BatchNorm")
    != -1` (the `set_bn_eval` idiom), `classname == "BatchNorm2d"`."""

    def spells(expr):
        return (isinstance(expr, ast.Name) and expr.id in spelled) or _class_name_of(expr, name)

    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    text = left.value if isinstance(left, ast.Constant) and isinstance(left.value, str) else None
    if isinstance(op, ast.In) and text and spells(right):
        return (ClassName(text, whole=False),)
    if isinstance(op, ast.Eq) and isinstance(right, ast.Constant) and isinstance(right.value, str) and spells(left):
        return (ClassName(right.value, whole=True),)
    found = (
        isinstance(left, ast.Call)
        and isinstance(left.func, ast.Attribute)
        and left.func.attr == "find"
        and spells(left.func.value)
        and len(left.args) == 1
        and isinstance(left.args[0], ast.Constant)
        and isinstance(left.args[0].value, str)
    )
    minus_one = (
        isinstance(right, ast.UnaryOp) and isinstance(right.op, ast.USub) and getattr(right.operand, "value", None) == 1
    )
    if found and left.args[0].value and isinstance(op, ast.NotEq) and minus_one:
        return (ClassName(left.args[0].value, whole=False),)
    return None


def _isinstance_of(test: ast.expr, name: str) -> tuple[ast.expr, ...] | None:
    """The classes of `isinstance(name, C)` / `isinstance(name, (C, D))`."""
    tested = isinstance_test(test)
    if tested is None:
        return None
    subject, classes = tested
    if not (isinstance(subject, ast.Name) and subject.id == name):
        return None
    elts = classes.elts if isinstance(classes, ast.Tuple) else [classes]
    if not elts or not all(isinstance(e, (ast.Name, ast.Attribute)) for e in elts):
        return None
    return tuple(elts)


__all__ = ["ClassName", "LoopSwitch", "applied_function", "body_switch", "looped_modules", "module_test"]
