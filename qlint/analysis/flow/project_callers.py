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

It answers None (callers unknown) when a use of the helper cannot be read: a reference that
is not a call the analysis summarised (a callback, a lambda, `partial`, a re-export, a
method called on an object it cannot follow), or too many candidate modules. Every file of the project is a
dependency of the answer, and so is the listing (`project_files.listing_dependency`): a caller
edited or added anywhere refreshes cached results. Unless one module decides the answer
whatever the others hold (a module subclassing a method's class, one that names the
function, one whose text holds the module's name): that module alone is then recorded, and
a warm check validates its stat, not the project's (`_subclassed_elsewhere`).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator

from qlint.analysis import scan_memo
from qlint.analysis.context import FileContext
from qlint.analysis.flow import caller_modules
from qlint.analysis.flow.caller_modules import caller_module
from qlint.analysis.flow.construction_references import construction_uses
from qlint.analysis.flow.foreign_references import cannot_bind, defines, imported_here, own_function
from qlint.analysis.flow.method_references import method_uses, owner_class, subclassed_in
from qlint.analysis.flow.model_values import CallSite, FunctionFlow, ModeFact
from qlint.analysis.graphs import file_keys, kept_answers
from qlint.analysis.names import content_keys, project_words
from qlint.analysis.names.functions import bodies
from qlint.analysis.names.import_paths import module_bases
from qlint.analysis.names.live_trees import parse as live_parse
from qlint.analysis.names.modules import import_root, module_name_for, resolve_relative
from qlint.analysis.names.package_map import project_root
from qlint.analysis.names.references import REFERENCES, References
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.project_files import listing_dependency, project_keys, unrecorded_keys
from qlint.value_classes import value_class

_MAX_BYTES = project_words.MAX_BYTES
_MAX_CANDIDATES = 80  # modules naming the helper; past this the answer is "unknown"
_INSTALL_DIRS = ("site-packages", "dist-packages")
_MAX_WORDS = 4  # the helper's name and the names it is re-exported under, searched in turn


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


# `scan_memo`'s questions, each followed by a name: a module whose text does not hold the name
# (the editor checks the same helper at every keystroke, and reading the whole repository for
# its name each time cost ~100 ms on ExecuTorch; a changed module has another key, so it is
# read again), or whose text holds it but whose code never loads it (a docstring, a comment:
# its summary says so, and its tree is not built; it still counts as a candidate for
# `_MAX_CANDIDATES`, as its text does).
_LACKS = "text-lacks:"
_UNUSED = "never-loads:"
# A module whose every load of the name is, by its content alone, something of its own (a
# local, a function it defines: `foreign_references`), for any helper of that name: the 19
# ExecuTorch Arm scripts that each define and call their own `quantize_model` are read once,
# not once per script checked.
_OWN = "own-name:"


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


def each_project_call(ctx: FileContext, func: ast.AST, index: int) -> Iterator[ProjectCall | None]:
    """The same, one module at a time, so that a verdict can stop at the first caller that
    decides it; None is yielded (last) for a use that cannot be read."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or not ctx.module:
        yield None
        return
    found = _searched_as(ctx, func)
    if found is None:
        yield None  # a nested function, a decorated method: their callers are not found by name
        return
    target, method, owner_name = found
    root = _scan_root(ctx.path)
    # The helper's name, then the names modules re-export it under (`from .x import f as qm`):
    # a caller of `qm` never spells `f`. A constructor's callers spell its class.
    words = [owner_name if method == _INIT else func.name]
    if method and root is not None and _subclassed_elsewhere(ctx, root, target, words[0], owner_name):
        yield None
        return
    seen: set[tuple] = set()  # calls found under two words (a module that renames and calls)
    for word in words:
        candidates = _candidates(ctx, root, word) if root is not None else None
        if candidates is None:
            yield None
            return
        for path, data, key in candidates:
            # The module's summary is parsed for its references (unless known already): the tree
            # is kept for `_module`, which would otherwise parse the module again to read its calls.
            try:
                refs = _references(ctx, path, key, word, keep_tree=True)
                if refs is not None and not method and _imported_elsewhere(ctx, path, refs, func, target, word):
                    calls = ()  # no use of it there can be the helper: the module is not parsed
                elif refs is not None:
                    calls = _calls_in(ctx, path, data, refs, func, target, index, word, method)
                else:
                    calls = ()
                if calls == [] and _own_only(ctx, path, data, word):
                    scan_memo.note_miss(path, _OWN + word, key)
            finally:
                # Not taken when the module was built before or names no caller: a module's whole
                # tree would otherwise stay with the worker until the next caller search.
                ctx.project.drop_kept_tree()
            if calls is None:
                yield None
                return
            for renamed in _renames(ctx, path, word) if not method else ():
                if renamed not in words:
                    if len(words) > _MAX_WORDS:
                        yield None  # re-exported under too many names to search them all
                        return
                    words.append(renamed)
            for call in calls:
                where = (path, call.call.lineno, call.call.col_offset)
                if where not in seen:
                    seen.add(where)
                    yield call


_METHOD = "method"
_INIT = "init"  # `__init__`: its callers are the constructions of its class


def _searched_as(ctx: FileContext, func: ast.AST) -> tuple[str, str, str] | None:
    """(what its references resolve to, "" / `_METHOD` / `_INIT`, its class's name) for a
    module-level function or a method of a top-level class; None for anything else."""
    if ctx.scope.functions.get(func.name) is func:
        return f"{ctx.module}.{func.name}", "", ""
    # A method of a top-level class is found by its name as an attribute
    # (`method_references`), its `__init__` by its class's name (`construction_references`).
    owner = owner_class(ctx, func)
    if owner is None:
        return None
    name = owner.node.name
    if func.name == "__init__":
        return f"{ctx.module}.{name}", _INIT, name
    return f"{ctx.module}.{name}.{func.name}", _METHOD, name


def used_elsewhere(ctx: FileContext, func: ast.AST) -> bool:
    """Whether `each_project_call` would yield anything for `func`: another module calls it
    (under its name or one it is re-exported as), or uses it in a way that cannot be read (or
    its callers cannot be searched). Decided from each candidate module's references
    (`_uses`), without analysing the bodies that hold them: a walk up the callers that only
    asks whether all of them are in the checked module (`call_sites.calls_read_here`) stops
    at the first such module. A method of a top-level class likewise, from the references
    `method_references` says may be it (a module subclassing its class: used)."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or not ctx.module:
        return True
    found = _searched_as(ctx, func)
    if found is None:
        return True  # a nested function, a decorated method: not searched by name
    target, method, owner_name = found
    root = _scan_root(ctx.path)
    words = [owner_name if method == _INIT else func.name]
    if method and root is not None and _subclassed_elsewhere(ctx, root, target, words[0], owner_name):
        return True  # a module that subclasses its class and names the method: used there
    for word in words:
        candidates = _candidates(ctx, root, word) if root is not None else None
        if candidates is None:
            return True
        # The answer is whether any module uses it, whatever the order they are read in: the
        # smaller first, as each is parsed for its references (ExecuTorch's 465 KB
        # test_qnn_delegate.py was parsed to find a use of a vulkan helper that its 92 KB
        # test_vulkan_delegate.py, later in the listing, has).
        for path, data, key in sorted(candidates, key=lambda c: len(c[1])):
            try:
                refs = _references(ctx, path, key, word, keep_tree=True)
                if refs is not None and not method and _imported_elsewhere(ctx, path, refs, func, target, word):
                    refs = None  # every use of the name there is another function: not parsed
                module = _module(ctx, path, data) if refs is not None else None
                # A use that is not a call the flow reads makes `each_project_call` yield
                # None; a read call, the call: anything but no use at all. For a method, what
                # cannot be it (another class's own `self._wrap`) is no use (`method_uses`).
                uses = _uses_in(module, target, func, ctx.path, refs, word, method) if module is not None else []
                if uses is None or uses:
                    return True
                if refs is not None and _own_only(ctx, path, data, word):
                    scan_memo.note_miss(path, _OWN + word, key)
            finally:
                ctx.project.drop_kept_tree()
            for renamed in _renames(ctx, path, word) if not method else ():
                if renamed not in words:
                    if len(words) > _MAX_WORDS:
                        return True
                    words.append(renamed)
    return False


def searchable(ctx: FileContext) -> bool:
    """The file lies in a project whose other modules can be searched (a repository, or a
    tree with a `pyproject.toml`; an installed package)."""
    return _scan_root(ctx.path) is not None


def named_in_text(ctx: FileContext, word: str) -> bool:
    """Another module of the project holds `word` in its text (True when the project is not
    known). One read of the project answers every later question about a module's callers:
    a module whose file name no other module's text holds is imported by none of them (an
    import, relative or not, a re-export, `importlib` all spell it), so none calls its
    functions (ExecuTorch's Arm export scripts)."""
    root = _scan_root(ctx.path)
    if root is None:
        return True
    holders = _holding(ctx, root, word)
    if holders:  # it decides alone, while it holds the word (the answer asked, not which)
        if ctx.project.wants_dependencies:
            keys = unrecorded_keys(ctx, root)
            ctx.project.record_read(ctx.path, holders[0], ctx.project.digest(holders[0], keys[holders[0]]))
        return True
    _record_search(ctx, root, word)  # held nowhere: any module may come to hold it
    return False


def paths_naming(ctx: FileContext, name: str) -> list[str] | None:
    """The project's modules, other than the one checked, whose text holds `name` (None when
    the project is not known or too many do)."""
    root = _scan_root(ctx.path)
    found = _candidates(ctx, root, name) if root is not None else None
    if found is None:
        return None
    return [path for path, _, key in found if _references(ctx, path, key, name) is not None]


def _scan_root(path: str) -> str | None:
    """The repository holding the file; for an installed package, its top-level package."""
    module = module_name_for(path)
    parts = os.path.abspath(path).split(os.sep)
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] in _INSTALL_DIRS:
            if not module or i + 1 >= len(parts) - 1 or module.split(".")[0] != parts[i + 1]:
                # Not named from the install directory (a directory that is no identifier).
                return os.path.join(import_root(path), module.split(".")[0]) if module else None
            return os.sep.join(parts[: i + 2])
    return project_root(path)


def named_elsewhere(ctx: FileContext, name: str, besides: str) -> bool | None:
    """Whether a module other than the one checked and `besides` loads `name` (None: not
    known): `paths_naming`, which stops at the first such module, as the callers asking only
    want to know whether one does (`self._test_quantizer(...)` in 20 modules of ao's tests).
    """
    root = _scan_root(ctx.path)
    if root is None:
        return None
    besides = os.path.abspath(besides)
    if _still_named(ctx, root, name, besides):
        return True
    found = _candidates(ctx, root, name, record=False)
    for path, _, key in found or ():
        if os.path.abspath(path) != besides and _references(ctx, path, key, name) is not None:
            _NAMED[root, name] = (True, ((path, key),))
            # What `kept_answers` writes beside the stat, and the check's one dependency for the
            # answer: that module names it whatever the others hold.
            digest = file_keys.digest(ctx.project, path, key)
            if ctx.project.wants_dependencies:
                ctx.project.record_read(ctx.path, path, digest)
            return True
    _record_search(ctx, root, name)  # named nowhere, or too often to tell: every module decides
    return None if found is None else False


# (root, name) -> (True, ((path, content key),) of a module whose code loads the name): while
# it keeps its content, another module names it whatever the others hold (or so many hold it
# that the search gives up: None, which the callers take as they take True: not known to be
# named nowhere). Kept between runs (`kept_answers`): a one-file check of ExecuTorch's
# qualcomm/tests/utils.py otherwise listed and stat'ed the ~3,800 modules for the name of each
# of its methods that another module subclassing its class loads.
_NAMED: dict[tuple[str, str], tuple[bool, tuple]] = {}
kept_answers.register("named", _NAMED, lambda key, entry: entry[:-1])


def _still_named(ctx: FileContext, root: str, name: str, besides: str) -> bool:
    project = ctx.project
    kept = _NAMED.get((root, name))
    if kept is None:
        saved = kept_answers.saved("named", (root, name))
        if saved is None or saved[:-1] != (True,):
            return False
        trail = kept_answers.valid_trail(
            saved[-1],
            lambda path: file_keys.content_key(project, path),
            lambda path, now: file_keys.digest(project, path, now),
            lambda module, root: False,  # none is written: a trail holding one is not taken
        )
        if trail is None or len(trail) != 1:
            return False
        kept = _NAMED[root, name] = (True, trail)
        kept_answers.took(kept)
    ((path, key),) = kept[-1]
    if key is None or project.content_key(path, True) != key:
        del _NAMED[root, name]
        return False
    if path in (besides, os.path.abspath(ctx.path)):
        return False
    # As the search would find it: a candidate (not found since to load only its own name).
    if scan_memo.known_miss(path, _OWN + name, key) or scan_memo.known_miss(path, _UNUSED + name, key):
        return False
    if project.wants_dependencies:
        project.record_read(ctx.path, path, project.digest(path, key))
    return True


def _record_search(ctx: FileContext, root: str, name: str) -> None:
    """What a search of the project for `name` depends on when no one module decided its
    answer: every module (any may come to name it, or stop) and the listing (a module
    created later that names it)."""
    ctx.project.record_listing(ctx.path, listing_dependency(root, True, [name]))
    project_keys(ctx, root)


def _candidates(ctx: FileContext, root: str, name: str, record: bool = True) -> list[tuple[str, bytes, tuple]] | None:
    """`_scan`, once per check and name (a check asks for a helper's callers again: QL201's
    verdict, then the walk of its branches), with the text of each module found. Unless
    `record` is False (the caller records what decided its answer), every module of the
    project and its listing are dependencies of the check (`_record_search`)."""
    if record:
        _record_search(ctx, root, name)
    memo = ("project_callers.candidates", root, name)
    known = ctx.cache.get(memo, False)
    if known is False:
        known = ctx.cache[memo] = _scan_again(ctx, root, name)
    if known is None:
        return None
    read = ((path, file_keys.content_bytes(ctx.project, path, key, _MAX_BYTES), key) for path, key in known)
    return [(path, data, key) for path, data, key in read if data is not None]


# (root, name, checked path) -> (the project's content keys, what `_scan` found at them): an
# editor checks a module again at every keystroke while the other modules stay as they were,
# and a method's callers are searched in ExecuTorch's ~3,800 modules (~6 ms a check for
# qualcomm/tests/utils.py, whose TestQNN methods other modules subclass and call).
_SCANS: dict[tuple[str, str, str], tuple[dict, list[tuple[str, tuple]] | None]] = {}
_MAX_SCANS = 64


def _scan_again(ctx: FileContext, root: str, name: str) -> list[tuple[str, tuple]] | None:
    """`_scan`, or what it found for the same check at the same content keys of the project
    (the checked module's own is not read by it). The answer is the same: a module's text and
    what was learnt of it are keyed on its content key (`scan_memo` may have learnt more since,
    which only spares reading a module found to be no caller)."""
    own = os.path.abspath(ctx.path)
    keys = unrecorded_keys(ctx, root)
    kept = _SCANS.get((root, name, own))
    if kept is not None and _same_besides(kept[0], keys, own):
        return kept[1]
    found = _scan(ctx, root, name)
    if len(_SCANS) >= _MAX_SCANS:
        _SCANS.clear()
    _SCANS[root, name, own] = (keys, found)
    return found


# (path, content key, class name) -> whether the module's text subclasses the class: asked at
# every check of the class's module in an editor (ExecuTorch's 11,757-line test_qnn_delegate.py).
_SUBCLASSED: dict[tuple[str, tuple, str], bool] = {}
_MAX_SUBCLASSED = 4096


# (root, the method's qualified name) -> (its class's name, ((path, content key),) of a module
# found subclassing the class): while that module keeps its content the callers stay unknown
# whatever the others hold, so a check's next run depends on that module alone, and does not
# list, stat and record the whole project again (~3,800 modules on ExecuTorch at each
# keystroke of qualcomm/tests/utils.py, whose TestQNN test_qnn_delegate.py subclasses). Kept
# between runs too (`kept_answers`: a one-file check, `qlint check -`, starts without it).
_SUBCLASSING: dict[tuple[str, str], tuple[str, tuple]] = {}
kept_answers.register("subclassing", _SUBCLASSING, lambda key, entry: entry[:-1])


def _subclassed_elsewhere(ctx: FileContext, root: str, target: str, word: str, owner: str) -> bool:
    """Another module subclasses the method's class and spells `word` (the method's name, or
    the class's for `__init__`): its `self.<method>` calls are none the flow reads, so the
    callers are unknown whatever the other modules hold. That module alone is then the
    check's dependency for the answer (and is kept for the next run, `_SUBCLASSING`), not
    the project it was searched in: a warm `qlint check` of ExecuTorch's qualcomm/tests/utils.py
    validates one module's stat, not 3,784 (test_qnn_delegate.py subclasses its TestQNN)."""
    if _still_subclassed(ctx, root, target, word):
        return True
    for path, data, key in _candidates(ctx, root, word, record=False) or ():
        if _subclasses(path, key, data, owner):
            _note_subclassing(ctx, root, target, owner, path, key)
            return _still_subclassed(ctx, root, target, word)
    return False  # the search that follows records the project: every module decides


def _still_subclassed(ctx: FileContext, root: str, target: str, word: str) -> bool:
    project = ctx.project
    kept = _SUBCLASSING.get((root, target)) or _kept_subclassing(ctx, root, target)
    if kept is None:
        return False
    ((path, key),) = kept[-1]
    if key is None or project.content_key(path, True) != key:
        del _SUBCLASSING[root, target]
        return False
    # As the search would find it: another module, a candidate for the word.
    if path == os.path.abspath(ctx.path) or any(scan_memo.known_miss(path, q + word, key) for q in (_OWN, _UNUSED)):
        return False
    if project.wants_dependencies:
        project.record_read(ctx.path, path, project.digest(path, key))
    return True


def _kept_subclassing(ctx: FileContext, root: str, target: str) -> tuple[str, tuple] | None:
    """What an earlier run found subclassing the method's class, if that module has the
    content (and dotted name) it had then."""
    saved = kept_answers.saved("subclassing", (root, target))
    if saved is None or len(saved) != 2 or type(saved[0]) is not str:
        return None
    project = ctx.project
    trail = kept_answers.valid_trail(
        saved[-1],
        lambda path: file_keys.content_key(project, path),
        lambda path, now: file_keys.digest(project, path, now),
        lambda module, root: False,  # no lookup is written for it: a trail holding one is not taken
    )
    if trail is None or len(trail) != 1:
        return None
    kept = _SUBCLASSING[root, target] = (saved[0], trail)
    kept_answers.took(kept)
    return kept


def _note_subclassing(ctx: FileContext, root: str, target: str, owner: str, path: str, key: tuple) -> None:
    # Its hash, as the check records it, is what `kept_answers` writes beside the stat (one an
    # earlier run kept is not among the hashes this process computed, which it asks).
    value = file_keys.digest(ctx.project, path, key)
    if value and key is not None and key[0] != "overlay":
        content_keys.remember_digest(path, key, value)
    _SUBCLASSING[root, target] = (owner, ((path, key),))


def _subclasses(path: str, key: tuple, data: bytes, cls: str) -> bool:
    memo = (path, key, cls)
    found = _SUBCLASSED.get(memo)
    if found is None:
        if len(_SUBCLASSED) >= _MAX_SUBCLASSED:
            _SUBCLASSED.clear()
        found = _SUBCLASSED[memo] = subclassed_in(data, cls)
    return found


def _same_besides(before: dict, now: dict, own: str) -> bool:
    """The same content keys for every module but the checked one (its buffer is never read
    by the scan, and changes at every keystroke)."""
    if before is now or before == now:
        return True
    if len(before) != len(now):
        return False
    return all(key == now.get(path) for path, key in before.items() if path != own)


def _scan(ctx: FileContext, root: str, name: str) -> list[tuple[str, tuple]] | None:
    """Modules whose text spells the name as an identifier (`references.spells`) and whose
    code was not found not to load it (their path and content key; `_references` tells
    whether the code loads it), from the words of each module (`project_words`: read once per
    content). None past `_MAX_CANDIDATES` modules whose text holds it (spelled or inside
    longer names), decided from the texts alone before any is parsed."""
    hits = []
    keys = unrecorded_keys(ctx, root)
    for counted, path in enumerate(_holding(ctx, root, name), 1):
        key = keys[path]
        if not scan_memo.known_miss(path, _UNUSED + name, key) and not scan_memo.known_miss(path, _OWN + name, key):
            if project_words.spells(ctx.project.overlay, path, key, name):
                hits.append((path, key))
            else:
                # Only inside longer identifiers: its code cannot load the name, and it is not
                # parsed; it still counts as a candidate, as every module holding the text does.
                scan_memo.note_miss(path, _UNUSED + name, key)
        if counted > _MAX_CANDIDATES:
            return None
    return hits


def _holding(ctx: FileContext, root: str, word: str) -> list[str]:
    """The project's modules whose text holds `word` (`project_words`). Where the answers are
    kept between runs (`scan_memo`, with the results cache), what an earlier run found is
    asked first, so that a module unchanged since is not read, and what this one found is
    kept for the next. Nothing is recorded: its callers do (`_record_search`)."""
    keys = unrecorded_keys(ctx, root)
    overlay = ctx.project.overlay
    own = os.path.abspath(ctx.path)
    if not scan_memo.keeps(root):
        return project_words.holding(overlay, keys, word, besides=own)
    questions = [_LACKS + word, _UNUSED + word, _OWN + word]
    # What is kept of every module, read in one pass: its text holds the word or lacks it, or
    # its code was found not to load it or to load only its own (which it found in it).
    (holds, lacks), (_, unused), (_, own_only) = scan_memo.known_sets(keys, questions)
    saved = dict.fromkeys(unused | own_only, True)
    saved.update(dict.fromkeys(holds, True))
    saved.update(dict.fromkeys(lacks, False))
    found = project_words.holding(overlay, keys, word, saved, own)
    noted = (root, word, project_words.reads())
    if noted not in _NOTED:
        if len(_NOTED) > 4096:
            _NOTED.clear()
        _NOTED.add(noted)
        holders = set(found)
        # Only what this process read is new: an answer kept already is not noted again (noted,
        # every module of the project was a memo entry that `scan_memo.flush` then compared
        # with the kept one, ~45 ms of a one-file check that learned nothing). A module that
        # holds the word is noted too: it was read again by every later run (the ~1,000 of
        # ExecuTorch's modules that hold `utils`, the name of the module of vulkan's helpers).
        for path, key in keys.items():
            if path != own and saved.get(path) is None:
                scan_memo.note(path, questions[0], key, path in holders)
    return found


# (root, word, reads so far) whose misses were noted for `scan_memo`: the same answers again
# while no module was read since.
_NOTED: set[tuple[str, str, int]] = set()


def _references(ctx: FileContext, path: str, key: tuple, name: str, keep_tree: bool = False) -> References | None:
    """The references of a candidate module's summary, when its code loads `name` (None when
    it never does, or does not parse: it calls nothing, which is remembered for its content,
    unless it imports `name` under another name, which its callers may spell: `_renames`)."""
    refs = ctx.project.fact_at(path, REFERENCES, keep_tree)
    if refs is not None and refs.rows(refs.names_for(name)):
        return refs
    if refs is None or not refs.aliases.get(name):
        scan_memo.note_miss(path, _UNUSED + name, key)
    return None


def _imported_elsewhere(ctx: FileContext, path: str, refs: References, func: ast.AST, target: str, word: str) -> bool:
    """Whether every use of `word` in the candidate module is its one module-level import of
    something that is not the helper (`from executorch.examples.qualcomm.utils import
    build_executorch_binary` in the 45 Qualcomm scripts searched for the callers of
    MediaTek's function of that name), decided from its summary as `_uses` decides each
    reference after a parse: the import resolved through the project's re-exports, neither
    the helper nor a re-export of it, a function of another module or of no project module."""
    if word not in refs.sole_imports or refs.aliases.get(word):
        return False  # loaded as `x.word`, bound otherwise too, or also imported under another name
    scope = ctx.project.scope_at(path)
    if scope is None or word not in scope.imports:
        return False
    qual = Resolver(scope, ctx.project, ctx.optable).qualname_of([word])
    if qual == target or _in_module(qual, func.name, ctx.project, path, ctx.path):
        return False  # the helper itself: its calls are read from the module's tree
    return word != func.name or _elsewhere(qual, func.name, ctx.project, path, ctx.path)


def _renames(ctx: FileContext, path: str, name: str) -> tuple[str, ...]:
    """The names a candidate module's imports bind `name` to (`from .x import f as qm`): other
    modules may import it from there under that name (its summary's fact, read already)."""
    refs = ctx.project.fact_at(path, REFERENCES)
    return refs.aliases.get(name, ()) if refs is not None else ()


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
) -> list[ProjectCall] | None:
    """The calls of the helper in one module, spelled `word` (its name or a name it is
    re-exported under), or None when it names the helper otherwise."""
    module = _module(ctx, path, data)
    if module is None:
        return []  # does not parse: it calls nothing
    _, flow, analysed, _ = module
    uses = _uses_in(module, target, func, ctx.path, refs, word, method)
    if uses is None:
        return None
    found: list[ProjectCall] = []
    matched: set[int] = set()
    for body, refs in uses:
        key = id(body.node)
        if key not in analysed:
            try:
                analysed[key] = flow.function(body.node, body.class_scope)
            except RecursionError:  # a caller too deep to follow: its call is not read
                analysed[key] = None
        fn = analysed[key]
        if fn is None:
            return None
        for callee_path, site in fn.foreign_calls:
            if callee_path != ctx.path or getattr(site.callee, "name", None) != func.name:
                continue
            if site.callee.lineno != func.lineno or id(site.ref) not in refs:
                continue
            matched.add(id(site.ref))
            found.append(_call(site, index, path, module, fn))
    if any(id(ref) not in matched for _, refs in uses for ref in refs.values()):
        return None  # named but not called where the analysis followed it
    return found


