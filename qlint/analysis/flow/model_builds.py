"""What calls that build models do: constructions (the class resolved first), instantiations of
the module's classes (what their `__init__` stores), and factories (parametrize values, tables
of lambdas, functions or classes, see `model_factories`). The value a construction makes and
the mode it starts in are `constructed_values`'.

`model_calls.CallSemantics` holds one `Builds` and asks it; `Builds` asks the call semantics
back for helper summaries (not imported: that module imports this one).
"""

from __future__ import annotations

import ast
import weakref
from contextlib import contextmanager

from qlint.analysis.flow.built_models import Built
from qlint.analysis.flow.changed_tables import changed_in
from qlint.analysis.flow.class_constructors import own_class
from qlint.analysis.flow.constructed_values import construct, is_module
from qlint.analysis.flow.function_flows import CallSite
from qlint.analysis.flow.given_setters import given_in
from qlint.analysis.flow.model_apis import is_class_call, key
from qlint.analysis.flow.model_env import Env, merge_values, new_value
from qlint.analysis.flow.model_factories import callables, factory_calls, lambda_body, parametrize_values
from qlint.analysis.flow.model_values import (
    CALL,
    CONSTRUCTED,
    CONTAINER,
    FACTORY,
    PARAM,
    UNKNOWN,
    UNKNOWN_MODE,
    ModeFact,
    Obj,
    Origin,
)
from qlint.analysis.flow.stored_fields import passed_for
from qlint.analysis.flow.stored_graphs import kept_graph
from qlint.analysis.flow.test_fixtures import fixture_call
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.names.scope import own_init, parameter_args, unique_value
from qlint.value_classes import replace


