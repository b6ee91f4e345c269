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
read of other modules' texts (`forwarding_texts`) and the shapes of calls the sink rules share
(`call_parts`). Here: which parameters a function hands on to a sink, which arguments of a call
reach one, and what each answer was read from (its trail).
"""

from __future__ import annotations

import ast
import os
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator

from qlint.analysis.graphs import file_keys, kept_answers
from qlint.analysis.graphs.call_parts import call_arguments, spans_any
from qlint.analysis.graphs.forwarding_facts import ForwardingFact, RemoteFunction, RemoteModule
from qlint.analysis.graphs.forwarding_memos import MEMO_NAMES, SHARED, unkept_function
from qlint.analysis.graphs.forwarding_texts import mentions, text_names
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
from qlint.analysis.graphs.wrapper_chains import CHAIN_LINKS, forwards_on
from qlint.analysis.names.import_paths import lookup_root, tried_apart
from qlint.analysis.names.modules import import_root
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import ClassScope, ModuleScope, function_assigns, parameter_args
from qlint.analysis.node_memo import kept_on_node, kept_on_node_by
from qlint.analysis.tree_walk import own_nodes

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
        self._trails: list[list[tuple[str, tuple | None]]] = []
        # `forwarded_params` in progress, innermost last: [key, whether its answer may be
        # shared across checks]. An answer that met a function still in progress (a cycle
        # through two functions) depends on which of them was asked first; it serves this
        # check (whose order of questions its file decides) but is not shared (`SHARED`), nor
        # is anything worked out from it (`_unshared`).
        self._asking: list[list] = []
        self._unshared: set[object] = set()
        self._found: dict[tuple[str, str], str | None] = {}  # per check: files may appear later
        self._project = None  # the project index, known once a resolver is seen
        # Content keys and recorded dependencies of this check: a file is stat-ed once per check.
        self._keys: dict[str, tuple | None] = {}
        self._recorded: set = set()  # paths, and lookups ("find", module, root)
        self.fact = ForwardingFact(fact_key, direct, needles, _calls)
        # A module that names no sink can still hold helpers that hand a parameter on to
        # another module's (`add_op(graph, op)` calling `a.insert(graph, op)`): read through
        # this fact, computed only for such modules (not registered for every summary).
        self.chain_fact = ForwardingFact(fact_key, direct, needles, _calls, gated=False)
        self._index = None  # the project's wrapper-name index, where the check has one
        # Whether chains run `CHAIN_LINKS` deep without the index too: a search a tree run
        # makes with the index (`deep`), in a module of a root the index covers. The index
        # only spares the lookups of names it rules out; how deep chains run is the root's, so
        # a check of one file, of a few, or of an editor's buffer (no index) answers as the
        # tree run does.
        self._deep = deep and root_for(own_path) is not None
        # Per check: (module, links left) -> whether a chain from it reaches a module naming a
        # sink, with the modules read for that answer; each module's own links; and (module,
        # name, links left) -> whether that name of a link module hands a parameter on (`_passes_on`).
        self._reach: dict[tuple[str, int], tuple[bool, tuple]] = {}
        self._edges: dict[str, tuple[bool, tuple[tuple[str, str, str], ...], tuple]] = {}
        self._passes: dict[tuple[str, str, int], tuple[bool, tuple]] = {}
        self._methods: dict[str, tuple[frozenset[str], tuple]] = {}  # `_instance_wrapper`
        self._inherited: dict[tuple, tuple] = {}  # `imported_helpers._inherited_helpers`

    @property
    def chain_links(self) -> int:
        """The modules past the first a wrapper chain may pass through (`wrapper_chains`)."""
        return CHAIN_LINKS - 1 if self._deep or self._index is not None else 0

    @property
    def _kind(self) -> tuple[str, bool, int]:
        """What a fact shared across checks was worked out for: the sink kind, whether
        without the wrapper-name index (whose reads make its trail), and how deep chains run."""
        return self.fact.key, self._index is None, self.chain_links

    def module_scope(self, resolver: Resolver | None, module: str, requester: str) -> RemoteModule | None:
        """Another module of the project as its summary describes it, if it can hold a helper
        (its text names a sink). Whatever is read (the module, or that it is absent) is a
        dependency of this check."""
        project = self._project = resolver.project if resolver is not None else self._project
        path = self._find(module, requester)
        if path is None:
            # Records the absence when the module would be the project's: creating it later
            # must refresh this check.
            project.module_scope(module, requester)
            if self._trails:
                base = os.path.join(import_root(requester), *module.split("."))
                self._trails[-1].extend((p, None) for p in (base + ".py", os.path.join(base, "__init__.py")))
            return None
        self._read(project, path)
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
        project = self._project = resolver.project if resolver is not None else self._project
        path = self._find(module, requester)
        if path is not None:
            defined, functions, imports = text_names(project, path)
            if name not in (functions if function else defined):
                self._read(project, path)  # a dependency all the same: it may come to define it
                return RemoteModule(path, imports, {}, {}) if name in imports else None
        return self.module_scope(resolver, module, requester)

    def _find(self, module: str, requester: str) -> str | None:
        """The file of `module` as `requester` imports it, looked up once per check and root.
        The answer is a dependency of the fact being worked out: a module created where the
        lookup found none, or ahead of the one it found, changes it (`_key`)."""
        root = lookup_root(module, requester)
        found = self._lookup(module, root, requester)
        if self._trails:
            self._trails[-1].append((("find", module, root), found))
        # What `root` does not stand for: the requester's package directory, which may come to hold it.
        apart = tried_apart(module, os.path.abspath(requester), root, found) if ProjectIndex.wants_dependencies else ()
        if apart:
            self._replay(tuple((path, None) for path in apart))
        return found

    def _lookup(self, module: str, root: str, requester: str | None = None) -> str | None:
        key = (module, root)
        if key not in self._found:
            asker = requester if requester is not None else kept_answers.root_requester(root)
            self._found[key] = self._project.find_module_in_check(module, asker)
        return self._found[key]

    def _read(self, project, path: str) -> None:
        key = self._key(path)
        if self._trails:  # the innermost fact; each hands its trail on to the one around it
            self._trails[-1].append((path, key))
        self._record(((path, key),))

    def _key(self, path: str | tuple) -> tuple | str | None:
        """A module's content key; for a lookup in a trail (`_find`), the file it finds now."""
        if type(path) is tuple:
            return self._lookup(path[1], path[2])
        if path not in self._keys:
            self._keys[path] = file_keys.content_key(self._project, path)
        return self._keys[path]

    def _valid(self, deps) -> bool:
        return self._project is not None and all(self._key(path) == key for path, key in deps)

    def _shared(self, memo: dict, key, load: Callable[[tuple], tuple] | None = None) -> tuple | None:
        """The entry of a memo of facts shared across checks (value..., trail) while its trail
        holds; else the one an earlier run kept (`kept_answers`), if its trail holds now."""
        known = memo.get(key)
        if known is not None and self._valid(known[-1]):
            return known
        name = MEMO_NAMES.get(id(memo))  # None: a memo put in its place (tests)
        kept = kept_answers.saved(name, key) if name is not None else None
        if kept is None or self._project is None:
            return None
        project = self._project
        trail = kept_answers.valid_trail(
            kept[-1], self._key, lambda path, now: file_keys.digest(project, path, now), self._lookup
        )
        if trail is None:
            return None
        known = memo[key] = (*(load(kept[:-1]) if load is not None else kept[:-1]), trail)
        kept_answers.took(known)
        return known

    def _record(self, deps) -> None:
        if self._project is None or not file_keys.recording(self._project):
            return
        # Modules and lookups (a module made where one found none, or ahead of the one found).
        new = tuple((p, k) for p, k in deps if (type(p) is str or p[0] == "find") and p not in self._recorded)
        if new and self._project is not None:
            self._recorded.update(p for p, _ in new)
            file_keys.record_trail(self._project, self.own_path, new)

    def _replay(self, deps) -> None:
        if self._trails:
            self._trails[-1].extend(deps)
        self._record(deps)

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
            if self._trails:
                self._trails[-1].extend(self._params[key][2])
            self._met(key)
            return self._params[key][1]
        remote = isinstance(func, RemoteFunction)
        shared_key = (key, self._kind)
        shared = self._shared(SHARED, shared_key, unkept_function) if remote else SHARED.get(shared_key)
        fresh = shared is not None and (remote or self._valid(shared[2]))
        if fresh and (shared[0] is func or remote):
            # Another module's function (its scope is cached by the project index): read once
            # per process, not once per file that calls it, while the modules it was read
            # from are unchanged (helpers of helpers may live in a third one).
            self._replay(shared[2])
            return shared[1]
        self._params[key] = (func, frozenset(), ())  # a cycle forwards nothing more
        self._trails.append([])
        self._asking.append([key, True])
        params = set(_params(func))
        found: set[str] = set()
        if isinstance(func, RemoteFunction):
            if params:
                found = self._remote_params(func, scope, class_scope)  # type: ignore[arg-type]
        elif params:
            resolver = self._resolver_for(scope, class_scope)
            for node in _calls(func, rows):
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
        trail = tuple(dict.fromkeys(self._trails.pop()))
        self._params[key] = (func, result, trail)
        if self._trails:
            self._trails[-1].extend(trail)
        if not self._asking.pop()[1]:
            self._unshared.add(key)
            if self._asking:
                self._asking[-1][1] = False
        elif scope.path != self.own_path:
            if len(SHARED) > 50_000:
                SHARED.clear()
            own = (scope.path, self._key(scope.path) if self._project is not None else None)
            SHARED[(key, self._kind)] = (func, result, (*trail, own))
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
        asking = self._asking
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
        self._project = resolver.project
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