def _uses_in(
    module: tuple, target: str, func: ast.AST, helper_path: str, refs: References, word: str, method: str = ""
):
    """`_uses`, once per parsed module, helper and name it is spelled under (for a method,
    `method_references.method_uses`: `target` is then `module.Class.method`)."""
    other, _, _, memo = module
    asked = (target, func.name, helper_path, word, method)
    if asked not in memo:
        if method == _INIT:
            memo[asked] = construction_uses(other, target, word, refs.rows(refs.names_for(word)))
        elif method:
            memo[asked] = method_uses(other, target.rpartition(".")[0], word, refs.rows(refs.names_for(word)))
        else:
            memo[asked] = _uses(other, target, func, helper_path, refs, word)
    return memo[asked]


def _own_only(ctx: FileContext, path: str, data: bytes, name: str) -> bool:
    """`_uses` found every load of `name` in the module to be its own (content alone decided)."""
    module = _module(ctx, path, data)
    return module is not None and module[0].cache.get((_OWN, name), False)


def _call(site: CallSite, index: int, path: str, module: tuple, fn: FunctionFlow) -> ProjectCall:
    facts = site.args.get(index)
    flows = tuple(f for f in module[2].values() if f is not None)
    if facts is None:  # not passed: the default, which is no model we know
        facts = frozenset({ModeFact("unknown", None)})
    return ProjectCall(site.call, facts, path, flows, fn, site, module)


