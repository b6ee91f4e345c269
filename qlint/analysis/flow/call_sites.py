"""Every call of a function in the project, with what each passes: the steps of a walk up a
helper's callers (`call_paths`).

A function's calls are found where its name is written. In its own module every reference
must be a call the model flow summarised: `helper(...)` for a module-level function,
`self.helper(...)` in a method of its class or of a subclass of the module for a method.
In the project's other modules, a module-level function of the checked module is followed
by `project_callers`; any other function only when no other module holds its name. A
reference that is none of these (a callback, `partial`, `obj.helper`, `super().helper`)
makes the answer None: its callers are not all known.
"""

from __future__ import annotations

import ast
from bisect import bisect_right
from collections.abc import Iterator

from qlint.analysis.context import FileContext
from qlint.analysis.flow.class_methods import derives_from, method_of
from qlint.analysis.flow.confined_instances import confined
from qlint.analysis.flow.function_flows import CallSite, FunctionFlow
from qlint.analysis.flow.kept_caller_verdicts import Verdicts
from qlint.analysis.flow.method_references import owner_class
from qlint.analysis.flow.model_flow import module_flows
from qlint.analysis.flow.module_analysis import ModelFlow
from qlint.analysis.flow.project_callers import KeptCalls, each_project_call, instances_kept, used_elsewhere
from qlint.analysis.flow.project_search import named_elsewhere, named_in_text, searchable
from qlint.analysis.flow.unread_uses import enclosing, unread_use
from qlint.analysis.names.functions import Body, bodies
from qlint.analysis.names.modules import module_stem
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import ClassScope
from qlint.value_classes import value_class

_SELF = ("self", "cls")
_NAMED = frozenset({ast.Name, ast.Attribute})


@value_class(eq=False)
class Home:
    """A module whose calls can be read: its context, its model-flow analysis and the bodies
    analysed there (shared with `project_callers` for the project's other modules)."""

    ctx: FileContext
    flow: ModelFlow
    analysed: dict[int, FunctionFlow | None]

    def body(self, node: ast.AST, class_scope: ClassScope | None) -> FunctionFlow | None:
        key = id(node)
        if key not in self.analysed:
            try:
                self.analysed[key] = self.flow.function(node, class_scope)
            except RecursionError:  # a body too deep to follow: its calls are not read
                self.analysed[key] = None
        return self.analysed[key]

    def flows(self) -> list[FunctionFlow]:
        """The bodies of this module analysed so far (what a construction's later changes are
        looked up in)."""
        path = self.ctx.path
        memo = self.flow.memo.functions
        whole = [f for f in memo.values() if f is not None and f.path == path]
        # A caller's body walked only in part for a caller search (`caller_slices`), not whole.
        return whole + [f for k, f in self.analysed.items() if type(k) is tuple and f is not None and k[0] not in memo]


@value_class(frozen=True)
class Site:
    """One call: its arguments (modes and expressions), the body it is in and that body's module."""

    site: CallSite
    holder: FunctionFlow
    home: Home


def checked_home(ctx: FileContext) -> Home:
    """The checked module, with the analysis its rules already ran."""
    home = ctx.cache.get("call_sites.home")
    if home is None:
        module_flows(ctx)
        home = ctx.cache["call_sites.home"] = Home(ctx, ctx.cache["model_flow.analysis"], {})
    return home


def each_site(
    ctx: FileContext, home: Home, func: ast.AST, here: bool = False, kept: Verdicts | None = None
) -> Iterator[Site | object | None]:
    """The calls of `func` (a function or method of `home`'s module) in the project: those of
    its own module first, then module by module, so that a walk can stop at the first call
    that decides it; None is yielded (last) for a use that cannot be read. With `here`, a call
    of a module-level `func` in another module yields None as well, and ends the walk.
    `kept`: the consumer's answers on the project's other modules, kept between runs
    (`kept_call_paths`): a module an earlier run found every call of deciding for the helper
    is not read, and yields `KEPT` once in place of its calls (they count as calls)."""
    for site in _sites(ctx, home, func, here, False, kept):
        end = site is None
        yield site
        # Not held while the next is found: a caller module read apart goes once its calls
        # are (`project_callers.each_project_call`).
        site = None
        if end:
            return


def readable_sites(ctx: FileContext, home: Home, func: ast.AST, kept: Verdicts | None = None) -> Iterator[Site]:
    """The same calls, every one that can be read: a use that cannot be read is passed over
    (it ends no search: the calls after it are found too). `kept`: the consumer's answers on
    the project's other modules, kept between runs (`kept_qat_callers`): a module an earlier
    run found to add nothing is passed over unread."""
    for site in _sites(ctx, home, func, False, True, kept):
        if site is not None:
            yield site


