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

Any other method of the class that stores the attribute and then calls the private method
from one of its own statements is read the same way (issue 14, stop 54 note item 6: an
ordinary `load` storing `AutoModel.from_pretrained(...)` in `self.model` and then calling
`self._quantize()`), and so is a store whose model the method switched right before
(`model.eval()` then `self.model = model`, read as `switched_stores` reads it, though here the
model may be named again after the call: no code runs between the store and the call, and
only plain stores of names and of other attributes of `self`). The call may be a statement of
its own, the value of a `return` or of an assignment to names. Whoever runs that method, the
private one runs there only, after the store. Its facts are `CALLED_AFTER_STORE`: the caller
verdict also requires that no other module of the project, no statement at the module's top
level and no string that could form the name (`getattr(self, f"_{step}")`) reaches the
method (`store_then_call.reached_elsewhere`).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_apis import key, mode_call
from qlint.analysis.flow.model_torch_nn import MODE_KEEPING_METHODS
from qlint.analysis.flow.switched_stores import mode_before_store
from qlint.analysis.node_memo import kept_on_node

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
# Where other code may run before the statement after it (or the method's body at all).
_SUSPENDS = (ast.Yield, ast.YieldFrom, ast.Await)
# Methods through which a class runs its own code when any attribute is set or read.
_HOOKS = frozenset({"__setattr__", "__getattr__", "__getattribute__"})


def evaled_before_call(scope, cls: ast.ClassDef, method: ast.AST, attr: str) -> ast.AST | None:
    """The node that put `attr` (`self.model`) in eval mode before the one call of `method`,
    made by another method of the class (`__init__` or not) from its own statements (the
    `.eval()` call, the `from_pretrained` call, or the switch `mode_before_store` found), when
    the reading above holds; else None."""
    name = getattr(method, "name", "")
    if not name.startswith("_") or name.endswith("__") or getattr(method, "decorator_list", True):
        return None
    if not any(s is method for s in cls.body):
        return None
    found = kept_on_node(method, "_qlint_store_caller", lambda m: _caller(cls, m, name))
    if not found or _hooks(cls, attr):
        return None
    caller, at = cls.body[found[0]], found[1]
    switch = _evaled_before(caller.body[:at], attr)
    if switch is None or not _named_once(scope, cls, name):
        return None
    return switch


def _caller(cls: ast.ClassDef, method: ast.AST, name: str) -> tuple[int, int] | tuple[()]:
    """(the position in `cls`'s body of its method, undecorated, `self` its first parameter,
    that calls `self.<name>(...)` from a statement of its own body; that statement's position
    there), when one does and `method` itself touches `self` only through attributes and
    cannot suspend; else `()`. Positions, not nodes: kept on `method`'s node, a reference back
    to another method could close a cycle of nodes."""
    found = kept_on_node(cls, "_qlint_top_self_calls", _top_self_calls).get(name, ())
    if len(found) != 1 or cls.body[found[0][0]] is method:
        return ()
    if not _touches_no_self(method.body) or _suspends(method.body):
        return ()
    return found[0]


