"""The statement and expression walk behind `qlint.analysis.flow.model_flow`.

One `Interpreter` analyses one function (or module) body. It hands every call to the
`CallSemantics` it holds (`model_calls`), the part that knows what `export`, `prepare_pt2e`
or a same-module helper do. The walk of the statements that hold others, and of what an
expression reads out of a value, are functions of their own modules, handed the walk:
`binding_walk` (assignments), `branch_walk` (`if`, `a if c else b`), `loop_walk` (loops and
comprehensions), `context_walk` (`with`, and what a `try` expects), `part_reads` (`pair[0]`,
`m.encoder`, container literals) and `self_attributes` (`self.<attr>` first read).
"""

from __future__ import annotations

import ast
import itertools

from qlint.analysis.flow import arm_graphs, comprehension_loops, indexed_items, left_graphs, test_fixtures
from qlint.analysis.flow import decorator_registries as registries
from qlint.analysis.flow.binding_walk import assign, bind, bound_names
from qlint.analysis.flow.branch_walk import alternatives_of, branch, fork, known_truth
from qlint.analysis.flow.context_walk import catches_not_implemented, refused_switch, with_block
from qlint.analysis.flow.dead_branches import ConstantFlags, condition_of
from qlint.analysis.flow.function_flows import FunctionFlow
from qlint.analysis.flow.graph_instances import graph_instance_condition
from qlint.analysis.flow.graph_parts import GraphParts
from qlint.analysis.flow.handed_switches import param_switches
from qlint.analysis.flow.keyed_rows import KeyedRows
from qlint.analysis.flow.loop_items import LITERALS, Containers
from qlint.analysis.flow.loop_walk import comprehension, loop
from qlint.analysis.flow.maybe_graphs import graph_paths, note_made
from qlint.analysis.flow.model_calls import CallSemantics
from qlint.analysis.flow.model_env import Env, join, merge_values, new_value
from qlint.analysis.flow.model_values import EXPECTS_ERROR, PARAM, Obj, Origin
from qlint.analysis.flow.part_reads import items_of, part
from qlint.analysis.flow.self_attributes import first_read
from qlint.analysis.names.modules import resolve_relative
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.names.scope import ClassScope, ModuleScope, function_assigns, parameter_args
from qlint.analysis.statement_walk import statement_lists
from qlint.analysis.tree_walk import CHILD_FIELDS as _CHILD_FIELDS
from qlint.analysis.tree_walk import child_fields

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
            assign(self, s, env)
        elif cls is ast.If:
            return branch(self, s, env)
        elif cls is ast.AugAssign:
            self.expr(s.value, env)
            bind(self, s.target, None, None, env)
        elif cls is ast.Assert:
            self.expr(s.test, env)
        elif cls in _LOOPS:
            return loop(self, s, env)
        elif cls is ast.With or cls is ast.AsyncWith:
            return with_block(self, s, env)
        elif cls in _TRY:
            expecting = any(catches_not_implemented(h) for h in s.handlers)
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
            start = body if body is not None and refused_switch(s) else join([env, body], s)
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
            for name in bound_names(s):
                env.vars.pop(name, None)
            for target in s.targets if isinstance(s, ast.Delete) else ():
                if isinstance(target, (ast.Attribute, ast.Subscript)) and isinstance(target.value, ast.Name):
                    self.parts.rebound(target.value.id, env)  # `del pair[0]`: the others move
        return env

    def condition(self, test: ast.expr) -> tuple[str, bool] | None:
        """A branch test this walk can name (`dead_branches.condition_of`), or an `isinstance`
        test on a parameter that a call handing it an exported graph decides (`graph_instances`)."""
        return condition_of(test, self.resolver.local) or graph_instance_condition(test, self.resolver)

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
            alternatives = [alternatives_of(v, self.resolver.local) for v in test.values]
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
                return obj if obj is not None else first_read(self, name, env)
            return part(self, e, env)
        if cls is _SUBSCRIPT:
            if (found := registries.lookup(self.calls, e, env)) is not None:
                return found  # `REGISTRY[type(config)]`
            if (found := self.containers.keyed.value(e, env)) is not None:
                return found  # `case[QCOM_MODULE]` of rows written here (`keyed_rows`)
            if makes := self.calls.builds.callables(e.value, e.slice):
                return self.calls.builds.factory(e, makes, env)  # `make = MODELS[name]`
            if (found := indexed_items.item(self.containers, e, env)) is not None:
                return found  # `modules[i]` of a list written here (`indexed_items`)
            return part(self, e, env)
        if cls in _LITERAL_TYPES:
            # Still no value of its own; a helper's call reads what it holds (`apply`).
            self.calls.literal_items[id(e)] = items_of(self, e, env)
            return None
        if cls in _COMPREHENSIONS:
            comprehension(self, e, env)
            return None
        if cls is ast.NamedExpr:
            obj = self.expr(e.value, env)
            bind(self, e.target, obj, e.value, env)
            return obj
        if cls is ast.Await:
            return self.expr(e.value, env)
        if cls is ast.IfExp:
            truth = known_truth(self, e.test, env)
            if truth is not None:  # `m if False else copy.deepcopy(m)`: the other arm cannot run
                self.expr(e.test, env)
                return self.expr(e.body if truth else e.orelse, env)
            arms = [lambda branch, x=x: (branch, self.expr(x, branch)) for x in (e.body, e.orelse)]
            merged, values, chosen = fork(self, e.test, arms, env, e)
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