class Builds:
    """Constructions and factories met in one function's walk."""

    def __init__(self, sem):
        # The `model_calls.CallSemantics` of the walk, which owns this: a weak reference, so the
        # walk's objects are freed with it and not by the cyclic collector.
        self.sem = weakref.proxy(sem)
        self.cache: dict[int, Built] = {}  # per construction call, so a loop body's second pass agrees
        self.overwritten: set[tuple[Obj, str]] = set()  # `bundle.model = other` in this function
        # Per construction call: what a class written here holds of the function's modules
        # (`closure_parts`), for `held_parts` once the construction is made.
        self.closure_held: dict[int, list] = {}

    def parametrized(self, name: str, env: Env) -> Obj | None:
        """A test parameter is each `pytest.mark.parametrize` value in turn, not an unknown."""
        walk = self.sem.walk
        values = parametrize_values(walk.func, name, self.sem.resolver)
        if not values:
            return None
        if factory_calls(values, self.follows):
            return self.factory(walk.func, values, env)
        with self._at_function():
            objs = [walk.expr(v, env) or new_value(env, v, "", Origin(UNKNOWN, v)) for v in values]
        return merge_values(objs, env, walk.func)

    def fixture(self, fixtures, arg: ast.arg, env: Env) -> Obj | None:
        """A test's (or fixture's) parameter is what the pytest fixture of its name returns
        (`test_fixtures`), read as a call of it without arguments, at the parameter."""
        found = fixtures.lookup(arg.arg)
        if found is None:
            return None
        owner, func = found
        flow = owner.function(func, None)
        if flow is None or any(o.kind == PARAM for obj in flow.param_objs.values() for o in obj.origins):
            return None  # in progress (a cycle), or what it returns may hang on a parameter we cannot bind
        with self._at_function():  # a capture the fixture returns is recorded at a statement
            return self.sem.apply(fixture_call(func, owner.scope.path, arg), flow, 0, None, [], {}, env)

    @contextmanager
    def _at_function(self):
        """Parametrize values and fixtures are made before the body's first statement runs: the
        function itself stands for the statement they belong to."""
        walk = self.sem.walk
        walk.stmt_stack.append(walk.func)
        try:
            yield
        finally:
            walk.stmt_stack.pop()

    def construction(self, node: ast.Call, name: str | None) -> Built | None:
        """The construction `node` is, resolving its class first; None for any other call."""
        built = self.cache.get(id(node))
        if built is not None:
            return built
        index = self.sem.owner.classes
        cls = index.resolve(node.func, self.sem.resolver, self.sem.classes, name)
        own = own_class(self.sem, node) if cls is None else None  # `cls(...)` in a classmethod
        cls = cls or own
        if cls is None and (
            not is_class_call(name, node.func) or index.names_function(node.func, self.sem.resolver, name)
        ):
            return None
        written = own.name if own is not None else ".".join(dotted_parts(node.func) or ()) or (name or "the model")
        built = self.cache[id(node)] = Built(node, cls, self.sem.resolver, index, written, func=self.sem.walk.func)
        return built

    def follows(self, expr: ast.expr) -> bool:
        """A callable named by `expr` whose result we can work out: a function here, or a class."""
        if isinstance(expr, ast.Name) and (expr.id in self.sem.nested or expr.id in self.sem.owner.scope.functions):
            return expr.id not in self.sem.resolver.local
        return self.sem.owner.classes.resolve(expr, self.sem.resolver, self.sem.classes) is not None

    def callables(self, expr: ast.expr, key: ast.expr | None = None) -> list[ast.expr] | None:
        """The callables of the table `expr` (a lookup with `key`: those it may pick)."""
        if isinstance(expr, (ast.List, ast.Tuple, ast.Dict)):
            # Written in place (`for cb in [log, to_eval]: cb(gm)`): its names resolve here.
            return callables(expr, self.sem.resolver, self.follows, key)
        # Else a name only (`MODELS`): a subscript of anything else is no factory table we read.
        if not isinstance(expr, ast.Name):
            return None
        if expr.id not in self.sem.resolver.local and expr.id not in self.sem.owner.scope.assigns:
            return None  # a table of another module: its names resolve there
        found = callables(expr, self.sem.resolver, self.follows, key)
        return None if found is None or self._changed(expr.id) else found

    def _changed(self, name: str, depth: int = 0) -> bool:
        """Table `name` may hold other than its literal where it is looked up (`changed_tables`)."""
        local = self.sem.resolver.local
        if name in local:
            if changed_in(self.sem.walk.func, name):
                return True
            value = unique_value(local[name])  # `h = HANDLERS`: the module's table too
            return isinstance(value, ast.Name) and value.id != name and depth < 4 and self._changed(value.id, depth + 1)
        scope = self.sem.owner.scope
        bodies = [*scope.functions.values(), *(c.node for c in scope.classes.values())]
        return any(changed_in(body, name) for body in bodies)

    def factory(self, anchor: ast.AST, makes: list[ast.expr], env: Env) -> Obj:
        origin = Origin(FACTORY, anchor, makes=tuple(makes))
        return new_value(env, anchor, "", origin, {ModeFact("unknown", None, origin)})

    def factory_called(self, func: ast.expr, env: Env) -> tuple[ast.expr, ...] | None:
        if isinstance(func, ast.Subscript):
            makes = self.callables(func.value, func.slice)
            return tuple(makes) if makes else None
        if _one_key_get(func):  # `HANDLERS.get(kind)(gm)`: without a default, what the key picks
            makes = self.callables(func.func.value, func.args[0])
            return tuple(makes) if makes else None
        name = key(func)
        obj = env.vars.get(name) if name is not None else None
        if obj is None or len(obj.origins) != 1:
            return None
        (origin,) = obj.origins
        return origin.makes if origin.kind == FACTORY else None

    def make(self, node: ast.Call, maker: ast.expr, args, kwargs, env: Env) -> Obj:
        """The result of calling one callable of a factory at `node`."""
        if isinstance(maker, ast.Lambda):
            obj = self.sem.walk.expr(lambda_body(maker), env)
            return obj if obj is not None else new_value(env, node, "", Origin(CALL, node))
        cls = self.sem.owner.classes.resolve(maker, self.sem.resolver, self.sem.classes)
        if cls is not None:
            # The origin is the element (`"a": Net,`): one call of the factory builds any of them.
            written = ".".join(dotted_parts(maker) or ())
            built = Built(maker, cls, self.sem.resolver, self.sem.owner.classes, written)
            return self.construct(maker, built, [*args, *kwargs.values()], env)
        summary = self.sem.helper(maker)
        if summary is None:
            return new_value(env, node, "", Origin(CALL, node))
        return self.sem.apply(node, *summary, None, args, kwargs, env)

    def built_in_class(self, call: ast.Call) -> Built:
        """A `self.<attr> = Net()` of another method of this class, read here."""
        owner = self.sem.owner
        resolver = Resolver(owner.scope, owner.project, owner.optable, None, self.sem.class_scope)
        cls = owner.classes.resolve(call.func, resolver, {})
        written = ".".join(dotted_parts(call.func) or ()) or "the model"
        return Built(call, cls, resolver, owner.classes, written)

    def instantiation(self, node: ast.Call, built: Built, args, kwargs, env: Env) -> None:
        """`Quantizer(model)` of a class of this module: what its `__init__` parameters receive.
        Of the class of the module whose callers are being read (`project_callers`): a call of
        its `__init__` there (`construction_references`)."""
        cls = built.cls
        if cls is None:
            return
        foreign = cls.scope.path != self.sem.flow.path
        if foreign and not self.sem.owner.classes.followed(cls.scope.path):
            return  # a class of another module: its body is not read for this
        init = own_init(cls.node)
        if init is None or any(isinstance(a, ast.Starred) for a in node.args):
            return
        names = [a.arg for a in parameter_args(init, star=False)]
        passed = {i + 1: env.facts(obj) if obj is not None else UNKNOWN_MODE for i, obj in enumerate(args)}
        origins = {i + 1: obj.origins for i, obj in enumerate(args) if obj is not None}
        for kw in node.keywords:
            if kw.arg in names:
                obj = kwargs[kw.arg]
                passed[names.index(kw.arg)] = env.facts(obj) if obj is not None else UNKNOWN_MODE
                if obj is not None:
                    origins[names.index(kw.arg)] = obj.origins
        site = CallSite(init, node, passed, origins=origins)
        if foreign:
            self.sem.flow.foreign_calls.append((cls.scope.path, site))
        else:
            self.sem.flow.calls.append(site)

    def field(self, holder: Obj, attr: str, anchor: ast.AST, env: Env) -> Obj | None:
        """`bundle.model`: what the constructions `holder` came from passed for the attribute
        their class stores (`stored_fields`); None when one of them is not such a construction."""
        if (holder, attr) in self.overwritten:
            return None
        objs = []
        for origin in holder.origins:
            built = origin.built
            if origin.kind != CONSTRUCTED or not origin.passed or built is None or built.cls is None:
                return None
            spec = self.sem.owner.stored_fields(built.cls).get(attr)
            if spec is None and (kept := kept_graph(self.sem, origin, attr)) is not None:
                objs.append(kept[0])  # a graph a method switches: still that graph (`stored_graphs`)
                continue
            obj = passed_for(spec, *origin.passed) if spec is not None else None
            if obj is None or CONTAINER in obj.kinds:
                return None  # a container written in the construction is read at calls only (`held_contents`)
            objs.append(obj)
        return merge_values(objs, env, anchor) if objs else None

    def construct(self, node: ast.Call, built: Built, args: list[Obj | None], env: Env, passed: tuple = ()) -> Obj:
        """The value the construction makes, in the mode it starts in (`constructed_values`)."""
        return construct(self, node, built, args, env, passed)

    def given_part(
        self, holder: Obj, part: Obj | None, env: Env, at: ast.AST | None = None, steps: tuple | None = None
    ) -> None:
        """`model.bn = nn.BatchNorm1d(4)`: a part built right here starts in train mode, whatever
        mode the module it joins is in. A capture then bakes that part's training behaviour in
        (measured on torch 2.13/torchao 0.18: Conv->ReLU evaled, then given a BatchNorm2d, is
        captured as the all-train model is: calibration moves its running mean, max error 3.9
        against 0.04 for an eval capture), so the module counts as in the part's train mode.
        Only a part known to hold something whose behaviour depends on the mode: the rest of
        the module keeps its own mode, and a part of unknown content is not judged. `at` names
        where: the setter call (`given_setters`), or the assignment being walked; `steps`, the
        part's name a setter gives, keeps it a part in train mode of an evaled whole."""
        if part is None or part.kinds != {CONSTRUCTED} or not is_module(holder, env):
            return
        facts = env.facts(part)
        if facts and all(f.state == "train" for f in facts) and _mode_dependent(part):
            at = at or self.sem.walk.stmt_stack[-1]  # the assignment: the message names it
            given = frozenset(replace(f, node=at) for f in facts)
            if steps is not None:
                dependent = tuple(sorted({d for o in part.origins for d in o.built.content().dependent}))
                given = given_in(env.facts(holder), given, steps, at, dependent)
            env.modes[holder] = given


def _one_key_get(call: ast.expr) -> bool:
    """`table.get(key)`, with no default."""
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "get"
        and len(call.args) == 1
        and not call.keywords
        and not isinstance(call.args[0], ast.Starred)
    )


def _mode_dependent(part: Obj) -> bool:
    """Every construction `part` may come from holds a module whose behaviour depends on the mode."""
    builds = [o.built for o in part.origins]
    return all(b is not None and b.content().dependent for b in builds)