def _top_self_calls(cls: ast.ClassDef) -> dict[str, tuple[tuple[int, int], ...]]:
    """name -> (position of the method in `cls`'s body, of the statement in the method's) of
    each `self.<name>(...)` call (`_self_call`) of a statement of an undecorated method's own
    body: one walk of the class's top-level statements, however many of its methods ask."""
    found: dict[str, list[tuple[int, int]]] = {}
    for i, caller in enumerate(cls.body):
        if not isinstance(caller, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if caller.decorator_list or not caller.args.args or caller.args.args[0].arg != "self":
            continue
        for at, stmt in enumerate(caller.body):
            call = _self_call(stmt)
            if call is not None:
                found.setdefault(call.func.attr, []).append((i, at))
    return {name: tuple(places) for name, places in found.items()}


def _hooks(cls: ast.ClassDef, attr: str) -> bool:
    """The class runs code of its own when `attr` (`self.model`) or another attribute is set or
    read: it defines `__setattr__`/`__getattr__`/`__getattribute__`, a property setter, or
    binds the attribute's name itself (a property, a descriptor)."""
    field = attr.partition(".")[2]
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if stmt.name in _HOOKS or stmt.name == field:
                return True
            if any(isinstance(d, ast.Attribute) and d.attr == "setter" for d in stmt.decorator_list):
                return True
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if any(isinstance(t, ast.Name) and t.id == field for t in targets):
                return True
    return False


def _self_call(stmt: ast.stmt) -> ast.Call | None:
    """The call of `stmt`, when it is `self.<name>(...)` (also `return self.<name>(...)`,
    `out = self.<name>(...)`) and its arguments touch `self` only through attributes and
    cannot suspend."""
    call = stmt.value if isinstance(stmt, (ast.Expr, ast.Return)) else None
    if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
        call = stmt.value
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return None
    receiver = call.func.value
    if not isinstance(receiver, ast.Name) or receiver.id != "self":
        return None
    arguments = [*call.args, *(kw.value for kw in call.keywords)]
    return call if _touches_no_self(arguments) and not _suspends(arguments) else None


def _suspends(nodes: list[ast.AST]) -> bool:
    """A `yield` or an `await` outside nested functions: other code may run there."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, _SUSPENDS):
            return True
        if not isinstance(node, _DEFS):
            stack.extend(ast.iter_child_nodes(node))
    return False


def _evaled_before(stmts: list[ast.stmt], attr: str) -> ast.AST | None:
    """The switch that leaves `attr` in eval mode at the end of `stmts` (the calling method's
    statements before the call), read from its last store there and the statements after it."""
    last = next((i for i in range(len(stmts) - 1, -1, -1) if _stores(stmts[i], attr)), None)
    if last is None:
        return None
    store = stmts[last]
    if isinstance(store, ast.Assign) and len(store.targets) != 1:
        return None
    switch = _evaled_value(store.value)
    known = mode_before_store(stmts, last) if switch is None else None
    if known is not None:
        if known[0] != "eval":
            return None
        switch = known[1]  # `model.eval()` then `self.model = model`
    elif switch is None and not isinstance(store.value, ast.Call):
        return None  # `self.model = Net()` may still be evaled below; an alias may not
    if not _touches_no_self([store.value]) or _suspends([store.value]):
        return None
    for stmt in stmts[last + 1 :]:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and key(_receiver(stmt.value)) == attr:
            call = stmt.value
            mode = mode_call(call)
            if mode is not None and mode[1] == "eval":
                switch = call
            elif mode is not None or call.func.attr not in MODE_KEEPING_METHODS:
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
    while _kept_call(value):
        value = value.func.value
    mode = mode_call(value)
    if mode is not None:
        return value if mode[1] == "eval" and isinstance(mode[0], ast.Call) else None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "from_pretrained":
        return value
    return None


def _kept_call(value: ast.expr) -> bool:
    """`value` is `<module>.to(device)`, `.half()`, ...: the module itself, in its mode. Not
    `switched_stores._kept`, which also wants the arguments to run nothing
    (`arguments_run_nothing`): that one peels a name the caller may hold, which a call there may
    reach; this one a module built in the same expression (`Net().eval().to(pick_device())`), which
    nothing else holds yet."""
    func = value.func if isinstance(value, ast.Call) else None
    return isinstance(func, ast.Attribute) and func.attr in MODE_KEEPING_METHODS


def _receiver(call: ast.Call) -> ast.expr | None:
    return call.func.value if isinstance(call.func, ast.Attribute) else None


def _plain_store(stmt: ast.stmt, attr: str) -> bool:
    """A store of plain values (no call, nothing of `self` but attributes read) in names or
    attributes of `self` other than `attr`: it cannot reach the model."""
    if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
        return False
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    field = attr.partition(".")[2]
    if not all(isinstance(t, ast.Name) or _other_field(t, field) for t in targets):
        return False  # `self.model.training = True`, `model.training = True` set a mode
    if any(isinstance(t, ast.Name) and t.id == "self" for t in targets):
        return False  # the call would run on another object
    if any(key(n) == attr for n in ast.walk(stmt.value)):
        return False
    runs = (ast.Call, *_SUSPENDS)
    return _touches_no_self([stmt.value]) and not any(isinstance(n, runs) for n in ast.walk(stmt.value))


def _other_field(target: ast.expr, field: str) -> bool:
    """`self.<name>` for a name other than `field`."""
    return (
        isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id == "self"
        and target.attr != field
    )


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
