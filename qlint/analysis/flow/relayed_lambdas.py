"""Lambdas handed to a higher-order helper that calls them on the model it is given
(`callback_relays`), read where they are written, with their parameter bound to that model;
named functions handed over the same way are calls of them (`relayed_functions`).

`_replace_with_custom_fn_if_matches_filter(model, lambda mod: capture_and_prepare(mod, x),
filter)` calls the lambda only on `model` or its submodules, which are in `model`'s mode: the
lambda's call of `capture_and_prepare` is a call with `model`, and it is recorded in the
enclosing function's flow as such (so its callers can be followed, issue 14). A lambda may run
any number of times, or never: what its body does to the environment is not kept, and a
capture inside it gets no fix (its parameter is no name of the enclosing statement).
"""

from __future__ import annotations

import ast
import weakref

from qlint.analysis.flow.asserted_lambdas import asserted_lambda
from qlint.analysis.flow.callback_relays import Relay, relays
from qlint.analysis.flow.class_methods import method_of
from qlint.analysis.flow.model_apis import argument_for
from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.model_values import ModeFact, Obj
from qlint.analysis.flow.relayed_functions import may_name_function, relay_named
from qlint.analysis.names.scope import parameter_args

# Library internals whose helpers are never read for relays (their trees are not the project's).
_SKIPPED = ("torch.", "builtins.")


class RelayedLambdas:
    """The lambda side of one function's `CallSemantics` (`sem`, which owns this)."""

    def __init__(self, sem):
        self.sem = weakref.proxy(sem)  # freed with the walk, not by the cyclic collector
        self.depth = 0  # > 0 while a lambda's body is read: captures there get no fix
        self.running: set[int] = set()  # lambdas whose body a call is reading (`called_lambdas`)

    def call(self, node: ast.Call, args: list[Obj | None], kwargs: dict, env: Env) -> None:
        """Read the lambdas `node` hands to a relay helper, if it is one; a named function
        handed over is a call of it with the model (`relayed_functions`)."""
        cls = self.sem.class_scope
        asserted = asserted_lambda(node, cls, lambda name: method_of(cls, name, self.sem.owner.scope) is not None)
        if asserted is not None:  # `self.assertRaises(E, lambda: ...)`: called once, right away
            self._read(asserted, Relay(-1, -1, 0), None, env)
            return
        passed = [*node.args, *(k.value for k in node.keywords)]
        named = [a for a in passed if isinstance(a, (ast.Name, ast.Attribute)) and may_name_function(self.sem, a)]
        if not named and not any(isinstance(a, ast.Lambda) for a in passed):
            return
        func = self._definition(node.func)
        if func is None:
            return
        params = [a.arg for a in parameter_args(func, star=False)]
        handed: dict[int, tuple[ast.expr, list]] = {}
        for relay in relays(func):
            callback = _argument(node, relay.callback, params)
            model = _value(node, relay.model, params, args, kwargs)
            if isinstance(callback, ast.Lambda):
                self._read(callback, relay, model, env, node)
            elif any(callback is a for a in named):
                given = (relay, model, _argument(node, relay.model, params))
                handed.setdefault(id(callback), (callback, []))[1].append(given)
        for callback, given in handed.values():
            relay_named(self.sem, node, callback, given, env)

    def read_at(self, lam: ast.Lambda, position: int, model: Obj, env: Env) -> None:
        """Read `lam`, which a helper calls with `model` as its argument `position`."""
        self._read(lam, Relay(-1, -1, position), model, env)

    def _read(self, lam: ast.Lambda, relay: Relay, model: Obj | None, env: Env, at: ast.AST | None = None) -> None:
        """`at`: the call handing `lam` to the relay helper (which, for an evaled relay, sets the mode)."""
        inner = env.copy()
        for arg in parameter_args(lam):  # the lambda's parameters shadow the enclosing names
            prefix = arg.arg + "."
            for name in [n for n in inner.vars if n == arg.arg or n.startswith(prefix)]:
                del inner.vars[name]
        positional = [*lam.args.posonlyargs, *lam.args.args]
        if model is not None and relay.position < len(positional):
            inner.vars[positional[relay.position].arg] = model
            if relay.evaled:  # the helper evals the module before calling back (this copy's mode only)
                inner.modes[model] = frozenset({ModeFact("eval", at or lam)})
        self.depth += 1
        try:
            self.sem.walk.expr(lam.body, inner)
        finally:
            self.depth -= 1

    def _definition(self, func: ast.expr) -> ast.AST | None:
        """The def a call names: a function of this function, of this module, or of another
        module of the project."""
        sem = self.sem
        owner = sem.owner
        if isinstance(func, ast.Name) and func.id in sem.nested:
            return sem.nested[func.id]
        if isinstance(func, ast.Name) and func.id in owner.scope.functions and func.id not in sem.resolver.local:
            return owner.scope.functions[func.id]
        name = sem.walk.qualname(func)
        if not name or "." not in name or name.startswith(_SKIPPED):
            return None
        module, _, attr = name.rpartition(".")
        other = owner.for_module(module)
        return other.scope.functions.get(attr) if other is not None else None


def _argument(node: ast.Call, index: int, params: list[str]) -> ast.expr | None:
    return argument_for(node, index, params[index] if index < len(params) else None)


def _value(node: ast.Call, index: int, params: list[str], args: list, kwargs: dict) -> Obj | None:
    expr = _argument(node, index, params)
    if expr is None:
        return None
    for position, arg in enumerate(node.args):
        if arg is expr:
            return args[position]
    return kwargs.get(params[index])


__all__ = ["RelayedLambdas"]
