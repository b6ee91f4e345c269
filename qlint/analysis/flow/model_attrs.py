"""Where a `self.<attr>` read in one method of a class comes from, when the class says so.

Three sources are followed: a module built in the class (`self.model = Net()`), which starts
in train mode, a parameter of `__init__` stored as it came (`self.model = model`), which
is in whatever mode the code that built the object passed it in, or in the mode `__init__`
switched it to before storing it (`switched_params`); and an attribute every store of which
in the class, in any method, is of a model whose mode the method set right before
(`switched_stores`: `model.eval()` then `self.model = model` in `__call__`), which holds a
model in those modes (`InMode`). Anything that could change
the attribute's mode out of sight of the method reading it (another assignment, a mode call
in another method, or anywhere in the class for a module built there, the attribute or the
parameter handed to some call) leaves it unknown, and the rules quiet; so does, for every
source but a module built there, a mode call on a part of it (`self.model.bn.train()`),
`self.train()` of the module the class is (`Module.train` reaches every submodule; `self.eval()`
unsettles a module built there too), and `self` itself handed to a call that may change the
attribute (`handed_self`), unless `__init__` makes either call before it sets the attribute.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from qlint.analysis.flow.handed_self import Changed, init_set, runs_before, self_handed
from qlint.analysis.flow.left_aliases import alias_left
from qlint.analysis.flow.model_apis import key, mode_call
from qlint.analysis.flow.switched_params import Switched, switched_before_store
from qlint.analysis.flow.switched_stores import Keeps, switched_stores
from qlint.analysis.names.scope import function_assigns, own_init, parameter_args
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.statement_walk import statement_lists
from qlint.analysis.tree_walk import walk_kinds
from qlint.value_classes import value_class

# The nodes the walk below decides on, in `ast.walk` order: every class is walked once per
# check, and test classes of thousands of lines made this a walk of most of the module.
_READ = frozenset({ast.Assign, ast.AnnAssign, ast.Call, ast.Attribute})


@value_class(frozen=True)
class Stored:
    """`self.<attr> = <param>` in `__init__`: the attribute is the object the caller passed."""

    init: ast.FunctionDef
    index: int  # the parameter's position, `self` counted
    param: str
    target: ast.Attribute  # the `self.<attr>` assigned, for messages
    passed_on_in: frozenset[int]  # ids of the methods that hand the attribute to a call


@value_class(frozen=True)
class Evaled:
    """`self.<attr> = Net()` put in eval mode by the statement that builds it or one right in
    `__init__`'s body after it (`self.model.eval()`, no branch around either), and switched
    nowhere else in the class: the attribute is that construction, in eval mode."""

    call: ast.Call  # the construction
    switch: ast.Call  # the `.eval()` call
    passed_on_in: frozenset[int] = frozenset()  # ids of the methods that hand the attribute to a call


@value_class(frozen=True)
class InMode:
    """Every store of `self.<attr>` in the class, in whichever method, stores a model whose
    mode the method set right before (`model.eval()` then `self.model = model`:
    `switched_stores`), or `None`; nothing else in the class writes it, switches it or gives
    it parts: the attribute holds a model in one of those modes whenever it holds one."""

    stores: tuple[tuple[str, ast.Call], ...]  # (mode, the switch) of each store
    passed_on_in: frozenset[int] = frozenset()  # ids of the methods that hand the attribute to a call


def attribute_sources(
    cls: ast.ClassDef,
    is_constructor: Callable[[ast.Call], bool],
    keeps_mode: Callable[[ast.Call], bool] | None = None,
    hands_back: Callable[[ast.AST], Keeps] | None = None,
    fields_changed: Callable[[ast.AST], Changed] | None = None,
) -> dict[str, ast.Call | Stored | Evaled | Switched | InMode]:
    """`self.<attr>` -> the call that builds it (`Evaled` when `__init__` evals it), or the
    `__init__` parameter stored in it (`Switched` when `__init__` switched its mode first).

    A method that hands the attribute to a call may switch its mode there, unless
    `keeps_mode` says the call leaves its arguments' modes alone (a capture or a copy of
    `self.model` in another method: `model_flow.attribute_sources`). `hands_back(method)`
    says which calls of that method hand the model they are given back as it came
    (`switched_stores`, `kept_rebindings`); `fields_changed(method)`, which fields of `self` a
    call of that method handing `self` itself may change (`handed_self`)."""
    init = own_init(cls)
    params = {a.arg: i for i, a in enumerate(parameter_args(init, star=False))} if init is not None else {}
    constructs = _memo(is_constructor)
    stores = _stores_memo(hands_back)
    if not _sets_a_source(cls, init, params, constructs, stores):
        return {}
    evaled = _evaled_in_init(init, constructs) if init is not None else {}
    switches = {id(e.switch) for e in evaled.values()}
    built: dict[str, ast.Call] = {}
    stored: dict[str, Stored] = {}
    other: set[str] = set()  # set some other way, or its mode changed somewhere
    given: set[str] = set()  # given a part built here (`self.model.bn = nn.BatchNorm2d(3)`)
    passed: dict[str, set[int]] = {}
    touched: set[str] = set()  # parameters of `__init__` whose mode may change there
    calls: list[tuple[ast.Call, ast.AST]] = []  # read only when an attribute was stored
    switched: dict[str, set[int]] = {}  # `self.<attr>.eval()` / `.train(flag)`: in which methods
    in_mode: dict[str, list[tuple[str, ast.Call]]] = {}  # stores of a model in a known mode
    nones: set[str] = set()  # `self.<attr> = None`
    wholes: list[tuple[ast.Call, ast.AST, str | None]] = []  # `self.train()`: (the call, its method, the mode)
    own = {s.name for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for method in (s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))):
        handled: set[int] = set()
        for node in walk_kinds(method, _READ):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for sub in ast.walk(target):
                        name = key(sub)
                        if name is None or not name.startswith("self."):
                            continue
                        handled.add(id(sub))
                        value = node.value
                        if sub is not target:
                            if sub is getattr(target, "value", None) and _builds_train_part(value, constructs):
                                given.add(name)  # `self.model.bn = nn.BatchNorm2d(3)`: still in train mode
                            else:
                                other.add(name)
                        elif name in evaled and value is evaled[name].switch:
                            built.setdefault(name, evaled[name].call)
                        elif isinstance(value, ast.Call) and constructs(value):
                            built.setdefault(name, value)
                        elif (
                            method is init
                            and isinstance(value, ast.Name)
                            and params.get(value.id, 0) > 0
                            and name not in stored
                        ):
                            stored[name] = Stored(init, params[value.id], value.id, sub, frozenset())
                        elif isinstance(value, ast.Constant) and value.value is None:
                            nones.add(name)
                        elif (mode := stores(method).get(id(node))) is not None and not alias_left(method, node):
                            in_mode.setdefault(name, []).append(mode)
                        else:
                            other.add(name)
                if (name := key(node.value)) is not None and name.startswith("self."):
                    passed.setdefault(name, set()).add(id(method))  # `m = self.model`: an alias
            elif (m := mode_call(node)) is not None and (name := key(m[0])) is not None:
                if id(node) in switches:
                    continue  # the one `.eval()` of an `Evaled` attribute
                if name.startswith("self.") and (m[1] != "train" or name in evaled):
                    switched.setdefault(name, set()).add(id(method))
                elif name.startswith("self."):  # built modules start in train mode anyway
                    passed.setdefault(name, set()).add(id(method))
                elif name == "self" and node.func.attr not in own:
                    wholes.append((node, method, m[1]))  # `Module.train` of `self`: every field of it
                elif method is init:
                    touched.add(name)
            elif isinstance(node, ast.Call):
                if (m := mode_call(node)) is not None and (name := _field_of(m[0])) is not None:
                    passed.setdefault(name, set()).add(id(method))  # `self.model.bn.train()`: a part of it
                calls.append((node, method))
            elif (
                isinstance(node, ast.Attribute)
                and not isinstance(node.ctx, ast.Load)
                and id(node) not in handled
                and (name := key(node)) is not None
            ):
                other.add(name)  # `self.model += ...`, a loop target, `del self.model`
    for name, methods in switched.items():
        if name in stored and name not in built and name not in evaled:
            # What the caller passed, switched by some methods: the method that switches it
            # reads the switch itself (`if calibrate: self.model.eval()`); the others cannot
            # know whether it ran before them.
            passed.setdefault(name, set()).update(methods)
        else:
            other.add(name)
    # A part built in train mode leaves a module built here in train mode; one evaled in
    # `__init__` or passed in would be in two modes at once.
    other |= given & (evaled.keys() | stored.keys() | in_mode.keys())
    # `None` stored beside anything else but models in a known mode: set some other way.
    other |= nones - in_mode.keys()
    other |= in_mode.keys() & (built.keys() | stored.keys() | evaled.keys())
    if any(mode != "train" for _, _, mode in wholes):
        other |= built.keys()  # `self.eval()` somewhere: a module built here is no longer known to train
    out: dict[str, ast.Call | Stored | Evaled] = {
        n: c for n, c in built.items() if n not in other and n not in stored and n not in evaled
    }
    kept = [n for n in evaled if n in built and n not in other and n not in stored]
    if not stored and not kept and not in_mode.keys() - other:
        return out
    rebound = {n for n, bound in function_assigns(init).items() if len(bound) > 1} if init is not None else set()
    # `helper(self)` in another method, or in `__init__` after the field is set: it may reach
    # `self.model`, whichever source the class vouches for (without a reading of the calls,
    # `stored_fields` reads those of `__init__`'s fields itself: `_changed_by_methods`).
    handed = in_mode.keys() | (stored.keys() | set(kept) if fields_changed is not None else set())
    set_in = {n: init_set(init, s.target) for n, s in stored.items()} if init is not None else {}
    set_in.update((n, init_set(init, evaled[n].switch)) for n in kept)
    for name, methods in self_handed(calls, handed - other, fields_changed, set_in).items():
        passed.setdefault(name, set()).update(methods)
    for call, method, _ in wholes:  # `self.train()` switches every field but one not set yet
        for name in (in_mode.keys() | stored.keys() | set(kept)) - other:
            if not runs_before(call, method, set_in.get(name)):
                passed.setdefault(name, set()).add(id(method))
    for call, method in calls:
        # Only the names a call hands over that the loop records are read (`self.<attr>`, and
        # in `__init__` any name), and whether the call keeps modes, which resolves its callee,
        # is asked of those calls alone: the classes of ExecuTorch's Qualcomm LLM wrappers make
        # ~450 calls, a few of which hand one over.
        args = (*call.args, *(kw.value for kw in call.keywords))
        names = (key(arg.value if isinstance(arg, ast.Starred) else arg) for arg in args)
        handed = [n for n in names if n is not None and (method is init or n.startswith("self."))]
        if not handed or (keeps_mode is not None and keeps_mode(call)):
            continue
        for name in handed:
            if name.startswith("self."):
                passed.setdefault(name, set()).add(id(method))
            else:
                touched.add(name)
    for name, source in stored.items():
        if name in other or name in built or source.param in rebound:
            continue
        methods = frozenset(passed.get(name, ()))
        if source.param not in touched:
            out[name] = Stored(source.init, source.index, source.param, source.target, methods)
        elif (switch := switched_before_store(source.init, source.param, source.target)) is not None:
            # `module.eval()` then `self.model = module`: the caller's object, in that mode.
            call, mode, branch = switch
            out[name] = Switched(source.init, source.index, source.param, source.target, call, mode, methods, branch)
    for name in kept:
        # Handed to a call, or aliased, in a method: that method may switch its mode.
        out[name] = Evaled(evaled[name].call, evaled[name].switch, frozenset(passed.get(name, ())))
    for name, stores in in_mode.items():
        if name not in other:
            out[name] = InMode(tuple(stores), frozenset(passed.get(name, ())))
    return out


def given_parts(cls: ast.ClassDef) -> dict[str, tuple[ast.Call, ...]]:
    """`self.<attr>` -> the calls its class's methods assign to one of its parts
    (`self.model.bn = nn.BatchNorm2d(3)`); `attribute_sources` keeps a module built in the
    class as its source only when each of those is a construction. One walk per class."""
    return kept_on_node(cls, "_qlint_given_parts", _given_parts)


def _given_parts(cls: ast.ClassDef) -> dict[str, tuple[ast.Call, ...]]:
    found: dict[str, list[ast.Call]] = {}
    for method in (s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))):
        for node in walk_kinds(method, frozenset({ast.Assign, ast.AnnAssign})):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                name = key(target.value) if isinstance(target, ast.Attribute) else None
                if name is not None and name.startswith("self.") and isinstance(node.value, ast.Call):
                    found.setdefault(name, []).append(node.value)
    return {name: tuple(calls) for name, calls in found.items()}


def _field_of(part: ast.expr) -> str | None:
    """`self.<attr>` of a part of it (`self.model.bn`, `self.model.layers[0]`)."""
    if not isinstance(part, (ast.Attribute, ast.Subscript)) or key(part) is not None:
        return None
    while isinstance(part, (ast.Attribute, ast.Subscript)):
        if (name := key(part)) is not None:
            return name if name.startswith("self.") else None
        part = part.value
    return None


def _builds_train_part(value: ast.expr, constructs) -> bool:
    """A part built right there and left in the mode modules start in (no `.eval()`)."""
    return isinstance(value, ast.Call) and constructs(value)


def _evaled_in_init(init: ast.FunctionDef, constructs) -> dict[str, Evaled]:
    """The attributes `__init__`'s own statements (not in a branch, a loop or a nested
    function) build and then put in eval mode: `self.m = Net().eval()`, or `self.m = Net()`
    then `self.m.eval()`. An attribute assigned twice there is not one of them."""
    found: dict[str, Evaled] = {}
    pending: dict[str, ast.Call] = {}
    assigned: set[str] = set()
    for stmt in init.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            name = key(stmt.targets[0])
            if name is None or not name.startswith("self."):
                continue
            if name in assigned:
                found.pop(name, None)
                pending.pop(name, None)
                continue
            assigned.add(name)
            value = stmt.value
            inline = _built_evaled(value, constructs)
            if inline is not None:
                found[name] = Evaled(inline, value)
            elif isinstance(value, ast.Call) and constructs(value):
                pending[name] = value
        elif isinstance(stmt, ast.Expr) and (m := mode_call(stmt.value)) is not None and m[1] == "eval":
            name = key(m[0])
            if name in pending and name not in found:
                found[name] = Evaled(pending.pop(name), stmt.value)
    return found


def _built_evaled(value: ast.expr, constructs) -> ast.Call | None:
    """The construction of `Net().eval()`."""
    inline = mode_call(value)
    if inline is not None and inline[1] == "eval" and isinstance(inline[0], ast.Call) and constructs(inline[0]):
        return inline[0]
    return None


def _sets_a_source(cls: ast.ClassDef, init: ast.FunctionDef | None, params: dict[str, int], constructs, stores) -> bool:
    """Whether some method assigns `self.<attr>` a construction, or `__init__` one of its
    parameters: the only sources `attribute_sources` answers with. Assignments are statements,
    so the statement lists alone are walked (a class of test methods that builds no module,
    ExecuTorch's 750-line `TestQNN`, was walked node by node, a seventh of its module's check)."""
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        stack = [method.body]
        while stack:
            for stmt in stack.pop():
                if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                    value = stmt.value
                    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                    for target in targets:
                        name = key(target)
                        if name is None or not name.startswith("self."):
                            continue
                        if isinstance(value, ast.Call) and (constructs(value) or _built_evaled(value, constructs)):
                            return True
                        if method is init and isinstance(value, ast.Name) and params.get(value.id, 0) > 0:
                            return True
                        if isinstance(value, (ast.Name, ast.Call)) and id(stmt) in stores(method):
                            return True  # `model.eval()` then `self.model = model`
                else:
                    stack.extend(statement_lists(stmt))
    return False


def _stores_memo(hands_back: Callable[[ast.AST], Keeps] | None):
    """`switched_stores` of a method, with the calls `hands_back` vouches for, asked once per
    method (the prefilter and the walk ask of the same methods)."""
    known: dict[int, dict] = {}

    def stores(method: ast.AST) -> dict[int, tuple[str, ast.Call]]:
        found = known.get(id(method))
        if found is None:
            keeps = hands_back(method) if hands_back is not None else None
            found = known[id(method)] = switched_stores(method, keeps)
        return found

    return stores


def _memo(is_constructor: Callable[[ast.Call], bool]) -> Callable[[ast.Call], bool]:
    """`is_constructor`, asked once per call (the prefilter and the walk ask of the same calls)."""
    known: dict[int, bool] = {}

    def constructs(call: ast.Call) -> bool:
        found = known.get(id(call))
        if found is None:
            found = known[id(call)] = is_constructor(call)
        return found

    return constructs
