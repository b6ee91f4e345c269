"""Helpers that forward a parameter to a sink: `_test_quantizer(m, inputs, q, occurrence)`
passes `occurrence` on to `checkGraphModuleNodes(m, expected_node_occurrence=...)`, and a
project's own `insert(graph, op, args)` passes `op` on to `graph.call_function(op, args)`.

A call of such a helper is a sink (or an insertion) at the positions and keywords of the
forwarded parameters. Helpers are found by resolving the callee: a function of the module,
one imported from another module of the project, or a method of the enclosing class or of
one of its bases (in this module or another one of the project). Forwarding through
helpers of helpers is followed to the end (each function once per check), with no limit on
depth: answers are shared across checks (`_SHARED`), and one cut off deep in one check was
read shallow by the next, so a file's findings depended on the files checked before it.
Other modules are read through their summaries (`forwarding_facts`): their trees are neither
walked nor kept.

Kept in modules of their own: which function a call runs (`helper_lookup`), the facts shared
across checks (`forwarding_memos`), what is read of other modules' texts (`forwarding_texts`)
and the shapes of calls the sink rules share (`call_parts`).
"""

from __future__ import annotations

import ast
import functools
import os
from collections.abc import Callable, Iterable, Iterator

from qlint.analysis.graphs import file_keys, kept_answers
from qlint.analysis.graphs.call_parts import bound_call as bound_call  # the packet rules import it from here
from qlint.analysis.graphs.call_parts import call_arguments, spans_any
from qlint.analysis.graphs.call_parts import callee_name as callee_name  # as `bound_call`
from qlint.analysis.graphs.called_names import attributes_called, calls_memo, may_call, may_call_attribute
from qlint.analysis.graphs.forwarding_facts import ForwardingFact, RemoteFunction, RemoteModule
from qlint.analysis.graphs.forwarding_memos import (
    _IMPORTED,
    _LINKS_OF,
    _MEMO_NAMES,
    _PASSING,
    _SHARED,
    _unkept_function,
)
from qlint.analysis.graphs.forwarding_texts import (
    _attributes,
    _class_names,
    _import_root,
    _mentions,
    _module_text,
    _names,
    _torch,
    _wrappers,
)
from qlint.analysis.graphs.helper_gate import may_lead_to_helper
from qlint.analysis.graphs.helper_lookup import (
    _MAX_DEPTH,
    Helper,
    _base_class,
    _instance_method,
    _method,
    _module_attribute,
    _module_function,
    _resolve_helper,
)
from qlint.analysis.graphs.word_trie import holds_any
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.names.scope import ClassScope, ModuleScope, function_assigns, parameter_args
from qlint.analysis.names.text_imports import class_bases, file_imports, text_imports
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import own_nodes

