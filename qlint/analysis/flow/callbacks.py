"""Callbacks a helper calls with (something built from) its other parameters.

ExecuTorch's Qualcomm `skip_annotation` captures a model, then hands the graph and a nested
`prepare_subgm` to `_partition_graph_into_submodules(gm, tag, subgm_cb, ptn)`, which fuses
partitions of `gm` into submodules and calls `subgm_cb(subgm, name)` on each: the capture
reaches `prepare_pt2e` only through the callback. The helper's summary records such calls
(`CallbackCall`: which parameter is called, at which argument position, with a value
derived from which parameters); the caller, which knows the function it passed, connects
its prepare calls to its own capture.

"Derived from" is syntactic on purpose: `subgm, inputs, outputs = fuse_as_graphmodule(gm,
...)` unpacks a call of another package, which the model flow does not see into. A value
counts as derived from a parameter when the expression, or an assignment, loop or `with`
that binds one of its names, mentions the parameter. A callback handed a graph carved out
of the captured one prepares that capture's graph: its mode is the capture's.
"""

from __future__ import annotations

import ast
import weakref

from qlint.analysis.flow.dead_branches import contradicted_at_call, open_ended
from qlint.analysis.flow.function_flows import Sink
from qlint.analysis.flow.handed_switches import handed_made, handed_to_callback
from qlint.analysis.flow.model_env import Env, uncopied
from qlint.analysis.flow.model_values import (
    APPLIED,
    EXPECTS_ERROR,
    ITEM,
    PARAM,
    PARAM_PART,
    Guard,
    ModeFact,
    Obj,
    Origin,
)
from qlint.analysis.names.scope import parameter_args
from qlint.value_classes import replace, value_class

_OWN_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


@value_class(frozen=True)
class CallbackCall:
    """`<parameter `param`>(..., <value derived from `sources`> at `position`, ...)`."""

    param: int
    position: int | str  # positional index, or the keyword it is passed by
    sources: frozenset[int]
    # The parameter passed as it came (`cb(gm)`), not something built from it: a callback that
    # switches the mode of what it is handed switches the caller's graph (QL203).
    same: int | None = None
    # The parameter's elements are called, not the parameter (`for cb in callbacks: cb(gm)`): each
    # function of the list or tuple the caller passes is called so.
    each: bool = False
    # An exported graph the helper makes itself and hands over as it is, neither allowed nor
    # copied (`gm = prepare_pt2e(...); cb(gm)`): where it came from, and the branches of the
    # helper the call lies in. A callback that switches what it is handed raises on it (QL203),
    # and the caller that chose the callback is where that is decided.
    made: frozenset[Origin] = frozenset()
    guard: Guard = frozenset()
    made_in: str = ""  # the file of the helper that made it
    # The graph made was allowed only through a spelling torch 2.13 lacks (`ModeSwitch.absent_allow`).
    absent_allow: tuple[ast.Call, ast.ExceptHandler] | None = None


class Derivation:
    """What the values of one function body are built from (its bindings, read once)."""

    def __init__(self, func: ast.AST):
        self.func = func
        self._bindings: tuple[dict[str, int], dict[str, tuple[str, ...]]] | None = None

    def params_of(self, expr: ast.expr) -> frozenset[int]:
        if self._bindings is None:
            self._bindings = _bindings(self.func)
        return derived_params(*self._bindings, expr)


