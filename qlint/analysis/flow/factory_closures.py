"""A model handed to the callable a project factory returns (issue 14, item 4):

    def make_transform(kind):
        return lambda m: Wrapped(m)          # or `def apply(m): ...; return apply`

    model = make_transform(kind)(model)      # or `t = make_transform(kind); model = t(model)`

The factory's call hands back a value the walk cannot see into, so the application was an
unknown call and the model after it unknown: a capture of a `Wrapped` holding `Dropout` went
quiet where `model = Wrapped(model)` is reported. When the factory is a plain function of the
project (not async, no generator, under no decorator that is no pass-through) whose every
`return` is a lambda, a function it defines there once, or a function of its module, the
application runs one of those callables, each read as a helper called right there with the
application's arguments (`helper_calls.apply`): a new module it wraps the argument in starts
in train mode, an argument it hands back keeps its mode (or the one the callable switched it
to), parts it replaces are read as for any helper. Several callables are several paths, joined.
Anything else a `return` gives (a table's item, a parameter, `None` spelled out) leaves the
application what an unknown call's result is, as before.

The callable is the factory's only while the name holds that call's value on this path: a
name rebound since (or on some path) is another value, read as any callable. A lambda is read
as the function it is (`lambda_def`): one parameter list, one `return` of its body.

The factory may also be a method: `Builder.make(kind)(model)` for a `staticmethod` or
`classmethod` of a class the call names, or `self.make(kind)(model)`, found on the class or a
project base, as any `self.` helper is (`helper_callees.callee`). Through `self` (or `cls`) the
method is the one found only while no class of the module that may derive from the walked
class defines `make` again: an instance of such a subclass runs its own. And the factory's call
may be written at the module's top level (`T = make_transform("x")`, then `model = T(model)` in
a function): read there when that statement is the name's one binding in the module's tables,
no function declares the name `global` (it may rebind it at any time) and the function reads
the module's name (`enclosing_names.binding_scope`: it binds no `T` of its own, nor does a
function it is written in).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow import helper_callees
from qlint.analysis.flow.applied_lambdas import name_defined_here
from qlint.analysis.flow.class_methods import derives_from
from qlint.analysis.flow.enclosing_names import MODULE, binding_scope
from qlint.analysis.flow.inherited_methods import inherited_method
from qlint.analysis.flow.model_env import Env, join
from qlint.analysis.flow.model_values import CALL, CONSTRUCTED, ModeFact, Obj
from qlint.analysis.flow.pass_through import opaque
from qlint.analysis.names.callable_results import is_generator
from qlint.analysis.names.scope import function_assigns, unique_value
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.statement_walk import own_statements
from qlint.analysis.tree_walk import walk
from qlint.value_classes import replace

_RESULT = "<closure result>"  # the name the application's value is held under while paths join
_METHOD_KINDS = frozenset({"staticmethod", "classmethod"})


def applied_closure(sem, node: ast.Call, args: list, kwargs: dict, env: Env) -> Obj | None:
    """The value of `node` when its callee is what a project factory returns (see above);
    what the callables do to the models they reach is kept in `env`. None otherwise."""
    func = node.func
    if type(func) is ast.Call:
        made = func
    elif type(func) is ast.Name and (held := env.vars.get(func.id)) is not None:
        made = held.anchor  # `t = make_transform(kind)`, the name's one binding, reached here
        if type(made) is not ast.Call or len(held.origins) != 1 or next(iter(held.origins)).kind != CALL:
            return None  # a model built or captured there (`model(x)`, `prepared(x)`): most calls of a name
        bound = sem.resolver.local.get(func.id)
        if not bound or len(bound) != 1 or unique_value(bound) is not made:
            return None
    elif type(func) is ast.Name and func.id in sem.owner.scope.assigns:
        made = _module_made(sem, func.id)  # `T = make_transform("x")` at the module's top level
        if made is None:
            return None
    else:
        return None
    found = _factory(sem, made.func)
    if found is None or not isinstance(found[1], ast.FunctionDef):
        return None
    owner, factory = found[0], found[1]
    # What it returns first (kept on the def): most calls of a name bound to a call's value
    # (`prepared = self.prepare(m)`, then `prepared(x)`) end there.
    returned = _returned(owner, factory)
    if not returned or not _dispatched(sem, made.func, found):
        return None
    if made is not func and type(func) is ast.Name and func.id not in env.vars and _declared_global(sem, func.id):
        return None  # checked last: it walks every function of the module
    flows = []
    for callable_def in returned:
        flow = owner.function(callable_def, None)
        if flow is None:
            return None  # in progress: a factory applied inside its own callable
        flows.append(flow)
    if not flows:
        return None
    if made is func:
        sem.walk.expr(made, env)  # the factory's call runs first (its arguments, its call site)
    label = factory.name
    if len(flows) == 1:
        return _named(sem.apply(node, flows[0], 0, None, args, kwargs, env), node, label, args, kwargs, env)
    paths = []
    for flow in flows:
        path = env.copy()
        path.vars[_RESULT] = _named(sem.apply(node, flow, 0, None, args, kwargs, path), node, label, args, kwargs, path)
        paths.append(path)
    joined = join(paths, node)
    result = joined.vars.pop(_RESULT)
    env.vars, env.modes, env.patched, env.copied = joined.vars, joined.modes, joined.patched, joined.copied
    env.partly_copied = joined.partly_copied
    return result


def _factory(sem, func: ast.expr):
    """`helper_callees.callee`'s answer for the factory, or, for `self.make` on a base of another
    project module, that base's method (which `callee` leaves to the caller search alone)."""
    found = helper_callees.callee(sem, func)
    if found is not None or type(func) is not ast.Attribute or not _on_self(func) or sem.class_scope is None:
        return found
    node = sem.class_scope.key_node()
    top = sem.owner.scope.classes.get(node.name)
    if top is None or top.key_node() is not node:
        return None  # a class written inside a function: its bases' names are not the module's
    inherited = inherited_method(sem.owner, top, func.attr)
    if inherited is None or opaque(inherited[0], inherited[1]):
        return None
    return (*inherited, 1)


