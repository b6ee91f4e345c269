"""Whether what a class stores as a part, or hands a class or function it calls, may hold a
model (`stored_values`: `self.norm = NORM`, `self.b = Block(BN)`).

A stored name holds no model when it is a constant or a tensor of the module, a function or
class, a registry of functions, a builtin or an import of torch or the standard library; a
callee handed one holds none of it when it only passes it to torch.nn layers or never reads
it. Anything else may hold any module: the class's content is then not known in full
(`class_contents`). `index` is the check's `model_classes.ClassIndex`, which finds the
classes and functions met.
"""

from __future__ import annotations

import ast
import sys

from qlint.analysis.flow.class_method_calls import own_method
from qlint.analysis.flow.content_syntax import ContentSyntax
from qlint.analysis.flow.evaled_parts import calls_super_init
from qlint.analysis.flow.harmless_calls import BUILTINS, HANDS_BACK, SAFE_ROOTS, constant_literal, torch_function
from qlint.analysis.flow.model_torch_nn import CONTAINERS
from qlint.analysis.flow.registry_contents import holds_functions_only
from qlint.analysis.flow.resolved_classes import NO_PROJECT, ModelClass
from qlint.analysis.flow.stored_values import Slot, handed_names
from qlint.analysis.names.resolver import Resolver


def overrides_hold_no_model(index, cls: ast.ClassDef, resolver: Resolver, around: dict) -> bool:
    """What a base's methods hand one of its own methods (`self.b = self._make(BN)` in its
    `__init__`) goes to `cls`'s version where `cls` overrides it: the base's content was read
    with its own (`builds_hold_no_model`), which may drop what `cls`'s keeps. The override's
    parameter is read as an own method's is; one `own_method` does not read (decorated,
    bound twice) leaves the content unknown."""
    written = {name for s in cls.body for name in _bound_names(s)}
    if not written:
        return True
    for base_node, base_resolver in index.bases_above(cls, resolver, around) or ():
        for call, slots in handed_names(base_node):
            func = call.func
            if not (
                isinstance(func, ast.Attribute)
                and func.attr in written
                and isinstance(func.value, ast.Name)
                and func.value.id == "self"
            ):
                continue
            unknown = _unknown_slots(index, slots, base_resolver, {})
            if not unknown:
                continue
            own = own_method(cls, func.attr)
            if own is None or not _read_without_model(own[0], own[1], resolver, unknown):
                return False
    return True


def _unknown_slots(index, slots: tuple[Slot, ...], resolver: Resolver, around: dict) -> list[Slot]:
    """The arguments of a handed call naming something that may hold a model (`holds_no_model`)."""
    return [s for s in slots if not all(holds_no_model(index, n, resolver, around) for n in s[2])]


def builds_hold_no_model(
    index, cls: ModelClass, resolver: Resolver, around: dict, skipped: frozenset[int], syntax: ContentSyntax
) -> bool:
    """What the class's methods hand a class or a function of the project they call
    (`self.b = Block(BN)`, `self.b = make_block(BN)`, `stored_values.handed_names`) holds no
    model: the part built keeps it, and the content of `Block` or of `make_block`'s body is
    read without it. A name read as a stored one is (`holds_no_model`), or the class built
    only passes it to torch.nn layers (`Block(DIM)`, as `Built._flag_of_class`), or the
    function never reads it or reads it only so (`linear(CFG.dim)`). The class's own methods
    (`self._make(BN)`) are such functions; `super().__init__(BN)` builds the first base as a
    class of the project, or keeps it in a torch.nn container base. Not taken as evaled
    (`evaled_wrappers` reads the class's own stores, not what `Block` does with its
    argument); a build in `skipped` was replaced by a caller, its part gone."""
    handed = handed_names(cls.node)
    if not handed:
        return True
    locals_ = {**around, **syntax.classes}
    for call, slots in handed:
        if id(call) in skipped:
            continue
        unknown = _unknown_slots(index, slots, resolver, around)
        if not unknown:
            continue  # `nn.Linear(DIM, DIM)`: constants, whatever the callee
        built = index.resolve(call.func, resolver, locals_)
        if built is None and calls_super_init(call):
            base = cls.node.bases[0] if cls.node.bases else None
            if base is not None and (resolver.qualname(base) or "").rpartition(".")[2] in CONTAINERS:
                return False  # `super().__init__(BN, nn.ReLU())` of a torch.nn container: kept
            built = index.resolve(base, resolver, around) if base is not None else None
        if built is not None:
            node, skip, callee = built.node, None, Resolver(built.scope, NO_PROJECT, None)
        elif (function := _called_function(index, call, resolver, locals_, syntax.functions, cls.node)) is not None:
            node, skip, callee = function
        elif (inner := _written_inside(cls.node, call.func)) is not None:
            if not inner:
                return False  # `mk` written twice inside, or decorated: which body runs is not read
            node, skip, callee = inner[0], 0, resolver  # `def mk(m): ...` in `__init__`, `self.b = mk(BN)`
        elif resolver.qualname(call.func) in HANDS_BACK:
            return False  # `copy.deepcopy(BN)`: the module it was given, or one wrapping it
        else:
            continue  # no class or function of the project: the call is read as one (`ClassContents._read_calls`)
        if not _read_without_model(node, skip, callee, unknown):
            return False
    return True


