"""Whether a method of another module's class builds the model it returns (QL201/QL202; issue 14,
items 3-6).

`m = Factory.make()` or `Factory.build(cfg)` (a static or class method called on the class,
`class_calls`), or `m = Factory().create()` (an instance method of a factory object,
`instance_methods`), where the method only returns `Net()`, then
`prepare_pt2e(export(m, ...).module(), q)`: the model starts in train mode. Another module's
method is read only when its body names a mode switch, a capture or a PT2E step
(`method_words`: reading every such method cost ExecuTorch's cold run ~11% more bodies), so a
factory that only builds was left unread and its model unknown.

Such a method is read too when one of its returns constructs a class: one its module defines
or imports from the project by a CapWords name (`Net()`), `cls(...)` in a class method (the
class it is called on, `class_constructors`), with calls on the result in a chain
(`Net().to(device)`), or a name the method binds only to such calls (`model = Net()` ...
`return model`); or returns what a function of its module, a method of its own class called on
`cls`/`self` with none of its parameters (`cls.make()`), or a method of a class of its module
(`Nets.tiny()`) returns when that one does so, two levels down. Exact and cheap: return
statements and the assignments of the names they return, in the module already parsed; the
only lookups are of the bases of classes of other modules (`nn_classes`, from their summaries).
A first gate that took any call of a project name, `self`'s methods included, cost
ExecuTorch's cold run +0.9% instructions (budget +0.3%). The model flow then decides what the
return really is (`Net().eval()` is an eval-mode model, a mode-free class keeps the capture
quiet, a loaded program is unknown). An instance method (`instance_methods`, asked once its
receiver is one construction of a top-level class of another project module) is read only when
it builds a class that derives from `torch.nn` module classes (`modules=True`), and `cls(...)`
counts only in such a class: by its module's text (`nn_bases`), or through bases of other
project modules (`nn_classes`: `Net` imported from `pkg.nets`, `class Net(BaseNet)` with
`BaseNet` of `pkg.bases`; stop 66). Read for any construction, as a class call is, instance
methods made ExecuTorch's cold run analyse 26 more bodies (an analyzer whose `analyze` returns a
report dataclass, graph passes whose `call` returns a result, and what they call), and with
`cls(...)` read for any class too (15 more: configs' `from_dict`, stages' `from_recipe`) it cost
+1.2% instructions (65,163.5 M against 33ded9e5's 64,412.0 M); with the module test only its
examples' factories were read (`EmformerRnnt*Model().get_eager_model()`, 3 bodies: +0.09%).
Not followed: a builder function imported from another module.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.class_constructors import is_class_method
from qlint.analysis.flow.forwarded_graphs import LIBRARY_ROOTS
from qlint.analysis.flow.nn_bases import local_bases
from qlint.analysis.flow.nn_classes import imported_nn_class
from qlint.analysis.tree_walk import walk, walk_kinds

_KEY = "_qlint_factory_methods"  # on the scope's `__dict__`: one walk per method and module content
_OWN = frozenset({"cls", "self"})
_KINDS = frozenset({ast.Return, ast.Assign, ast.AugAssign, ast.AnnAssign})
_LEVELS = 2  # builders of builders


def builds_a_model(owner, method: ast.AST, holder, modules: bool = False) -> bool:
    """Whether one of `method`'s returns (a def of `holder`, a class scope of `owner`'s module;
    `owner` is that module's `ModelFlow`) constructs a class of its module or the project.
    `modules`: only a class that derives from `torch.nn` module classes counts (`nn_classes`:
    by its module's text, or through bases of other project modules): the test for an instance
    method (`instance_methods`). What the module's text decides is kept per method; the
    classes it names of other modules are looked up each time (they may change apart)."""
    scope = owner.scope
    known = scope.__dict__.setdefault(_KEY, {})
    found = known.get((id(method), modules))
    if found is None or found[0] is not method or found[1] is not holder:
        wanted: list[str] = []
        built = _builds(method, scope, holder, _LEVELS, modules, wanted)
        found = known[(id(method), modules)] = (method, holder, built, tuple(wanted))
    return found[2] or (bool(found[3]) and imported_nn_class(getattr(owner, "classes", None), found[3]))


def _builds(func: ast.AST, scope, holder, levels: int, modules: bool, wanted: list[str]) -> bool:
    """`builds_a_model` from the module's text: True, or False with the dotted names of the
    classes of other modules that would make it True when one derives from `torch.nn` added to
    `wanted` (an imported class built, with `modules`; the imported bases of a class of the
    module its text does not show to be a module, built or `cls(...)`)."""
    args = func.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)} - _OWN
    # A class method's `cls` (its first parameter, whatever its name): `cls(...)` builds, in a
    # class that derives from `torch.nn` (`nn_bases`, `nn_classes`).
    own = args.args[0].arg if holder is not None and args.args and is_class_method(func) else None
    returned: set[str] = set()
    bound: dict[str, bool] = {}
    for node in walk_kinds(func, _KINDS):
        if isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            if isinstance(value, ast.Call) and _built(value, scope, holder, params, own, levels, modules, wanted):
                return True
            if isinstance(value, ast.Name):
                returned.add(value.id)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            built = isinstance(node.value, ast.Call) and _built(
                node.value, scope, holder, params, own, levels, modules, wanted
            )
            bound[name] = bound.get(name, True) and built
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
            bound[node.target.id] = False  # rebound some other way: not only such calls
    return any(bound.get(name, False) for name in returned)


def _built(call: ast.Call, scope, holder, params, own, levels: int, modules: bool, wanted: list[str]) -> bool:
    """The call, or the head of its chain of calls (`Net().to(device)`), constructs a class of
    the module or the project, or calls a builder of the module (`_builds`, a level down)."""
    while isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Call):
        call = call.func.value  # `Net().to(device)`: the chain's head builds
    func = call.func
    if isinstance(func, ast.Name):
        name = func.id
        if name == own:
            return _module(scope, holder, wanted)  # `cls(...)` in a class method (`class_constructors`)
        if name in params:
            return False  # a callable handed in: it may return anything
        if name in scope.assigns:
            return False  # a module-level value: what it holds is not read here
        full = scope.imports.get(name)
        if full is not None:  # a class imported from the project, by its CapWords name
            if full.partition(".")[0] in LIBRARY_ROOTS or not full.rpartition(".")[2][:1].isupper():
                return False
            if modules:
                wanted.append(full)  # a module if its own module's bases say so (`nn_classes`)
                return False
            return True
        if name in scope.classes:
            return not modules or _module(scope, scope.classes[name], wanted)
        builder = scope.functions.get(name)
        return builder is not None and levels > 0 and _builds(builder, scope, None, levels - 1, modules, wanted)
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)) or levels == 0:
        return False
    head = func.value.id  # `cls.make()`, `self._build()`, `Nets.tiny()`
    if head in _OWN:
        if holder is None or any(isinstance(n, ast.Name) and n.id in params for n in walk(call)):
            return False  # `self.net(x)`: a forward pass
        cls = holder
    elif head in scope.classes and head not in scope.imports and head not in scope.assigns:
        cls = scope.classes[head]
    else:
        return False
    method = cls.methods.get(func.attr)
    return method is not None and _builds(method, scope, cls, levels - 1, modules, wanted)


def _module(scope, cls, wanted: list[str]) -> bool:
    """`cls`, a class of the module, derives from `torch.nn` by its module's text; else the
    bases it imports go to `wanted`, to be looked up in their modules."""
    bases = local_bases(scope, cls)
    if bases is True:
        return True
    wanted.extend(b for b in bases if b not in wanted)
    return False


__all__ = ["builds_a_model"]
