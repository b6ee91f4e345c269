"""Wrapper chains: whether a module that names no sink may still hand a parameter on to one
that does (`add_op(graph, op)` calling `a.insert(graph, op)`), a few modules deep
(`CHAIN_LINKS`), read from the modules' texts alone: such a module is summarised for the
helper search (`Forwarding.module_scope`) only when a chain from it reaches a sink. Each function
takes the helper search (`forwarding.Forwarding`) as `fw`: its sink kind, index, per-check
answers, and the reads that make each answer's trail.
"""

from __future__ import annotations

from types import SimpleNamespace

from qlint.analysis.graphs.called_names import attributes_called, may_call
from qlint.analysis.graphs.forwarding_memos import IMPORTED, LINKS_OF, PASSING
from qlint.analysis.graphs.forwarding_texts import (
    is_torch,
    mentions,
    module_text,
    module_wrappers,
    searched_text,
    text_names,
)
from qlint.analysis.graphs.forwarding_trails import module_file, read_module, record, replay, shared_entry, trail_key
from qlint.analysis.graphs.helper_lookup import MAX_DEPTH
from qlint.analysis.graphs.mixin_sinks import MIXIN_ROUNDS
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.text_imports import class_bases_by_head, text_imports

# Modules that insert nothing a wrapper chain passes through, at most (c -> b -> mid -> a:
# two), in a module of a root the project's wrapper-name index covers (`index_roots`: a
# repository), whether or not the run made the index (`Forwarding.chain_links`): a check of
# one file, of a few, or of an editor's buffer answers as the tree run does (pre-commit and
# a second cached run lost, at stop 63, what the first had reported). The index, where the
# run has it, holds every name such a chain can pass through and spares the lookups of the
# others; without it the walk looks each one up, which the first edited check of a file
# after a tree run pays (stop 64: ExecuTorch's export_llama_lib.py 0.38 s of CPU against
# 0.28 s; the medians and p90s of 20-file samples of ao and ExecuTorch within the noise).
# Past the first, a link counts only for a name its module hands a parameter on with
# (`_passes_on`, from texts). Inside installed packages, which no index covers, one: there
# the walk read most of the installed torchao (QL1 CPU 1.8 -> 2.9 s with two links, 4.1-5.1
# s with three); one link asks only whether the next module names a sink.
CHAIN_LINKS = 3


def forwards_on(fw, project, path: str) -> bool:
    """Whether a module that names no sink may hand a parameter on to a function of a
    module that does (a wrapper chain's link: `add_op(graph, op)` calling
    `a.insert(graph, op)` or `gu.insert(graph, op)`), from texts alone: it calls a name
    it imports (or a function or class of a module it imports) that a module naming a
    sink defines (followed through re-exports), or that another such link defines
    (c -> b -> mid -> a, `CHAIN_LINKS` modules deep at most). Asked once per module, whatever
    imports it. Classes it subclasses are not asked about: a class of a module that
    names no sink holds no helper method of its own unless it calls one (in ExecuTorch
    nearly every pass would otherwise be read through `ExportPass`), but for QL101's sink
    helpers one of a module calling a sink on `self` (a TestCase mixin's base, `_base_links`)."""
    key = ("chain", path, fw.kind)
    known = shared_entry(fw, IMPORTED, key)
    if known is not None:
        replay(fw, known[1])
        return bool(known[0])
    fw.trails.append([])
    try:
        found = _reaches(fw, project, path, fw.chain_links)
    finally:
        trail = tuple(dict.fromkeys(fw.trails.pop()))
    if fw.trails:
        fw.trails[-1].extend(trail)
    if len(IMPORTED) > 50_000:
        IMPORTED.clear()
    IMPORTED[key] = (found, (*trail, (path, trail_key(fw, path))))
    return found


