"""Who calls a helper from the other modules of the project, and with which models.

A helper that captures its parameter without `eval()` is right when every caller hands it an
eval-mode model (or one whose mode cannot change the graph), and ExecuTorch's export helpers
are called from scripts all over the repository (`examples/samsung/scripts/*` call
`backends/samsung/utils/export_utils.quantize_module`). The index is built only for a helper
that would otherwise be reported: the project's files are searched for the helper's name as
an identifier (in their words, `names.project_words`, each module read once per content and
process for every name asked), the summaries of those that spell it say whether and on which rows their code
loads it (`names.references`, computed once per module content, for these modules only),
only the modules that do are analysed, the functions on those rows are run through the same
model-flow analysis, and each call is read with the modes it passes.

A method of a top-level class is searched the same way, by its name as an attribute
(`method_references`: `Builder(q).quantize(m)` and `b.quantize(m)` after `b = Builder(q)` are
read; `self.quantize` of another class, `torch.quantize` are not it).

A module subclassing the method's class (its `self.quantize(...)` calls are read,
`subclass_self_calls`) is read apart: its tree is parsed in pieces (`piecewise_parse`, the
class by its members), not handed over to its own check, and released once its calls are
read, before the next module is parsed (`caller_modules.release`; the walks that read them
hold one call at a time, `call_sites`, `call_paths`). torchao's `_test_quantizer` has its
callers in three test modules of 62 to 177 KB: held together, with the whole parse's peak,
they took the check of torchao/testing/pt2e/utils.py from 22.8 to 35.6 MiB traced (issue 13).

It answers None (callers unknown) when a use of the helper cannot be read: a reference that
is not a call the analysis summarised (a callback, a lambda, `partial`, a re-export, a
method called on an object it cannot follow), or too many candidate modules. Every file of the project is a
dependency of the answer, and so is the listing (`project_files.listing_dependency`): a caller
edited or added anywhere refreshes cached results. Unless one module decides the answer
whatever the others hold (a module subclassing a method's class, one that names the
function, one whose text holds the module's name): that module alone is then recorded, and
a warm check validates its stat, not the project's (`subclassed_methods`).

Kept in modules of their own: how the helper is searched for, under which names, and its uses
read in one module (`helper_references`); the caller modules parsed and analysed, and the
bodies walked there (`caller_modules`).
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator

from qlint.analysis import scan_memo
from qlint.analysis.context import FileContext
from qlint.analysis.flow import caller_modules
from qlint.analysis.flow.caller_modules import analysed_flows, body_flow, caller_module
from qlint.analysis.flow.function_flows import CallSite, FunctionFlow
from qlint.analysis.flow.function_references import imported_elsewhere
from qlint.analysis.flow.helper_references import INIT, METHOD, TAKEN, more_words, searched_as, uses_in
from qlint.analysis.flow.kept_caller_verdicts import Verdicts
from qlint.analysis.flow.method_references import owner_class
from qlint.analysis.flow.model_values import ModeFact
from qlint.analysis.flow.project_search import (
    OWN,
    candidate_modules,
    named_in_text,
    paths_naming,
    references_loading,
    search_root,
    searchable,
)
from qlint.analysis.flow.subclass_self_calls import taken_as_value
from qlint.analysis.flow.subclassed_methods import subclassed_elsewhere, subclasses
from qlint.analysis.names.references import References
from qlint.value_classes import value_class


@value_class(frozen=True)
class ProjectCall:
    """One call of the helper in another module: the modes passed for the parameter asked."""

    call: ast.Call
    facts: frozenset[ModeFact]
    path: str
    flows: tuple[FunctionFlow, ...]  # what was analysed in that module (for later changes)
    flow: FunctionFlow  # the body the call is in
    site: CallSite | None = None  # every argument of the call, with its modes and as written
    # That module's (context, analysis, bodies analysed, uses memo): where its own callers are.
    module: tuple | None = None


def checked_once(path: str) -> None:
    """The check of `path` ended and the file will not be checked again (`caller_modules`)."""
    caller_modules.checked_once(path)


def project_callers(ctx: FileContext, func: ast.AST, index: int) -> list[ProjectCall] | None:
    """Calls of the module-level function (or method) `func` of `ctx` from the project's other modules,
    with the modes passed for parameter `index` ([] when none calls it; None when a use of it
    cannot be read)."""
    found = []
    for call in each_project_call(ctx, func, index):
        if call is None:
            return None
        found.append(call)
    return found


@value_class(frozen=True)
class KeptCalls:
    """The calls of the helper in the module at `path`, `calls` of them, all passing harmless
    models, as an earlier run judged them (`kept_caller_verdicts`): not read again."""

    path: str
    calls: int


def each_project_call(
    ctx: FileContext, func: ast.AST, index: int, verdicts: Verdicts | None = None
) -> Iterator[ProjectCall | KeptCalls | None]:
    """The same, one module at a time, so that a verdict can stop at the first caller that
    decides it; None is yielded (last) for a use that cannot be read. `verdicts`: the consumer
    judges whether every call passes a harmless model (`caller_verdicts`), and stops at the
    first that does not: a module whose verdict an earlier run kept is yielded as `KeptCalls`
    without being read, and the verdict of a module read now is kept when the consumer asks
    for the next module after judging all its calls (`kept_caller_verdicts`)."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or not ctx.module:
        yield None
        return
    found = searched_as(ctx, func)
    if found is None:
        yield None  # a nested function, a decorated method: their callers are not found by name
        return
    target, method, owner_name = found
    root = search_root(ctx.path)
    # The helper's name, then the names modules re-export it under (`from .x import f as qm`):
    # a caller of `qm` never spells `f`. A constructor's callers spell its class.
    words = [owner_name if method == INIT else func.name]
    if verdicts is not None:
        verdicts.asked(target, words[0], method)
    # A subclass's `self.<method>(...)` in another module is read (`subclass_self_calls`); one
    # that takes the method as a value keeps the callers unknown, and alone decides so.
    if method and root is not None:
        taken = (lambda data: taken_as_value(data, func.name)) if method == METHOD else None
        if subclassed_elsewhere(ctx, root, target + TAKEN if taken else target, words[0], owner_name, taken):
            yield None
            return
    # Calls found under an earlier word (a module that renames and calls). Not those of this
    # word: a call in a loop is read once per pass of the walk over its body, and the second
    # pass sees what the first left for the next iteration (`indexed_items`).
    seen: set[tuple] = set()
    for word in words:
        found_now: set[tuple] = set()
        candidates = candidate_modules(ctx, root, word) if root is not None else None
        if candidates is None and method == METHOD and root is not None:
            # Too many modules spell the method's name: when its class's instances stay in the
            # functions that build them, the modules naming the class are the ones to read.
            candidates = _instance_holders(ctx, root, func)
        if candidates is None:
            yield None
            return
        for path, data, key in candidates:
            # Kept verdicts are those of the modules read under the helper's own name, where
            # every call found is yielded (none was found before under another name).
            first = verdicts if verdicts is not None and word is words[0] else None
            known = first.taken(path, key) if first is not None else None
            if known is not None:
                if not more_words(ctx, path, word, words, method):
                    yield None  # re-exported under too many names to search them all
                    return
                yield KeptCalls(path, known)
                continue
            # The module's summary is parsed for its references (unless known already): the tree
            # is kept for `_module`, which would otherwise parse the module again to read its calls.
            apart = method == METHOD and subclasses(path, key, data, owner_name)
            with first.recording(path, key) if first is not None else contextlib.nullcontext():
                try:
                    refs = references_loading(ctx, path, key, word, keep_tree=True)
                    if refs is not None and not method and imported_elsewhere(ctx, path, refs, func, target, word):
                        calls = ()  # no use of it there can be the helper: the module is not parsed
                    elif refs is not None:
                        if first is not None:
                            first.watch(lambda path=path, data=data, apart=apart: _module(ctx, path, data, apart))
                        calls = _calls_in(ctx, path, data, refs, func, target, index, word, method, apart)
                    else:
                        calls = ()
                    if calls == [] and _own_only(ctx, path, data, word):
                        scan_memo.note_miss(path, OWN + word, key)
                finally:
                    # Not taken when the module was built before or names no caller: a module's whole
                    # tree would otherwise stay with the worker until the next caller search.
                    ctx.project.drop_kept_tree()
                if calls is None:
                    yield None
                    return
                if not more_words(ctx, path, word, words, method):
                    yield None  # re-exported under too many names to search them all
                    return
                try:
                    for call in calls:
                        where = (path, call.call.lineno, call.call.col_offset)
                        if where not in seen:
                            found_now.add(where)
                            yield call
                finally:
                    if apart:
                        calls = call = None  # not held while the next module is read
                        caller_modules.release(ctx, path)
                # Asked for the next module: the consumer found every call here harmless.
                if first is not None:
                    first.judged(path, key)
        seen |= found_now


