"""The statement and expression walk behind `qlint.analysis.flow.model_flow`.

One `Interpreter` analyses one function (or module) body. It hands every call to the
`CallSemantics` it holds (`model_calls`), the part that knows what `export`, `prepare_pt2e`
or a same-module helper do.
"""

from __future__ import annotations

import ast
import itertools

from qlint.analysis.flow import (
    arm_graphs,
    built_items,
    comprehension_loops,
    indexed_items,
    left_graphs,
    product_items,
    test_fixtures,
)
from qlint.analysis.flow import decorator_registries as registries
from qlint.analysis.flow.built_parts import built_part
from qlint.analysis.flow.dead_branches import ConstantFlags, condition_of
from qlint.analysis.flow.field_instances import written_in_class_only
from qlint.analysis.flow.function_flows import FunctionFlow
from qlint.analysis.flow.graph_instances import graph_instance_condition, graph_instance_truth
from qlint.analysis.flow.graph_parts import GraphParts
from qlint.analysis.flow.handed_switches import param_switches
from qlint.analysis.flow.init_calls import evaled_before_call
from qlint.analysis.flow.init_parts import init_part
from qlint.analysis.flow.keyed_rows import KeyedRows
from qlint.analysis.flow.loop_effects import modules_switched
from qlint.analysis.flow.loop_items import LITERALS, Containers, element_of
from qlint.analysis.flow.looped_switches import looped_modules
from qlint.analysis.flow.maybe_graphs import graph_paths, note_made
from qlint.analysis.flow.model_apis import key
from qlint.analysis.flow.model_attrs import Evaled, InMode, Stored, given_parts
from qlint.analysis.flow.model_calls import CallSemantics
from qlint.analysis.flow.model_env import Env, fill_unread, join, merge_values, new_value
from qlint.analysis.flow.model_values import (
    ATTR,
    ATTRIBUTE,
    CALLED_AFTER_STORE,
    CONSTRUCTED,
    CONTAINER,
    EXPECTS_ERROR,
    IN_MODE,
    ITEM,
    KEY,
    PAIRS,
    PARAM,
    STORED,
    UNKNOWN,
    UNKNOWN_MODE,
    ModeFact,
    Obj,
    Origin,
    part_of,
)
from qlint.analysis.flow.patched_switches import replaces_switch
from qlint.analysis.flow.switched_params import Switched
from qlint.analysis.names.modules import resolve_relative
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.names.scope import ClassScope, ModuleScope, function_assigns, parameter_args
from qlint.analysis.tree_walk import CHILD_FIELDS as _CHILD_FIELDS
from qlint.analysis.tree_walk import child_fields, statement_lists
from qlint.value_classes import replace

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
# What `Interpreter.expr` reads no value from (None: an absent part, `return` alone). A
# comprehension is read as its loop (`comprehension_loops`), and still has no value followed.
_NOTHING_TO_FOLLOW = frozenset({ast.Lambda, ast.Constant, type(None)})
_COMPREHENSIONS = frozenset(comprehension_loops.COMPREHENSIONS)
_LITERAL_TYPES = frozenset(LITERALS)
_NAME, _CALL, _ATTRIBUTE, _SUBSCRIPT, _EXPR = ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.expr
_TRY = frozenset({ast.Try, getattr(ast, "TryStar", ast.Try)})
_LOOPS = frozenset({ast.For, ast.AsyncFor, ast.While})
# Statements that bind names the walk does not follow (or unbind them): what they named is gone.
_UNBINDING = frozenset({*_NESTED, ast.Import, ast.ImportFrom, ast.Delete})
_RAISES = frozenset({"raises", "assertRaises", "assertRaisesRegex"})
_CATCHES = frozenset({"NotImplementedError", "RuntimeError", "Exception", "BaseException"})
_SWITCHES = frozenset({"eval", "train"})


