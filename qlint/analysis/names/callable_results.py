"""What a name bound through a project helper that returns the value of a callable it is handed
stands for (`Resolver.qualname`).

A lazy import binds an op namespace in two steps: a nested function imports it and returns
it, and a helper of the project runs that function and returns what it returned, with its
own error message for a missing package (apple/coreai-optimization):

    def _import_ops():
        from torch.ops import coreai
        return coreai

    coreai = lazy_import_coreai_torch(_import_ops)   # returns lazy_import_module(f, msg),
                                                     # which returns f() in a try

The name is whatever the callable returns, read only when that is sure: the helper is a plain
function of the project (no decorator, the parameter never rebound) whose every return is
`<param>()` or a call of another such helper handed the parameter where that one calls its own;
the callable is a function of the module or of the enclosing function, handed by name, whose
every return names one and the same thing. A helper returning anything else on some path, or
a callable returning different things on different paths, leaves the name unknown.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from qlint.analysis.names.local_imports import LocalNames, bind_imports
from qlint.analysis.names.scope import ModuleScope, bind_local, parameter_args, parameters
from qlint.analysis.statement_walk import own_statements
from qlint.analysis.tree_walk import own_nodes

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Helpers followed through helpers: `lazy_import_coreai_torch` -> `lazy_import_module`.
_MAX_HOPS = 3


def callable_result(resolver, call: ast.Call, depth: int) -> str | None:
    """The qualified name `call` returns, when it calls a helper of the project that returns
    what a callable handed to it by name returns (None otherwise)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    # Cheap first: a function handed by name, defined in the enclosing function or the module.
    handed = [a for a in (*call.args, *(k.value for k in call.keywords)) if isinstance(a, ast.Name)]
    if not any(_callable_def(resolver, a.id) is not None for a in handed):
        return None
    helper = _project_function(resolver, call.func, depth)
    if helper is None:
        return None
    func, scope = helper
    arg = _forwarded_argument(resolver, func, scope, call, 0)
    if not isinstance(arg, ast.Name):
        return None
    callee = _callable_def(resolver, arg.id)
    if callee is None:
        return None
    return _returned_name(resolver, callee, depth)


def _callable_def(resolver, name: str) -> ast.FunctionDef | None:
    """The function `name` denotes where the call is written: one defined in the enclosing
    function (and bound there by nothing else) or, when the function binds no such name, one
    of the module (bound by nothing else either)."""
    local = resolver.local
    nested = getattr(local, "functions", None) or {}
    if name in nested:
        imports = getattr(local, "imports", None) or {}
        defs = nested[name]
        return defs[0] if len(defs) == 1 and name not in local and name not in imports else None
    if name in local or (isinstance(local, LocalNames) and name in local.imports):
        return None
    scope = resolver.scope
    func = scope.functions.get(name)
    if func is None or name in scope.imports or name in scope.assigns or name in scope.classes:
        return None
    return func


def _project_function(resolver, func: ast.expr, depth: int) -> tuple[ast.FunctionDef, ModuleScope] | None:
    """The plain function of the project `func` names, with the scope of its module."""
    scope = resolver.scope
    if isinstance(func, ast.Name) and func.id not in resolver.local and func.id not in scope.imports:
        found = scope.functions.get(func.id)
        return (found, scope) if isinstance(found, ast.FunctionDef) else None
    name = resolver.qualname(func, depth + 1)
    if name is None or name.startswith("torch."):
        return None
    module, _, attr = name.rpartition(".")
    other = resolver.project.module_scope(module, scope.path) if module else None
    if other is None:
        return None
    found = other.functions.get(attr)
    if not isinstance(found, ast.FunctionDef) or attr in other.imports:
        return None
    return found, other


def _forwarded_argument(resolver, func: ast.FunctionDef, scope: ModuleScope, call: ast.Call, hops: int):
    """The argument of `call` that `func` calls and returns the value of on every path (None when
    no parameter is so)."""
    param = _forwarded_parameter(resolver, func, scope, hops)
    if param is None:
        return None
    return _argument_for(func, call, param)


def _forwarded_parameter(resolver, func: ast.FunctionDef, scope: ModuleScope, hops: int) -> str | None:
    """The parameter of `func` whose call's value every return of `func` is (directly, or through
    another such helper of the project handed the parameter)."""
    if hops > _MAX_HOPS or func.decorator_list or is_generator(func) or not _ends(func.body):
        return None
    returns = list(_returns(func))
    if not returns or any(r.value is None for r in returns):
        return None
    local = _local_names(func)
    candidates = (
        {a.arg for a in parameter_args(func)}
        - {func.args.vararg and func.args.vararg.arg}
        - {func.args.kwarg and func.args.kwarg.arg}
    )
    # A parameter rebound in the body (or imported over) is no longer what the caller handed.
    candidates = {p for p in candidates if len(local.get(p, ())) == 1 and p not in local.imports}
    found = None
    for ret in returns:
        value = ret.value
        if not isinstance(value, ast.Call):
            return None
        if isinstance(value.func, ast.Name) and value.func.id in candidates:
            if value.args or value.keywords:
                return None
            param = value.func.id
        else:
            param = _relayed_parameter(resolver, value, scope, local, candidates, hops)
        if param is None or (found is not None and param != found):
            return None
        found = param
    return found