def _reaches(fw, project, path: str, links: int) -> bool:
    """Whether the module calls a function or class of a module naming a sink, or (with
    `links` left) of a module that does so in turn. Each (module, links left) is worked
    out once per check: the links left fall at each step, so a cycle of imports ends,
    and the modules within reach are each read once however many paths lead to them."""
    known = fw.reach.get((path, links))
    if known is None:
        fw.trails.append([])
        try:
            adjacent, further = _links_of(fw, project, path)
            if not adjacent and links > 0 and further:
                # Only what the module's functions call with a parameter of theirs (the
                # names of most calls of other modules' functions hand nothing on).
                module = module_text(project, path)
                called = {callee for i in module.functions() for _, callee in module.calls_within(i)}
                further = tuple(f for f in further if f[2] in called)
            found = adjacent or (
                links > 0 and any(_passes_on(fw, project, p, name, links - 1) for p, name, _ in further)
            )
        finally:
            trail = tuple(dict.fromkeys(fw.trails.pop()))  # many paths lead to one module
        known = fw.reach[(path, links)] = (found, trail)
    if fw.trails:
        fw.trails[-1].extend(known[1])
    return known[0]


def _links_of(fw, project, path: str) -> tuple[bool, tuple[tuple[str, str, str], ...]]:
    """Whether the module calls a function or class of a module naming a sink, and the
    other modules of the project whose functions or classes it calls, each with the name
    it has there (read once per check; the modules read are replayed into whatever asks)."""
    known = fw.edges.get(path)
    if known is None:
        # Read once per process while the modules it was read from are unchanged.
        shared = shared_entry(fw, LINKS_OF, (path, fw.fact.key, fw.wrapper_index is None))
        if shared is not None:
            known = fw.edges[path] = shared
            record(fw, shared[2])
    if known is not None:
        if fw.trails:
            fw.trails[-1].extend(known[2])
        return known[0], known[1]
    fw.trails.append([])
    further: list[tuple[str, str, str]] = []  # (module, name there, name as called here)
    adjacent = False
    try:
        text = searched_text(project, path)
        memo: dict[str, bool] = {}
        # QL101's sink helpers: a TestCase mixin may hold them only through a class it
        # subclasses, of a module naming the sink (`_base_links`).
        bases = _base_links(fw, text)
        for name, full in text_imports(text, module_name_for(path), path):
            if is_torch(full) or adjacent:
                continue
            dotted = []
            if name != full and (memo[name] if name in memo else memo.setdefault(name, may_call(text, name))):
                dotted.append(full)  # `from a import insert`, called by name
            dotted += [".".join([full, *tail]) for tail in sorted(attributes_called(text, name))]
            if name in bases and _mixed_in_by(fw, project, path, name, full, bases[name], MIXIN_ROUNDS - 1):
                adjacent = True
                break
            for called in dotted:
                index = fw.wrapper_index
                if index is not None and not index.may_lead_to_helper(called):
                    continue
                found = _defining(fw, project, called, path, 0)
                if found is None:
                    continue
                where = found[0]
                if mentions(project, where, fw.fact.key, fw.holds_sink):
                    adjacent = True
                    break
                link = (*found, called.rpartition(".")[2] if called != full else name)
                if where != path and link not in further:
                    further.append(link)
    finally:
        trail = tuple(fw.trails.pop())
    if fw.trails:
        fw.trails[-1].extend(trail)
    trail = tuple(dict.fromkeys((*trail, (path, trail_key(fw, path)))))
    fw.edges[path] = (adjacent, tuple(further), trail)
    if len(LINKS_OF) > 50_000:
        LINKS_OF.clear()
    LINKS_OF[(path, fw.fact.key, fw.wrapper_index is None)] = fw.edges[path]
    return adjacent, tuple(further)


def _base_links(fw, text: str) -> dict[str, list[tuple[str, ...]]]:
    """The bases of the text's class statements by the name they start at (`mod.Base` under
    `mod`, `Base` under `Base`: `_mixed_in_by` follows both), for the sink kind alone
    (`Forwarding.instances` off): a class that subclasses one
    of a module naming a sink inherits its helper methods, which its own methods may call
    (`self.assert_nodes(gm, occ)`) or its subclasses in turn (`class TestX(Mixin, TestCase)`).
    Only a base whose module calls a sink on `self` makes a link (`_mixes_in`): ExecuTorch's
    passes subclass `ExportPass` thousands of times over, a module naming no sink, and
    `ArmPass` hundreds of times, one calling `graph.find_nodes(...)`."""
    if fw.instances or fw.site_needles is None:
        return {}
    return class_bases_by_head(text)


