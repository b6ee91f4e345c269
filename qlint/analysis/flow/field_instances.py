"""`self.strategy.quantize(m)` where the class stores in `self.strategy` what one of its own
methods returns, an instance of one of several classes (issue 14).

A manager picks its strategy once (`self.strategy = self._create_strategy()`, the method
looking the class up in a dict of classes keyed by a config value and constructing it) and
calls it in another method. The walk of that method reads `self.strategy` as an attribute it
has not seen set: its method calls would run nothing known. When every write of the field in
the class is such a call of a method of the class, and that method returns, on every path
that returns, a construction of a class the walk resolves, the field holds one of those
instances: a method call on it is a call of each class's method (`registry_dispatch`).

Only the receiver of a method call is read so: the field's mode facts (a model stored so)
stay as they were. Anything else that may write the field gives up: a write of another form
in the class, a write from outside it in this module (`runner.strategy = Custom()`), a
subclass in this module (it may override the method), a base class of another module (it may
write the field), a decorated method.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_values import ATTRIBUTE, CONSTRUCTED, Obj

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_MAX_CLASSES = 8  # as many as `registry_dispatch` follows at one call
# Libraries whose classes write no field a subclass names (`class Manager(ABC)`, `nn.Module`).
_INERT_ROOTS = frozenset({"abc", "torch", "typing"})


def field_instances(sem, receiver: Obj) -> Obj | None:
    """`receiver` (`self.<attr>` read as an unknown attribute) as the instances the class's
    own method stores there, or None when that is not known."""
    if len(receiver.origins) != 1:
        return None
    (origin,) = receiver.origins
    cls = sem.class_scope
    name = origin.name
    if origin.kind != ATTRIBUTE or origin.source is not None or cls is None or origin.node is not sem.walk.func:
        return None
    if not name.startswith("self.") or name.count(".") != 1:
        return None
    top = sem.owner.scope.classes.get(cls.node.name)
    if top is None or top.node is not cls.node:
        return None
    memo = sem.owner.field_makers
    at = (id(cls.node), name)
    if at not in memo:
        memo[at] = _makers(sem.owner.scope, cls.node, name[5:])
    makers = memo[at]
    if not makers:
        return None
    origins = set()
    for method in makers:
        flow = sem.owner.function(method, cls)
        if flow is None or not flow.returns:
            return None
        for _, value in flow.returns:
            if value is None or not value.origins:
                return None
            if any(o.kind != CONSTRUCTED or getattr(o.built, "cls", None) is None for o in value.origins):
                return None
            origins |= value.origins
    if len(origins) > _MAX_CLASSES:
        return None
    return Obj(receiver.anchor, receiver.key, frozenset(origins), receiver.captures)


def _makers(scope, cls: ast.ClassDef, attr: str) -> list[ast.AST] | None:
    """The methods of `cls` whose calls are the field's only writes (`self.<attr> = self.<m>()`)."""
    names: set[str] = set()
    for method in cls.body:
        if not isinstance(method, _FUNCS):
            continue
        for node in ast.walk(method):
            for target in _targets(node):
                for sub in ast.walk(target):
                    if not (isinstance(sub, ast.Attribute) and sub.attr == attr):
                        continue
                    value = getattr(node, "value", None)
                    if sub is not target or not isinstance(node, ast.Assign) or len(node.targets) != 1:
                        return None  # unpacked, augmented, annotated, chained, deleted
                    if _is_self(sub.value) and (made := _own_call(value)) is not None:
                        names.add(made)
                    else:
                        return None
    methods = {m.name: m for m in cls.body if isinstance(m, _FUNCS)}
    if any(_writes(m, "\0", own=True) for m in methods.values()):
        return None  # `setattr(self, name, value)`: any field
    if not names or any(n not in methods or methods[n].decorator_list for n in names):
        return None
    if not all(_known_base(b, scope) for b in cls.bases) or _written_outside(scope, cls, attr):
        return None
    return [methods[n] for n in sorted(names)]