def _module(ctx: FileContext, path: str, data: bytes):
    # The caller's analysis summarises the helper's module too: kept while what it read of
    # that module is unchanged (`caller_modules`).
    return caller_module(ctx, path, data)


def _uses(other: FileContext, target: str, func: ast.AST, helper_path: str, references: References, word: str):
    """[(body, {id(reference): reference})] of the references to the helper in a module, or
    None when one may denote it but is not a plain reference (an alias of a re-export, an
    attribute of an object). Only the statements on the rows its summary lists are walked.
    A call through an object that could not bind the helper's parameters (`compiled.export()`
    for `def export(model, ...)`) would raise if it were the helper: it is not one.

    Under a name the helper is re-exported as (`word`, not its own name), a reference counts
    only when it resolves to the helper (`from pkg.api import qm`; the resolver follows the
    re-export): that name is the re-exporter's binding, which another object's attribute or
    another module's global of the same spelling is not."""
    name = func.name
    renamed = word != name
    names = references.names_for(word)
    rows = references.rows(names)
    out = []
    own = names == {word}  # every load skipped for what the module's content alone says
    for body in bodies(other.tree, other.scope, other.cache):
        resolver = None
        refs: dict[int, ast.AST] = {}
        called: dict[int, ast.Call] = {}
        for node in body.nodes(rows):
            if isinstance(node, ast.Call):
                called[id(node.func)] = node  # walked before its callee expression
                continue
            named = node.id in names if isinstance(node, ast.Name) else getattr(node, "attr", None) == word
            if not named or not isinstance(getattr(node, "ctx", None), ast.Load):
                continue
            if resolver is None:
                resolver = Resolver(other.scope, other.project, other.optable, body.local, body.class_scope)
            ref = node
            if isinstance(ref, ast.Name) and (ref.id in body.local or defines(body, ref.id)):
                continue  # a local of that name: where it was bound from is a reference of its own
            if isinstance(ref, ast.Name) and own_function(other, ref.id, body):
                continue  # the module's own function of that name (scripts may share a module name)
            own = False
            qual = resolver.qualname(ref)
            if qual is None and isinstance(ref, ast.Name):
                qual = imported_here(other, body, ref.id)  # `from m import f` inside the function
            if qual == target or _in_module(qual, name, other.project, other.path, helper_path):
                refs[id(ref)] = ref
            elif renamed:
                continue  # `word` bound to something else here
            elif not _elsewhere(qual, name, other.project, other.path, helper_path) and not cannot_bind(
                called.get(id(ref)), func
            ):
                return None
        if refs:
            if isinstance(body.node, ast.ClassDef):
                return None  # called in a class body: no flow is analysed there
            out.append((body, refs))
    other.cache[(_OWN, word)] = own and not out
    return out


