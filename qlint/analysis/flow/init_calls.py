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

Several methods may call it so (issue 14, item 2: a `load` and a `reload` that each store the
model, then quantize it): each call is read the same way, and the module may name the method
in those calls only. A call may also sit in an `if` branch, or its `else`, of the calling
method (through `if` statements only: a loop may run it again after it ran, a `try` handler
after part of the block): what runs before it there is the statements before it in each block
on the way and the tests passed, and a test must run nothing (no call) and name neither the
attribute nor `self` but through other attributes. A store in a branch the call's path does
not enter is a statement that is no plain store: the attribute is then not known. Between the
store and the call, a loop that only freezes the model's parameters (`for p in
self.model.parameters(): p.requires_grad = False`, `grad_loops`) keeps it as it was.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.grad_loops import freezes_only
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
    """The node that put `attr` (`self.model`) in eval mode before each call of `method`,
    made by other methods of the class (`__init__` or not) from their own statements or their
    `if` branches (the `.eval()` call, the `from_pretrained` call, or the switch
    `mode_before_store` found; the first caller's), when the reading above holds; else None."""
    name = getattr(method, "name", "")
    if not name.startswith("_") or name.endswith("__") or getattr(method, "decorator_list", True):
        return None
    if not any(s is method for s in cls.body):
        return None
    found = kept_on_node(method, "_qlint_store_callers", lambda m: _callers(cls, m, name))
    if not found or _hooks(cls, attr):
        return None
    first = None
    for at, path in found:
        switch = _evaled_before(_before(cls.body[at], path), attr)
        if switch is None:
            return None
        first = first or switch
    if not _named_only_there(scope, cls, name, len(found)):
        return None
    return first


def called_times(cls: ast.ClassDef, name: str) -> int:
    """How many calls of `self.<name>(...)` the class's methods make from their own statements
    or their `if` branches (`_self_calls`): the namings of the method its module may hold."""
    return len(kept_on_node(cls, "_qlint_self_calls", _self_calls).get(name, ()))


def _callers(cls: ast.ClassDef, method: ast.AST, name: str) -> tuple[tuple[int, tuple], ...]:
    """(the position in `cls`'s body of a method, undecorated, `self` its first parameter,
    that calls `self.<name>(...)` from a statement of its own body or of its `if` branches;
    the path to that statement there, `_self_calls`) for each such call, when `method` makes
    none of them and touches `self` only through attributes and cannot suspend; else `()`.
    Positions, not nodes: kept on `method`'s node, a reference back to another method could
    close a cycle of nodes."""
    found = kept_on_node(cls, "_qlint_self_calls", _self_calls).get(name, ())
    if not found or any(cls.body[at] is method for at, _ in found):
        return ()
    if not _touches_no_self(method.body) or _suspends(method.body):
        return ()
    return found


def _self_calls(cls: ast.ClassDef) -> dict[str, tuple[tuple[int, tuple], ...]]:
    """name -> (position of the method in `cls`'s body, the path to the statement) of each
    `self.<name>(...)` call (`_self_call`) of a statement of an undecorated method's own body
    or, through `if` statements only, of one of their branches: one walk of the class's
    top-level statements, however many of its methods ask. A path is a tuple of (position in
    the block, branch): 1 into an `if`'s body, 0 into its `else`, -1 at the call's statement."""
    found: dict[str, list[tuple[int, tuple]]] = {}
    for i, caller in enumerate(cls.body):
        if not isinstance(caller, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if caller.decorator_list or not caller.args.args or caller.args.args[0].arg != "self":
            continue
        stack: list[tuple[list[ast.stmt], tuple]] = [(caller.body, ())]
        while stack:
            stmts, path = stack.pop()
            for at, stmt in enumerate(stmts):
                call = _self_call(stmt)
                if call is not None:
                    found.setdefault(call.func.attr, []).append((i, (*path, (at, -1))))
                elif isinstance(stmt, ast.If):
                    stack.append((stmt.body, (*path, (at, 1))))
                    stack.append((stmt.orelse, (*path, (at, 0))))
    return {name: tuple(places) for name, places in found.items()}


def _before(caller: ast.AST, path: tuple) -> list[ast.AST]:
    """What runs in `caller` before the call at `path`, in order: the statements before it in
    each block on the way, and each `if` test passed (an expression)."""
    ran: list[ast.AST] = []
    stmts = caller.body
    for at, branch in path:
        ran.extend(stmts[:at])
        if branch < 0:
            break
        node = stmts[at]
        ran.append(node.test)
        stmts = node.body if branch else node.orelse
    return ran


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


def _evaled_before(ran: list[ast.AST], attr: str) -> ast.AST | None:
    """The switch that leaves `attr` in eval mode at the end of `ran` (what the calling method
    runs before the call, `_before`), read from its last store there and what runs after it."""
    last = next((i for i in range(len(ran) - 1, -1, -1) if _stores(ran[i], attr)), None)
    if last is None:
        return None
    store = ran[last]
    if isinstance(store, ast.Assign) and len(store.targets) != 1:
        return None
    switch = _evaled_value(store.value)
    known = mode_before_store(ran, last) if switch is None else None
    if known is not None:
        if known[0] != "eval":
            return None
        switch = known[1]  # `model.eval()` then `self.model = model`
    elif switch is None and not isinstance(store.value, ast.Call):
        return None  # `self.model = Net()` may still be evaled below; an alias may not
    if not _touches_no_self([store.value]) or _suspends([store.value]):
        return None
    for stmt in ran[last + 1 :]:
        if isinstance(stmt, ast.expr):
            if not _plain_value(stmt, attr):
                return None  # an `if` test that may run code
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and key(_receiver(stmt.value)) == attr:
            call = stmt.value
            mode = mode_call(call)
            if mode is not None and mode[1] == "eval":
                switch = call
            elif mode is not None or call.func.attr not in MODE_KEEPING_METHODS:
                return None  # `.train()`, or a method that may switch its parts
            if not _touches_no_self([*call.args, *(kw.value for kw in call.keywords)]):
                return None
        elif not _plain_store(stmt, attr) and not freezes_only(stmt, attr):
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
    return _plain_value(stmt.value, attr)


def _plain_value(value: ast.expr, attr: str) -> bool:
    """An expression that runs no call and cannot suspend, reads nothing of `self` but
    attributes, and does not name `attr`: evaluating it cannot reach the model."""
    if any(key(n) == attr for n in ast.walk(value)):
        return False
    runs = (ast.Call, *_SUSPENDS)
    return _touches_no_self([value]) and not any(isinstance(n, runs) for n in ast.walk(value))


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


def _named_only_there(scope, cls: ast.ClassDef, name: str, calls: int) -> bool:
    """`name` is named in the class by its `calls` calls alone (the `def` is no name node) and
    nowhere in the module's other classes and functions."""
    if sum(1 for node in ast.walk(cls) if _names(node, name)) != calls:
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


__all__ = ["called_times", "evaled_before_call"]