class CallbackLinks:
    """The callback side of one function's `CallSemantics` (`sem`): records the calls of its
    callback parameters, and connects the callbacks it passes to what helpers call them with."""

    def __init__(self, sem):
        # `model_calls.CallSemantics` (not imported: it imports this module), which owns this:
        # a weak reference, so the walk's objects are freed with it and not by the cyclic collector.
        self.sem = weakref.proxy(sem)
        self.derivation = Derivation(sem.walk.func)

    def own_parameter(self, name: str, env: Env) -> int | None:
        flow = self.sem.flow
        param = flow.param_objs.get(name)
        return flow.params.index(name) if param is not None and env.vars.get(name) == param else None

    def called(self, node: ast.Call, name: str, env: Env, args: list, kwargs: dict) -> None:
        """`cb(graph, ...)` where `cb` is a parameter: the caller knows what `cb` prepares
        (`args`/`kwargs`: the values of the call's arguments)."""
        index = self.own_parameter(name, env)
        each = index is None
        if each and (index := self._element_parameter(env.vars.get(name))) is None:
            return
        passed: list[tuple[int | str, ast.expr, Obj | None]] = []
        for position, arg in enumerate(node.args):
            if isinstance(arg, ast.Starred):
                break
            passed.append((position, arg, args[position]))
        passed += [(kw.arg, kw.value, kwargs[kw.arg]) for kw in node.keywords if kw.arg is not None]
        for position, arg, obj in passed:
            same = self.own_parameter(arg.id, env) if isinstance(arg, ast.Name) else None
            made = self._made(obj, env) if same is None else frozenset()
            guard = frozenset(self.sem.walk.guards) if made else frozenset()
            sources = self.derivation.params_of(arg) - {index}
            made_in = self.sem.flow.path if made else ""
            absent = self.sem.walk.absent_allows.get(obj) if made else None
            self._record(CallbackCall(index, position, sources, same, each, made, guard, made_in, absent))

    def _made(self, obj: Obj | None, env: Env) -> frozenset[Origin]:
        """Where `obj` came from when it is an exported graph made in this body that nothing
        allowed or copied, and no error is expected around the call."""
        if obj is None or not obj.is_graph or obj in env.patched or obj in env.copied:
            return frozenset()
        return frozenset() if EXPECTS_ERROR in self.sem.walk.contexts else uncopied(obj, env)

    def _element_parameter(self, item: Obj | None) -> int | None:
        """The parameter `item` is an element of on every path (a loop straight over it)."""
        if item is None or len(item.origins) != 1:
            return None
        (o,) = item.origins
        params = self.sem.flow.params
        if o.kind != PARAM_PART or o.owner is not self.sem.walk.func or o.path != ((ITEM,),):
            return None
        return o.index if o.index is not None and o.index < len(params) and params[o.index] == o.name else None

    def _record(self, record: CallbackCall) -> None:
        calls = self.sem.flow.callback_calls
        if (record.sources or record.made) and record not in calls:  # a loop body runs twice
            calls.append(record)

    def passed(self, record: CallbackCall, actual: dict, env: Env, node: ast.Call | None = None, callee=None) -> None:
        """A helper (`callee`'s flow) calls the function passed here with values built from
        other arguments (`actual`: parameter index -> (value, expression) of this call, `node`)."""
        function = actual.get(record.param, (None, None))[1]
        if function is None:
            return
        sources = [actual[i] for i in sorted(record.sources) if i in actual]
        made = self._made_here(record, actual, node, callee)
        made_in = record.made_in if made else ""
        for called in self._elements(function) if record.each else (function,):
            for sink in self.sinks(called, record.position):
                for obj, _ in sources:
                    if obj is not None:
                        self.sem.reach(obj, sink)
            if node is not None and record.same in actual:
                switch = self.switch(called, record.position)
                if switch is not None:
                    obj, expr = actual[record.same]
                    handed_to_callback(self.sem, node, switch, obj, expr, env)
            if made and EXPECTS_ERROR not in self.sem.walk.contexts:
                self._switch_made(called, record.position, made, made_in, node, env, record.absent_allow)
        mine = self.own_parameter(function.id, env) if isinstance(function, ast.Name) else None
        if mine is not None:
            # Our own callback parameter, handed on: our caller knows what it is.
            derived = [self.derivation.params_of(expr) for _, expr in sources if expr is not None]
            same = None
            if record.same in actual and isinstance(actual[record.same][1], ast.Name):
                same = self.own_parameter(actual[record.same][1].id, env)
            # A graph made here and handed on with our callback (`relay(cb, gm)`), or one the
            # helper made, is made by us for our caller's callback.
            absent = record.absent_allow if made else None
            if record.same in actual and same is None and (graph := self._made(actual[record.same][0], env)):
                made, made_in = graph, self.sem.flow.path
                absent = self.sem.walk.absent_allows.get(actual[record.same][0])
            guard = frozenset(self.sem.walk.guards) if made else frozenset()
            derived = frozenset().union(*derived)
            self._record(CallbackCall(mine, record.position, derived, same, record.each, made, guard, made_in, absent))

    def _made_here(self, record: CallbackCall, actual: dict, node: ast.Call | None, callee) -> frozenset[Origin]:
        """The origins of the graph the helper makes for the callback (`record.made`), unless
        this call's arguments rule out the branches the helper calls it in."""
        if not record.made or node is None or callee is None:
            return frozenset()
        written = {i: expr for i, (_, expr) in actual.items()}
        if record.guard and contradicted_at_call(
            record.guard, callee.node, written, self.sem.resolver, callee.resolver, open_ended(node)
        ):
            return frozenset()
        return record.made

    def _switch_made(self, function: ast.expr, position, made, made_in: str, node, env: Env, absent=None) -> None:
        """`function`, chosen here, is called by the helper with a graph the helper made (in
        file `made_in`): a lambda written here is read with its parameter bound to that graph
        (its switch is reported where it is written; a graph made in another file is made at
        this call); a function that switches the argument is reported here."""
        if isinstance(function, ast.Lambda):
            if isinstance(position, int):
                if made_in != self.sem.flow.path:
                    made = frozenset(replace(o, node=node) for o in made)
                graph = Obj(node, "", made)
                env.modes[graph] = frozenset({ModeFact("unset", node, min(made, key=_at))})
                self.sem.lambdas.read_at(function, position, graph, env)
            return
        switch = self.switch(function, position)
        if switch is not None:
            handed_made(self.sem, node, switch, function, made, made_in, absent)

    def _elements(self, function: ast.expr) -> list[ast.expr]:
        """The functions of the list or tuple passed for a parameter whose elements are called:
        written there, or a name of this module bound to one (each is called; one we cannot
        follow does not hide the others)."""
        node = function
        if isinstance(function, ast.Name):
            located = self.sem.resolver.value_of(function)
            node = located.node if located is not None and located.scope is self.sem.resolver.scope else None
        if not isinstance(node, (ast.List, ast.Tuple)):
            return []
        return [e for e in node.elts if not isinstance(e, ast.Starred)]

    def switch(self, function: ast.expr, position: int | str, depth: int = 0):
        """The mode switch a function passed as a callback runs on argument `position`
        (`handed_switches.ParamSwitch`), None when it runs none."""
        if isinstance(function, ast.Call):
            # `functools.partial(to_eval, ...)`: its own positional arguments come first.
            # One that binds keywords may bind the parameter itself: not followed.
            partial = depth < 2 and function.args and not function.keywords and isinstance(position, int)
            if partial and self.sem.walk.qualname(function.func) == "functools.partial":
                return self.switch(function.args[0], position + len(function.args) - 1, depth + 1)
            return None
        if not isinstance(function, (ast.Name, ast.Attribute)):
            return None
        summary = self.sem.helper(function)
        if summary is None:
            return None
        flow, offset = summary
        index = position_in(flow.params, position, offset)
        return flow.param_switches.get(index) if index is not None else None

    def apply_parameter(self, node: ast.Call, func: ast.expr, first: Obj | None, env: Env) -> Obj | None:
        """`fn(model)` where `fn` is a callable parameter or an item of one (`for t in transforms:
        model = t(model)`, ExecuTorch's `source_transform`) and `model` this function's parameter
        as it came: the result is what the callables the caller passes make of it. Recorded in
        `applied` for the caller to substitute (`made_of`); None when it is not such a call."""
        if not isinstance(func, ast.Name) or first is None or first.captures:
            return None
        flow = self.sem.flow
        index = self._callable_parameter(env.vars.get(func.id))
        if index is None:
            return None
        model = None
        for fact in env.facts(first):
            o = fact.origin
            if fact.state != "unset" or o is None:
                return None
            if o.kind == PARAM and o.node is self.sem.walk.func and o.index is not None:
                came = o.index
            elif o.kind == APPLIED and o.index == index and id(o.node) in flow.applied:
                came = flow.applied[id(o.node)]  # the same callables again (a loop's next item)
            else:
                return None  # its mode was set here, or it is not the parameter
            if model not in (None, came):
                return None
            model = came
        if model is None:
            return None
        flow.applied[id(node)] = model
        obj = Obj(node, "", first.origins, first.captures)
        env.modes[obj] = frozenset({ModeFact("unset", node, Origin(APPLIED, node, index))})
        return obj

    def _callable_parameter(self, fn: Obj | None) -> int | None:
        if fn is None or len(fn.origins) != 1:
            return None
        (o,) = fn.origins
        params = self.sem.flow.params
        if o.index is None or o.index >= len(params) or params[o.index] != o.name:
            return None
        if (o.kind == PARAM and o.node is self.sem.walk.func) or o.kind == PARAM_PART:
            return o.index
        return None

    def made_of(self, callables: ast.expr | None, came: frozenset[ModeFact], node: ast.Call):
        """The modes of what the callables passed (one, or a list/tuple of them applied in any
        order, any number of them) return for a model in modes `came`: `came` itself when each
        returns the model it is given with its mode untouched. None when one is not a function
        the flow summarises, or may return something it does not follow."""
        if callables is None:
            return None
        items = callables.elts if isinstance(callables, (ast.List, ast.Tuple)) else [callables]
        # A loop over them that may not run is the helper's own path, with the model as it came.
        out = set() if items else set(came)
        for item in items:
            summary = self.sem.helper(item) if isinstance(item, (ast.Name, ast.Attribute)) else None
            if summary is None:
                return None
            flow, offset = summary
            if not flow.returns or any(obj is None for _, obj in flow.returns):
                return None
            foreign = flow.path != self.sem.flow.path
            for ret_env, obj in flow.returns:
                for f in ret_env.facts(obj):
                    o = f.origin
                    if f.state == "unset" and o is not None and o.kind == PARAM and o.node is flow.node:
                        if o.index != offset:
                            return None  # another parameter of the callable, which the helper fills
                        out |= came
                    else:
                        out.add(ModeFact(f.state, node if foreign else f.node, f.origin))
        return frozenset(out)

    def sinks(self, function: ast.expr, position: int | str, depth: int = 0) -> set[Sink]:
        """The prepare calls that argument `position` of a call of `function` reaches."""
        if isinstance(function, ast.Call):
            partial = depth < 2 and function.args and isinstance(position, int)
            if partial and self.sem.walk.qualname(function.func) == "functools.partial":
                return self.sinks(function.args[0], position + len(function.args) - 1, depth + 1)
            return set()
        if not isinstance(function, (ast.Name, ast.Attribute)):
            return set()
        summary = self.sem.helper(function)
        if summary is None:
            return set()
        flow, offset = summary
        index = position_in(flow.params, position, offset)
        return set(flow.param_sinks.get(index, ())) if index is not None else set()


