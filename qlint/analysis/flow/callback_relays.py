"""Higher-order helpers that call a callback only on the module they are given, or its submodules.

torchao's `_replace_with_custom_fn_if_matches_filter(model, replacement_fn, filter_fn)` calls
`replacement_fn(model)` or recurses into `model.named_children()` with the same callback: the
callback is only ever handed `model` or one of its descendants. `.eval()`/`.train()` set the
mode of a module and all its descendants, so what the callback gets is in the mode the caller
left `model` in: a lambda passed there (`lambda mod: capture_and_prepare(mod, ...)`) takes its
parameter in that mode, and its calls are calls with that model (`model_calls`).

The summary is syntactic and strict, so that it holds on every path:

- the callback parameter is only called (never stored, wrapped or handed to anything but the
  helper's own recursive call, at the same position), and never inside a nested scope or a
  comprehension, where names may be shadowed;
- at every call, one positional argument is the module parameter or a descendant of it
  (`for name, child in model.named_children()`, `list(model.children())`, `model.modules()`),
  by a flow-sensitive reading of the names: `model = replacement_fn(model)` rebinds the name
  for what follows on that path only;
- the helper's own recursive calls pass the callback at the same position and a descendant as
  the module;
- nothing in the helper switches a mode (`.train()`, `.eval()`, `.apply(...)`, `.training =`):
  a helper that does hands its callback modules in a mode of its own choosing.

Anything else gives no summary, and the callback's calls stay unread: callers of what it calls
are then not all known (issue 14, item 7).
"""

from __future__ import annotations

import ast

from qlint.analysis.names.scope import parameter_args
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import walk_kinds
from qlint.value_classes import value_class

_SWITCHES = frozenset({"train", "eval", "apply"})
_CALLS = frozenset({ast.Call})
_KIDS = frozenset({"children", "modules"})  # iterables of descendants (`modules()` includes itself)
_NAMED = frozenset({"named_children", "named_modules"})  # of (name, descendant) pairs
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_TRY = (ast.Try, getattr(ast, "TryStar", ast.Try))

MODEL, KIDS, NAMED = "model", "kids", "named"


@value_class(frozen=True)
class Relay:
    """Every call of parameter `callback` hands it parameter `model` (or a descendant) as its
    positional argument `position`."""

    callback: int
    model: int
    position: int