def _mixed_in_by(fw, project, path: str, name: str, full: str, bases: list[tuple[str, ...]], further: int) -> bool:
    """Whether the import of `full` as `name` is of a class the module subclasses (one of its
    `bases`: by that name, or through it, `mod.Mixin` or `pkg.mod.Mixin`) whose module calls a
    sink on `self`, or (`further` modules down at most) subclasses a class of one that does in
    turn, written either way (`MIXIN_ROUNDS`)."""
    for dotted, through, middle in _based_on(name, full, bases):
        if fw.wrapper_index is not None and not fw.wrapper_index.may_lead_to_class(dotted):
            continue
        found = _defining(fw, project, dotted, path, 0, base=True)
        if found is None or found[0] == path or (through and not _as_module(project, path, found[0])):
            continue
        if middle and not _runs_through(fw, project, path, full, middle):
            continue  # `pkg.checks.NodeChecks` where the package binds `checks` to something else
        if _mixes_in(fw, project, found[0]):
            return True
        if further <= 0:
            continue
        text = searched_text(project, found[0])
        heads = _base_links(fw, text)
        if any(
            _mixed_in_by(fw, project, found[0], base_name, base_full, heads[base_name], further - 1)
            for base_name, base_full in text_imports(text, module_name_for(found[0]), found[0])
            if base_name in heads and not is_torch(base_full)
        ):
            return True
    return False


def _based_on(name: str, full: str, bases: list[tuple[str, ...]]) -> list[tuple[str, bool, list[str]]]:
    """The dotted names of the classes `bases` (each starting at `name`, which an import binds
    to `full`) may be, each with whether it is written through its module and the attributes
    the path runs through after `full` (`package_paths`): `Mixin` imported by name is `full`;
    `mod.Mixin` is `full.Mixin`, and so is `pkg.mod.Mixin` after a plain `import pkg.mod`
    (`name` and `full` both `pkg`, through `mod`). A name bound by a plain import alone is no
    class (`import mixins`, `class T(mixins)`)."""
    out: list[tuple[str, bool, list[str]]] = []
    for parts in bases:
        if len(parts) > 1:
            found = (".".join((full, *parts[1:])), True, list(parts[1:-1]))
        elif name != full:
            found = (full, False, [])
        else:
            continue
        if found not in out:
            out.append(found)
    return out


def _runs_through(fw, project, path: str, head: str, middle: list[str]) -> bool:
    """Whether the module at `path` may reach a base through the package path `head.<middle>`
    (`package_paths`), by the modules its import statements name."""
    from qlint.analysis.graphs.package_paths import runs_through
    from qlint.analysis.names.text_imports import imported_modules

    scope = SimpleNamespace(path=path, imported_modules=imported_modules(searched_text(project, path), path))
    return runs_through(fw, project, scope, head, middle)


def _as_module(project, path: str, mixin: str) -> bool:
    """Whether the module at `path` may import the module at `mixin` as the index reads such
    an import (`mixin_sinks.imports_as_module`): a base written through its module is
    followed only where the index reads the module for it, so that a run with the index and
    one without answer alike."""
    from qlint.analysis.graphs.import_words import import_words
    from qlint.analysis.graphs.mixin_sinks import imports_as_module

    return imports_as_module(path, import_words(searched_text(project, path).encode()), mixin)


def _mixes_in(fw, project, path: str) -> bool:
    """Whether the module names a sink and calls one on `self` (a TestCase mixin's module,
    `mixin_sinks.calls_sink_on_self`, as the index reads it: `wrapper_candidates.candidates`)."""
    if not mentions(project, path, fw.fact.key, fw.holds_sink):
        return False
    from qlint.analysis.graphs.mixin_sinks import calls_sink_on_self

    return calls_sink_on_self(module_text(project, path).masked, fw.site_needles)


