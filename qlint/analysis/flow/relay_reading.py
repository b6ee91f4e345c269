"""The one pass over a relay helper's body that `callback_relays` reads its relays from: a
flow-sensitive reading of which names hold the module parameters, their parts or iterables of
their descendants, the calls of each parameter with what each call may hand it (and whether
in eval mode), the helper's own recursive calls, and the parameters that escape (stored,
wrapped, handed on, or named in a nested scope or a comprehension)."""

from __future__ import annotations

import ast

from qlint.analysis.flow.relay_evals import EVALED, ITSELF, escape, eval_of_name, touch, untouched

_KIDS = frozenset({"children", "modules"})  # iterables of descendants (`modules()` includes itself)
_NAMED = frozenset({"named_children", "named_modules"})  # of (name, descendant) pairs
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_TRY = (ast.Try, getattr(ast, "TryStar", ast.Try))
# Statements whose own reading joins the paths of their bodies (an eval handed over in a body is
# in the state that body's path ends in, not the joined one).
_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, *_TRY)

MODEL, KIDS, NAMED = "model", "kids", "named"
WHOLE = "whole"  # the module parameter itself (a MODEL that an eval of it switches whole)


State = dict[str, tuple[str, int]]  # name -> (MODEL | WHOLE | KIDS | NAMED, the module parameter it comes from)
_MODULES = (MODEL, WHOLE)