def written_in_class_only(scope, cls: ast.ClassDef, attr: str) -> bool:
    """Nothing of the module but `cls`'s own named stores writes the field `attr`: no
    `setattr(self, ...)` in the class, no base of another module (but the inert libraries), no
    subclass in the module, no write of `<x>.<attr>` outside the class (`_written_outside`)."""
    if any(_writes(m, "\0", own=True) for m in cls.body if isinstance(m, _FUNCS)):
        return False
    return all(_known_base(b, scope) for b in cls.bases) and not _written_outside(scope, cls, attr)


def _known_base(base: ast.expr, scope) -> bool:
    """A base whose writes of the field are read (a class of the module: `_written_outside`),
    or one of the libraries that write no field of a subclass (`ABC`, `nn.Module`)."""
    if isinstance(base, ast.Name) and (base.id == "object" or base.id in scope.classes):
        return base.id not in scope.imports
    head = base
    while isinstance(head, ast.Attribute):
        head = head.value
    if not isinstance(head, ast.Name):
        return False
    full = scope.imports.get(head.id, "")
    return full.partition(".")[0] in _INERT_ROOTS


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return node.targets
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    if isinstance(node, ast.Delete):
        return node.targets
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        return [node.target]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [i.optional_vars for i in node.items if i.optional_vars is not None]
    if isinstance(node, ast.NamedExpr):
        return [node.target]
    return []


def _is_self(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Name) and expr.id == "self"


def _own_call(value: ast.expr | None) -> str | None:
    """`m` of `self.m(...)`."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and _is_self(value.func.value):
        return value.func.attr
    return None


def _written_outside(scope, cls: ast.ClassDef, attr: str) -> bool:
    """A class of the module derives from `cls` (it may override the method), or a function
    or another class of the module writes `<x>.<attr>` (or may, with `setattr`). A class that
    is no base of `cls` writing the field on its own instances, `self.<attr>` in its plain
    methods (an exporter's `NMSModel` wrapper storing `self.model`), writes no `cls`
    instance's: those stores are passed over."""
    bases = _module_bases(scope, cls)
    for other in scope.classes.values():
        node = other.node
        if node is cls:
            continue
        if any(isinstance(b, ast.Name) and b.id == cls.name for b in node.bases):
            return True
        if _writes(node, attr, own_fields=frozenset() if id(node) in bases else _own_fields(node, attr)):
            return True
    return any(_writes(f, attr) for f in scope.functions.values())


def _module_bases(scope, cls: ast.ClassDef) -> set[int]:
    """The ids of the classes of the module `cls` derives from, however many levels up."""
    found: set[int] = set()
    stack = [cls]
    while stack:
        for base in stack.pop().bases:
            known = scope.classes.get(base.id) if isinstance(base, ast.Name) else None
            if known is not None and id(known.node) not in found:
                found.add(id(known.node))
                stack.append(known.node)
    return found


def _own_fields(cls: ast.ClassDef, attr: str) -> frozenset[int]:
    """The ids of the `<self>.<attr>` nodes in `cls`'s undecorated methods whose first
    parameter, the instance, they never rebind."""
    found: set[int] = set()
    for method in cls.body:
        if not isinstance(method, _FUNCS) or method.decorator_list or not method.args.args:
            continue
        own = method.args.args[0].arg
        nodes = list(ast.walk(method))
        if any(isinstance(n, ast.Name) and n.id == own and not isinstance(n.ctx, ast.Load) for n in nodes):
            continue
        found.update(
            id(n)
            for n in nodes
            if isinstance(n, ast.Attribute) and n.attr == attr and isinstance(n.value, ast.Name) and n.value.id == own
        )
    return frozenset(found)


def _writes(tree: ast.AST, attr: str, own: bool = False, own_fields: frozenset[int] = frozenset()) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setattr" and len(node.args) > 1:
            name, obj = node.args[1], node.args[0]
            # A name computed elsewhere counts on `self` of the class only: `setattr(module,
            # name, child)` in a helper class swaps submodules of a model it walks.
            if (name.value == attr) if isinstance(name, ast.Constant) else (own and _is_self(obj)):
                return True
        for target in _targets(node):
            if any(
                isinstance(sub, ast.Attribute) and sub.attr == attr and id(sub) not in own_fields
                for sub in ast.walk(target)
            ):
                return True
    return False


__all__ = ["field_instances", "written_in_class_only"]