def _in_module(qual: str | None, name: str, project, requester: str, helper_path: str, depth: int = 0) -> bool:
    """`qual` names `name` in the helper's own file (module names depend on where the
    project imports from: the file decides), or a module's import of it, renamed or not
    (`api.qm` where `pkg/api.py` holds `from .utils import f as qm`: the resolver follows
    re-exports of names, not of a module's attributes)."""
    module, _, attr = (qual or "").rpartition(".")
    if not module or depth > 3:
        return False
    scope = project.module_scope(module, requester)
    if scope is None:
        return False
    if os.path.abspath(scope.path) == os.path.abspath(helper_path):
        return attr == name
    if attr in scope.functions or attr in scope.classes or attr not in scope.imports:
        return False
    return _in_module(scope.imports[attr], name, project, requester, helper_path, depth + 1)


def _elsewhere(qual: str | None, name: str, project, requester: str, helper_path: str, depth: int = 0) -> bool:
    """The reference names a function of another module (or of no module of the project),
    not the helper through a re-export or an object we cannot see."""
    if qual is None or depth > 3:
        return False
    module, _, attr = qual.rpartition(".")
    if attr != name or not module:
        return True  # `alias.name` resolving to something else entirely
    scope = project.module_scope(module, requester)
    if scope is None:
        # Not a module of the project: a third-party function of the same name, unless the
        # module is the project's under a name the index cannot map.
        return not any(os.path.isdir(b) or os.path.isfile(b + ".py") for b in module_bases(module, requester))
    if os.path.abspath(scope.path) == os.path.abspath(helper_path):
        return False
    if name in scope.functions or name in scope.classes:
        return True
    if name in scope.imports:  # re-exported: where it comes from decides
        return _elsewhere(scope.imports[name], name, project, requester, helper_path, depth + 1)
    # `from .export_utils import *` (ExecuTorch's examples/qualcomm/utils.py): each source in turn.
    sources = _star_sources(project, scope.path)
    return bool(sources) and all(
        _elsewhere(f"{m}.{name}", name, project, requester, helper_path, depth + 1) for m in sources
    )


def _star_sources(project, path: str) -> list[str]:
    text = project.text(path)
    if text is None or "import *" not in text:
        return []
    try:
        tree = live_parse(text, path)
    except (SyntaxError, ValueError, RecursionError):
        return []
    module = module_name_for(path)
    found = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            base = resolve_relative(module, path, node.level, node.module)
            if base is not None:
                found.append(base)
    return found


__all__ = [
    "ProjectCall",
    "each_project_call",
    "named_in_text",
    "paths_naming",
    "project_callers",
    "searchable",
    "used_elsewhere",
]