def _passes_on(fw, project, path: str, name: str, links: int) -> bool:
    """Whether the function or class `name` of a module that names no sink may hand a
    parameter on to a wrapper, from texts (`ModuleText.calls_within`): its body (a
    class's methods) passes a parameter whole to a function of a module naming a sink
    that the module's own text makes a wrapper (`module_wrappers`), or (`links` left) to a
    function or class of another module that does so in turn; helpers of the same
    module and methods of the same class on the way are read the same way. Only the
    calls in those bodies are looked up. Once per check and (module, name, links left)."""
    key = (path, name, links)
    known = fw.passes.get(key)
    if known is None:
        shared = shared_entry(fw, PASSING, (*key, fw.fact.key, fw.wrapper_index is None))
        if shared is not None:
            known = fw.passes[key] = shared
            record(fw, shared[1])
    if known is None:
        fw.passes[key] = (False, ())  # a cycle hands nothing more on
        fw.trails.append([])
        try:
            found = _passes_on_now(fw, project, path, name, links)
        finally:
            trail = tuple(dict.fromkeys((*fw.trails.pop(), (path, trail_key(fw, path)))))
        known = fw.passes[key] = (found, trail)
        if len(PASSING) > 50_000:
            PASSING.clear()
        PASSING[(*key, fw.fact.key, fw.wrapper_index is None)] = known
    if fw.trails:
        fw.trails[-1].extend(known[1])
    return known[0]


def _passes_on_now(fw, project, path: str, name: str, links: int) -> bool:
    module = module_text(project, path)
    _, _, imports = text_names(project, path)
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
                if fw.instances and _instance_wrapper(fw, project, path, module, imports, callee, links):
                    return True
                continue
            if full is not None and not is_torch(full) and _leads_to_wrapper(fw, project, full, path, links):
                return True
    return False


def _leads_to_wrapper(fw, project, full: str, requester: str, links: int, cls: bool = False) -> bool:
    index = fw.wrapper_index
    if index is not None and not index.may_lead_to_helper(full):
        return False
    found = _defining(fw, project, full, requester, 0)
    if found is None or found[0] == requester:
        return False
    where, attr = found
    if mentions(project, where, fw.fact.key, fw.holds_sink):
        functions, classes = module_wrappers(project, where, fw.site_needles)
        return attr in (classes if cls else functions)
    return links > 0 and _passes_on(fw, project, where, attr, links - 1)


def _instance_wrapper(fw, project, path: str, module, imports, method: str, links: int) -> bool:
    """A method called on an instance, where the module spells a class it imports (by
    its name, capitalised as classes are) from a module naming a sink whose text makes
    `method` a wrapper method of it. Classes of modules that name no sink are not asked
    about here (a call of a method on any receiver would lead through every class)."""
    known = fw.instance_methods.get(path)
    if known is None:
        fw.trails.append([])
        methods: set[str] = set()
        try:
            for local, full in imports.items():
                if is_torch(full) or local == full or not local[:1].isupper() or not module.spells(local):
                    continue
                if fw.wrapper_index is not None and not fw.wrapper_index.may_lead_to_class(full):
                    continue
                found = _defining(fw, project, full, path, 0)
                if found is None or found[0] == path:
                    continue
                where, attr = found
                if mentions(project, where, fw.fact.key, fw.holds_sink):
                    functions, classes = module_wrappers(project, where, fw.site_needles)
                    if attr in classes:
                        methods |= functions
        finally:
            trail = tuple(dict.fromkeys(fw.trails.pop()))
        known = fw.instance_methods[path] = (frozenset(methods), trail)
    if fw.trails:
        fw.trails[-1].extend(known[1])
    return method in known[0]


def _defining(fw, project, dotted: str, requester: str, depth: int, base: bool = False) -> tuple[str, str] | None:
    """The module of the project defining the function or class `dotted` names
    (followed through re-exports), with its name there; None when none does. For the sink
    kind a class counts only as a `base` (it builds no helper: `Forwarding.instances`)."""
    module, _, attr = dotted.rpartition(".")
    where = module_file(fw, module, requester) if module else None
    if where is None or depth > MAX_DEPTH:
        return None
    read_module(fw, project, where)
    defined, functions, imports = text_names(project, where)
    if attr in (defined if fw.instances or base else functions):  # a class it builds: a link too
        return where, attr
    if attr in imports:  # re-exported (a package's `__init__.py`)
        return _defining(fw, project, imports[attr], where, depth + 1, base)
    return None