def _calls(func: ast.AST, rows: list[int] | None = None) -> Iterable[ast.Call]:
    """Calls in a function body, not in nested functions or classes; with `rows`, only
    those spanning one of them (a helper's sink call holds the sink's text on a row).
    All of them are kept on the function: the forwarding of each sink kind (QL101's matchers,
    QL102's insertions) asks about every method of the classes a module's classes inherit
    from, and walked each (43 walks of torch's observer.py per check)."""
    if rows is None:
        return kept_on_node(func, _CALLS, _own_calls)
    # With rows, kept on the function too, under the rows among its own (its body lies within
    # them): every check of an editor asks each function on the rows of its module's needles,
    # and gets the unchanged functions' very nodes again (`statement_reuse`).
    end = func.end_lineno or func.lineno
    low = bisect_left(rows, func.lineno)
    key = tuple(rows[low : bisect_right(rows, end, low)])
    return kept_on_node_by(
        func,
        _ROW_CALLS,
        key,
        _ROW_CALLS_KEPT,
        lambda: tuple(n for n in own_nodes(func, scopes=False, rows=rows) if isinstance(n, ast.Call)),
    )


_CALLS = "_qlint_forwarding_calls"
_ROW_CALLS = "_qlint_forwarding_row_calls"
_ROW_CALLS_KEPT = 8


def _own_calls(func: ast.AST) -> tuple[ast.Call, ...]:
    return tuple(n for n in own_nodes(func, scopes=False) if isinstance(n, ast.Call))
