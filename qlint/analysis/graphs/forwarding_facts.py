"""What another module contributes to the helper search of QL101/QL102, as a summary fact.

`Forwarding` asks, for a function of another module of the project, which of its
parameters reach a sink (or a graph insertion) unchanged. Walking that module's functions
in every check that imports it, and keeping its tree for the next one, cost as much as the
file's own check on ExecuTorch. Instead the module's summary carries, per function and per
method (computed once per module content, from the parse that builds the summary):

- its parameters in order (the first one of a method is dropped for bound calls) and
  whether it is a `staticmethod`;
- in call order, the calls that pass parameters on: to a sink directly (which parameters),
  or to a helper candidate (`f(...)` or `self.m(...)`/`cls.m(...)`) with, per position and
  keyword, the parameter it passes;
- the parameters rebound in its body (they no longer hold what the caller passed);

and per class its bases (as dotted names) and methods. The helper calls are resolved when
asked, through other modules' summaries, in the order and to the depth the tree walk used,
so the answers are the ones the walk gave. A module whose text holds none of the sink's
needles holds no helper: its fact is None and nothing is walked.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Any

from qlint.analysis.graphs.receivers import constructed_class
from qlint.analysis.identifier_text import normalised
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.names.scope import ClassScope, ModuleScope, function_assigns, parameter_args
from qlint.value_classes import value_class

_VERSION = 3
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)

# One step of a function body, in call order:
# (params,)                           a sink call that these parameters reach directly
# ("n" | "s" | "m" | "c", callee, positional, keywords)  a call of `callee(...)` ("n"),
#     `self.callee(...)` ("s"), `m.f(...)` ("m", callee "m.f": a function of an imported
#     module; not when the function binds `m` itself) or a method of an instance whose
#     class the code names ("c", callee "Builder.insert" for `Builder(g).insert(...)`,
#     `b.insert(...)` after `b = Builder(g)`, `self.b.insert(...)`: `receivers`),
#     positional: the parameter each
#     position passes (None: something else; empty after a `*args`), keywords: (keyword,
#     parameter) pairs.
Step = tuple


@value_class(frozen=True, eq=False)
class RemoteFunction:
    """A function of another module as its summary describes it (no tree)."""

    key: tuple[str, str]  # (path, "f" or "Class.m")
    name: str
    params: tuple[str, ...]
    static: bool
    steps: tuple[Step, ...]
    rebound: frozenset[str]


@value_class(eq=False)
class RemoteClass:
    bases: list[list[str] | None]
    methods: dict[str, RemoteFunction]


@value_class(eq=False)
class RemoteModule:
    """Enough of another module's scope for the helper search: its imports, functions and
    classes (duck-typing the `ModuleScope` attributes `forwarding` reads), and the modules
    its imports name (`import pkg.checks` sets `pkg`'s attribute `checks`: `package_paths`)."""

    path: str
    imports: dict[str, str]
    functions: dict[str, RemoteFunction]
    classes: dict[str, RemoteClass]
    imported_modules: frozenset[str] = frozenset()


class _NoProject:
    """A summary reads one module: names imported from others resolve to their import path."""

    def module_scope(self, module: str, requester: str) -> None:
        return None


_NO_PROJECT = _NoProject()


class ForwardingFact:  # a SummaryFact
    # Asked only of modules whose text holds a sink (ExecuTorch: QL102's for 11 of the 417
    # summarised), each found by a helper search that asks for it first (`module_fact`).
    lazy = True

    def __init__(
        self,
        key: str,
        direct: Callable[[ast.Call, Resolver], Iterator[ast.expr]],
        needles: tuple[str, ...],
        calls: Callable[[ast.AST], Iterator[ast.Call]],
        gated: bool = True,
    ):
        # `gated`: a module whose text holds no needle holds no helper of its own (None);
        # without, every module is read (those on a wrapper chain, asked one by one).
        self.key = f"forwarding/{_VERSION}/{key}" + ("" if gated else "/chain")
        self._gated = gated
        self._direct = direct
        self._needles = needles
        self._calls = calls

    def compute(self, tree: ast.Module, scope: ModuleScope, text: str) -> Any:
        # The needles are identifiers: read as Python reads them (`g.call_function(op)` in
        # fullwidth letters inserts too).
        if self._gated and not any(n in normalised(text) for n in self._needles):
            return None
        functions = {name: self._function(f, scope, None) for name, f in scope.functions.items()}
        classes = {
            name: [
                [dotted_parts(b) for b in cls.bases],
                {m: self._function(f, scope, cls) for m, f in cls.methods.items()},
            ]
            for name, cls in scope.classes.items()
        }
        return {"functions": functions, "classes": classes}

    def _function(self, func, scope: ModuleScope, cls: ClassScope | None) -> Any:
        params = [a.arg for a in parameter_args(func, star=False)]
        named = set(params)
        steps: list[list] = []
        if named:
            resolver = Resolver(scope, _NO_PROJECT, None, class_scope=cls)  # type: ignore[arg-type]
            bound = None  # the names the function binds (parameters included), when asked
            for node in self._calls(func):
                args = list(self._direct(node, resolver))
                if args:
                    reach = [a.id for a in args if isinstance(a, ast.Name) and a.id in named]
                    if reach:
                        steps.append([reach])
                    continue
                if not any(_param(a, named) for a in [*node.args, *(kw.value for kw in node.keywords)]):
                    continue
                callee = node.func
                if isinstance(callee, ast.Name):
                    kind, name = "n", callee.id
                elif (
                    isinstance(callee, ast.Attribute)
                    and isinstance(callee.value, ast.Name)
                    and callee.value.id in ("self", "cls")
                    and cls is not None
                ):
                    kind, name = "s", callee.attr
                elif (parts := dotted_parts(callee)) and parts[0] in scope.imports:
                    bound = function_assigns(func) if bound is None else bound
                    if parts[0] in bound:
                        continue  # a parameter or local named like the imported module
                    kind, name = "m", ".".join(parts)
                elif isinstance(callee, ast.Attribute) and (
                    built := constructed_class(callee.value, function_assigns(func) if bound is None else bound, cls)
                ):
                    kind, name = "c", ".".join([*built, callee.attr])
                else:
                    continue  # resolves to no helper
                starred = any(isinstance(a, ast.Starred) for a in node.args)
                positional = [] if starred else [_param(a, named) for a in node.args]
                keywords = [[kw.arg, p] for kw in node.keywords if kw.arg and (p := _param(kw.value, named))]
                steps.append([kind, name, positional, keywords])
        if not steps:
            return 0  # forwards nothing
        rebound = sorted(n for n, values in function_assigns(func).items() if len(values) > 1 and n in named)
        static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in func.decorator_list)
        return [params, static, steps, rebound]

    def load(self, path: str, summary, value: Any) -> RemoteModule | None:
        if value is None:
            return None
        if not isinstance(value, dict):
            raise TypeError("not a forwarding fact")
        functions = {name: _load_function(path, name, f) for name, f in _table(value["functions"]).items()}
        classes = {}
        for name, entry in _table(value["classes"]).items():
            bases, methods = entry
            if not isinstance(bases, list) or not all(b is None or _strings(b) for b in bases):
                raise TypeError("bad bases")
            classes[name] = RemoteClass(
                bases, {m: _load_function(path, f"{name}.{m}", f) for m, f in _table(methods).items()}
            )
        return RemoteModule(path, dict(summary.imports), functions, classes, frozenset(summary.imported_modules))