def _on_self(func: ast.Attribute) -> bool:
    return type(func.value) is ast.Name and func.value.id in ("self", "cls")


def _module_made(sem, name: str) -> ast.Call | None:
    """The call the module's one top-level binding of `name` gives it, when the function
    walked reads that name (see above) and the call's factory is named as the module names it."""
    if isinstance(sem.walk.func, ast.Module) or name in sem.resolver.local or name_defined_here(sem, name):
        return None
    scope = sem.owner.scope
    values = scope.assigns.get(name)
    if not values or len(values) != 1 or name in scope.imports or name in scope.functions or name in scope.classes:
        return None
    made = values[0]
    if type(made) is not ast.Call:
        return None
    root = made.func
    while type(root) is ast.Attribute:
        root = root.value
    if type(root) is not ast.Name or root.id in sem.resolver.local or name_defined_here(sem, root.id):
        return None  # the function's own `make_transform` is not the one the module called
    if binding_scope(scope, sem.walk.func, sem.class_scope, name) != MODULE:
        return None
    return made


def _declared_global(sem, name: str) -> bool:
    """A function or method of the module declares `name` global: it may rebind it. Every body
    is read, as the watched tables count it (`carried_flows`): an edit of any may add one."""
    scope = sem.owner.scope
    tops = (*scope.functions.values(), *(c.node for c in scope.classes.values()))
    return any(type(n) is ast.Global and name in n.names for top in tops for n in walk(top))


def _dispatched(sem, func: ast.expr, found) -> bool:
    """The method `found` is the one the call runs: named on a class (`Builder.make`, a
    `staticmethod` or `classmethod`), or on `self`/`cls` of a class no class of the module that
    may derive from it overrides. A plain function: always."""
    method, holder, bound = found[1], found[2], found[3]
    if holder is None:
        return not bound
    if type(func) is not ast.Attribute:
        return False  # `fn = self.make`: whose `make` is not read here
    if not _on_self(func):
        return bool(method.decorator_list)  # on a class: `class_calls` takes only these two decorators
    walked = sem.class_scope
    if walked is None:
        return False
    scope = sem.owner.scope
    for cls in scope.classes.values():  # a summarised module builds them: a rare question
        if cls.key_node() is walked.key_node() or (func.attr not in cls.methods and func.attr not in cls.assigns):
            continue
        if derives_from(cls, walked, scope) is not False:
            return False  # `make` again in a class that may be a subclass
    return True