class Reading:
    """One pass over the body: the calls of each parameter with what each may pass."""

    def __init__(self, func: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str], evals: frozenset[int]):
        self.func = func
        self.params = params
        self.evals = evals
        self.index = {name: i for i, name in enumerate(params)}
        # parameter name -> one set per call: {(position, module parameter)} it may be handed
        self.calls: dict[str, list[set[tuple[int, int]]]] = {}
        # parameter name -> one set per call: the pairs of `calls` handed in eval mode
        self.evaled: dict[str, list[set[tuple[int, int]]]] = {}
        self.other_switch = False  # an eval of something else than the module parameter
        self.seen: set[int] = set()  # the ids of the evals of `evals` read as statements
        self.ever_evaled: set[int] = set()  # the module parameters evaled on some path
        self.escaped: set[str] = set(_assigned(func) & set(params))  # a rebound callback is not the caller's
        self.recursive: list[set[tuple[int, int]]] = []  # per recursive call: the (callback, model) it keeps
        self.accounted: set[int] = set()  # ids of parameter loads read as a call or a forwarded callback
        self.handed_evaled: set[int] = set()  # module parameters a callback was handed evaled (this statement)

    # -- statements ----------------------------------------------------------------------
    def block(self, stmts: list[ast.stmt], state: State | None) -> State | None:
        for stmt in stmts:
            if state is None:
                return None
            state = self.stmt(stmt, state)
        return state

    def stmt(self, s: ast.stmt, state: State) -> State | None:
        evaled = self._evaled_by(s, state)
        touch(s, state)
        self.handed_evaled = set()
        out = self._stmt(s, state)
        if out is not None and evaled is not None:
            out[EVALED.format(evaled)] = (WHOLE, evaled)
        if out is not None and not isinstance(s, _COMPOUND):
            # `helper(model.eval(), q)`: the module stays evaled after the statement, unless
            # something else in it may switch it again.
            for m in self.handed_evaled:
                if untouched([s], out, m, self.index, self.func.name):
                    out[EVALED.format(m)] = (WHOLE, m)
        return out

    def _evaled_by(self, s: ast.stmt, state: State) -> int | None:
        """The module parameter the statement puts in eval mode (`model.eval()`, `m =
        model.eval()`), if it is one of the evals `relay_evals.evals` let through; an eval of anything
        else is a switch of unknown reach, and no relay holds."""
        value = s.value if isinstance(s, (ast.Expr, ast.Assign)) else None
        if value is None or id(value) not in self.evals:
            return None
        self.seen.add(id(value))
        found = state.get(eval_of_name(value))
        if found is None or found[0] != WHOLE:
            self.other_switch = True
            return None
        self.ever_evaled.add(found[1])
        return found[1]

    def _stmt(self, s: ast.stmt, state: State) -> State | None:
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
            # A handler may start anywhere in the body: names the body binds are unknown there,
            # and so is the mode of a module the body may have handed on before it raised.
            bound = _stored(s.body)
            start = {k: v for k, v in state.items() if k not in bound and not k.startswith("<")}
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
            # Another compound statement (`match`): its calls are read knowing nothing, and
            # what they may do to the module undoes an eval before it.
            self.expressions(s, {})
            return {k: v for k, v in state.items() if k not in _stored([s]) and not k.startswith("<")}
        self.expressions(s, state)
        return {k: v for k, v in state.items() if k not in _stored([s])}

    # -- expressions ---------------------------------------------------------------------
    def expressions(self, node: ast.AST, state: State) -> None:
        """Read the calls of callback parameters in `node` (not in nested statement bodies
        of compound statements handled above, which `stmt` reads itself)."""
        escape(node, state, self.index, self.func.name)
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
            evaled = set()
            for position, arg in enumerate(node.args):
                if isinstance(arg, ast.Starred):
                    break
                if id(arg) in self.evals:  # `fn(model.eval())`, `fn(model.train(False))`
                    value = self._handed_evaled(arg, state)
                    if value is not None:
                        passed.add((position, value))
                        others = [a for a in node.args if a is not arg] + [kw.value for kw in node.keywords]
                        if untouched(others, state, value, self.index, self.func.name):
                            evaled.add((position, value))
                    continue
                value = self.value(arg, state)
                if value is not None and value[0] in _MODULES:
                    passed.add((position, value[1]))
            self.calls.setdefault(func.id, []).append(passed)
            evaled |= {(p, m) for p, m in passed if EVALED.format(m) in state}
            self.evaled.setdefault(func.id, []).append(evaled)
        elif isinstance(func, ast.Name) and func.id == self.func.name:
            self.recursive.append(self._recursion(node, state))

    def _handed_evaled(self, arg: ast.expr, state: State) -> int | None:
        """The module parameter `helper(model.eval(), q)` hands the callback evaled (`Module.eval`
        returns the module itself); None, and no relay, for an eval of anything else."""
        self.seen.add(id(arg))
        value = state.get(eval_of_name(arg))
        if value is None or value[0] != WHOLE:
            self.other_switch = True  # a part, another module, or a name holding one on some path
            return None
        self.ever_evaled.add(value[1])
        self.handed_evaled.add(value[1])
        return value[1]

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
            if value is not None and value[0] in _MODULES and value[1] == m:
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
            return inner if inner is not None and inner[0] not in _MODULES else None
        if isinstance(func, ast.Attribute) and func.attr in ITSELF:
            owner = self.value(func.value, state)
            # The module itself (`model.to(device)`; its eval is read by `stmt`).
            return owner if owner is not None and owner[0] in _MODULES else None
        if isinstance(func, ast.Attribute) and not expr.args and not expr.keywords:
            owner = self.value(func.value, state)
            if owner is None or owner[0] not in _MODULES:
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
    """A name keeps what it is only if it is that on both paths (the module itself on one and
    a part on the other: a part); the eval of the module holds if it ran on both."""
    if a is None or b is None:
        return dict(b if a is None else a) if (a is not None or b is not None) else None
    out = {}
    for k, v in a.items():
        other = b.get(k)
        if other == v:
            out[k] = v
        elif other is not None and other[0] in _MODULES and v[0] in _MODULES and other[1] == v[1]:
            out[k] = (MODEL, v[1])
    return out


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


__all__ = ["KIDS", "MODEL", "NAMED", "WHOLE", "Reading", "State"]