def _param(node: ast.expr, params: set[str]) -> str | None:
    return node.id if isinstance(node, ast.Name) and node.id in params else None


def _table(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise TypeError("not a table")
    return value


def _strings(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)


def _load_function(path: str, qual: str, value: Any) -> RemoteFunction:
    name = qual.rpartition(".")[2]
    if value == 0 and type(value) is int:
        return RemoteFunction((path, qual), name, (), False, (), frozenset())
    params, static, steps, rebound = value
    if not _strings(params) or type(static) is not bool or not _strings(rebound) or not isinstance(steps, list):
        raise TypeError("bad function fact")
    out: list[Step] = []
    for step in steps:
        if len(step) == 1 and _strings(step[0]):
            out.append((tuple(step[0]),))
            continue
        kind, callee, positional, keywords = step
        if kind not in ("n", "s", "m", "c") or not isinstance(callee, str) or not isinstance(positional, list):
            raise TypeError("bad call step")
        if not all(p is None or isinstance(p, str) for p in positional):
            raise TypeError("bad positions")
        if not all(len(k) == 2 and _strings(k) for k in keywords):
            raise TypeError("bad keywords")
        out.append((kind, callee, tuple(positional), tuple((k, p) for k, p in keywords)))
    return RemoteFunction((path, qual), name, tuple(params), static, tuple(out), frozenset(rebound))
