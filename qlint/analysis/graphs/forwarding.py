"""Helpers that forward a parameter to a sink: `_test_quantizer(m, inputs, q, occurrence)`
passes `occurrence` on to `checkGraphModuleNodes(m, expected_node_occurrence=...)`, and a
project's own `insert(graph, op, args)` passes `op` on to `graph.call_function(op, args)`.

A call of such a helper is a sink (or an insertion) at the positions and keywords of the
forwarded parameters. Helpers are found by resolving the callee: a function of the module,
one imported from another module of the project, or a method of the enclosing class or of
one of its bases (in this module or another one of the project). Forwarding through
helpers of helpers is followed to the end (each function once per check), with no limit on
depth: answers are shared across checks (`SHARED`), and one cut off deep in one check was
read shallow by the next, so a file's findings depended on the files checked before it.
Other modules are read through their summaries (`forwarding_facts`): their trees are neither
walked nor kept.

Kept in modules of their own: which function a call runs (`helper_lookup`), the helpers of
other modules a module calls (`imported_helpers`), the modules that hand a parameter on without
naming a sink (`wrapper_chains`), the facts shared across checks (`forwarding_memos`), what is
read of other modules' texts (`forwarding_texts`), what each answer was read from (its trail:
`forwarding_trails`), the calls of a function's own body (`own_calls`) and the shapes of calls
the sink rules share (`call_parts`). Here: which parameters a function hands on to a sink, and
which arguments of a call reach one.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable, Iterator

from qlint.analysis.graphs.call_parts import call_arguments, spans_any
from qlint.analysis.graphs.forwarding_facts import ForwardingFact, RemoteFunction, RemoteModule
from qlint.analysis.graphs.forwarding_memos import SHARED, unkept_function
from qlint.analysis.graphs.forwarding_texts import mentions, text_names
from qlint.analysis.graphs.forwarding_trails import holds, module_file, read_module, replay, shared_entry, trail_key
from qlint.analysis.graphs.helper_lookup import (
    Helper,
    helper_of_call,
    instance_method,
    method_of_class,
    module_attribute,
    module_function,
)
from qlint.analysis.graphs.imported_helpers import helper_names, imports_helper
from qlint.analysis.graphs.index_roots import root_for
from qlint.analysis.graphs.own_calls import own_calls
from qlint.analysis.graphs.wrapper_chains import CHAIN_LINKS, forwards_on
from qlint.analysis.names.modules import import_root
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import ClassScope, ModuleScope, function_assigns, parameter_args

# What a sink is: for a call (and the resolver of its body), the argument expressions that
# reach it directly.
DirectSink = Callable[[ast.Call, Resolver], Iterator[ast.expr]]


class Forwarding:
    """Which arguments of a call reach a sink through a helper; one per file and sink kind.

    `needles` are texts every direct sink call holds (its callee's name, or a keyword):
    another module is read only when its text holds one, so looking for helpers does
    not parse every module a file imports. `fact_key` names the sink kind (with whatever
    option defines it) in other modules' summaries.
    """

    def __init__(
        self,
        direct: DirectSink,
        resolver_for: Callable[[ModuleScope, ClassScope | None], Resolver],
        needles: tuple[str, ...],
        own_path: str,
        fact_key: str,
        holds_sink: Callable[[str], bool] | None = None,
        instances: bool = False,
        deep: bool = False,
    ):
        self._direct = direct
        self._resolver_for = resolver_for
        # Whether classes of other modules the module constructs are asked about (their
        # methods as helpers, and as chain links): QL102's wrappers (`GraphBuilder(g).insert(op)`).
        self.instances = instances
        self.needles = needles
        # Whether a module's text can hold a direct sink call (default: it holds a needle);
        # a module that cannot is not summarised for the helper search.
        self.holds_sink = holds_sink or (lambda text: any(n in text for n in needles))
        # How the last module of a wrapper chain, which names a sink, makes wrappers of its
        # functions from its text (`forwarding_texts.module_wrappers`): where a needle is what
        # holds a sink (QL101's), every one written in code stands for a sink call; else its
        # insertions do (QL102's `holds_sink`).
        self.site_needles = needles if holds_sink is None else None
        self.own_path = own_path
        # Names under which the file being checked calls helpers (set once they are known).
        self.helpers: frozenset[str] = frozenset()
        # id(func) -> (func, forwarded parameters, the modules that answer was read from)
        self._params: dict[int, tuple[ast.AST, frozenset[str], tuple]] = {}
        # Modules read while a fact shared across checks is worked out: the fact is reused
        # only while they keep their content keys (see `file_keys`).
        self.trails: list[list[tuple[str, tuple | None]]] = []
        # `forwarded_params` in progress, innermost last: [key, whether its answer may be
        # shared across checks]. An answer that met a function still in progress (a cycle
        # through two functions) depends on which of them was asked first; it serves this
        # check (whose order of questions its file decides) but is not shared (`SHARED`), nor
        # is anything worked out from it (`_unshared`).
        self.asking: list[list] = []
        self._unshared: set[object] = set()
        self.module_files: dict[tuple[str, str], str | None] = {}  # per check: files may appear later
        self.project = None  # the project index, known once a resolver is seen
        # Content keys and recorded dependencies of this check: a file is stat-ed once per check.
        self.content_keys: dict[str, tuple | None] = {}
        self.recorded: set = set()  # paths, and lookups ("find", module, root)
        self.fact = ForwardingFact(fact_key, direct, needles, own_calls)
        # A module that names no sink can still hold helpers that hand a parameter on to
        # another module's (`add_op(graph, op)` calling `a.insert(graph, op)`): read through
        # this fact, computed only for such modules (not registered for every summary).
        self.chain_fact = ForwardingFact(fact_key, direct, needles, own_calls, gated=False)
        self.wrapper_index = None  # the project's wrapper-name index, where the check has one
        # Whether chains run `CHAIN_LINKS` deep without the index too: a search a tree run
        # makes with the index (`deep`), in a module of a root the index covers. The index
        # only spares the lookups of names it rules out; how deep chains run is the root's, so
        # a check of one file, of a few, or of an editor's buffer (no index) answers as the
        # tree run does.
        self._deep = deep and root_for(own_path) is not None
        # Per check: (module, links left) -> whether a chain from it reaches a module naming a
        # sink, with the modules read for that answer; each module's own links; and (module,
        # name, links left) -> whether that name of a link module hands a parameter on (`_passes_on`).
        self.reach: dict[tuple[str, int], tuple[bool, tuple]] = {}
        self.edges: dict[str, tuple[bool, tuple[tuple[str, str, str], ...], tuple]] = {}
        self.passes: dict[tuple[str, str, int], tuple[bool, tuple]] = {}
        self.instance_methods: dict[str, tuple[frozenset[str], tuple]] = {}  # `_instance_wrapper`
        self.inherited: dict[tuple, tuple] = {}  # `imported_helpers._inherited_helpers`

    @property
    def chain_links(self) -> int:
        """The modules past the first a wrapper chain may pass through (`wrapper_chains`)."""
        return CHAIN_LINKS - 1 if self._deep or self.wrapper_index is not None else 0

    @property
    def kind(self) -> tuple[str, bool, int]:
        """What a fact shared across checks was worked out for: the sink kind, whether
        without the wrapper-name index (whose reads make its trail), and how deep chains run."""
        return self.fact.key, self.wrapper_index is None, self.chain_links

    def module_scope(self, resolver: Resolver | None, module: str, requester: str) -> RemoteModule | None:
        """Another module of the project as its summary describes it, if it can hold a helper
        (its text names a sink). Whatever is read (the module, or that it is absent) is a
        dependency of this check."""
        project = self.project = resolver.project if resolver is not None else self.project
        path = module_file(self, module, requester)
        if path is None:
            # Records the absence when the module would be the project's: creating it later
            # must refresh this check.
            project.module_scope(module, requester)
            if self.trails:
                base = os.path.join(import_root(requester), *module.split("."))
                self.trails[-1].extend((p, None) for p in (base + ".py", os.path.join(base, "__init__.py")))
            return None
        read_module(self, project, path)
        if mentions(project, path, self.fact.key, self.holds_sink):
            return project.module_fact(module, requester, self.fact)
        if not forwards_on(self, project, path):
            return None
        # The fact first: a module not summarised yet is parsed once, for both.
        chain = project.fact_at(path, self.chain_fact, register=False)
        if project.module_scope(module, requester) is None:
            return None
        return chain

    def module_holding(
        self, resolver: Resolver | None, module: str, requester: str, name: str, function: bool = False
    ) -> RemoteModule | None:
        """`module_scope` of the module a helper's name is imported from, when its text can
        hold `name`: it defines it (`def`/`class`), or it re-exports it (a package's
        `__init__.py`: its imports, read from its text, lead on to the module defining it).
        A module that does neither is not summarised (parsed) for the name. With `function`
        only a `def` counts: a class of that name is no function to look up in its summary
        (the question of most names the files of a tree call, as `Pass()`)."""
        project = self.project = resolver.project if resolver is not None else self.project
        path = module_file(self, module, requester)
        if path is not None:
            defined, functions, imports = text_names(project, path)
            if name not in (functions if function else defined):
                read_module(self, project, path)  # a dependency all the same: it may come to define it
                return RemoteModule(path, imports, {}, {}) if name in imports else None
        return self.module_scope(resolver, module, requester)

    def forwarded_args(self, call: ast.Call, resolver: Resolver, caller=None) -> list[ast.expr]:
        """The arguments of `call` that a helper forwards to a sink ([] for other calls).
        `caller`: the function the call is in, when `resolver.local` does not hold its names."""
        helper = self.resolve_helper(call, resolver, caller)
        if helper is None:
            return []
        names = self.forwarded_params(helper.func, helper.scope, helper.class_scope)
        if not names:
            return []
        params = _params(helper.func)
        if helper.bound and params:
            params = params[1:]
        out = [arg for i, arg in enumerate(call.args) if i < len(params) and params[i] in names]
        if any(isinstance(a, ast.Starred) for a in call.args):
            out = []  # positions after a `*args` are unknowable
        out += [kw.value for kw in call.keywords if kw.arg in names]
        return out

    def forwarded_params(
        self, func, scope: ModuleScope, class_scope: ClassScope | None, rows: list[int] | None = None
    ) -> frozenset[str]:
        """Parameters of `func` that reach a sink unchanged (passed as a sink's argument, or
        to a helper that forwards them)."""
        key = _func_key(func)
        if key in self._params:
            # The modules read for it are read for whatever asks again (a fact shared across
            # checks must carry all of them).
            if self.trails:
                self.trails[-1].extend(self._params[key][2])
            self._met(key)
            return self._params[key][1]
        remote = isinstance(func, RemoteFunction)
        shared_key = (key, self.kind)
        shared = shared_entry(self, SHARED, shared_key, unkept_function) if remote else SHARED.get(shared_key)
        fresh = shared is not None and (remote or holds(self, shared[2]))
        if fresh and (shared[0] is func or remote):
            # Another module's function (its scope is cached by the project index): read once
            # per process, not once per file that calls it, while the modules it was read
            # from are unchanged (helpers of helpers may live in a third one).
            replay(self, shared[2])
            return shared[1]
        self._params[key] = (func, frozenset(), ())  # a cycle forwards nothing more
        self.trails.append([])
        self.asking.append([key, True])
        params = set(_params(func))
        found: set[str] = set()
        if isinstance(func, RemoteFunction):
            if params:
                found = self._remote_params(func, scope, class_scope)  # type: ignore[arg-type]
        elif params:
            resolver = self._resolver_for(scope, class_scope)
            for node in own_calls(func, rows):
                args = list(self._direct(node, resolver))
                if not args and any(isinstance(a, ast.Name) and a.id in params for a in call_arguments(node)):
                    helper = self.resolve_helper(node, resolver, func)
                    if helper is not None and helper.func is not func:
                        names = self.forwarded_params(helper.func, helper.scope, helper.class_scope)
                        if names:
                            args = self.forwarded_args(node, resolver, func)
                found.update(a.id for a in args if isinstance(a, ast.Name) and a.id in params)
        if found:
            # A parameter rebound in the body no longer holds what the caller passed.
            if isinstance(func, RemoteFunction):
                found -= func.rebound
            else:
                found -= {n for n, values in function_assigns(func).items() if len(values) > 1}
        result = frozenset(found)
        trail = tuple(dict.fromkeys(self.trails.pop()))
        self._params[key] = (func, result, trail)
        if self.trails:
            self.trails[-1].extend(trail)
        if not self.asking.pop()[1]:
            self._unshared.add(key)
            if self.asking:
                self.asking[-1][1] = False
        elif scope.path != self.own_path:
            if len(SHARED) > 50_000:
                SHARED.clear()
            own = (scope.path, trail_key(self, scope.path) if self.project is not None else None)
            SHARED[(key, self.kind)] = (func, result, (*trail, own))
        return result

    def _remote_params(self, func: RemoteFunction, scope: RemoteModule, class_scope) -> set[str]:
        """`forwarded_params` of a function of another module, from its summary: the same
        steps, in the same order, as the walk of its body."""
        found: set[str] = set()
        for step in func.steps:
            if len(step) == 1:
                found.update(step[0])
                continue
            kind, callee, positional, keywords = step
            if kind == "n":
                helper = module_function(self, None, scope, callee, 0)  # type: ignore[arg-type]
            elif kind == "m":
                helper = module_attribute(self, None, scope, callee.split("."), 0)  # type: ignore[arg-type]
            elif kind == "c":
                *cls, method = callee.split(".")
                helper = instance_method(self, None, scope, cls, method)
            elif class_scope is not None:
                helper = method_of_class(self, None, scope, class_scope, callee, 0)  # type: ignore[arg-type]
            else:
                helper = None
            if helper is None or helper.func is func:
                continue
            names = self.forwarded_params(helper.func, helper.scope, helper.class_scope)
            if not names:
                continue
            # As `forwarded_args` maps a call's arguments onto the helper's parameters.
            params = _params(helper.func)
            if helper.bound and params:
                params = params[1:]
            found.update(
                p for i, p in enumerate(positional) if p is not None and i < len(params) and params[i] in names
            )
            found.update(p for k, p in keywords if k in names)
        return found

    def _met(self, key) -> None:
        """`forwarded_params` answered `key` from this check's memo: an answer still in
        progress (a cycle) or one that is not shared makes the answers being worked out
        from it depend on the order of questions too (a function calling itself does not)."""
        asking = self.asking
        if not asking:
            return
        for i in range(len(asking) - 1, -1, -1):
            if asking[i][0] == key:
                if i < len(asking) - 1:
                    for frame in asking[i:]:
                        frame[1] = False
                return
        if key in self._unshared:
            asking[-1][1] = False

    def imports_helper(self, project, path: str, text: str, index=None, imports=None, named: bool = False) -> bool:
        """Whether the module with this text may call a helper of another module
        (`imported_helpers.imports_helper`; `imports`: what `helper_imports` answered)."""
        return imports_helper(self, project, path, text, index, imports, named)

    def resolve_helper(self, call: ast.Call, resolver: Resolver, caller=None) -> Helper | None:
        return helper_of_call(self, call, resolver, caller)

    def find_helpers(
        self,
        scope: ModuleScope,
        lines_containing: Callable[..., frozenset[int]],
        resolver: Resolver,
        called: Callable[[str], bool] | None = None,
        index=None,
        text: str | None = None,
    ):
        """Names under which the module of `scope` calls helpers: its own functions and
        methods that forward to a sink, functions it imports and methods its classes inherit
        from other modules of the project that do. Sets and returns `self.helpers`.

        `called`: whether the module may call a name (`called_names`). An imported helper the
        module never calls is left out: its name only matters at a call (`callee_name`), and
        finding out would read the modules it comes from. `text`: the module's, where it calls
        functions of the modules it imports (`gu.insert_op(...)`)."""
        self.project = resolver.project
        functions = [(f, None) for f in scope.functions.values()]
        functions += [(m, cls) for cls in scope.classes.values() for m in cls.methods.values()]
        helpers: set[str] = set()
        # Other modules' helpers first: a function of this module that hands its parameter
        # on to one of them (`insert_op(graph, op)`, `gu.insert_op(...)`) is a helper too.
        imported = helper_names(self, scope, resolver, called, index, text)
        # A helper of this module calls a sink or another helper on one of its rows: only
        # those functions are read, and each new helper's name can make another one a helper.
        while True:
            rows = sorted(lines_containing(*sorted(set(self.needles) | helpers | imported)))
            new = {
                func.name
                for func, cls in functions
                if func.name not in helpers and spans_any(func, rows) and self.forwarded_params(func, scope, cls, rows)
            }
            if not new:
                break
            helpers |= new
        self.helpers = frozenset(helpers | imported)
        return self.helpers


def _params(func) -> list[str]:
    if isinstance(func, RemoteFunction):
        return list(func.params)
    return [a.arg for a in parameter_args(func, star=False)]


def _func_key(func) -> object:
    return func.key if isinstance(func, RemoteFunction) else id(func)
