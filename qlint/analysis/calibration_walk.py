"""The walk behind `qlint.analysis.calibration`: one function body, statement by statement.

Each prepared model is a `Token`; an `Env` maps names to the tokens they may hold and
records which tokens some path has run so far. Whatever may run a token (a call, a
closure, a store that lets it escape, an unknown function) adds it to `Env.ran`; a
`convert_pt2e` of a token not in `Env.ran` is a finding (or, for a parameter, part of
the function's summary).
"""

from __future__ import annotations

import ast

from qlint.analysis import calibration_effects as fx
from qlint.analysis import converted_programs as lowered
from qlint.analysis.calibration import (
    CONVERTED,
    PARAM,
    PREPARED,
    QAT,
    QAT_CONFIG,
    Calibration,
    Env,
    Summary,
    Token,
    Uncalibrated,
    holds_models,
    join,
    qat_configs,
)
from qlint.analysis.flow.model_apis import argument, classify_call
from qlint.analysis.flow.model_torch_nn import SELF_RETURNING_METHODS
from qlint.analysis.names.local_imports import LocalNames, bind_imports
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import ModuleScope, function_assigns

_TRY = (ast.Try, getattr(ast, "TryStar", ast.Try))
_SCOPED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# What an argument may do beyond naming variables (a call, a binding, a yield, an await).
_EFFECTFUL = frozenset({ast.Call, ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await})
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
        self.loops: list[list[Env]] = []
        self.seen: set[tuple[int, Token]] = set()
        # `prepare_qat_pt2e` results made in this body: the training loop that runs them would
        # be here too, so one that no path runs before `convert_pt2e` was never trained.
        self.own_qat: set[Token] = set()

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
                self.call(value, env, discarded=True)
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
                self.loops[-1].append(env)
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
        exits: list[Env] = []
        self.loops.append(exits)
        entry, outs = env, []
        for _ in range(2):  # the second pass sees what the first leaves for the next iteration
            start = entry.copy()
            if not isinstance(s, ast.While):
                self.bind(s.target, frozenset(), start)
            outs.append(self.block(s.body, start))
            entry = join([env, outs[-1], *exits])
        self.loops.pop()
        after = join([env, *outs, *exits])
        return self.block(s.orelse, after) if s.orelse and after is not None else after

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
            return self.call(e, env)
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

    def call(self, node: ast.Call, env: Env, discarded: bool = False) -> frozenset[Token]:
        """`discarded`: a statement of its own, whose result nothing reads."""
        func = node.func
        # Names that hold tokens are looked up, not collected: bodies bind hundreds of names
        # and make thousands of calls.
        held = env.vars
        if fx.inert_attribute_chain(func, held):
            self.args(node, env, escape=False)
            return frozenset()
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and held.get(func.value.id):
            receiver = env.vars[func.value.id]
            qat = qat_configs(self.args(node, env, escape=True).values()) | self.qat_keyword(node)
            if qat:  # `quantizer.set_global(qat_config)`: the quantizer is QAT from here on
                receiver = env.vars[func.value.id] = receiver | qat
            if func.attr in SELF_RETURNING_METHODS:
                return receiver
            if func.attr not in fx.INERT_METHODS:
                self.ran(env, receiver, executed=func.attr in ("forward", "__call__"))
            return qat_configs([receiver]) | self.derived(receiver, lowered.is_lowering_method(func.attr))
        if isinstance(func, ast.Name) and held.get(func.id):
            self.args(node, env, escape=True)
            self.ran(env, env.vars[func.id], executed=True)
            return frozenset()
        receiver: frozenset[Token] = frozenset()
        if not isinstance(func, (ast.Name, ast.Attribute)):
            self.ran(env, self.expr(func, env), executed=True)  # `program.module()(x)`: called on data
        elif isinstance(func, ast.Attribute) and not isinstance(func.value, ast.Name):
            receiver = self.expr(func.value, env)  # `XNNPACKQuantizer().set_global(config)`
            if receiver and func.attr in SELF_RETURNING_METHODS:
                # `copy.deepcopy(prepared).cpu()`: the module itself, as for a name's `.cpu()`.
                return receiver | qat_configs(self.args(node, env, escape=True).values())
        name = self.resolver.qualname(func)
        api = classify_call(name, func)
        if api is not None:
            return self.api(node, api, env)
        if fx.is_inert_function(name, func):
            self.args(node, env, escape=False)
            return frozenset()
        self.closure(func, env)
        if discarded and self._hands_nothing(node, receiver, env):
            # No model goes in, none comes out, no quantizer turns QAT: whatever the callee
            # does, this body's summary is the same, so the callee's is not worked out
            # (`self.assertEqual(...)`, `logger.info(...)` resolved through class hierarchies).
            return frozenset()
        summary, offset = self.helper(func, name)
        if summary is None:
            values = self.args(node, env, escape=True)  # an unknown function may run what it is given
            # A builder or setter of quantizers and configs passes QAT-ness on.
            qat = qat_configs([receiver, *values.values()]) | self.qat_keyword(node)
            holder = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else None
            if qat and holder is not None and (holder in env.vars or holder in self.resolver.local):
                env.vars[holder] = env.vars.get(holder, frozenset()) | qat  # `quantizer.set_global(config)`
            first = values.get(node.args[0], frozenset()) if node.args else frozenset()
            return (
                qat
                | self.derived(first, lowered.is_lowering_function(name))
                | self.derived(receiver, isinstance(func, ast.Attribute) and lowered.is_lowering_method(func.attr))
            )
        return self.apply(node, summary, offset, env) | self.qat_keyword(node)

    def _hands_nothing(self, node: ast.Call, receiver: frozenset[Token], env: Env) -> bool:
        """Whether evaluating the call's arguments and handing them over has no effect here and
        makes no token: no argument names a variable holding one, calls anything, binds a name
        or passes `is_qat=`, and the receiver holds no QAT quantizer."""
        if qat_configs([receiver]) or fx.passes_is_qat(node):
            return False
        held = env.vars
        for arg in (*node.args, *(kw.value for kw in node.keywords)):
            for sub in ast.walk(arg):
                kind = type(sub)
                if kind is ast.Name:
                    if held.get(sub.id):
                        return False
                elif kind in _EFFECTFUL:
                    return False
        return True

    def qat_keyword(self, node: ast.Call) -> frozenset[Token]:
        qat = fx.passes_is_qat(node)
        return frozenset({Token(QAT_CONFIG, node, self.scope.path)}) if qat else frozenset()

    def closure(self, func: ast.expr, env: Env) -> None:
        """A nested function or lambda of this body, or (from module level) a function of this
        module, reads the prepared model by name: calling it may run the model."""
        if not isinstance(func, ast.Name) or not holds_models(env):
            return
        body = self.nested.get(func.id)
        if body is None and func.id in self.resolver.local:
            body = next((v for v in self.resolver.local[func.id] if isinstance(v, ast.Lambda)), None)
        if body is None and isinstance(self.func, ast.Module):
            body = self.scope.functions.get(func.id)
        if body is not None:
            names = fx.free_names(body)
            self.ran(env, self.names(env, names), executed=bool(names & fx.called_names(body)))

    def args(self, node: ast.Call, env: Env, escape: bool) -> dict[ast.expr, frozenset[Token]]:
        values = {a: self.expr(a.value if isinstance(a, ast.Starred) else a, env) for a in node.args}
        values.update({kw.value: self.expr(kw.value, env) for kw in node.keywords})
        if escape:
            for tokens in values.values():
                self.ran(env, tokens)
        return values

    def api(self, node: ast.Call, api, env: Env) -> frozenset[Token]:
        first = argument(node, 0, api.model_keywords)
        if api.kind in ("convert", "move", "allow_train_eval", "copy"):
            values = self.args(node, env, escape=False)
            tokens = values.get(first, frozenset()) if first is not None else frozenset()
            if api.kind != "convert":
                return tokens
            result = Token(CONVERTED, node, self.scope.path)
            self.convert(node, node, self.scope.path, tokens, frozenset({result}), env)
            return frozenset({result})
        if api.kind == "prepare":
            values = self.args(node, env, escape=True)
            quantizer = argument(node, 1, ("quantizer",))
            if qat_configs([values.get(quantizer, frozenset())]) or self.global_qat(quantizer, env):
                return frozenset({Token(QAT, node, self.scope.path)})  # a training loop runs it
            return frozenset({Token(PREPARED, node, self.scope.path)})
        values = self.args(node, env, escape=True)  # capture, sessions: treat as a use
        if api.kind == "capture" and first is not None:
            return self.derived(values.get(first, frozenset()), True)  # `export(converted)`
        if api.kind != "prepare_qat":
            return frozenset()
        token = Token(QAT, node, self.scope.path)
        self.own_qat.add(token)
        return frozenset({token})

    @staticmethod
    def derived(tokens: frozenset[Token], lowering: bool) -> frozenset[Token]:
        """A program exported or lowered from a converted model stands for it (`converted_programs`)."""
        return lowered.standing_for(tokens, (CONVERTED, PARAM)) if lowering else frozenset()

    def global_qat(self, quantizer: ast.expr | None, env: Env) -> bool:
        """A module-level quantizer used in a function: what the module binds it to."""
        if not isinstance(quantizer, ast.Name) or quantizer.id in env.vars or isinstance(self.func, ast.Module):
            return False
        return fx.quantizer_is_qat(quantizer, self.scope.assigns)

    def helper(self, func: ast.expr, name: str | None) -> tuple[Summary | None, int]:
        """The summary of a function of this module or project, and 1 when `self` fills a
        parameter (`name`: the callee's qualified name, as `call` resolved it)."""
        if isinstance(func, ast.Name) and func.id in self.nested:
            return self.owner.summary(self.nested[func.id], self.scope, None, self.depth + 1), 0
        if isinstance(func, ast.Name) and func.id in self.resolver.local:
            return None, 0
        name = name or ""
        if name.startswith(("torch.", "torchao.", "executorch.exir")):
            return None, 0
        try:
            found = self.owner.callgraph.definition(func, self.resolver, functions_only=True)
        except RecursionError:
            self.owner.unsettled()
            found = None
        if found is None or not isinstance(found[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None, 0
        node, scope, cls = found
        on_self = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
        bound = on_self and func.value.id in ("self", "cls")
        static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
        return self.owner.summary(node, scope, cls, self.depth + 1), int(bound and not static)

    def apply(self, node: ast.Call, callee: Summary, offset: int, env: Env) -> frozenset[Token]:
        given: dict[int, frozenset[Token]] = {}
        for i, arg in enumerate(node.args):
            tokens = self.expr(arg.value if isinstance(arg, ast.Starred) else arg, env)
            if isinstance(arg, ast.Starred) or any(isinstance(a, ast.Starred) for a in node.args[:i]):
                self.ran(env, tokens)  # position unknown behind `*args`
            else:
                given[i + offset] = tokens
        for kw in node.keywords:
            tokens = self.expr(kw.value, env)
            if kw.arg in callee.params:
                given[callee.params.index(kw.arg)] = tokens
            else:
                self.ran(env, tokens)
        before = env.copy()
        for index, tokens in given.items():
            if index >= len(callee.params):
                self.ran(env, tokens)
                continue
            if index in callee.converts:
                results = {t for t in callee.returns if t.kind == CONVERTED}
                convert = callee.converts[index]
                name = getattr(callee.node, "name", "")
                inside = any(t.kind == CONVERTED and t.path == callee.path for t in callee.executed)
                self.convert(node, convert, callee.path, tokens, frozenset(results), before, name, inside)
            if index in callee.runs:
                self.ran(env, tokens, executed=index in callee.executes)
        out: set[Token] = set()
        # `return prepare_qat_pt2e(...) if is_qat else prepare_pt2e(...)`: which one this call
        # gets depends on its arguments; a QAT model is trained, so stay quiet on both.
        qat = any(t.kind == QAT for t in callee.returns)
        for t in callee.returns:
            if qat and t.kind == PREPARED:
                continue
            if t.kind == PARAM and t.node is callee.node:
                out |= given.get(t.index, frozenset())
            elif t.kind == PREPARED and not t.helper:
                out.add(Token(PREPARED, t.node, t.path, helper=getattr(callee.node, "name", "")))
            else:
                out.add(t)
        return frozenset(out)