class Interpreter:
    def __init__(self, owner, func: ast.AST, class_scope: ClassScope | None, dropped: frozenset[int] | None = None):
        # `owner` is the `ModelFlow` driving this run (not imported: it imports this module).
        self.owner = owner
        self.func = func
        # The ids of the statements of `func` passed over (`caller_slices`; None: none). Everything
        # read of the body without walking it (its locals, constant flags, containers) is read whole.
        self.dropped = dropped
        local = function_assigns(func) if not isinstance(func, ast.Module) else {}
        self.resolver = Resolver(owner.scope, owner.project, owner.optable, local, class_scope)
        self.class_scope = class_scope
        self.local_imports, nested, classes = _local_definitions(func, owner.scope)
        # Per loop walked: the paths that `continue` (they start the next iteration) and those
        # that `break` (they leave the loop, past its `else`).
        self.loops: list[tuple[list[Env], list[Env]]] = []
        self.contexts: list[str] = []
        # The `try` bodies being walked, with the values allowed there through a spelling torch
        # 2.13 lacks (`library_calls.absent_allow`): after the body, they are not allowed.
        self.try_bodies: list[tuple[ast.Try, set[Obj]]] = []
        # The values allowed that way, with the allow call and the handler swallowing its error.
        self.absent_allows: dict[Obj, tuple[ast.Call, ast.ExceptHandler]] = {}
        self.guards: list[tuple[str, bool]] = []
        self.stmt_stack: list[ast.stmt] = []
        self.previous: list[ast.stmt | None] = []  # the statement before each of `stmt_stack`
        self.flags = ConstantFlags(func)  # `if False:`, `is_qat = True; if is_qat:`
        self.flow = FunctionFlow(func, owner.scope.path, [p.arg for p in parameter_args(func, star=False)])
        self.flow.resolver = self.resolver
        self.calls = CallSemantics(self, owner, self.resolver, class_scope, nested, classes)
        self.containers = Containers(func)  # lists and dicts written here, for loops over them
        # Rows of dicts keyed by constants, and the models read from them by key.
        self.containers.keyed = KeyedRows(func, owner, local, self.containers.literals)
        self.parts = GraphParts()  # graphs held in parts of local values (`pair[0]`, `holder.gm`)
        self._qualnames: dict[tuple[str, ...], str | None] = {}  # `qualname`, per spelling
        self._qualname_nodes: dict[int, tuple[ast.AST, str | None]] = {}  # and per node asked

    def absent_allow_of(self, obj: Obj, origins: frozenset = frozenset()) -> tuple[ast.Call, ast.ExceptHandler] | None:
        """The allow torch 2.13 cannot run (`absent_allows`) written for `obj`, else for one of the
        graphs `origins` names (the graphs a container holds, or the receiver may be after a join)."""
        found = self.absent_allows.get(obj)
        if found is None and origins:
            found = next((allow for graph, allow in self.absent_allows.items() if graph.origins & origins), None)
        return found

    def run(self) -> FunctionFlow:
        env = Env(unread={} if self.class_scope is not None else None)
        builds = self.calls.builds
        fixtures = test_fixtures.site(self.owner, self.func, self.class_scope, self.resolver)
        shadowed = test_fixtures.parametrized_names(self.func, self.resolver) if fixtures is not None else None
        for index, arg in enumerate(parameter_args(self.func, star=False)):
            obj = builds.parametrized(arg.arg, env) if getattr(self.func, "decorator_list", None) else None
            if obj is None and shadowed is not None and arg.arg not in shadowed and (index or not self.class_scope):
                obj = builds.fixture(fixtures, arg, env)  # pytest's fixture of that name
            if obj is None:
                obj = new_value(env, self.func, arg.arg, Origin(PARAM, self.func, index, arg.arg))
            env.vars[arg.arg] = self.flow.param_objs[arg.arg] = obj
        end = self.block(getattr(self.func, "body", []), env)
        if end is not None:
            self.flow.returns.append((end, None))
        param_switches(self.flow)
        values = [(e, obj) for e, obj in self.flow.returns if obj is not None]
        guards = self.calls.allow_guards
        self.flow.allowed_returns = bool(values) and all(obj in e.patched and not guards.get(obj) for e, obj in values)
        items = [(e, self.flow.return_items.get(i)) for i, (e, _) in enumerate(self.flow.returns)]
        if items and all(t is not None for _, t in items) and len({len(t) for _, t in items}) == 1:
            self.flow.allowed_items = frozenset(
                p
                for p in range(len(items[0][1]))
                if all(t[p] is not None and t[p] in e.patched and not guards.get(t[p]) for e, t in items)
            )
        left_graphs.summarise(self.flow, self.parts.roots, self.calls)
        return self.flow

    # -- statements --------------------------------------------------------------------
    def block(self, stmts: list[ast.stmt], env: Env | None) -> Env | None:
        previous = None
        # `if cond: return` holds `not cond` over the rest of the block (`branch` adds it):
        # it ends with the block.
        carried = len(self.guards)
        # A statement passed over (`caller_slices`) is still the one before the next.
        run = self.stmt if self.dropped is None else self._unless_dropped
        stack, previous_stack = self.stmt_stack, self.previous
        try:
            for stmt in stmts:
                if env is None:
                    return None
                stack.append(stmt)
                previous_stack.append(previous)
                try:
                    env = run(stmt, env)
                finally:
                    stack.pop()
                    previous_stack.pop()
                previous = stmt
            return env
        finally:
            del self.guards[carried:]

    def _unless_dropped(self, s: ast.stmt, env: Env) -> Env | None:
        return env if id(s) in self.dropped else self.stmt(s, env)

    def stmt(self, s: ast.stmt, env: Env) -> Env | None:
        # By the statement's type, as `expr` goes by the expression's.
        cls = type(s)
        if cls is ast.Expr:
            self.expr(s.value, env)
        elif cls is ast.Assign or cls is ast.AnnAssign:
            self.assign(s, env)
        elif cls is ast.If:
            return self.branch(s, env)
        elif cls is ast.AugAssign:
            self.expr(s.value, env)
            self.bind(s.target, None, None, env)
        elif cls is ast.Assert:
            self.expr(s.test, env)
        elif cls in _LOOPS:
            return self.loop(s, env)
        elif cls is ast.With or cls is ast.AsyncWith:
            return self.with_block(s, env)
        elif cls in _TRY:
            expecting = any(_catches_not_implemented(h) for h in s.handlers)
            self.contexts.append(EXPECTS_ERROR if expecting else "try")
            self.try_bodies.append((s, set()))
            try:
                body = self.block(s.body, env.copy())
            finally:
                self.contexts.pop()
                _, unallowed = self.try_bodies.pop()
            if body is not None and unallowed:
                body.patched = body.patched - (unallowed - env.patched)
            # A handler of the error a refused switch raises starts where the switch ended: only
            # an exported graph refuses `.eval()`/`.train()`, and its mode cannot change anyway.
            start = body if body is not None and _refused_switch(s) else join([env, body], s)
            handlers = [self.block(h.body, start.copy()) for h in s.handlers]
            out = join([self.block(s.orelse, body.copy()) if body else None, *handlers], s)
            return self.block(s.finalbody, out) if out is not None else None
        elif cls is ast.Match:
            self.expr(s.subject, env)
            return join([env, *(self.block(c.body, env.copy()) for c in s.cases)], s)
        elif cls is ast.Return:
            value = s.value
            if isinstance(value, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in value.elts):
                self.flow.return_items[len(self.flow.returns)] = tuple(self.expr(e, env) for e in value.elts)
                obj = None
            else:
                obj = self.expr(value, env) if value is not None else None
                if type(value) is ast.Dict or (type(value) is _NAME and self.parts.roots):
                    # `return {"model": gm}`: read back by the caller as `out["model"]`
                    left_graphs.return_parts(self.flow, self.parts.roots, self.containers.literals, value, env)
            made, held = self.calls.made_graphs, self.calls.held_graphs
            paths = graph_paths(obj, env, made, whole=True, held=held)
            if self.guards or held:  # `if is_qat: return model`: the parameter under the flag
                paths |= arm_graphs.param_paths(obj, env, held, self.guards)
            if paths:
                here = frozenset(self.guards)
                self.flow.return_graphs[len(self.flow.returns)] = frozenset((o, g | here) for o, g in paths)
            if obj is None and (made or self.guards or held):  # `return export_model, m` (`returned_copies`)
                items = self.flow.return_items.get(len(self.flow.returns), ())
                params = [arm_graphs.param_paths(v, env, held, self.guards) for v in items]
                found = [graph_paths(v, env, made, True, held) | p for v, p in zip(items, params, strict=True)]
                if any(found):
                    here = frozenset(self.guards)
                    self.flow.return_item_graphs[len(self.flow.returns)] = tuple(
                        frozenset((o, g | here) for o, g in p) for p in found
                    )
            self.flow.returns.append((env, obj))
            return None
        elif cls is ast.Raise:
            return None
        elif cls is ast.Continue:
            if self.loops:
                self.loops[-1][0].append(env)
            return None
        elif cls is ast.Break:
            if self.loops:
                self.loops[-1][1].append(env)
            return None
        elif cls in _UNBINDING:
            for name in _bound_names(s):
                env.vars.pop(name, None)
            for target in s.targets if isinstance(s, ast.Delete) else ():
                if isinstance(target, (ast.Attribute, ast.Subscript)) and isinstance(target.value, ast.Name):
                    self.parts.rebound(target.value.id, env)  # `del pair[0]`: the others move
        return env

    def assign(self, s: ast.Assign | ast.AnnAssign, env: Env) -> None:
        targets = s.targets if isinstance(s, ast.Assign) else [s.target]
        value = s.value
        if isinstance(value, (ast.Tuple, ast.List)) and any(isinstance(t, (ast.Tuple, ast.List)) for t in targets):
            objs = [self.expr(v, env) for v in value.elts]  # `a, b = x, y`: each element once
            for target in targets:
                if isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == len(objs):
                    for t, v, obj in zip(target.elts, value.elts, objs, strict=True):
                        self.bind(t, obj, v, env)
                else:
                    self.bind(target, None, value, env)
            return
        obj = self.expr(value, env) if value is not None else None
        items = self.calls.unpacked.pop(id(value), None) if isinstance(value, ast.Call) else None
        # `enc = m.encoder`: what the name reaches, taken before a binding that may rebind `m`.
        reached = self.calls.held_parts.path(value, env) if _chain(value) else None
        for target in targets:
            if items is not None and isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == len(items):
                for t, item in zip(target.elts, items, strict=True):  # `model, x = build()`
                    if item is not None and not isinstance(t, ast.Starred):
                        self.bind(t, item, None, env)
                    else:
                        self.bind_unknown(t, value, env)
                continue
            self.bind(target, obj, value, env)
            if reached is not None and isinstance(target, ast.Name):
                self.calls.held_parts.bound(target.id, reached, env)
            if type(target) is _NAME and (items is not None or id(value) in self.calls.returned_parts):
                # `out = f()` with `return {"model": gm}` or `return gm, info`: `out["model"]`, `out[0]`
                left_graphs.bound_parts(self.calls, self.parts, target.id, value, items, env)

    def known_truth(self, test: ast.expr, env: Env) -> bool | None:
        """The truth of a test this body decides: a constant flag (`dead_branches`), or an
        `isinstance(gm, torch.fx.GraphModule)` on a name holding a graph."""
        truth = self.flags.truth(test)
        if truth is None:
            truth = graph_instance_truth(test, lambda n: _holds_graph(env, n), self.resolver)
        return truth

    def branch(self, s: ast.If, env: Env) -> Env | None:
        truth = self.known_truth(s.test, env)
        if truth is not None:  # the other arm cannot run: nothing it does counts
            self.expr(s.test, env)
            return self.block(s.body if truth else s.orelse, env)
        ends: list[bool] = []

        def arm(e: Env, b: list[ast.stmt]):
            out = self.block(b, e)
            ends.append(out is None)
            return out, None

        out, _, _ = self.fork(s.test, [lambda e, b=b: arm(e, b) for b in (s.body, s.orelse)], env, s)
        condition = self.condition(s.test)
        if condition is not None and out is not None and ends.count(True) == 1:
            # One arm returns (raises, breaks, continues): what follows runs under the other's
            # condition, so a prepare after `if qmode == NONE: return gm` needs `qmode != NONE`.
            self.guards.append((condition[0], condition[1] == ends[1]))
        elif out is not None and ends == [False, True]:
            # `if a and b: ... else: return`: what follows runs under each of them.
            self.guards.extend(_conjuncts(s.test, self.resolver.local))
        return out

    def condition(self, test: ast.expr) -> tuple[str, bool] | None:
        """A branch test this walk can name (`dead_branches.condition_of`), or an `isinstance`
        test on a parameter that a call handing it an exported graph decides (`graph_instances`)."""
        return condition_of(test, self.resolver.local) or graph_instance_condition(test, self.resolver)

    def fork(self, test: ast.expr, arms, env: Env, anchor: ast.AST):
        """Run both arms of `if`/`a if c else b`, each remembering its condition on what it sets."""
        self.expr(test, env)
        condition = self.condition(test)
        # `a and b`: the first arm runs under each conditions recognised among them; the other
        # under their negated conjunction, which no guard says (IPEX's trainer optimises under
        # `use_ipex and not int8` and captures under `inductor and not training` + `int8`).
        conjuncts = _conjuncts(test, self.resolver.local) if condition is None else []
        outs, values, pushes = [], [], []
        for run, polarity in zip(arms, (True, False), strict=True):
            if condition is not None:
                pushed = [(condition[0], condition[1] == polarity)]
            else:
                pushed = conjuncts if polarity else []
            self.guards.extend(pushed)
            try:
                out, value = run(env.copy())
            finally:
                del self.guards[len(self.guards) - len(pushed) :]
            outs.append(out)
            values.append(value)
            pushes.append(pushed)
        if env.unread and all(o is not None for o in outs):
            fill_unread(outs, env.unread)  # before the tags: the arm that never read it differs too
        if condition is not None and all(o is not None for o in outs):
            _tag(outs[0], outs[1], condition)
        elif conjuncts and all(o is not None for o in outs):
            _tag_first(outs[0], outs[1], conjuncts)
        joined = join(outs, anchor)
        made = self.calls.made_graphs  # a graph made here: the arms' conditions go with it (`arm_graphs`)
        if not made and not self.flow.copies:  # (or a parameter copied on an arm)
            return joined, values, None
        guards = [frozenset(pushed) for pushed in pushes]
        if any(guards) and type(anchor) is not ast.IfExp:  # `if c: e = gm` / `else: e = model`
            arm_graphs.arm_names(self.calls.held_graphs, made, joined, outs, guards, anchor)
        # Each arm's value with its end and conditions, for `a if c else b` (`arm_graphs`).
        return joined, values, list(zip(values, outs, guards, strict=True))

    def loop(self, s, env: Env) -> Env | None:
        items = self.expr(s.test if isinstance(s, ast.While) else s.iter, env)
        continues: list[Env] = []
        breaks: list[Env] = []
        self.loops.append((continues, breaks))
        entry, outs = env, []
        for second in (False, True):  # the second pass sees what the first leaves for the next iteration
            start = entry.copy()
            if not isinstance(s, ast.While) and not self.bind_factories(s, start) and not self.bind_items(s, start):
                self.bind_unknown(s.target, s, start, items)
            outs.append(self.block(s.body, start))
            # A `break` starts no next iteration: `if x is None: m.train(); break` leaves the
            # capture after it in the body in the mode the loop found. No pass starts after
            # the second: its entry is not made, unless a `self.<attr>` read on some path
            # must be filled into the others (`fill_unread`, which the join does in place).
            if not second or env.unread:
                entry = join([env, outs[-1], *continues], s)
        self.loops.pop()
        ended = join([env, *outs, *continues], s)  # the loop ran out: its `else` runs
        walked = looped_modules(s) if not isinstance(s, ast.While) else None
        if walked is not None and ended is not None:  # `for mod in m.modules(): mod.eval()`
            over, reach, found = walked
            modules_switched(self.calls, over, reach, found, found.switch, ended, self.qualname, s)
        if s.orelse and ended is not None:
            ended = self.block(s.orelse, ended)
        return join([ended, *breaks], s) if breaks else ended

    def bind_factories(self, s: ast.For | ast.AsyncFor, env: Env) -> bool:
        """`for make in MODELS`, `for name, make in MODELS.items()`: the loop variable is a factory."""
        it, target = s.iter, s.target
        method = it.func.attr if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) else None
        if method in ("items", "values") and not it.args:
            it = it.func.value
        elif method is not None:
            return False
        makes = self.calls.builds.callables(it)
        if not makes:
            return False
        if method == "items":
            if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
                return False
            self.bind_unknown(target.elts[0], s, env)
            target = target.elts[1]
        if key(target) is None:
            return False
        env.vars[key(target)] = self.calls.builds.factory(s, makes, env)
        return True

    def bind_items(self, s: ast.For | ast.AsyncFor, env: Env) -> bool:
        """`for m in [A(), B().eval()]`, `for i, m in enumerate(models)` over a container written
        here: the target is bound to the models it holds (`loop_items`)."""
        items = self.containers.loop(s, env)
        if items is None:
            return False
        for name, item in items:
            if item is None:
                self.bind_unknown(name, s, env)
            else:
                env.vars[name.id] = item
        rows = self.containers.rows(s, env)
        if rows is not None:  # `for case in cases:` over dicts read as `case[KEY]` (`keyed_rows`)
            target, dicts = rows
            self.containers.keyed.bind(s, env.vars.get(target.id), dicts, env)
        return True

    def with_block(self, s, env: Env) -> Env | None:
        pushed = 0
        for item in s.items:
            self.expr(item.context_expr, env)
            ctx_expr = item.context_expr
            func = ctx_expr.func if isinstance(ctx_expr, ast.Call) else ctx_expr
            name = EXPECTS_ERROR if _is_raises(func) else self.qualname(func)
            if name:
                self.contexts.append(name)
                pushed += 1
            if item.optional_vars is not None:
                self.bind_unknown(item.optional_vars, ctx_expr, env)
        try:
            return self.block(s.body, env)
        finally:
            del self.contexts[len(self.contexts) - pushed :]

    def bind(self, target: ast.expr, obj: Obj | None, value: ast.expr | None, env: Env) -> None:
        if type(target) is ast.Attribute and target.attr in _SWITCHES:
            holder = env.vars.get(key(target.value) or "")
            if holder is not None and replaces_switch(target, value, self.qualname, self.calls.nested, self.func):
                env.patched |= {holder}  # `gm.eval = types.MethodType(_noop, gm)`: its switches raise no more
        name = key(target)
        if name is not None:
            self.parts.rebound(name, env)
            if obj is None and value is not None and not _names_a_global(value, env):
                obj = new_value(env, value, name, Origin(UNKNOWN, value))  # so its later `.eval()` counts
                if isinstance(value, LITERALS):
                    self.containers.bound(obj, value)
                    self.parts.literal(name, value, self.containers.literals.get(id(value)), env)
                elif type(value) is ast.ListComp:  # `[(m, q) for m, q in itertools.product(ms, qs)]`
                    made = product_items.combinations(self.containers, value, self.qualname, env)
                    if made is None:  # `[GridSample(m, p) for m, p in itertools.product(ms, ps)]`
                        made = built_items.elements(self, value, env)
                    if made is not None:
                        self.containers.held[obj] = (False, made)
            if obj is None:
                env.vars.pop(name, None)
            else:
                env.vars[name] = obj
        elif isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
            self.bind_unknown(target, value or target, env)
        elif isinstance(target, ast.Attribute) and (holder := env.vars.get(key(target.value) or "")) is not None:
            self.calls.builds.overwritten.add((holder, target.attr))  # `bundle.model` is no longer what was passed
            self.calls.held_parts.replaced(target, env)  # `m.encoder = Other()`: a wrapper of the old one
            self.parts.stored(target, obj, env)
            self.calls.stored_on(holder, target.attr, obj)
            self.calls.builds.given_part(holder, obj, env)
            if obj is not None and obj.is_graph:
                # `model.block = export(model.block, ...).module()`: `model.eval()` would now raise.
                self.calls.holds_graph(holder)
        elif isinstance(target, (ast.Attribute, ast.Subscript)):
            self.parts.stored(target, obj, env)
            if type(target) is ast.Subscript:
                indexed_items.stored(self.containers, target, value, obj, env)  # `modules[i] = m`

    def bind_unknown(self, target: ast.expr, anchor: ast.AST, env: Env, source: Obj | None = None) -> None:
        """Bind names we cannot follow; items of a parameter (`for m in models`) stay its parts."""
        pairs = source is not None and any(o.path and o.path[-1] == (PAIRS,) for o in source.origins)
        for name, steps in _unpacked(target, (), pairs):
            part = part_of(source, anchor, steps) if source is not None else None
            env.vars[name] = new_value(env, anchor, name, part or Origin(UNKNOWN, anchor))

    def denied(self) -> list[tuple[frozenset, ...]]:
        """The conjunctions the enclosing branches deny, which no guard says: the body of
        `if not (a and b):` or the else of `if a and b:` cannot run where all of them hold."""
        out = []
        stack = self.stmt_stack
        for s, inner in itertools.pairwise(stack):
            if not isinstance(s, ast.If):
                continue
            test, positive = s.test, any(inner is b for b in s.body)
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test, positive = test.operand, not positive
            if positive or not any(inner is b for b in (*s.body, *s.orelse)):
                continue
            if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)):
                continue
            # Each conjunct as the conditions any of which makes it hold (`a and (b or c)`).
            alternatives = [_alternatives(v, self.resolver.local) for v in test.values]
            if all(alternatives):
                out.append(tuple(alternatives))
        return out

    # -- expressions -------------------------------------------------------------------
    def expr(self, e: ast.expr | None, env: Env) -> Obj | None:
        # By the node's type, the commonest first: a parser makes no subclasses of node types,
        # and this runs for every expression of every body walked (twice in a loop).
        cls = type(e)
        if cls is _NAME:
            return env.vars.get(e.id)
        if cls is _CALL:
            obj = self.calls.call(e, env)
            note_made(self.calls.made_graphs, obj, e, self.guards)
            return obj
        if cls in _NOTHING_TO_FOLLOW:
            return None
        if cls is _ATTRIBUTE:
            value = e.value
            if type(value) is _NAME and value.id == "self":
                name = f"self.{e.attr}"
                obj = env.vars.get(name)
                return obj if obj is not None else self.attribute(name, env)
            return self.part(e, env)
        if cls is _SUBSCRIPT:
            if (found := registries.lookup(self.calls, e, env)) is not None:
                return found  # `REGISTRY[type(config)]`
            if (found := self.containers.keyed.value(e, env)) is not None:
                return found  # `case[QCOM_MODULE]` of rows written here (`keyed_rows`)
            if makes := self.calls.builds.callables(e.value, e.slice):
                return self.calls.builds.factory(e, makes, env)  # `make = MODELS[name]`
            if (found := indexed_items.item(self.containers, e, env)) is not None:
                return found  # `modules[i]` of a list written here (`indexed_items`)
            return self.part(e, env)
        if cls in _LITERAL_TYPES:
            # Still no value of its own; a helper's call reads what it holds (`apply`).
            self.calls.literal_items[id(e)] = self.items_of(e, env)
            return None
        if cls in _COMPREHENSIONS:
            self.comprehension(e, env)
            return None
        if cls is ast.NamedExpr:
            obj = self.expr(e.value, env)
            self.bind(e.target, obj, e.value, env)
            return obj
        if cls is ast.Await:
            return self.expr(e.value, env)
        if cls is ast.IfExp:
            truth = self.known_truth(e.test, env)
            if truth is not None:  # `m if False else copy.deepcopy(m)`: the other arm cannot run
                self.expr(e.test, env)
                return self.expr(e.body if truth else e.orelse, env)
            arms = [lambda branch, x=x: (branch, self.expr(x, branch)) for x in (e.body, e.orelse)]
            merged, values, chosen = self.fork(e.test, arms, env, e)
            env.vars, env.modes, env.patched, env.copied = merged.vars, merged.modes, merged.patched, merged.copied
            env.partly_copied = merged.partly_copied
            values = [v for v in values if v is not None]
            obj = merge_values(values, env, e) if values else None
            if chosen is not None and obj is not None and obj.anchor is e:  # `m if is_qat else copy.deepcopy(m)`
                arm_graphs.note_arms(self.calls.held_graphs, self.calls.made_graphs, obj, chosen)
            return obj
        # The expressions under anything else (`a + b`, `x < y`, f-strings), in
        # `ast.iter_child_nodes` order, read from the fields that can hold them.
        for field_name in _CHILD_FIELDS.get(cls) or child_fields(cls):
            value = getattr(e, field_name, None)
            if type(value) is list:
                for child in value:
                    if isinstance(child, _EXPR):
                        self.expr(child, env)
            elif isinstance(value, _EXPR):
                self.expr(value, env)
        return None

    def comprehension(self, e: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp, env: Env) -> None:
        """`[f(m) for m in ms if c]`, read as the loop `for m in ms: if c: f(m)` would be
        (`comprehension_loops`); its targets are its own: the function's names keep their
        values after it."""
        own = comprehension_loops.targets(e)
        hidden = {name: env.vars[name] for name in own if name in env.vars}
        after = self.loop(comprehension_loops.as_loop(e), env)
        if after is None:  # (a comprehension has no statement that leaves the loop)
            return
        env.vars, env.modes, env.patched, env.copied = after.vars, after.modes, after.patched, after.copied
        env.partly_copied = after.partly_copied
        for name in own:
            env.vars.pop(name, None)
        env.vars.update(hidden)

    def part(self, e: ast.Attribute | ast.Subscript, env: Env) -> Obj | None:
        """An attribute or item of a value (`pair[0]`, `bundle.model`, `m.encoder`)."""
        held = self.parts.read(e, env)
        if held is not None:
            return held
        container = self.expr(e.value, env)
        attribute = type(e) is _ATTRIBUTE
        if attribute and container is not None:
            if (engine_model := self.calls.engine_part(container, e.attr)) is not None:
                return engine_model  # `deepspeed.init_inference(model).module`
            if (left := self.calls.containers.read(container, e.attr)) is not None:
                return left  # `prepare_core(m); m.core`: the graph the helper stored there (`left_graphs`)
            stored = self.calls.builds.field(container, e.attr, e, env)
            if stored is not None:
                return stored  # `bundle.model`: the model the bundle was built with
            if (built := init_part(self.calls, container, e, env)) is not None:
                return built  # `holder.model` that `Holder.__init__` builds (`init_parts`)
        if not attribute:
            if type(e.value) is _CALL and (item := left_graphs.returned_item(self.calls, e)) is not None:
                return item  # `f()["model"]`: the graph the helper returns there (`left_graphs`)
            self.expr(e.slice, env)
        step = (ATTR, e.attr) if attribute else (ITEM,)
        part = part_of(container, e, (step,))
        return new_value(env, e, "", part) if part is not None else None

    def items_of(self, e: ast.Dict | ast.List | ast.Tuple | ast.Set, env: Env) -> frozenset[ModeFact]:
        """The modes of the models a container literal holds (a dict's values). A constant holds
        no model; anything else the walk cannot follow (`**other`, `*rest`, a global) holds one
        in an unknown mode, and a nested literal is an item with items of its own."""
        if isinstance(e, ast.Dict):
            for k in e.keys:
                self.expr(k, env)
            elts, spread = e.values, None in e.keys
        else:
            elts, spread = e.elts, False
        facts: set[ModeFact] = set(UNKNOWN_MODE) if spread else set()
        elements = self.containers.literal(e, spread)
        for elt in elts:
            obj = self.expr(elt, env)
            if obj is None and type(elt) is _ATTRIBUTE:
                obj = built_part(elt, env)  # `[seq, seq.second]` (`built_parts`)
            elements.append(element_of(elt, obj, self.containers.literals))
            if isinstance(elt, ast.Constant):
                continue
            if isinstance(elt, LITERALS):
                inner = self.calls.literal_items[id(elt)]
                facts.add(ModeFact("unset", elt, Origin(CONTAINER, elt, items=inner)))
            elif obj is None or isinstance(elt, ast.Starred):
                facts |= UNKNOWN_MODE
            else:
                facts |= env.facts(obj)
        return frozenset(facts)

    def attribute(self, name: str, env: Env) -> Obj:
        """`self.<attr>` first read in this method: it was set elsewhere in the class."""
        source = self.owner.attribute_sources(self.class_scope, self.resolver).get(name)
        held = None
        if isinstance(source, ast.Call):
            built = self.calls.builds.built_in_class(source)
            given = given_parts(self.class_scope.node).get(name)
            if given:  # parts built in train mode, given to it in a method of the class
                built = replace(built, given=tuple(self.calls.builds.built_in_class(c) for c in given))
            held = Origin(CONSTRUCTED, source, built=built)
            facts = {ModeFact("train", source, held)}
        elif isinstance(source, Evaled) and not source.passed_on_in - {id(self.func)}:
            held = Origin(CONSTRUCTED, source.call, built=self.calls.builds.built_in_class(source.call))
            facts = {ModeFact("eval", source.switch, held)}
        elif isinstance(source, Switched) and not source.passed_on_in - {id(self.func)}:
            # `module.eval()` then `self.model = module` in `__init__`: the caller's object, in
            # that mode (its constructions decide what it holds).
            held = Origin(STORED, source.init, source.index, source.param)
            facts = {ModeFact(source.mode, source.switch, held)}
            branch = source.branch
            if branch is not None:
                # The other arm of `if training: module.train() else: module.eval()`: the
                # constructions' flags decide which ran (`constructor_flags`).
                other = branch.other
                facts.add(
                    ModeFact("train", other, held) if other is not None else ModeFact("unset", source.target, held)
                )
        elif isinstance(source, Stored) and not source.passed_on_in - {id(self.func)}:
            # Stored from `__init__` and handed to nothing elsewhere: what the caller passed.
            held = Origin(STORED, source.init, source.index, source.param)
            facts = {ModeFact("unset", source.target, held)}
        elif isinstance(source, InMode) and not source.passed_on_in - {id(self.func)} and self._in_class_only(name):
            # Every store of it in the class is of a model in a known mode, switched nowhere
            # since (`model.eval()` then `self.model = model` in `__call__`).
            held = Origin(IN_MODE, self.func, name=name)
            facts = {ModeFact(mode, switch, held) for mode, switch in source.stores}
        if (
            held is None
            and self.class_scope is not None
            and (switch := evaled_before_call(self.owner.scope, self.class_scope.node, self.func, name))
        ):
            # A private method another method of the class calls once, right after storing an
            # eval-mode model in the attribute (`init_calls`).
            held = Origin(CALLED_AFTER_STORE, self.func, name=name)
            facts = {ModeFact("eval", switch, held)}
        origin = Origin(ATTRIBUTE, self.func, name=name, source=held)
        if held is None:
            facts = {ModeFact("unknown", None, origin)}
        obj = new_value(env, self.func, name, origin, facts)
        env.vars[name] = obj
        if env.unread is not None:
            env.unread.setdefault(name, (obj, env.modes[obj]))
        return obj

    def _in_class_only(self, name: str) -> bool:
        """Nothing of the module but the class's own stores writes the attribute (no subclass
        here, no write from outside, no base of another module: `field_instances`)."""
        cls = self.class_scope.node
        top = self.owner.scope.classes.get(cls.name)
        return top is not None and top.node is cls and written_in_class_only(self.owner.scope, cls, name[5:])

    def qualname(self, expr: ast.AST) -> str | None:
        # Asked two or three times per call (and again on a loop's second pass): the node's
        # answer first, the node kept with it so that its id names no other node meanwhile
        # (a walk also reads nodes it makes, `comprehension_loops`, `partial_calls`).
        seen = self._qualname_nodes.get(id(expr))
        if seen is not None and seen[0] is expr:
            return seen[1]
        parts = dotted_parts(expr)
        if not parts:
            self._qualname_nodes[id(expr)] = (expr, None)
            return None
        # A call's name is asked by `callee`, by the API lookup and by the relay check, and a
        # loop's body is walked twice: one resolution per spelling and body. The answer depends
        # on the spelling and this body's names only, and the project modules it read were
        # logged (`shared_flows`) for this body at the first asking.
        spelled = tuple(parts)
        known = self._qualnames.get(spelled, False)
        if known is not False:
            self._qualname_nodes[id(expr)] = (expr, known)
            return known
        if parts[0] in self.local_imports and parts[0] not in self.resolver.local:
            found = ".".join([self.local_imports[parts[0]], *parts[1:]])
        else:
            found = self.resolver.qualname_of(parts)
        self._qualnames[spelled] = found
        self._qualname_nodes[id(expr)] = (expr, found)
        return found


