"""Tests a runner never runs: skipped whatever the machine (issue 14, ao's `test_mixing_qat_ptq`).

`@unittest.skip(reason)` and `@pytest.mark.skip` skip a test on every machine; so do
`skipIf`/`skipif` with a constant true condition and `skipUnless` with a constant false one.
On a class they skip each of its tests (and its subclasses', which inherit the mark). The
code of such a test is dead as a test module's uncalled helper is (`dead_code`).

Conditions that are not constants (`skipIf(sys.platform == "win32")`, `skipIf(not HAS_CUDA)`,
`pytest.mark.skipif("sys.platform == 'win32'")`: pytest evaluates the string) and `xfail`
(it runs, and `xfail(run=False)` is left alone) skip somewhere only: those tests run
elsewhere and stay live. Names are resolved through the module's imports, so
`from unittest import skip` counts and a project's own `skip` helper does not.
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.names.resolver import Resolver

_ALWAYS = frozenset({"unittest.skip", "pytest.mark.skip"})
_WHEN_TRUE = frozenset({"unittest.skipIf", "pytest.mark.skipif"})
_WHEN_FALSE = frozenset({"unittest.skipUnless"})


def always_skipped(ctx: FileContext, definition: ast.AST) -> bool:
    """Whether a decorator of this function or class skips it on every run."""
    decorators = getattr(definition, "decorator_list", ())
    if not decorators:
        return False
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable)
    return any(_skips(resolver, decorator) for decorator in decorators)


def never_runs(ctx: FileContext, definition: ast.AST) -> bool:
    """A function under unittest's skip on every run (`@unittest.skip(reason)`, `skipIf(True,
    ...)`, `skipUnless(False, ...)`): the decorator replaces it with one that raises
    `SkipTest` when called, so its body never runs, whoever calls it (a runner, a program that
    calls its tests itself, another function). pytest's marks, and a skip on a class, only
    tell a runner: a direct call still runs the body."""
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)) or not definition.decorator_list:
        return False
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable)
    return any(_skips(resolver, decorator, _UNITTEST) for decorator in definition.decorator_list)


_UNITTEST = frozenset({"unittest.skip", "unittest.skipIf", "unittest.skipUnless"})


def _skips(resolver: Resolver, decorator: ast.expr, only: frozenset[str] | None = None) -> bool:
    call = decorator if isinstance(decorator, ast.Call) else None
    name = resolver.qualname(call.func if call is not None else decorator)
    if only is not None and name not in only:
        return False
    if name in _ALWAYS:
        return True  # `@unittest.skip` bare takes the test as its reason and skips it too
    if call is None or not call.args or (name not in _WHEN_TRUE and name not in _WHEN_FALSE):
        return False
    condition = call.args[0]
    # A bool or a number only: a string is code pytest evaluates (`"sys.platform == 'win32'"`).
    if not isinstance(condition, ast.Constant) or not isinstance(condition.value, (bool, int)):
        return False
    return bool(condition.value) == (name in _WHEN_TRUE)


__all__ = ["always_skipped", "never_runs"]
