"""Which functions and classes of a project's inserting modules may be insertion wrappers, from
their texts alone.

`wrapper_index` needs, once per run, every name under which the helper search could find a
wrapper; parsing the modules that insert to ask the search itself cost as much as the
lookups it saves (ExecuTorch: 233 modules). A superset does as well, and the text gives one.
The search (`Forwarding.forwarded_params`) calls a function a wrapper when one of its
parameters is, as a bare name, the target of an insertion in its own code
(`x.call_function(op, ...)`, `x.create_node("call_function", op, ...)`) or an argument of a
call of another wrapper (by its name, an import's new name, `self.<method>`, or `m.<name>` where
`m` heads a dotted name the module imports, as `gu.insert_op` after `import pkg.graph_utils as
gu`; the search resolves no other attribute call, `super().m(...)` included). So a
function is a candidate when a call it spans, of either kind, has one of its parameters as a
whole argument (any argument: a superset of the target), to a fixpoint over the names found;
a class is one when a function it spans is, or its bases name a candidate class (it
inherits the method).
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_left
from collections.abc import Callable, Iterable

from qlint.analysis.graphs.module_text import ModuleText

# A class name made of word characters only (one its bases' words can hold).
_WORDS = re.compile(r"\w+")


def called_patterns(names: Iterable[str]) -> list[tuple[str, re.Pattern]]:
    """A pattern per name for its calls: `(` after it, maybe past blanks, continuations or `)`."""
    return [(name, _called_pattern(name)) for name in sorted(names)]


@functools.lru_cache(maxsize=32_768)
def _called_pattern(name: str) -> re.Pattern:
    # Each round asks the calls of every name found so far again (`candidates`' `known`), past
    # `re`'s own cache of 512 patterns where there are thousands: an index of a copy of the
    # installed torch (~6,300 names, 56 rounds) compiled 73,000 patterns, 19 of its 58 s under
    # a profiler.
    return re.compile(re.escape(name) + r"\b(?=[\s\\)]*\()")


class TooManyNames(Exception):
    """`candidates` found more names than its `limit`: an index of them would rule out too few
    lookups to pay for itself (`wrapper_index._MAX_NAMES`)."""


def candidates(
    modules: list[ModuleText],
    renames: list[tuple[str, str]],
    more: Callable[..., list[ModuleText]] | None = None,
    instances: bool = True,
    links: int = 1,
    limit: int | None = None,
) -> tuple[set[str], set[str]]:
    """(function names, class names) that may be wrappers, with the names `renames` (`X as
    Y` pairs) bind them to. `modules`: those that insert; `more(new, known, paths)`: the
    modules that insert nothing but may call one of the `new` functions found at the level
    of an inserting module (at one of `paths`), among all those `known` (wrapper chains:
    `add_op(graph, op)` handing `op` on to `a.insert`, or to `gu.insert`), each read from
    then on as the inserting ones are. As in the helper search (`wrapper_chains.forwards_on`),
    a chain has at most `links` such modules: one is read for the functions and classes it
    calls of inserting modules, or of modules read for that reason fewer than `links` steps
    away, not for the classes it subclasses; but without `instances` (QL101's sink helpers),
    a module importing by name a class of a module that calls a sink on `self` (a TestCase
    mixin: `mixin_sinks.calls_sink_on_self`), or importing that module and spelling the class
    (`class M(checks.NodeChecks)`: `mixin_sinks.importing_mixin_modules`), is read, and so
    on down from the subclasses found, `MIXIN_ROUNDS` steps at most, as
    `wrapper_chains._links_of` follows such a base."""
    modules = list(modules)
    # Per module, how many modules that insert nothing lie between it and an inserting one
    # (0: it inserts), at most: a module read for names of several is counted from the nearest.
    levels = [0] * len(modules)
    functions: set[str] = set()
    classes: set[str] = set()
    toplevel: set[str] = set()  # the functions a module defines at its level (importable)
    toplevel_classes: set[str] = set()  # and the classes (a class as a link: constructed elsewhere)
    asked_methods: dict[str, set[str]] = {}  # per class, its candidate methods when last asked
    marked: list[set[int]] = [set() for _ in modules]  # per module, the spans found so far
    by_source: dict[str, set[str]] = {}
    for source, target in renames:
        if target.isidentifier():
            by_source.setdefault(source, set()).add(target)
    sites = [module.inserting for module in modules]
    # method name -> the classes holding it as a candidate (their own or inherited): a call
    # `x.m(...)` on an instance counts in a module that spells one of them.
    holders: dict[str, set[str]] = {}
    inherited: dict[str, list[str]] = {}  # a class found through its bases -> those bases
    # The sink kind's TestCase mixin modules (of the modules naming a sink), whose classes'
    # subclasses' modules are read in the first round.
    mixins = _mixin_modules(modules) if more is not None and not instances else []
    subclassed: set[str] = set()
    # Those classes (each at its module's level) and their subclasses at the level of the
    # modules read for them, in rounds of reading down until one finds none, `MIXIN_ROUNDS`
    # at most; with the modules defining them, whose subclasses may name them through their
    # module (`mod.Mixin`: `mixin_paths`).
    line = {span[1] for module in mixins for span in module.spans if span[0] == "class" and not span[5]}
    base_rounds, mixin_paths = 0, [module.path for module in mixins]
    if line:
        from qlint.analysis.graphs.mixin_sinks import MIXIN_ROUNDS
    while True:
        new_functions: set[str] = set()
        new_classes: set[str] = set()
        new_toplevel: set[str] = set()
        new_toplevel_classes: set[str] = set()
        defining: dict[int, ModuleText] = {}  # the modules defining them
        # Asked by their names alone, not their modules' (a mixin imports the class it
        # subclasses by name: `wrapper_chains._links_of`), whose stems (`utils`) most modules
        # import something from.
        new_bases = line - subclassed
        heirs: set[str] = set()
        heir_paths: list[str] = []
        for at, (module, found, calls) in enumerate(zip(modules, marked, sites, strict=True)):
            if not calls:
                continue
            calls.sort(key=lambda site: site[0])
            offsets = [at for at, _ in calls]
            for i, (kind, name, start, end, header, outer) in enumerate(module.spans):
                if i in found or kind != "def":
                    continue
                first, last = bisect_left(offsets, start), bisect_left(offsets, end)
                if first == last:
                    continue
                params = module.params(header)
                if params and any(passed is None or passed & params for _, passed in calls[first:last]):
                    found.add(i)
                    new_functions.add(name)
                    if not outer and levels[at] < links:
                        new_toplevel.add(name)
                        defining[id(module)] = module
                    # A method of the class it lies in directly (a function's own classes are
                    # not importable, nor are a class's nested ones' methods its own).
                    if outer and module.spans[outer[-1]][0] == "class":
                        owner = module.spans[outer[-1]]
                        holders.setdefault(name, set()).add(owner[1])
                        if outer[-1] not in found:
                            found.add(outer[-1])
                            new_classes.add(owner[1])
                            # Importable, constructed elsewhere (a link where the search asks
                            # about classes a module builds: `Forwarding.instances`).
                            if instances and not owner[5] and levels[at] < links:
                                new_toplevel_classes.add(owner[1])
                                defining[id(module)] = module
        known = classes | new_classes
        while known:  # a class whose bases name one inherits its methods
            grown = False
            odd = [c for c in known if not _WORDS.fullmatch(c)]
            for module, found in zip(modules, marked, strict=True):
                for i, words in module.base_words.items():
                    if i in found:
                        continue
                    named = [*(words & known), *(c for c in odd if _named_in(c, module.bases[i]))]
                    if named:
                        found.add(i)
                        sub = module.spans[i][1]
                        new_classes.add(sub)
                        inherited[sub] = named
                        grown = True
                        if line and not module.spans[i][5] and not line.isdisjoint(named):
                            heirs.add(sub)
                            heir_paths.append(module.path)
            if not grown:
                break
            known = _closure(classes | new_classes, by_source)
        new_functions = _closure(new_functions, by_source) - functions
        new_classes = _closure(new_classes, by_source) - classes
        if limit is not None and len(functions) + len(classes) + len(new_functions) + len(new_classes) > limit:
            raise TooManyNames
        new_toplevel = _closure(new_toplevel, by_source) - toplevel
        new_toplevel_classes = _closure(new_toplevel_classes, by_source) - toplevel_classes
        if not new_functions and not new_classes:
            return functions, classes
        functions |= new_functions
        classes |= new_classes
        toplevel |= new_toplevel
        toplevel_classes |= new_toplevel_classes
        _inherit(holders, inherited)
        holders = {m: _closure(owners, by_source) for m, owners in holders.items()}
        methods_of: dict[str, set[str]] = {}
        for method, owners in holders.items():
            for owner in owners:
                methods_of.setdefault(owner, set()).add(method)
        # A class whose candidate methods grew: a module passed over for it may call one now.
        grown = {c for c, ms in methods_of.items() if ms != asked_methods.get(c) and c in toplevel_classes}
        asked_methods = methods_of
        patterns = called_patterns(new_functions)
        sites = [module.calls_of(patterns, holders if instances else None) for module in modules]
        if heirs and base_rounds < MIXIN_ROUNDS:
            line |= heirs
            new_bases |= heirs
            mixin_paths += heir_paths
        new_bases = _closure(new_bases, by_source) - subclassed
        subclassed |= new_bases
        base_rounds += bool(new_bases)
        if more and (new_toplevel or new_toplevel_classes or grown or new_bases):
            only_classes = {c: ms for c, ms in methods_of.items() if c in toplevel_classes and c not in toplevel}
            new_names = new_toplevel | new_toplevel_classes | grown | new_bases
            among = toplevel | toplevel_classes | subclassed
            added = more(new_names, among, [m.path for m in defining.values()], only_classes, mixin_paths, line)
            mixin_paths = []
        else:
            added = []
        if added:
            # Their calls of every name found so far (the modules read before were searched
            # for the earlier names in earlier rounds).
            known = called_patterns(functions)
            nearest = min((levels[i] for i, m in enumerate(modules) if id(m) in defining), default=0)
            levels.extend(nearest + 1 for _ in added)
            modules.extend(added)
            marked.extend(set() for _ in added)
            sites.extend(module.inserting + module.calls_of(known, holders if instances else None) for module in added)


def _mixin_modules(modules: list[ModuleText]) -> list[ModuleText]:
    """The modules that may hold TestCase mixins (they call a sink on `self`:
    `mixin_sinks.calls_sink_on_self`): each class at their level is one, whatever its
    methods, as the helper search follows a base of such a module (`wrapper_chains._links_of`)."""
    from qlint.analysis.graphs.mixin_sinks import calls_sink_on_self

    return [module for module in modules if calls_sink_on_self(module.masked)]


def _inherit(holders: dict[str, set[str]], inherited: dict[str, list[str]]) -> None:
    """A class found through its bases holds their candidate methods too (to a fixpoint: a
    subclass of a subclass). Each owner set grows by a walk down from its classes to their
    subclasses: the fixpoint of the rule "a class with a base among the owners is one",
    reached without testing every subclass against every owner set again at each round
    (ExecuTorch: ~580,000 base tests per index made)."""
    subclasses: dict[str, list[str]] = {}
    for sub, bases in inherited.items():
        for base in bases:
            subclasses.setdefault(base, []).append(sub)
    for owners in holders.values():
        pending = [c for c in owners if c in subclasses]
        while pending:
            for sub in subclasses.get(pending.pop(), ()):
                if sub not in owners:
                    owners.add(sub)
                    pending.append(sub)


def _named_in(name: str, bases: str) -> bool:
    """Whether `name` is spelled in `bases` as a whole name (`\\b` on both sides)."""
    return name in bases and re.search(rf"\b{re.escape(name)}\b", bases) is not None


def _closure(names: set[str], by_source: dict[str, set[str]]) -> set[str]:
    out = set(names)
    pending = list(names)
    while pending:
        for target in by_source.get(pending.pop(), ()):
            if target not in out:
                out.add(target)
                pending.append(target)
    return out