def relays(func: ast.AST) -> tuple[Relay, ...]:
    """The relays of a function definition (kept on its node)."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return ()
    return kept_on_node(func, "_qlint_relays", _relays)


def _relays(func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[Relay, ...]:
    if func.decorator_list:
        return ()
    params = [a.arg for a in parameter_args(func, star=False)]
    # A relay calls one of its parameters: most functions a call hands a name to never do, and
    # one walk turns them away without the two walks and the reading below (ExecuTorch asks
    # this of 153 functions).
    if not params or not _calls_a_parameter(func, frozenset(params)) or _switches_mode(func):
        return ()
    reading = _Reading(func, params)
    reading.block(func.body, {name: (MODEL, i) for i, name in enumerate(params)})
    found = []
    for k, name in enumerate(params):
        pairs = reading.calls.get(name)
        if not pairs or name in reading.escaped:
            continue
        common = set.intersection(*pairs)
        for recursive in reading.recursive:
            common = {(p, m) for p, m in common if (k, m) in recursive}
        found += [Relay(k, m, p) for p, m in sorted(common) if m != k]
    return tuple(found)


def _calls_a_parameter(func: ast.AST, params: frozenset[str]) -> bool:
    """Some call anywhere in `func` calls a parameter by its name (`_Reading.call` records
    only such calls, so without one no parameter is a callback)."""
    return any(isinstance(call.func, ast.Name) and call.func.id in params for call in walk_kinds(func, _CALLS))


def _switches_mode(func: ast.AST) -> bool:
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SWITCHES:
            return True
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Attribute) and t.attr == "training" for t in targets):
            return True
    return False


State = dict[str, tuple[str, int]]  # name -> (MODEL | KIDS | NAMED, the module parameter it comes from)


class _Reading:
    """One pass over the body: the calls of each parameter with what each may pass."""

    def __init__(self, func: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str]):
        self.func = func
        self.params = params
        self.index = {name: i for i, name in enumerate(params)}
        # parameter name -> one set per call: {(position, module parameter)} it may be handed
        self.calls: dict[str, list[set[tuple[int, int]]]] = {}
        self.escaped: set[str] = set(_assigned(func) & set(params))  # a rebound callback is not the caller's
        self.recursive: list[set[tuple[int, int]]] = []  # per recursive call: the (callback, model) it keeps
        self.accounted: set[int] = set()  # ids of parameter loads read as a call or a forwarded callback

    # -- statements ----------------------------------------------------------------------
    def block(self, stmts: list[ast.stmt], state: State | None) -> State | None:
        for stmt in stmts:
            if state is None:
                return None
            state = self.stmt(stmt, state)
        return state

    def stmt(self, s: ast.stmt, state: State) -> State | None:
        if isinstance(s, (ast.Return, ast.Raise)):
            self.expressions(s, state)
            return None
        if isinstance(s, ast.If):
            self.expressions(s.test, state)
            return _join(self.block(s.body, dict(state)), self.block(s.orelse, dict(state)))
        if isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
            header = s.iter if isinstance(s, (ast.For, ast.AsyncFor)) else s.test
            self.expressions(header, state)
            entry = state
            for _ in range(2):  # a second pass sees what the first rebound
                inner = dict(entry)
                if isinstance(s, (ast.For, ast.AsyncFor)):
                    _bind_loop(s.target, self.value(s.iter, state), inner)
                after = self.block(s.body, inner)
                entry = _join(entry, after) if after is not None else entry
            return _join(entry, self.block(s.orelse, dict(entry)))
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            if s.value is not None:
                self.expressions(s.value, state)
            value = self.value(s.value, state) if s.value is not None else None
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            out = dict(state)
            for target in targets:
                _kill(target, out)
                if isinstance(target, ast.Name) and value is not None:
                    out[target.id] = value
            return out
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.expressions(s, state)  # a callback named in a nested scope escapes
            out = dict(state)
            out.pop(s.name, None)
            return out
        if isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                self.expressions(item.context_expr, state)
            out = dict(state)
            for item in s.items:
                if item.optional_vars is not None:
                    _kill(item.optional_vars, out)
            return self.block(s.body, out)
        if isinstance(s, _TRY):
            # A handler may start anywhere in the body: names the body binds are unknown there.
            bound = _stored(s.body)
            start = {k: v for k, v in state.items() if k not in bound}
            body = self.block(s.orelse, self.block(s.body, dict(state)))
            ends = [body, *(self.block(h.body, dict(start)) for h in s.handlers)]
            joined = None
            for end in ends:
                joined = end if joined is None else _join(joined, end)
            if not s.finalbody:
                return joined
            after = self.block(s.finalbody, {k: v for k, v in start.items() if k not in _stored(s.finalbody)})
            return None if joined is None else after
        if any(isinstance(getattr(s, f, None), list) for f in ("body", "cases")):
            # Another compound statement (`match`): its calls are read knowing nothing.
            self.expressions(s, {})
            return {k: v for k, v in state.items() if k not in _stored([s])}
        self.expressions(s, state)
        return {k: v for k, v in state.items() if k not in _stored([s])}

    # -- expressions ---------------------------------------------------------------------
    def expressions(self, node: ast.AST, state: State) -> None:
        """Read the calls of callback parameters in `node` (not in nested statement bodies
        of compound statements handled above, which `stmt` reads itself)."""
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, (*_SCOPES, *_COMPREHENSIONS)):
                # Names there may be shadowed, or run later: a parameter named there escapes.
                for inner in ast.walk(n):
                    if isinstance(inner, ast.Name) and inner.id in self.index:
                        self.escaped.add(inner.id)
                continue
            if isinstance(n, ast.Call):
                self.call(n, state)
            elif isinstance(n, ast.Name) and n.id in self.index and not self._read(n):
                self.escaped.add(n.id)
            stack.extend(ast.iter_child_nodes(n))

    def _read(self, name: ast.Name) -> bool:
        """A load of a parameter that `call` accounts for (as a callee, or forwarded)."""
        return id(name) in self.accounted

    def call(self, node: ast.Call, state: State) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in self.index:
            self.accounted.add(id(func))
            passed = set()
            for position, arg in enumerate(node.args):
                if isinstance(arg, ast.Starred):
                    break
                value = self.value(arg, state)
                if value is not None and value[0] == MODEL:
                    passed.add((position, value[1]))
            self.calls.setdefault(func.id, []).append(passed)
        elif isinstance(func, ast.Name) and func.id == self.func.name:
            self.recursive.append(self._recursion(node, state))

    def _recursion(self, node: ast.Call, state: State) -> set[tuple[int, int]]:
        """(callback, model) pairs the recursive call hands on as they are."""
        given: dict[int, ast.expr] = {}
        for position, arg in enumerate(node.args):
            if isinstance(arg, ast.Starred):
                break
            given[position] = arg
        for kw in node.keywords:
            if kw.arg in self.index:
                given[self.index[kw.arg]] = kw.value
        callbacks = set()
        for k, arg in given.items():
            if isinstance(arg, ast.Name) and arg.id == self.params[k]:
                self.accounted.add(id(arg))
                callbacks.add(k)
        kept = set()
        for m, arg in given.items():
            value = self.value(arg, state)
            if value is not None and value == (MODEL, m):
                kept |= {(k, m) for k in callbacks}
        return kept

    def value(self, expr: ast.expr | None, state: State) -> tuple[str, int] | None:
        if isinstance(expr, ast.Name):
            return state.get(expr.id)
        if not isinstance(expr, ast.Call):
            return None
        func = expr.func
        if isinstance(func, ast.Name) and func.id in ("list", "tuple") and len(expr.args) == 1 and not expr.keywords:
            inner = self.value(expr.args[0], state)
            return inner if inner is not None and inner[0] != MODEL else None
        if isinstance(func, ast.Attribute) and not expr.args and not expr.keywords:
            owner = self.value(func.value, state)
            if owner is None or owner[0] != MODEL:
                return None
            if func.attr in _KIDS:
                return (KIDS, owner[1])
            if func.attr in _NAMED:
                return (NAMED, owner[1])
        return None


def _bind_loop(target: ast.expr, source: tuple[str, int] | None, state: State) -> None:
    _kill(target, state)
    if source is None:
        return
    kind, model = source
    if kind == KIDS and isinstance(target, ast.Name):
        state[target.id] = (MODEL, model)
    elif kind == NAMED and isinstance(target, ast.Tuple) and len(target.elts) == 2:
        child = target.elts[1]
        if isinstance(child, ast.Name):
            state[child.id] = (MODEL, model)


def _kill(target: ast.AST, state: State) -> None:
    for node in ast.walk(target):
        if isinstance(node, ast.Name):
            state.pop(node.id, None)


def _join(a: State | None, b: State | None) -> State | None:
    """A name keeps what it is only if it is that on both paths."""
    if a is None or b is None:
        return dict(b if a is None else a) if (a is not None or b is not None) else None
    return {k: v for k, v in a.items() if b.get(k) == v}


def _assigned(func: ast.AST) -> set[str]:
    return {
        n.id
        for n in ast.walk(func)
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)) and n is not func
    }


def _stored(stmts: list[ast.stmt]) -> set[str]:
    return {
        n.id for s in stmts for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))
    }


__all__ = ["Relay", "relays"]