def _named(result: Obj | None, node: ast.Call, label: str, args: list, kwargs: dict, env: Env) -> Obj | None:
    """`result`, with a module a callable built named for messages by the application and the
    factory (`Origin.made_at`): where it was built in the callable means little here."""
    if result is None:
        return None
    given = {o for obj in (*args, *kwargs.values()) if obj is not None for o in obj.origins}
    facts = env.facts(result)
    if any(_built_inside(f, given) for f in facts):
        env.modes[result] = frozenset(_at_call(f, node, label) if _built_inside(f, given) else f for f in facts)
    return result


def _built_inside(fact: ModeFact, given: set) -> bool:
    origin = fact.origin
    return fact.state == "train" and origin is not None and origin.kind == CONSTRUCTED and origin not in given


def _at_call(fact: ModeFact, node: ast.Call, label: str) -> ModeFact:
    return replace(fact, node=node, origin=replace(fact.origin, made_at=label))


def _returned(owner, factory: ast.FunctionDef) -> tuple[ast.FunctionDef, ...]:
    """The functions `factory` returns (lambdas as `lambda_def`s), when every `return` of it
    gives one; () when one gives anything else or none is written."""
    answer = kept_on_node(factory, "_qlint_factory_closures", _returned_callables)
    out = []
    for kind, what in answer:
        if kind == "module":
            scope = owner.scope
            what = scope.functions.get(what) if what not in scope.assigns and what not in scope.imports else None
            if not isinstance(what, ast.FunctionDef):
                return ()
        if opaque(owner, what):
            return ()  # under a decorator of the project: the name is what that returned
        out.append(what)
    return tuple(out)


def _returned_callables(factory: ast.FunctionDef) -> tuple:
    """("lambda", its def) / ("nested", def) / ("module", name) for each distinct callable
    the returns of `factory` give; () when one gives anything else. A module function is kept
    by name: the answer is kept on `factory`, and holds no node beside or above it."""
    if any(type(d) is not ast.Name or d.id not in _METHOD_KINDS for d in factory.decorator_list):
        return ()  # a decorator of its own may return anything
    if is_generator(factory):
        return ()
    local = function_assigns(factory)
    stmts = list(own_statements(factory.body))
    nested: dict[str, list[ast.AST]] = {}
    for stmt in stmts:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            nested.setdefault(stmt.name, []).append(stmt)
        elif isinstance(stmt, (ast.Global, ast.Nonlocal)):
            return ()  # names bound elsewhere: not read here
    out: dict[tuple, None] = {}
    for stmt in stmts:
        if not isinstance(stmt, ast.Return):
            continue
        value = stmt.value
        if isinstance(value, ast.Lambda):
            out[("lambda", lambda_def(value))] = None
        elif isinstance(value, ast.Name) and value.id not in local:
            defs = nested.get(value.id)
            if defs is None:
                out[("module", value.id)] = None
            elif len(defs) == 1 and type(defs[0]) is ast.FunctionDef:
                out[("nested", defs[0])] = None
            else:
                return ()
        else:
            return ()
    return tuple(out)


def lambda_def(lam: ast.Lambda) -> ast.FunctionDef:
    """`lam` as the function it is, `def <lambda>(params): return body`, made once per lambda
    (the flows are kept by the function's identity); it holds `lam`'s own parts only."""
    return kept_on_node(lam, "_qlint_lambda_def", _as_def)


def _as_def(lam: ast.Lambda) -> ast.FunctionDef:
    body = ast.Return(value=lam.body)
    func = ast.FunctionDef(name="<lambda>", args=lam.args, body=[body], decorator_list=[], returns=None)
    if "type_params" in ast.FunctionDef._fields:  # Python 3.12 on
        func.type_params = []
    for made in (body, func):
        ast.copy_location(made, lam)
        made.end_lineno, made.end_col_offset = lam.end_lineno, lam.end_col_offset
    return func


__all__ = ["applied_closure", "lambda_def"]