def _at(origin: Origin) -> tuple[int, int]:
    return (origin.node.lineno, origin.node.col_offset)


def derived_params(params: dict[str, int], bindings: dict[str, tuple[str, ...]], expr: ast.expr) -> frozenset[int]:
    """Indices of the parameters that `expr` is built from (through local bindings)."""
    found: set[int] = set()
    seen: set[str] = set()
    stack = [n.id for n in ast.walk(expr) if isinstance(n, ast.Name)]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in params:
            found.add(params[name])
        stack.extend(bindings.get(name, ()))
    return frozenset(found)


def _bindings(func: ast.AST) -> tuple[dict[str, int], dict[str, tuple[str, ...]]]:
    """Parameter positions, and for each local name the names its bindings are built from."""
    params = {a.arg: i for i, a in enumerate(parameter_args(func, star=False))}
    sources: dict[str, set[str]] = {}

    def bind(targets: list[ast.AST], value: ast.AST | None) -> None:
        used = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} if value is not None else set()
        for target in targets:
            for node in ast.walk(target):
                if isinstance(node, ast.Name):
                    sources.setdefault(node.id, set()).update(used)

    stack = list(getattr(func, "body", []))
    while stack:
        node = stack.pop()
        if isinstance(node, _OWN_SCOPES):
            continue
        if isinstance(node, ast.Assign):
            bind(node.targets, node.value)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            bind([node.target], node.value)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            bind([node.target], node.iter)
        elif isinstance(node, ast.NamedExpr):
            bind([node.target], node.value)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            bind([node.optional_vars], node.context_expr)
        stack.extend(ast.iter_child_nodes(node))
    return params, {k: tuple(v) for k, v in sources.items()}


def position_in(params: list[str], position: int | str, offset: int) -> int | None:
    """The parameter index a callback's argument fills (`offset` 1 for a bound method)."""
    if isinstance(position, str):
        return params.index(position) if position in params else None
    return position + offset


__all__ = ["CallbackCall", "CallbackLinks", "Derivation"]