def used_elsewhere(ctx: FileContext, func: ast.AST) -> bool:
    """Whether `each_project_call` would yield anything for `func`: another module calls it
    (under its name or one it is re-exported as), or uses it in a way that cannot be read (or
    its callers cannot be searched). Decided from each candidate module's references
    (`function_uses`), without analysing the bodies that hold them: a walk up the callers that only
    asks whether all of them are in the checked module (`call_sites.calls_read_here`) stops
    at the first such module. A method of a top-level class likewise, from the references
    `method_references` says may be it (a module subclassing its class: used)."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or not ctx.module:
        return True
    found = searched_as(ctx, func)
    if found is None:
        return True  # a nested function, a decorated method: not searched by name
    target, method, owner_name = found
    root = search_root(ctx.path)
    words = [owner_name if method == INIT else func.name]
    if method and root is not None and subclassed_elsewhere(ctx, root, target, words[0], owner_name):
        return True  # a module that subclasses its class and names the method: used there
    for word in words:
        candidates = candidate_modules(ctx, root, word) if root is not None else None
        if candidates is None and method == METHOD and root is not None:
            candidates = _instance_holders(ctx, root, func)  # as `each_project_call` reads them
        if candidates is None:
            return True
        # The answer is whether any module uses it, whatever the order they are read in: the
        # smaller first, as each is parsed for its references (ExecuTorch's 465 KB
        # test_qnn_delegate.py was parsed to find a use of a vulkan helper that its 92 KB
        # test_vulkan_delegate.py, later in the listing, has).
        for path, data, key in sorted(candidates, key=lambda c: len(c[1])):
            try:
                refs = references_loading(ctx, path, key, word, keep_tree=True)
                if refs is not None and not method and imported_elsewhere(ctx, path, refs, func, target, word):
                    refs = None  # every use of the name there is another function: not parsed
                module = _module(ctx, path, data) if refs is not None else None
                # A use that is not a call the flow reads makes `each_project_call` yield
                # None; a read call, the call: anything but no use at all. For a method, what
                # cannot be it (another class's own `self._wrap`) is no use (`method_uses`).
                uses = uses_in(module, target, func, ctx.path, refs, word, method) if module is not None else []
                if uses is None or uses:
                    return True
                if refs is not None and _own_only(ctx, path, data, word):
                    scan_memo.note_miss(path, OWN + word, key)
            finally:
                ctx.project.drop_kept_tree()
            if not more_words(ctx, path, word, words, method):
                return True  # too many names to search: taken as used
    return False


def _calls_in(
    ctx: FileContext,
    path: str,
    data: bytes,
    refs: References,
    func: ast.AST,
    target: str,
    index: int,
    word: str,
    method: str = "",
    apart: bool = False,
) -> list[ProjectCall] | None:
    """The calls of the helper in one module, spelled `word` (its name or a name it is
    re-exported under), or None when it names the helper otherwise."""
    module = _module(ctx, path, data, apart)
    if module is None:
        return []  # does not parse: it calls nothing
    _, flow, analysed, _ = module
    uses = uses_in(module, target, func, ctx.path, refs, word, method)
    if uses is None:
        return None
    found: list[ProjectCall] = []
    matched: set[int] = set()
    for body, refs in uses:
        fn = body_flow(flow, analysed, body, refs)
        if fn is None:
            return None
        flows = None  # the bodies analysed by now: the same for every call of this one
        for callee_path, site in fn.foreign_calls:
            if callee_path != ctx.path or getattr(site.callee, "name", None) != func.name:
                continue
            if site.callee.lineno != func.lineno or id(site.ref) not in refs:
                continue
            matched.add(id(site.ref))
            if flows is None:
                flows = tuple(analysed_flows(analysed))
            found.append(_call(site, index, path, module, fn, flows))
    if any(id(ref) not in matched for _, refs in uses for ref in refs.values()):
        return None  # named but not called where the analysis followed it
    return found


def _instance_holders(ctx: FileContext, root: str, func: ast.AST) -> list[tuple[str, bytes, tuple]] | None:
    """The modules naming the method's class, when no instance of it leaves the function that
    built it (`kept_instances`): any call of the method in another module is in one of them."""
    from qlint.analysis.flow.kept_instances import holders

    owner = owner_class(ctx, func)
    if owner is None:
        return None
    try:
        return holders(ctx, root, owner, lambda path, data: _module(ctx, path, data))
    finally:
        ctx.project.drop_kept_tree()


def instances_kept(ctx: FileContext, func: ast.AST) -> bool:
    """No instance of the class of the method `func` (of the checked module) leaves the
    function that built it, in this module or the project's others (`kept_instances`): its
    calls on instances are in the modules that name the class, each one a call there."""
    root = search_root(ctx.path)
    return root is not None and _instance_holders(ctx, root, func) is not None


def _own_only(ctx: FileContext, path: str, data: bytes, name: str) -> bool:
    """`function_uses` found every load of `name` in the module to be its own (content alone decided)."""
    module = _module(ctx, path, data)
    return module is not None and module[0].cache.get((OWN, name), False)


def _call(site: CallSite, index: int, path: str, module: tuple, fn: FunctionFlow, flows: tuple) -> ProjectCall:
    facts = site.args.get(index)
    if facts is None:  # not passed: the default, which is no model we know
        facts = frozenset({ModeFact("unknown", None)})
    return ProjectCall(site.call, facts, path, flows, fn, site, module)


def _module(ctx: FileContext, path: str, data: bytes, apart: bool = False):
    # The caller's analysis summarises the helper's module too: kept while what it read of
    # that module is unchanged (`caller_modules`).
    return caller_module(ctx, path, data, apart)


__all__ = [
    "KeptCalls",
    "ProjectCall",
    "each_project_call",
    "instances_kept",
    "named_in_text",
    "paths_naming",
    "project_callers",
    "searchable",
    "used_elsewhere",
]
