"""The walk behind `qlint.analysis.calibration`: one function body, statement by statement.

Each prepared model is a `Token`; an `Env` maps names to the tokens they may hold and
records which tokens some path has run so far. Whatever may run a token (a call, a
closure, a store that lets it escape, an unknown function) adds it to `Env.ran`; a
`convert_pt2e` of a token not in `Env.ran` is a finding (or, for a parameter, part of
the function's summary).

What a call does (an API, a helper's summary, a method or a closure that may run a model) is
worked out by `calibration_calls`, from the walker's state.
"""

from __future__ import annotations

import ast

from qlint.analysis import calibration_calls
from qlint.analysis import calibration_effects as fx
from qlint.analysis.calibration import (
    CONVERTED,
    PARAM,
    PREPARED,
    Calibration,
    Env,
    Summary,
    Token,
    Uncalibrated,
    holds_models,
    join,
)
from qlint.analysis.names.local_imports import LocalNames, bind_imports
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import ModuleScope, function_assigns

_TRY = (ast.Try, getattr(ast, "TryStar", ast.Try))
_SCOPED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_IMPORTS = frozenset((ast.Import, ast.ImportFrom))


def _with_imports(local: dict, own: list[ast.stmt]) -> dict:
    """`local`, plus the names the body's own import statements (`own`) bind
    (`local_imports`): a helper that imports its PT2E module inside (`from
    torch.ao.quantization import quantize_pt2e`) calls `quantize_pt2e.prepare_pt2e(...)` and
    `quantize_pt2e.convert_pt2e(...)`, which name the API as surely as after a module-level
    import. `local` is shared (see `function_assigns`), so a body with imports gets a copy; a
    local variable still wins."""
    imports = [s for s in own if type(s) in _IMPORTS]
    if not imports:
        return local
    names = LocalNames(local)
    for stmt in imports:
        bind_imports(names, stmt)
    return names