# -- small pure helpers -------------------------------------------------------------------
def _unpacked(target: ast.expr, at: tuple, pairs: bool):
    """(name, the steps from an item of the iterated container to it) for each name a loop
    target binds: one item, then an element per level of unpacking; over `.items()` the
    pair's first element is the key and its second the item (steps None: not followed)."""
    if isinstance(target, ast.Name):
        name = target.id
        if not pairs:
            yield name, ((ITEM,), *((ITEM,) for _ in at))
        elif len(at) >= 1:
            yield name, ((KEY,) if at[0] == 0 else (ITEM,), *((ITEM,) for _ in at[1:]))
        else:
            yield name, None  # the pair itself
    elif isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(t, ast.Starred) for t in target.elts):
        if pairs and not at and len(target.elts) != 2:
            pairs = False
        for i, elt in enumerate(target.elts):
            yield from _unpacked(elt, (*at, i), pairs)
    else:
        for node in ast.walk(target):
            if (name := key(node)) is not None:
                yield name, None


def _chain(value: ast.expr | None) -> bool:
    """An attribute chain (`m.encoder`, `m.encoder.eval()`): what a name bound to a part is."""
    while isinstance(value, ast.Call) and not value.args and isinstance(value.func, ast.Attribute):
        value = value.func.value
    return isinstance(value, ast.Attribute)


