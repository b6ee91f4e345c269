"""What a method `__init__` calls finds in an attribute `__init__` set before the call.

`__init__` runs its own statements in order. A private method it calls from one of them
(`self._optimize_model()` as its last line), and that nothing else in the module names, runs
once, there: it finds `self.<attr>` as the statements before the call left it. When the last
of them to store the attribute stores a model in eval mode (`Net().eval()`,
`AutoModel.from_pretrained(...)`, which transformers returns in eval mode, or a model and then
`self.model.eval()` on a line of its own), and nothing between that store and the call can
touch it (only plain stores of other attributes, device moves and `.eval()` of it), the
method reads it in eval mode, however the class stores it elsewhere: KAZU's NER step hands
`self.model` to its quantizer there and stores the quantized result back over it after the
capture (issue 14), a second store `model_attrs.attribute_sources` cannot read.

The method itself must not reach the attribute another way before reading it: it calls no
other method of `self` (nor `super()`), hands `self` to nothing and defines no function.
What it does to the attribute in its own statements the walk of its body reads in order.
A subclass (which may call the method again, or build the attribute otherwise) is ruled out
by the caller verdict's search (`switched_subclasses.subclassed`, for `IN_MODE` facts).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_apis import key, mode_call
from qlint.analysis.names.scope import own_init

# Calls on the attribute that leave its mode as it is (they return the module itself).
_MOVES = frozenset({"to", "cuda", "cpu"})
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def evaled_before_call(scope, cls: ast.ClassDef, method: ast.AST, attr: str) -> ast.AST | None:
    """The node that put `attr` (`self.model`) in eval mode before `__init__`'s one call of `method`
    (the `.eval()` call, or the `from_pretrained` call), when the reading above holds; else None."""
    name = getattr(method, "name", "")
    if not name.startswith("_") or name.endswith("__") or getattr(method, "decorator_list", True):
        return None
    if not any(s is method for s in cls.body):
        return None
    init = own_init(cls)
    if init is None or init is method:
        return None
    at = _called_at(init, name)
    if at is None or not _touches_no_self(method.body):
        return None
    switch = _evaled_before(init.body[:at], attr)
    if switch is None or not _named_once(scope, cls, name):
        return None
    return switch


def _called_at(init: ast.FunctionDef, name: str) -> int | None:
    """The position in `__init__`'s body of its statement `self.<name>(...)`, when there is one."""
    for i, stmt in enumerate(init.body):
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if (
            isinstance(call, ast.Call)
            and key(call.func) == f"self.{name}"
            and _touches_no_self([*call.args, *(kw.value for kw in call.keywords)])
        ):
            return i
    return None


def _evaled_before(stmts: list[ast.stmt], attr: str) -> ast.AST | None:
    """The switch that leaves `attr` in eval mode at the end of `stmts` (`__init__`'s statements
    before the call), read from its last store there and the statements after it."""
    last = next((i for i in range(len(stmts) - 1, -1, -1) if _stores(stmts[i], attr)), None)
    if last is None:
        return None
    store = stmts[last]
    if isinstance(store, ast.Assign) and len(store.targets) != 1:
        return None
    switch = _evaled_value(store.value)
    if switch is None and not (isinstance(store.value, ast.Call) and _touches_no_self([store.value])):
        return None  # `self.model = Net()` may still be evaled below; an alias may not
    for stmt in stmts[last + 1 :]:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and key(_receiver(stmt.value)) == attr:
            call = stmt.value
            mode = mode_call(call)
            if mode is not None and mode[1] == "eval":
                switch = call
            elif mode is not None or call.func.attr not in _MOVES:
                return None  # `.train()`, or a method that may switch its parts
            if not _touches_no_self([*call.args, *(kw.value for kw in call.keywords)]):
                return None
        elif not _plain_store(stmt, attr):
            return None
    return switch


def _stores(stmt: ast.stmt, attr: str) -> bool:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
    return any(key(t) == attr for t in targets) and stmt.value is not None


def _evaled_value(value: ast.expr) -> ast.AST | None:
    """`Net().eval()` or `AutoModel.from_pretrained(path)`, moved or not (`.to(device)`): the
    call that makes it an eval-mode model."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _MOVES:
        value = value.func.value
    mode = mode_call(value)
    if mode is not None:
        return value if mode[1] == "eval" and isinstance(mode[0], ast.Call) else None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "from_pretrained":
        return value
    return None


def _receiver(call: ast.Call) -> ast.expr | None:
    return call.func.value if isinstance(call.func, ast.Attribute) else None


def _plain_store(stmt: ast.stmt, attr: str) -> bool:
    """A store of plain values (no call, nothing of `self` but attributes read) in names or
    attributes of `self` other than `attr`: it cannot reach the model."""
    if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
        return False
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    if not all(isinstance(t, ast.Name) or (key(t) is not None and key(t) != attr) for t in targets):
        return False
    if any(key(n) == attr for n in ast.walk(stmt.value)):
        return False
    return _touches_no_self([stmt.value]) and not any(isinstance(n, ast.Call) for n in ast.walk(stmt.value))


def _touches_no_self(nodes: list[ast.AST]) -> bool:
    """No `self` but as the owner of an attribute, no call of a method of `self` (or of
    `super()`), no function defined. (Calls of an attribute's methods, `self.model.to(device)`,
    and of other callables are the caller's to judge.)"""
    bare = owned = 0
    for root in nodes:
        for node in ast.walk(root):
            if isinstance(node, ast.Name):
                if node.id == "self":
                    bare += 1
                elif node.id == "super":
                    return False
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
                owned += 1
            elif isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
                    return False  # a method of `self` (or a callable it holds)
            elif isinstance(node, _DEFS):
                return False
    return bare == owned


def _named_once(scope, cls: ast.ClassDef, name: str) -> bool:
    """`name` is named once in the class (its call in `__init__`; the `def` is no name
    node) and nowhere in the module's other classes and functions."""
    if sum(1 for node in ast.walk(cls) if _names(node, name)) != 1:
        return False
    others = [c.node for c in scope.classes.values() if c.node is not cls]
    for tree in [*others, *scope.functions.values()]:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(_names(b, cls.name) for b in node.bases):
                return False  # a subclass here may call it again
            if _names(node, name):
                return False
    return True


def _names(node: ast.AST, name: str) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == name) or (isinstance(node, ast.Name) and node.id == name)


__all__ = ["evaled_before_call"]