class Walker:
    def __init__(self, owner: Calibration, func: ast.AST, scope: ModuleScope, class_scope, depth: int):
        self.owner, self.func, self.scope, self.depth = owner, func, scope, depth
        self.class_scope = class_scope
        own = list(fx.own_statements(func))
        local = _with_imports(function_assigns(func), own) if not isinstance(func, ast.Module) else {}
        self.resolver = Resolver(scope, owner.project, owner.optable, local, class_scope)
        self.nested = {n.name: n for n in own if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        args = getattr(func, "args", None)
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs] if isinstance(args, ast.arguments) else []
        self.out = Summary(func, scope.path, [a.arg for a in params], test=fx.is_test_code(scope.path, func))
        self.ever_ran: set[Token] = set()
        # Per loop walked: the paths that `continue` (they start the next iteration) and those
        # that `break` (they leave the loop, past its `else`).
        self.loops: list[tuple[list[Env], list[Env]]] = []
        self.seen: set[tuple[int, Token]] = set()
        # `prepare_qat_pt2e` results made in this body: the training loop that runs them would
        # be here too, so one that no path runs before `convert_pt2e` was never trained.
        self.own_qat: set[Token] = set()
        # The last call read that raises before its callee's body runs (`calibration_calls`).
        self.raised: ast.Call | None = None

    def run(self) -> Summary:
        env = Env()
        for i, name in enumerate(self.out.params):
            if name not in ("self", "cls"):  # their methods are resolved, not tracked as models
                env.vars[name] = frozenset({Token(PARAM, self.func, self.scope.path, i)})
        self.block(getattr(self.func, "body", []), env)
        out = self.out
        out.runs = {t.index for t in self.ever_ran if t.kind == PARAM and t.node is self.func}
        out.executes = {t.index for t in out.executed if t.kind == PARAM and t.node is self.func}
        out.used = {t for t in self.ever_ran if t.kind == CONVERTED}
        return out

    # -- effects ---------------------------------------------------------------------
    def ran(self, env: Env, tokens: frozenset[Token], executed: bool = False) -> None:
        if tokens:
            env.ran |= tokens
            self.ever_ran |= tokens
            if executed:
                self.out.executed |= tokens

    def convert(self, site, convert, path: str, tokens, results, env: Env, helper="", inside=False) -> None:
        for t in tokens:
            if t in env.ran or (id(site), t) in self.seen:
                continue
            self.seen.add((id(site), t))
            if t.kind == PREPARED or t in self.own_qat:
                self.out.findings.append(Uncalibrated(site, t, convert, path, results, helper, inside))
            elif t.kind == PARAM and t.node is self.func:
                self.out.converts.setdefault(t.index, site)

    # -- statements ------------------------------------------------------------------
    def block(self, stmts: list[ast.stmt], env: Env | None) -> Env | None:
        for s in stmts:
            if env is None:
                return None
            env = self.stmt(s, env)
        return env

    def stmt(self, s: ast.stmt, env: Env) -> Env | None:
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            pairs = fx.assignment_pairs(targets, s.value)
            if pairs is not None:
                for target, value in [(t, self.expr(v, env)) for t, v in pairs]:
                    self.bind(target, value, env)
            else:
                value = self.expr(s.value, env) if s.value is not None else frozenset()
                if self.raised is not None and self.raised is s.value:
                    return None  # the call raises: nothing is bound, and the path ends
                for target in targets:
                    self.bind(target, value, env)
        elif isinstance(s, ast.AugAssign):
            self.ran(env, self.expr(s.value, env))
            self.bind(s.target, frozenset(), env)
        elif isinstance(s, ast.Expr):
            value = s.value
            if isinstance(value, (ast.Yield, ast.YieldFrom)):
                self.ran(env, self.expr(value.value, env))
            elif isinstance(value, ast.Call):
                calibration_calls.call(self, value, env, discarded=True)
                if self.raised is value:
                    return None
            else:
                self.expr(value, env)
        elif isinstance(s, ast.Assert):
            self.expr(s.test, env)
        elif isinstance(s, ast.If):
            self.expr(s.test, env)
            return join([self.block(s.body, env.copy()), self.block(s.orelse, env.copy())])
        elif isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
            return self.loop(s, env)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                self.ran(env, self.expr(item.context_expr, env))
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, frozenset(), env)
            return self.block(s.body, env)
        elif isinstance(s, _TRY):
            body = self.block(s.body, env.copy())
            start = join([env, body])
            handlers = [self.block(h.body, start.copy()) for h in s.handlers]
            out = join([self.block(s.orelse, body.copy()) if body else None, *handlers])
            return self.block(s.finalbody, out) if out is not None else None
        elif isinstance(s, ast.Match):
            self.expr(s.subject, env)
            return join([env, *(self.block(c.body, env.copy()) for c in s.cases)])
        elif isinstance(s, ast.Return):
            value = self.expr(s.value, env) if s.value is not None else frozenset()
            self.out.returns |= {t for t in value if t not in env.ran or t.kind != PREPARED}
            return None
        elif isinstance(s, ast.Raise):
            self.expr(s.exc, env)
            return None
        elif isinstance(s, (ast.Break, ast.Continue)):
            if self.loops:
                self.loops[-1][isinstance(s, ast.Break)].append(env)
            return None
        elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            # A closure may run whatever it names, whenever it is called.
            if holds_models(env):
                self.ran(env, self.names(env, fx.free_names(s)), executed=True)
            env.vars.pop(s.name, None)
        elif isinstance(s, (ast.Global, ast.Nonlocal)):
            for name in s.names:
                self.ran(env, env.vars.pop(name, frozenset()))
        elif isinstance(s, ast.Delete):
            for target in s.targets:
                if isinstance(target, ast.Name):
                    env.vars.pop(target.id, None)
                else:
                    self.expr(target, env)
        return env

    def loop(self, s, env: Env) -> Env | None:
        self.ran(env, self.expr(s.test if isinstance(s, ast.While) else s.iter, env))
        continues: list[Env] = []
        breaks: list[Env] = []
        self.loops.append((continues, breaks))
        entry, outs = env, []
        for _ in range(2):  # the second pass sees what the first leaves for the next iteration
            start = entry.copy()
            if not isinstance(s, ast.While):
                self.bind(s.target, frozenset(), start)
            outs.append(self.block(s.body, start))
            entry = join([env, outs[-1], *continues])  # a `break` starts no next iteration
        self.loops.pop()
        ended = join([env, *outs, *continues])  # the loop ran out: its `else` runs
        if s.orelse and ended is not None:
            ended = self.block(s.orelse, ended)
        return join([ended, *breaks]) if breaks else ended

    def bind(self, target: ast.expr, tokens: frozenset[Token], env: Env) -> None:
        if isinstance(target, ast.Name):
            env.vars[target.id] = tokens
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.bind(elt, frozenset(), env)
            self.ran(env, tokens)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, frozenset(), env)
            self.ran(env, tokens)
        else:  # an attribute or an item: stored where other code may run it
            self.expr(target.value, env)
            if isinstance(target, ast.Subscript):
                self.expr(target.slice, env)
            self.ran(env, tokens)

    def names(self, env: Env, names: set[str]) -> frozenset[Token]:
        return frozenset().union(*(env.vars.get(n, frozenset()) for n in names))

    # -- expressions -----------------------------------------------------------------
    def expr(self, e: ast.expr | None, env: Env) -> frozenset[Token]:
        """The tokens `e` may evaluate to, applying what evaluating it does to the others."""
        if e is None or isinstance(e, ast.Constant):
            return frozenset()
        if isinstance(e, ast.Name):
            return env.vars.get(e.id, frozenset())
        if isinstance(e, ast.Call):
            return calibration_calls.call(self, e, env)
        if isinstance(e, _SCOPED):
            if not holds_models(env):
                return frozenset()
            names = fx.free_names(e)
            self.ran(env, self.names(env, names - fx.called_names(e)))
            self.ran(env, self.names(env, names & fx.called_names(e)), executed=True)
            return frozenset()
        if isinstance(e, ast.Attribute):
            base = self.expr(e.value, env)
            if e.attr not in fx.INERT_ATTRIBUTES:
                self.ran(env, base)  # a submodule or a bound method can run the model
            return frozenset()
        if isinstance(e, ast.NamedExpr):
            value = self.expr(e.value, env)
            self.bind(e.target, value, env)
            return value
        if isinstance(e, ast.IfExp):
            self.expr(e.test, env)
            a, b = env.copy(), env.copy()
            values = self.expr(e.body, a) | self.expr(e.orelse, b)
            merged = join([a, b])
            env.vars, env.ran = merged.vars, merged.ran
            return values
        if isinstance(e, ast.BoolOp):
            return frozenset().union(*(self.expr(v, env) for v in e.values))
        if isinstance(e, (ast.Compare, ast.JoinedStr, ast.FormattedValue, ast.UnaryOp)):
            for child in ast.iter_child_nodes(e):
                if isinstance(child, ast.expr):
                    self.expr(child, env)
            return frozenset()
        if isinstance(e, ast.Await):
            return self.expr(e.value, env)
        # Containers, subscripts, starred, arithmetic, yields: whatever holds the model escapes.
        for child in ast.iter_child_nodes(e):
            if isinstance(child, ast.expr):
                self.ran(env, self.expr(child, env))
        return frozenset()