def _relayed_parameter(
    origin, call: ast.Call, scope: ModuleScope, local: LocalNames, candidates: set[str], hops: int
) -> str | None:
    """`return lazy_import_module(import_func, message)`: the parameter handed to a helper of the
    project that returns the value of calling it. `origin`: the resolver that asked (its type
    makes the helper's; this module does not import the resolver's, which imports it)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    resolver = type(origin)(scope, origin.project, origin.optable)
    resolver.local = local
    helper = _project_function(resolver, call.func, 0)
    if helper is None:
        return None
    inner, inner_scope = helper
    arg = _forwarded_argument(resolver, inner, inner_scope, call, hops + 1)
    return arg.id if isinstance(arg, ast.Name) and arg.id in candidates else None


def _argument_for(func: ast.FunctionDef, call: ast.Call, param: str) -> ast.expr | None:
    """The argument `call` hands to the parameter `param` of `func` (None: its default)."""
    positional = [*func.args.posonlyargs, *func.args.args]
    names = [a.arg for a in positional]
    if param in names:
        index = names.index(param)
        if index < len(call.args):
            return call.args[index]
    if param in (a.arg for a in func.args.posonlyargs):
        return None
    return next((k.value for k in call.keywords if k.arg == param), None)


def _returned_name(resolver, callee: ast.FunctionDef, depth: int) -> str | None:
    """What every return of the callable names, the same on every path (None otherwise). Its
    names are its own bindings, then those of the function it is nested in (a closure), then
    the module's."""
    if callee.decorator_list or not isinstance(callee, ast.FunctionDef) or is_generator(callee):
        return None
    if not _ends(callee.body):
        return None  # it may run off its end, returning None
    returns = list(_returns(callee))
    if not returns or any(r.value is None for r in returns):
        return None
    own = _local_names(callee)
    nested = any(callee in defs for defs in (getattr(resolver.local, "functions", None) or {}).values())
    if nested:
        # A closure: the enclosing function's names, less those the callable binds itself.
        merged = LocalNames({k: v for k, v in resolver.local.items() if k not in own and k not in own.imports})
        outer = getattr(resolver.local, "imports", None) or {}
        merged.imports = {k: v for k, v in outer.items() if k not in own and k not in own.imports}
        merged.update(own)
        merged.imports.update(own.imports)
        inner = type(resolver)(resolver.scope, resolver.project, resolver.optable, None, resolver.class_scope)
        inner.local = merged
    else:
        inner = type(resolver)(resolver.scope, resolver.project, resolver.optable)
        inner.local = own  # even when empty of all but imports (the constructor drops an empty one)
    named = {inner.qualname(r.value, depth + 1) for r in returns}
    if len(named) != 1:
        return None
    return named.pop()


def _local_names(func: ast.FunctionDef) -> LocalNames:
    local = LocalNames(parameters(func))
    for stmt in own_statements(func.body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            bind_imports(local, stmt)
            if isinstance(stmt, ast.ImportFrom) and stmt.level:
                for alias in stmt.names:  # a relative import: bound, to nothing we read
                    local.setdefault(alias.asname or alias.name, []).append(stmt)
        elif isinstance(stmt, (*_FUNCS, ast.ClassDef)):
            local.setdefault(stmt.name, []).append(stmt)
        else:
            bind_local(local, stmt)
    return local


def _returns(func: ast.FunctionDef) -> Iterator[ast.Return]:
    return (s for s in own_statements(func.body) if isinstance(s, ast.Return))


def _ends(block: list[ast.stmt]) -> bool:
    """Whether the block never runs off its end: its last statement returns or raises, or is an
    `if` or `try` whose every way out does (a `try`'s body or its `else`, and each handler)."""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return _ends(last.body) and _ends(last.orelse)
    if isinstance(last, ast.Try):
        if last.finalbody and _ends(last.finalbody):
            return True
        done = _ends(last.orelse) if last.orelse else _ends(last.body)
        return done and all(_ends(h.body) for h in last.handlers)
    return False


def is_generator(func: ast.FunctionDef) -> bool:
    """Whether `func` itself yields: a `yield` of a function, class or lambda it defines, at
    any depth of its blocks (`if DEBUG: def trace(): yield ...`), makes that one a generator."""
    return any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in own_nodes(func, scopes=False))