def _sites(
    ctx: FileContext, home: Home, func: ast.AST, here: bool, past: bool, kept: Verdicts | None = None
) -> Iterator[Site | None]:
    """`each_site`'s walk; with `past`, a use that cannot be read yields None and the walk
    goes on."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        yield None
        return
    scope = home.ctx.scope
    owner = None
    if scope.functions.get(func.name) is not func:
        owner = next((c for c in scope.classes.values() if c.methods.get(func.name) is func), None)
        if owner is None:
            yield None  # a nested function: its uses are not found by name
            return
    # A class whose instances never leave this module (`confined_instances`): its method's
    # calls on instances (`quantizer.prepare(m)`) are all here, each one read or unknown.
    # One that other modules name too, whose instances never leave the function that built
    # them in any module (`project_callers.instances_kept`): its calls on instances here (`t
    # = Trainer(q); t._prepare()`) are read as well, the other modules' ones below.
    boxed = owner is not None and home.ctx is ctx and confined(ctx, owner)
    stay: list[bool] = []  # asked once, at the first call on an instance

    def on_instances() -> bool:
        if not stay:
            stay.append(boxed or (owner is not None and home.ctx is ctx and instances_kept(ctx, func)))
        return stay[0]

    rows = rows_naming(home.ctx, func.name)
    for body in bodies(home.ctx.tree, scope, home.ctx.cache):
        refs = _references(home, body, func, owner, rows, on_instances)
        if refs is None:
            yield None
            if past:
                continue
            return
        if not refs:
            continue
        flow = home.body(body.node, body.class_scope) if not isinstance(body.node, ast.ClassDef) else None
        if flow is None:
            yield None
            if past:
                continue
            return
        calls = [c for c in flow.calls if c.callee is func]
        for ref in refs:
            made = [c for c in calls if c.ref is ref]
            if not made:
                yield None  # named, but not as a call the analysis followed
                if past:
                    continue
                return
            for c in made:
                yield Site(c, flow, home)
    if owner is None and home.ctx is ctx and here:
        # A call read in another module, or a use there that cannot be read: not here. Outside
        # any project (no repository, no `pyproject.toml`) there is nothing to search, and the
        # module's own calls are trusted as they were before the search (Intel's extension
        # unpacked without its `.git`: `dlrm/utils_int8.py`'s helpers).
        elsewhere = searchable(ctx) and _imported_elsewhere(ctx)
        if elsewhere and used_elsewhere(ctx, func):
            yield None
    elif owner is None and home.ctx is ctx:
        yield from _project_sites(ctx, func, past, kept)
    elif past and home.ctx is not ctx:
        # A function of another module: the branch below would yield nothing more, and what it
        # asks (whether a third module names the function) would be read for nothing, a read
        # of the project's words a kept answer cannot name (`kept_qat_callers`).
        return
    elif not boxed and not _named_only_at_home(ctx, home, func.name):
        if home.ctx is not ctx or owner_class(ctx, func) is None:
            if not past:
                yield None  # (a walk past unread uses would pass it over: not searched for)
            return
        # A method of a top-level class another module names: its calls there (`Builder(q)
        # .quantize(m)`), as for a module-level function (`method_references`).
        yield from _project_sites(ctx, func, past, kept)


def _project_sites(ctx: FileContext, func: ast.AST, past: bool, kept: Verdicts | None = None) -> Iterator[Site | None]:
    """The calls of `func` read in the project's other modules (None: a use not read)."""
    for found in each_project_call(ctx, func, 0, kept):
        if isinstance(found, KeptCalls):
            # An earlier run read them: they add nothing to the consumer's answer, but for
            # `each_site`'s walk that they are there (the helper is called).
            if not past:
                yield KEPT
            continue
        if found is None or found.site is None or found.module is None:
            yield None
            if past:
                continue
            return
        site, found = Site(found.site, found.flow, Home(*found.module[:3])), None
        yield site
        site = None  # as in `each_site`
        if kept is not None:
            kept.vouched()  # the consumer asked for the next call: it read this one through