def _bound_names(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in stmt.names]
    if isinstance(stmt, ast.Delete):
        return [k for t in stmt.targets if (k := key(t))]
    return [stmt.name] if hasattr(stmt, "name") else []


def _names_a_global(value: ast.expr, env: Env) -> bool:
    """A constant, or a dotted path such as `torch.export` (an alias the resolver follows)."""
    if isinstance(value, ast.Constant):
        return True
    parts = dotted_parts(value)
    return parts is not None and parts[0] not in env.vars


def _is_raises(func: ast.expr) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr in _RAISES) or (
        isinstance(func, ast.Name) and func.id in _RAISES
    )


def _catches_not_implemented(handler: ast.ExceptHandler) -> bool:
    if _raises_again(handler):
        return False  # logs and raises (`raise QuantizationError(...) from e`): the switch still fails
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any((dotted_parts(t) or [""])[-1] in _CATCHES for t in types)


def _raises_again(handler: ast.ExceptHandler) -> bool:
    """The handler ends in a `raise` that nothing in it can step around (no `return`,
    `break` or `continue` anywhere in it), of anything but a test's skip."""
    last = handler.body[-1] if handler.body else None
    if not isinstance(last, ast.Raise):
        return False
    raised = last.exc.func if isinstance(last.exc, ast.Call) else last.exc
    if raised is not None and "skip" in ".".join(dotted_parts(raised) or ()).lower():
        return False  # `raise unittest.SkipTest(...)`: a test that expects the refusal skips
    return not any(isinstance(n, (ast.Return, ast.Break, ast.Continue)) for n in ast.walk(handler))