def _called_function(
    index, call: ast.Call, resolver: Resolver, locals_: dict, nested, cls_node: ast.ClassDef
) -> tuple | None:
    """The function of the module or of the project `call` runs (`make_block(BN)`), or the
    classmethod or staticmethod of a class that resolves (`Factory.make(BN)`): with how many
    of its first parameters no argument binds (a classmethod's `cls`) and a resolver of its
    module. None for anything else (a function written inside, a callable held in a name)."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        own = own_method(cls_node, func.attr)  # `self._make(BN)`: a method of the class's body
        return (own[0], own[1], resolver) if own is not None else None
    function = index.function_of(func, resolver, locals_, nested)
    if function is not None:
        return function[0], 0, function[1]
    method = index.class_method_of(call, resolver, locals_)
    if method is None:
        return None
    return method[0], 1 if method[0].decorator_list[0].id == "classmethod" else 0, method[1]


def holds_no_model(index, name: ast.Name, resolver: Resolver, around: dict) -> bool:
    """A name whose object the class stores as a part (`stored_values`) holds no model:
    a constant of the module or a tensor a torch function made there, a function or class,
    a registry of functions (`registry_contents.holds_functions_only`), a builtin, an import
    of torch or the standard library. A variable of the function the
    class is written in, a module-level object built by another call, an import from
    elsewhere: it may hold any module."""
    scope = resolver.scope
    key = name.id
    if key in around:
        return True  # a class written beside it, in the same function
    if key in scope.imports:
        qualname = scope.imports[key]
        root = qualname.split(".")[0]
        if root in sys.stdlib_module_names or root in SAFE_ROOTS or root == "torch":
            return True
        if index.project_class(qualname) is not None or index.project_function(qualname) is not None:
            return True
        return holds_functions_only(key, scope, index)  # `REG["default"]` of a registry of functions
    if key in scope.assigns:
        # A constant, or a tensor from a torch function (`WEIGHT = torch.ones(3)`).
        located = resolver.value_of(name)
        value = located.node if located is not None else None
        if isinstance(value, ast.Call):
            return torch_function(resolver.qualname(value.func) or "")
        return (value is not None and constant_literal(value)) or holds_functions_only(key, scope, index)
    return key in scope.functions or key in scope.classes or key in BUILTINS


def _read_without_model(node: ast.AST, skip: int | None, callee: Resolver, unknown: list[Slot]) -> bool:
    """The callee `node` binds each of `unknown`'s arguments to a parameter it only passes to
    torch.nn layers or tests: a class's `__init__` (`skip` None) as `Built._flag_of_class`
    reads it, a function (its first `skip` parameters bound by no argument) or never reads it.
    An argument after a `*args`, or a `**kwargs` one, binds no parameter we can name."""
    from qlint.analysis.flow.init_parameters import only_hyperparameter, unread_or_hyperparameter

    for position, keyword, _ in unknown:
        if position is None and keyword is None:
            return False
        if skip is None and not only_hyperparameter(node, callee, position, keyword):
            return False
        if skip is not None and not unread_or_hyperparameter(node, skip, callee, position, keyword):
            return False
    return True


def _bound_names(stmt: ast.stmt) -> tuple[str, ...]:
    """The names a statement of a class's body binds as methods or attributes of the class."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return (stmt.name,)
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return tuple(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return ()


def _written_inside(cls_node: ast.ClassDef, func: ast.expr) -> list[ast.FunctionDef] | None:
    """The function `func` names when it is written inside a method of the class (`def mk(m):`
    in `__init__`): [that function] when written once and undecorated, [] when written more
    than once or decorated, None when no function inside a method has that name."""
    if not isinstance(func, ast.Name):
        return None
    nodes = list(ast.walk(cls_node))
    methods = {id(s) for c in nodes if isinstance(c, ast.ClassDef) for s in c.body}  # a bare name calls none
    found = [
        n
        for n in nodes
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == func.id and id(n) not in methods
    ]
    if not found:
        return None
    if len(found) != 1 or found[0].decorator_list:
        return []
    return found