class _KeptSites:
    """What `each_site` yields for a caller module whose calls an earlier run judged."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "KEPT"


KEPT = _KeptSites()


def calls_all_known(ctx: FileContext, func: ast.AST) -> bool:
    """Every use of `func` (of the checked module) in the project is a call the flow read."""
    key = ("call_sites.known", id(func))
    found = ctx.cache.get(key)
    if found is None:
        found = ctx.cache[key] = all(site is not None for site in each_site(ctx, checked_home(ctx), func))
    return found


def _imported_elsewhere(ctx: FileContext) -> bool:
    """Another module's text names this module's file (or its package, for `__init__.py`):
    it may import it (`project_search.named_in_text`)."""
    found = ctx.cache.get("call_sites.imported_elsewhere")
    if found is None:
        found = ctx.cache["call_sites.imported_elsewhere"] = named_in_text(ctx, module_stem(ctx.path))
    return found


def calls_read_here(ctx: FileContext, func: ast.AST) -> bool:
    """Every use of `func` (of the checked module) is a call the flow read in this module, so
    the modes its callers pass are all in this module's flows: a walk up its callers may go on
    there (`model_flow.caller_facts`). A module-level function another module names, one used
    as a value: not. A nested function is found by its name in its module (`unread_uses`).
    A method of a top-level class: when no other module names it or can import its module
    (its calls on instances count only when those never leave the module, `caller_facts`'s
    `known`); one that another module names may be called there, and the verdicts search those modules for it
    (`project_callers`, `method_references`)."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    key = ("call_sites.here", id(func))
    found = ctx.cache.get(key)
    if found is None:
        home = checked_home(ctx)
        if ctx.scope.functions.get(func.name) is func:
            found = all(site is not None for site in each_site(ctx, home, func, here=True))
        elif enclosing(ctx, func) is not None:
            found = not unread_use(ctx, home.flows(), func)
        elif (owner := owner_class(ctx, func)) is not None:
            # A method of a top-level class that another module names may be called there
            # (`Builder(q).quantize(m)`): its callers there are read by the verdicts. In a
            # module that no other one can import (a test module: its name is in no other
            # module's text) the class is built here, and the calls here are the ones read,
            # as before the search (ExecuTorch's test suites each define `self._quantize`,
            # a name held by over 80 modules).
            # Another module that names it only where it cannot be the method (another class's
            # own `self._wrap_model`, `torch.quantize`) calls it nowhere (`used_elsewhere`):
            # the calls here are then all of them (IPEX's two copies of one trainer module).
            # An `__init__` is called by the constructions of its class, spelled by its name.
            word = owner.node.name if func.name == "__init__" else func.name
            found = (
                _private_unsearched(ctx, func)
                or not _imported_elsewhere(ctx)
                or named_elsewhere(ctx, word, ctx.path) is False
                or not used_elsewhere(ctx, func)
            )
        else:
            found = True  # a decorated method, one of a nested class: trusted as before
        ctx.cache[key] = found
    return found


def _private_unsearched(ctx: FileContext, func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A private method (`_wrap_model`, not a dunder a protocol calls) in a tree whose other
    modules cannot be searched (no repository or `pyproject.toml` around it): by convention
    its class calls it, through `self`, and those calls are read here. A public one there is
    API for callers nobody can see, as a module-level function is. In a project that can be
    searched the other modules are read instead (`used_elsewhere`): a subclass or a caller
    there still counts."""
    name = func.name
    return name.startswith("_") and not name.endswith("__") and not searchable(ctx)


def _named_only_at_home(ctx: FileContext, home: Home, name: str) -> bool:
    if named_elsewhere(ctx, name, home.ctx.path) is not False:
        return False
    return home.ctx is ctx or name not in ctx.text


def rows_naming(ctx: FileContext, name: str) -> frozenset[int]:
    """The lines that hold the name: only statements on them are walked."""
    text, starts = ctx.text, ctx.lines.starts
    rows = set()
    start = text.find(name)
    while start != -1:
        rows.add(bisect_right(starts, start))
        start = text.find(name, start + len(name))
    return frozenset(rows)


def _references(
    home: Home, body: Body, func: ast.AST, owner: ClassScope | None, rows: frozenset[int], instances=None
) -> list[ast.AST] | None:
    """The nodes of one body that denote `func` (None: one may, but cannot be read). When
    `instances()` says the class's calls on instances can all be found, a call of the method
    on anything but `self` (an instance) is one when the flow read it as a call of `func`."""
    name = func.name
    scope = home.ctx.scope
    found: list[ast.AST] = []
    resolver = None
    for node in body.nodes(rows, _NAMED):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            if owner is not None:
                if isinstance(body.node, ast.ClassDef):
                    return None  # `alias = method` in a class body
                continue  # a bare name is never the method
            if name in body.local:
                continue  # a local of the same name
            found.append(node)
        elif isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.ctx, ast.Load):
            value = node.value
            if owner is None:
                resolver = resolver or Resolver(scope, home.ctx.project, home.ctx.optable, body.local, body.class_scope)
                if resolver.qualname(node) == f"{scope.module}.{name}":
                    found.append(node)
                continue  # an attribute of another object of the same name
            if not (isinstance(value, ast.Name) and value.id in _SELF and body.class_scope is not None):
                if instances is not None and not isinstance(body.node, ast.ClassDef) and instances():
                    found.append(node)  # a call on an instance: the flow must have read it
                    continue
                return None  # `super().helper`, `tester.helper`: could be this method
            runs = method_of(body.class_scope, name, scope)
            if runs is not None and runs[0] is func:
                found.append(node)
            elif runs is None and derives_from(body.class_scope, owner, scope) is not False:
                return None  # a class that may inherit it, whose lookup is not known
    return found


__all__ = [
    "KEPT",
    "Home",
    "Site",
    "calls_all_known",
    "calls_read_here",
    "checked_home",
    "each_site",
    "readable_sites",
    "rows_naming",
]