def _refused_switch(s: ast.Try) -> bool:
    """`try: model = model.eval()` (or `.train(...)`) alone, `except NotImplementedError:` by
    name: the handler runs only when the receiver is an exported graph, which refuses the switch
    (torch 2.13) and whose mode was fixed when it was captured. A broader handler (`Exception`)
    or a longer body could also catch something else, so they keep the path without the switch."""
    if len(s.body) != 1 or not isinstance(s.body[0], (ast.Expr, ast.Assign)):
        return False
    call = s.body[0].value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in _SWITCHES):
        return False
    if dotted_parts(call.func.value) is None:  # `load(m).eval()`: the call before it can raise too
        return False
    for handler in s.handlers:
        types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if any(t is not None and (dotted_parts(t) or [""])[-1] == "NotImplementedError" for t in types):
            return True
    return False


def _alternatives(test: ast.expr, local: dict) -> frozenset:
    """The recognised conditions any of which makes `test` true (`b or c`); none when one is not."""
    values = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
    found = [condition_of(v, local) for v in values]
    return frozenset(found) if all(f is not None for f in found) else frozenset()


def _holds_graph(env: Env, name: str) -> bool:
    """The local name holds an exported graph on every path that reaches here."""
    obj = env.vars.get(name)
    return obj is not None and obj.is_graph