# Modules that insert nothing a wrapper chain passes through, at most (c -> b -> mid -> a:
# two), where the run has the project's wrapper-name index (`wrapper_index`: a batch run
# over a repository), which holds every name such a chain can pass through; without it
# (installed packages, one file, the editor) one. Past the first, a link counts only for a
# name its module hands a parameter on with (`_passes_on`, from texts). Without the index
# even that walk reads most of the installed torchao (QL1 CPU 1.8 -> 2.9 s with two links,
# 4.1-5.1 s with three); one link asks only whether the next module names a sink.
CHAIN_LINKS = 3

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
        # check (whose order of questions its file decides) but is not shared (`_SHARED`), nor
        # is anything worked out from it (`_unshared`).
        self._asking: list[list] = []
        self._unshared: set[object] = set()
        self._found: dict[tuple[str, str], str | None] = {}  # per check: files may appear later
        self._project = None  # the project index, known once a resolver is seen
        # Content keys and recorded dependencies of this check: a file is stat-ed once per check.
        self._keys: dict[str, tuple | None] = {}
        self._recorded: set[str] = set()
        self.fact = ForwardingFact(fact_key, direct, needles, _calls)
        # A module that names no sink can still hold helpers that hand a parameter on to
        # another module's (`add_op(graph, op)` calling `a.insert(graph, op)`): read through
        # this fact, computed only for such modules (not registered for every summary).
        self.chain_fact = ForwardingFact(fact_key, direct, needles, _calls, gated=False)
        self._index = None  # the project's wrapper-name index, where the check has one
        # Per check: (module, links left) -> whether a chain from it reaches a module naming a
        # sink, with the modules read for that answer; each module's own links; and (module,
        # name, links left) -> whether that name of a link module hands a parameter on (`_passes_on`).
        self._reach: dict[tuple[str, int], tuple[bool, tuple]] = {}
        self._edges: dict[str, tuple[bool, tuple[tuple[str, str, str], ...], tuple]] = {}
        self._passes: dict[tuple[str, str, int], tuple[bool, tuple]] = {}
        self._methods: dict[str, tuple[frozenset[str], tuple]] = {}  # `_instance_wrapper`

    @property
    def _kind(self) -> tuple[str, bool]:
        """What a fact shared across checks was worked out for: the sink kind, and whether
        without the wrapper-name index (which lets chains run longer: `CHAIN_LINKS`)."""
        return self.fact.key, self._index is None

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
                base = os.path.join(_import_root(requester), *module.split("."))
                self._trails[-1].extend((p, None) for p in (base + ".py", os.path.join(base, "__init__.py")))
            return None
        self._read(project, path)
        if _mentions(project, path, self.fact.key, self.holds_sink):
            return project.module_fact(module, requester, self.fact)
        if not self._forwards_on(project, path):
            return None
        # The fact first: a module not summarised yet is parsed once, for both.
        chain = project.fact_at(path, self.chain_fact, register=False)
        if project.module_scope(module, requester) is None:
            return None
        return chain

    def _forwards_on(self, project, path: str) -> bool:
        """Whether a module that names no sink may hand a parameter on to a function of a
        module that does (a wrapper chain's link: `add_op(graph, op)` calling
        `a.insert(graph, op)` or `gu.insert(graph, op)`), from texts alone: it calls a name
        it imports (or a function or class of a module it imports) that a module naming a
        sink defines (followed through re-exports), or that another such link defines
        (c -> b -> mid -> a, `CHAIN_LINKS` modules deep at most). Asked once per module, whatever
        imports it. Classes it subclasses are not asked about: a class of a module that
        names no sink holds no helper method of its own unless it calls one (in ExecuTorch
        nearly every pass would otherwise be read through `ExportPass`)."""
        key = ("chain", path, self.fact.key, self._index is None)
        known = self._shared(_IMPORTED, key)
        if known is not None:
            self._replay(known[1])
            return bool(known[0])
        self._trails.append([])
        try:
            found = self._reaches(project, path, CHAIN_LINKS - 1 if self._index is not None else 0)
        finally:
            trail = tuple(dict.fromkeys(self._trails.pop()))
        if self._trails:
            self._trails[-1].extend(trail)
        if len(_IMPORTED) > 50_000:
            _IMPORTED.clear()
        _IMPORTED[key] = (found, (*trail, (path, self._key(path))))
        return found

    def _reaches(self, project, path: str, links: int) -> bool:
        """Whether the module calls a function or class of a module naming a sink, or (with
        `links` left) of a module that does so in turn. Each (module, links left) is worked
        out once per check: the links left fall at each step, so a cycle of imports ends,
        and the modules within reach are each read once however many paths lead to them."""
        known = self._reach.get((path, links))
        if known is None:
            self._trails.append([])
            try:
                adjacent, further = self._links_of(project, path)
                if not adjacent and links > 0 and further:
                    # Only what the module's functions call with a parameter of theirs (the
                    # names of most calls of other modules' functions hand nothing on).
                    module = _module_text(project, path)
                    called = {callee for i in module.functions() for _, callee in module.calls_within(i)}
                    further = tuple(f for f in further if f[2] in called)
                found = adjacent or (
                    links > 0 and any(self._passes_on(project, p, name, links - 1) for p, name, _ in further)
                )
            finally:
                trail = tuple(dict.fromkeys(self._trails.pop()))  # many paths lead to one module
            known = self._reach[(path, links)] = (found, trail)
        if self._trails:
            self._trails[-1].extend(known[1])
        return known[0]

    def _links_of(self, project, path: str) -> tuple[bool, tuple[tuple[str, str, str], ...]]:
        """Whether the module calls a function or class of a module naming a sink, and the
        other modules of the project whose functions or classes it calls, each with the name
        it has there (read once per check; the modules read are replayed into whatever asks)."""
        known = self._edges.get(path)
        if known is None:
            # Read once per process while the modules it was read from are unchanged.
            shared = self._shared(_LINKS_OF, (path, self.fact.key, self._index is None))
            if shared is not None:
                known = self._edges[path] = shared
                self._record(shared[2])
        if known is not None:
            if self._trails:
                self._trails[-1].extend(known[2])
            return known[0], known[1]
        self._trails.append([])
        further: list[tuple[str, str, str]] = []  # (module, name there, name as called here)
        adjacent = False
        try:
            text = project.text(path) or ""
            memo: dict[str, bool] = {}
            for name, full in text_imports(text, module_name_for(path), path):
                if _torch(full) or adjacent:
                    continue
                dotted = []
                if name != full and (memo[name] if name in memo else memo.setdefault(name, may_call(text, name))):
                    dotted.append(full)  # `from a import insert`, called by name
                dotted += [".".join([full, *tail]) for tail in sorted(attributes_called(text, name))]
                for called in dotted:
                    index = self._index
                    if index is not None and not (
                        index.may_lead_to_function(called) or index.may_lead_to_class(called)
                    ):
                        continue
                    found = self._defining(project, called, path, 0)
                    if found is None:
                        continue
                    where = found[0]
                    if _mentions(project, where, self.fact.key, self.holds_sink):
                        adjacent = True
                        break
                    link = (*found, called.rpartition(".")[2] if called != full else name)
                    if where != path and link not in further:
                        further.append(link)
        finally:
            trail = tuple(self._trails.pop())
        if self._trails:
            self._trails[-1].extend(trail)
        trail = tuple(dict.fromkeys((*trail, (path, self._key(path)))))
        self._edges[path] = (adjacent, tuple(further), trail)
        if len(_LINKS_OF) > 50_000:
            _LINKS_OF.clear()
        _LINKS_OF[(path, self.fact.key, self._index is None)] = self._edges[path]
        return adjacent, tuple(further)

    def _passes_on(self, project, path: str, name: str, links: int) -> bool:
        """Whether the function or class `name` of a module that names no sink may hand a
        parameter on to a wrapper, from texts (`ModuleText.calls_within`): its body (a
        class's methods) passes a parameter whole to a function of a module naming a sink
        that the module's own text makes a wrapper (`_wrappers`), or (`links` left) to a
        function or class of another module that does so in turn; helpers of the same
        module and methods of the same class on the way are read the same way. Only the
        calls in those bodies are looked up. Once per check and (module, name, links left)."""
        key = (path, name, links)
        known = self._passes.get(key)
        if known is None:
            shared = self._shared(_PASSING, (*key, self.fact.key, self._index is None))
            if shared is not None:
                known = self._passes[key] = shared
                self._record(shared[1])
        if known is None:
            self._passes[key] = (False, ())  # a cycle hands nothing more on
            self._trails.append([])
            try:
                found = self._passes_on_now(project, path, name, links)
            finally:
                trail = tuple(dict.fromkeys((*self._trails.pop(), (path, self._key(path)))))
            known = self._passes[key] = (found, trail)
            if len(_PASSING) > 50_000:
                _PASSING.clear()
            _PASSING[(*key, self.fact.key, self._index is None)] = known
        if self._trails:
            self._trails[-1].extend(known[1])
        return known[0]

    def _passes_on_now(self, project, path: str, name: str, links: int) -> bool:
        module = _module_text(project, path)
        _, _, imports = _names(project, path)
        bodies = module.bodies_of(name)
        seen = set(bodies)
        while bodies:
            body = bodies.pop()
            for head, callee in module.calls_within(body):
                if head in ("", "self", "cls"):
                    local = module.bodies_of(callee, of_class=module.owner(body) if head else None)
                    fresh = [b for b in local if b not in seen]
                    seen.update(fresh)
                    bodies.extend(fresh)
                    if head or local:
                        continue
                    full = imports.get(callee)
                elif head in imports:
                    full = imports[head] + "." + callee
                else:  # a method called on an instance (`GraphBuilder(g).insert(op)`)
                    if self.instances and self._instance_wrapper(project, path, module, imports, callee, links):
                        return True
                    continue
                if full is not None and not _torch(full) and self._leads_to_wrapper(project, full, path, links):
                    return True
        return False

    def _leads_to_wrapper(self, project, full: str, requester: str, links: int, cls: bool = False) -> bool:
        index = self._index
        if index is not None and not (index.may_lead_to_function(full) or index.may_lead_to_class(full)):
            return False
        found = self._defining(project, full, requester, 0)
        if found is None or found[0] == requester:
            return False
        where, attr = found
        if _mentions(project, where, self.fact.key, self.holds_sink):
            functions, classes = _wrappers(project, where)
            return attr in (classes if cls else functions)
        return links > 0 and self._passes_on(project, where, attr, links - 1)

    def _instance_wrapper(self, project, path: str, module, imports, method: str, links: int) -> bool:
        """A method called on an instance, where the module spells a class it imports (by
        its name, capitalised as classes are) from a module naming a sink whose text makes
        `method` a wrapper method of it. Classes of modules that name no sink are not asked
        about here (a call of a method on any receiver would lead through every class)."""
        known = self._methods.get(path)
        if known is None:
            self._trails.append([])
            methods: set[str] = set()
            try:
                for local, full in imports.items():
                    if _torch(full) or local == full or not local[:1].isupper() or not module.spells(local):
                        continue
                    if self._index is not None and not self._index.may_lead_to_class(full):
                        continue
                    found = self._defining(project, full, path, 0)
                    if found is None or found[0] == path:
                        continue
                    where, attr = found
                    if _mentions(project, where, self.fact.key, self.holds_sink):
                        functions, classes = _wrappers(project, where)
                        if attr in classes:
                            methods |= functions
            finally:
                trail = tuple(dict.fromkeys(self._trails.pop()))
            known = self._methods[path] = (frozenset(methods), trail)
        if self._trails:
            self._trails[-1].extend(known[1])
        return method in known[0]

    def _defining(self, project, dotted: str, requester: str, depth: int) -> tuple[str, str] | None:
        """The module of the project defining the function or class `dotted` names
        (followed through re-exports), with its name there; None when none does."""
        module, _, attr = dotted.rpartition(".")
        where = self._find(module, requester) if module else None
        if where is None or depth > _MAX_DEPTH:
            return None
        self._read(project, where)
        defined, functions, imports = _names(project, where)
        if attr in (defined if self.instances else functions):  # a class it builds: a link too
            return where, attr
        if attr in imports:  # re-exported (a package's `__init__.py`)
            return self._defining(project, imports[attr], where, depth + 1)
        return None

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
            defined, functions, imports = _names(project, path)
            if name not in (functions if function else defined):
                self._read(project, path)  # a dependency all the same: it may come to define it
                return RemoteModule(path, imports, {}, {}) if name in imports else None
        return self.module_scope(resolver, module, requester)

    def _find(self, module: str, requester: str) -> str | None:
        """The file of `module` as `requester` imports it, looked up once per check and root.
        The answer is a dependency of the fact being worked out: a module created where the
        lookup found none, or ahead of the one it found, changes it (`_key`)."""
        root = _import_root(requester)
        found = self._lookup(module, root, requester)
        if self._trails:
            self._trails[-1].append((("find", module, root), found))
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
        name = _MEMO_NAMES.get(id(memo))  # None: a memo put in its place (tests)
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
        new = tuple((p, k) for p, k in deps if type(p) is str and p not in self._recorded)
        if new and self._project is not None:
            self._recorded.update(p for p, _ in new)
            file_keys.record(self._project, self.own_path, new)

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
        shared = self._shared(_SHARED, shared_key, _unkept_function) if remote else _SHARED.get(shared_key)
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
            if len(_SHARED) > 50_000:
                _SHARED.clear()
            own = (scope.path, self._key(scope.path) if self._project is not None else None)
            _SHARED[(key, self._kind)] = (func, result, (*trail, own))
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
                helper = _module_function(self, None, scope, callee, 0)  # type: ignore[arg-type]
            elif kind == "m":
                helper = _module_attribute(self, None, scope, callee.split("."), 0)  # type: ignore[arg-type]
            elif kind == "c":
                *cls, method = callee.split(".")
                helper = _instance_method(self, None, scope, cls, method)
            elif class_scope is not None:
                helper = _method(self, None, scope, class_scope, callee, 0)  # type: ignore[arg-type]
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

    def _replay(self, deps) -> None:
        if self._trails:
            self._trails[-1].extend(deps)
        self._record(deps)

    def helper_names(
        self,
        scope: ModuleScope,
        resolver: Resolver,
        called: Callable[[str], bool] | None = None,
        index=None,
        text: str | None = None,
    ) -> set[str]:
        """Names under which `scope` calls helpers of other modules: imported functions and
        methods its classes inherit from classes of other modules. With `called` (whether
        the module may call a name, see `called_names`), only imports it calls are asked about;
        with the project's `index` of wrapper names (`wrapper_index`), only those it holds."""
        self._project = resolver.project
        self._index = index
        if index is not None:
            resolver.project.record_derived(scope.path, index.dependency, index.digest)
        # Names that cannot be helpers are passed over before the text is searched for calls of
        # them (most of a test module's imports come from torch and torchao).
        names = {
            name
            for name, full in scope.imports.items()
            if not _not_a_project_name(name, full)
            and (index is None or index.may_lead_to_function(full))
            and (called is None or called(name))
            and self._imported_helper(scope, name, full)
        }
        for cls in scope.classes.values():
            for base in cls.bases:
                if index is not None and not _may_lead_to_class(scope, base, index):
                    continue
                names |= self._base_helpers(scope, base)
        if text is not None:
            names |= self._attribute_helpers(scope.path, scope.imports.items(), text, index)
        names |= self._instance_helpers(scope, called, index, text)
        return names

    def _instance_helpers(self, scope, called, index, text: str | None) -> set[str]:
        """The helper methods of the classes of other modules the module constructs
        (`GraphBuilder(graph).insert(op)`, `bl.GraphBuilder(graph)`): the names their calls
        go by. Only classes it calls, and with the index only those it holds."""
        found: set[str] = set()
        if not self.instances:
            return found
        for parts in self._constructed(scope, scope.imports.items(), text, index, called):
            found |= self._base_helpers(scope, parts)
        return found

    def _constructed(self, scope, imports, text: str | None, index, called) -> Iterator[list[str]]:
        """The dotted names (`["GraphBuilder"]`, `["bl", "GraphBuilder"]`) under which the
        module may call a class of another module of the project: an imported name it calls,
        or an attribute called of an imported module, whose module defines a class of that
        name or re-exports it (a function of the name is no class to build). With the index,
        only the class names it holds, and none where the text spells none of them."""
        if index is not None and text is not None and not holds_any(text, index.classes):
            return
        for name, full in imports:
            if _torch(full) or (text is not None and name not in text):
                continue
            project_name = not _not_a_project_name(name, full) and (index is None or index.may_lead_to_class(full))
            if project_name and (called is None or called(name)) and self._may_be_class(full, scope.path):
                yield [name]
            if text is None:
                continue
            for tail in sorted(_attributes(text, name)):
                dotted = ".".join([full, *tail])
                if (index is None or index.may_lead_to_class(dotted)) and self._may_be_class(dotted, scope.path):
                    yield [name, *tail]

    def _may_be_class(self, full: str, requester: str) -> bool:
        """Whether the module `full` names (as `module.Name`) is of the project and defines a
        class `Name` or imports it (a re-export); read from its text (and a dependency)."""
        module, _, name = full.rpartition(".")
        path = self._find(module, requester) if module else None
        if path is None:
            return False
        self._read(self._project, path)
        _, _, imports = _names(self._project, path)
        return name in imports or name in _class_names(self._project, path)

    def _attribute_helpers(self, path: str, imports, text: str, index, first: bool = False) -> set[str]:
        """Names of the helpers the module calls as functions of the modules it imports
        (`gu.insert_op(...)` after `import pkg.graph_utils as gu`): the attribute called, as
        `callee_name` gives it. With `first`, the search stops at the first one."""
        found: set[str] = set()
        if index is not None and not may_call_attribute(text, index.attribute_names):
            # No dotted name of the text ends in a name the index holds, nor passes a skipped
            # directory: only an import naming such a directory itself may still lead to one.
            imports = [(name, full) for name, full in imports if index.may_lead_to_function(full)]
        for name, full in imports:
            if _torch(full) or name not in text:
                continue
            for tail in sorted(_attributes(text, name)):
                dotted = ".".join([full, *tail])
                if tail[-1] in found or (index is not None and not index.may_lead_to_function(dotted)):
                    continue
                if self._imported_helper(RemoteModule(path, {tail[-1]: dotted}, {}, {}), tail[-1], dotted):
                    found.add(tail[-1])
                    if first:
                        return found
        return found

    def imports_helper(self, project, path: str, text: str, index=None) -> bool:
        """Whether the module with this text may call a helper of another module: it imports
        a function that forwards to a sink, or a class with a method that does (which it may
        subclass, also as `mod.Base`). Asked from the text alone (a prefilter), with the
        answers `helper_names` gives and caches. Only imported names the text may call are
        asked about, as `find_helpers` asks (`called_names`): a function never called inserts
        nothing, and the check would not look it up either. With the project's `index` of
        wrapper names (`wrapper_index`), only the names it holds are."""
        self._project = project
        self._index = index
        imports = file_imports(text, path)
        if not imports:
            return False
        if index is not None:
            # The names it did not hold are answered by it: a dependency of the result.
            project.record_derived(path, index.dependency, index.digest)
            if not may_lead_to_helper(text, imports, index):
                return False
        heads: dict[str, list[tuple[str, ...]]] = {}
        for parts in class_bases(text):
            heads.setdefault(parts[0], []).append(parts)
        scope = RemoteModule(path, {}, {}, {})
        called = calls_memo(text)
        for name, full in imports:
            if _not_a_project_name(name, full) and name not in heads:
                continue  # answered without reading the text (most of torch's own imports)
            function = index is None or index.may_lead_to_function(full)
            bases = [
                parts
                for parts in heads.get(name, ())
                if index is None or index.may_lead_to_class(".".join([full, *parts[1:]]))
            ]
            if not function and not bases:
                continue
            if function and name not in called:
                called[name] = may_call(text, name)
            if not (function and called[name]) and not bases:
                continue
            scope.imports = {name: full}
            if function and called[name] and self._imported_helper(scope, name, full):
                return True
            if any(self._base_helpers(scope, list(parts)) for parts in bases):
                return True
        # `gu.insert_op(...)`: the text names the imported module, then the function.
        if self._attribute_helpers(path, imports, text, index, first=True):
            return True
        return self._constructs_a_helper_class(path, imports, text, index, called)

    def _constructs_a_helper_class(self, path: str, imports, text: str, index, called: dict[str, bool]) -> bool:
        """`imports_helper` for classes the module constructs (`GraphBuilder(graph)`,
        `bl.GraphBuilder(graph)`) whose helper methods it calls by name (`.insert(...)`)."""
        if not self.instances:
            return False
        scope = RemoteModule(path, dict(imports), {}, {})

        def calls(name: str) -> bool:
            if name not in called:
                called[name] = may_call(text, name)
            return called[name]

        for parts in self._constructed(scope, imports, text, index, calls):
            if any(calls(method) for method in sorted(self._base_helpers(scope, parts))):
                return True
        return False

    def _imported_helper(self, scope, name: str, full: str) -> bool:
        if _not_a_project_name(name, full):
            return False
        # Files of one project import the same names over and over: whether a name is a
        # helper is remembered (briefly, as for the texts it depends on) per import root,
        # where a file is found without looking the module up again, and per module file it
        # is imported from, which the import roots of a tree share (ExecuTorch: 275 roots):
        # everything read past that file is read from its own path, whoever imports it.
        root = _import_root(scope.path)
        rooted = (full, root, self._kind)
        known = self._shared(_IMPORTED, rooted)
        if known is not None:
            self._replay(known[1])
            return bool(known[0])
        module, _, attr = full.rpartition(".")
        path = self._find(module, scope.path) if module else None
        shared = (path, attr, self._kind) if path is not None else None
        known = self._shared(_IMPORTED, shared) if shared is not None else None
        if known is not None:
            self._replay(known[1])
        else:
            self._trails.append([])
            helper = _module_function(self, None, scope, name, 0)
            is_helper = bool(
                helper is not None
                and helper.scope is not scope
                and self.forwarded_params(helper.func, helper.scope, None)
            )
            known = (is_helper, tuple(dict.fromkeys(self._trails.pop())))
            if shared is not None:
                _IMPORTED[shared] = known
        if len(_IMPORTED) > 50_000:
            _IMPORTED.clear()
        # Per import root, the answer holds while the name's module is the file found here.
        lookup = (("find", module, root), path)
        _IMPORTED[rooted] = (known[0], known[1] if not module or lookup in known[1] else (*known[1], lookup))
        return bool(known[0])

    def _base_helpers(self, scope: ModuleScope | RemoteModule, base: ast.expr | list[str]) -> frozenset[str]:
        """Helper methods a class inherits through `base` (an expression, or its dotted
        parts). A base imported from another module is looked up once per import root (like
        imported functions), not once per file that subclasses it."""
        parts = base if isinstance(base, list) else dotted_parts(base)
        local = not parts or (len(parts) == 1 and parts[0] in scope.classes)
        head = None if local else scope.imports.get(parts[0])
        if head is None:
            return frozenset(self._inherited_helpers(scope, base, 0))
        key = ("base", ".".join([head, *parts[1:]]), _import_root(scope.path), self._kind)
        known = self._shared(_IMPORTED, key)
        if known is not None:
            self._replay(known[1])
            return known[0]
        self._trails.append([])
        names = frozenset(self._inherited_helpers(scope, base, 0))
        if len(_IMPORTED) > 50_000:
            _IMPORTED.clear()
        trail = tuple(dict.fromkeys(self._trails.pop()))
        if self._trails:
            self._trails[-1].extend(trail)
        self._record(trail)
        _IMPORTED[key] = (names, trail)
        return names

    def _inherited_helpers(self, scope, base: ast.expr | list[str], depth: int) -> set[str]:
        found = _base_class(self, None, scope, base, depth)
        if found is None or depth > _MAX_DEPTH:
            return set()
        other, cls = found
        names = {n for n, m in cls.methods.items() if self.forwarded_params(m, other, cls)}
        for b in cls.bases:
            names |= self._inherited_helpers(other, b, depth + 1)
        return names

    def resolve_helper(self, call: ast.Call, resolver: Resolver, caller=None) -> Helper | None:
        return _resolve_helper(self, call, resolver, caller)

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
        imported = self.helper_names(scope, resolver, called, index, text)
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
    return (n for n in own_nodes(func, scopes=False, rows=rows) if isinstance(n, ast.Call))


_CALLS = "_qlint_forwarding_calls"


def _own_calls(func: ast.AST) -> tuple[ast.Call, ...]:
    return tuple(n for n in own_nodes(func, scopes=False) if isinstance(n, ast.Call))


@functools.lru_cache(maxsize=4096)
def _not_a_project_name(name: str, full: str) -> bool:
    """A name bound by `import x` (no attribute of a module) or imported from a `torch*`
    package: not asked about as a helper (as `helper_names` has always decided)."""
    return name == full or full.startswith("torch")


def _may_lead_to_class(scope, base: ast.expr, index) -> bool:
    """Whether a class base may name a class of another module with a helper method, by the
    project's index (a base of this module is followed as before)."""
    parts = dotted_parts(base)
    if not parts or (len(parts) == 1 and parts[0] in scope.classes):
        return True
    head = scope.imports.get(parts[0])
    return head is None or index.may_lead_to_class(".".join([head, *parts[1:]]))