def _conjuncts(test: ast.expr, local: dict) -> list[tuple[str, bool]]:
    """The recognised conditions of `a and b and ...`, each of which holds when it is true
    (also nested: `a and (b and c)`); none for anything else."""
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)):
        return []
    out = []
    for value in test.values:
        found = condition_of(value, local)
        if found is not None:
            out.append(found)
        else:
            out.extend(_conjuncts(value, local))
    return out


def _tag_first(then: Env, orelse: Env, conditions: list[tuple[str, bool]]) -> None:
    """Facts only the first arm has hold under all its conditions; those only the other arm
    has, under their negated conjunction, which no guard says: left as they are."""
    theirs_all = dict(orelse.modes)
    for obj, facts in dict(then.modes).items():
        theirs = theirs_all.get(obj, frozenset())
        if facts != theirs:
            then.modes[obj] = frozenset(f if f in theirs else _guarded_all(f, conditions) for f in facts)


def _guarded_all(fact: ModeFact, conditions: list[tuple[str, bool]]) -> ModeFact:
    for condition in conditions:
        fact = fact.guarded(condition)
    return fact


def _tag(then: Env, orelse: Env, condition: tuple[str, bool]) -> None:
    """Facts only one arm has hold only under that arm's condition."""
    name, polarity = condition
    before = {id(then): dict(then.modes), id(orelse): dict(orelse.modes)}
    for env, other, arm in ((then, orelse, polarity), (orelse, then, not polarity)):
        theirs_all = before[id(other)]
        for obj, facts in before[id(env)].items():
            theirs = theirs_all.get(obj, frozenset())
            if facts != theirs:
                env.modes[obj] = frozenset(f if f in theirs else f.guarded((name, arm)) for f in facts)


def _local_definitions(func: ast.AST, scope: ModuleScope):
    """Imports (common in library code), helper functions and classes written inside a function body."""
    found: dict[str, str] = {}
    nested: dict[str, ast.AST] = {}
    classes: dict[str, ast.ClassDef] = {}
    if isinstance(func, ast.Module):
        return found, nested, classes
    stack = [func.body]
    while stack:
        for node in stack.pop():
            if isinstance(node, ast.Import):
                for a in node.names:
                    found[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                base = resolve_relative(scope.module, scope.path, node.level, node.module)
                for a in node.names if base else ():
                    found[a.asname or a.name] = f"{base}.{a.name}"
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                nested[node.name] = node
            elif isinstance(node, ast.ClassDef):
                # Two classes of one name (an `if`/`else`): which one a call builds is not known.
                classes[node.name] = None if node.name in classes else node
            elif not isinstance(node, _NESTED):
                stack.extend(statement_lists(node))
    return found, nested, classes
