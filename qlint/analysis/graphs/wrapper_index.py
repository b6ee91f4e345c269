"""Which names the project's insertion wrappers can be imported under, worked out once per run.

QL102's import trigger asks, of every file that inserts nothing itself, whether it imports a
function of the project that inserts what it is given (or a class with such a method).
Resolving each imported name through the module it names, file after file, cost ~3.7 s of a
cold ExecuTorch run for one file kept in 3,200. A run over many files instead reads the
project once: the modules that insert (`calls_inserting`), their functions and classes as
the helper search itself judges them (`Forwarding.forwarded_params`, the same answers the
trigger would get), and every name a re-export binds one of them to (`X as Y`, to a
fixpoint). An import whose name is none of those cannot lead to a wrapper, and is not looked
up; the few that are, are resolved exactly as before.

The set covers every module the helper search can reach from a file: `find_module` looks
only in the file's import root, the directories above it up to its repository (or
`pyproject.toml` directory), and the directories that declares; all of them lie under the
root listed here. Where that cannot be vouched for (installed packages, whose import root is
all of site-packages; a symbolic link out of the root; a file or an import in a directory
the listing skips), there is no index and every import is resolved.

The same read gives QL101's helper search the names of the functions and classes that may
forward a parameter to one of its default sinks (`sink_index`; `WrapperIndex.sinks`), kept in
the same record under the same dependency.

Only in batch runs (`enable`, by the runner): the project is taken to hold still during the
run. The language server and one-file runs keep the exact search, whose dependencies are the
modules it read. The index decides no answer, only which lookups are spared: the search
follows wrapper chains as deep without it, in a root it would cover (`index_roots`,
`Forwarding.chain_links`), so those runs answer as a run with the index does; a root it
cannot vouch for (a link out of it, past `_MAX_FILES`), or where the index would hold more
than `_MAX_NAMES` names, is read as deep, every name looked up. The last is found only by
reading the root (~4.8 s of CPU on a torch-sized one): the results cache keeps a marker of it
(`wrapper_record`, `Record.too_many`), which spares the next runs that reading while the
files the names came from hold still. A file answered from the set
depends on it (`wrapper_record.dependency`, with the set's digest), which the results cache
checks without the analysis.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from qlint.analysis import wrapper_record
from qlint.analysis.graphs.index_roots import root_for as _root_for
from qlint.analysis.graphs.insertions import wrapper_search, writes_insertion
from qlint.analysis.graphs.packet_imports import answered, may_hold_packet
from qlint.analysis.graphs.wrapper_names import WrapperIndex
from qlint.analysis.names.content_keys import content_key
from qlint.analysis.project_files import Listing, disk_files, links_out

_MAX_FILES = 60_000
# Past this many names (of wrappers, or of QL101's sink helpers) a root gets no index: the
# search looks every name up, as where a link leads out of the root. A copy of the installed
# torch, out of site-packages, found 8,600 and 8,300: an index ruling out few lookups, whose
# making cost a cold run 24-31 s of CPU against 7.2-7.5 s without (the same findings, and the
# first edited checks of observer.py, symbolic_shapes.py and inductor's ir.py within the
# noise of each other). ExecuTorch finds 187 and 602, ao 6 and 56.
_MAX_NAMES = 3_000


_ENABLED = False
_STORE = None  # a `qlint.wrapper_store.WrapperStore` (any object with `load(root)`, `save(record)`)
_INDEXES: dict[str, WrapperIndex | None] = {}
# directory -> its listing, as the run's file discovery made it (`project_files.listing_of`):
# the index's listing reads those instead of listing the directories again.
_LISTED: dict[str, Listing] = {}


def enable(
    store=None,
    paths: list[str] = (),
    listed: dict[str, Listing] | None = None,
    meanwhile: Callable[[], object] | None = None,
    apart: Callable[[], object] | None = None,
) -> None:
    """Answer from the index from now on (a run over many files; `store`: where the results
    cache keeps it between runs, None with `--no-cache`; `listed`: the directories the run
    listed already). The indexes of the roots of `paths` are made now: workers forked next
    inherit them instead of each making its own. `meanwhile()`: the caller's own work, done
    once, while a child makes an index if one does (else before returning). `apart()`: work
    worth doing only while this process would wait for such a child, done first then (never
    when every index is read from the store)."""
    global _ENABLED, _STORE, _LISTED
    _ENABLED, _STORE, _LISTED = True, store, listed or {}
    _INDEXES.clear()
    for root in roots(paths):
        index = _loaded(root)
        if index is _UNKNOWN:
            index = _built_apart(root, _in_turn(apart, meanwhile))
            meanwhile = apart = None  # done while the child worked
        _INDEXES[root] = index
    if meanwhile is not None:
        meanwhile()


def _in_turn(*works: Callable[[], object] | None) -> Callable[[], object] | None:
    """One callable doing each of `works` (None left out) in turn; None for none."""
    todo = [w for w in works if w is not None]
    if len(todo) < 2:
        return todo[0] if todo else None
    return lambda: [work() for work in todo]


def _built_apart(root: str, meanwhile: Callable[[], object] | None = None) -> WrapperIndex | None:
    """`build`, in a forked child (`forked_call`): reading the project's modules left the
    parent's heap fragmented (ExecuTorch: 28 arenas for 7 MiB in use), and the workers forked
    next made its free blocks cost memory in every process for the whole run (peak PSS). On a
    large project a second child, forked right after it, reads the first modules for it
    (`wrapper_reads.FirstPart`): it set the pace of the run's start, with a core idle."""
    from qlint.analysis import forked_call
    from qlint.analysis.graphs.wrapper_reads import FirstPart

    part = FirstPart()
    here = os.getpid()

    def work() -> tuple | None:
        # Worked out here instead (the child failed): read alone, not from another child.
        index = build(root, _STORE, _LISTED, part if os.getpid() != here else None)
        if index is None:
            return None
        return (
            index.functions,
            index.classes,
            index.digest,
            index.sink_functions,
            index.sink_classes,
            index.sink_modules,
        )

    def beside() -> None:
        part.start(root, _LISTED)
        if meanwhile is not None:
            meanwhile()

    try:
        fields = forked_call.call(work, beside)
    finally:
        part.stop()
    return None if fields is None else WrapperIndex(root, *fields)


def compile_gates() -> None:
    """Compile the patterns the import triggers' gates search texts with (`helper_gate`,
    `imported_helpers._constructed`, `imported_helpers._attribute_helpers`) for the indexes made: in a
    run with workers, once in the parent before it forks them, not once in each (ExecuTorch:
    ~0.05 s of CPU per worker, their first files' triggers)."""
    from qlint.analysis.graphs.called_names import may_call_attribute
    from qlint.analysis.graphs.word_trie import holds_any

    for index in _INDEXES.values():
        for names in (index, index.sinks) if index is not None else ():
            may_call_attribute("", names.attribute_or_class_names)
            may_call_attribute("", names.attribute_names)
            holds_any("", names.classes)


def roots(paths) -> set[str]:
    """The roots whose indexes the checks of `paths` ask (`index_for`)."""
    return {_root_for(path) for path in paths} - {None}


def disable() -> None:
    global _ENABLED, _STORE, _LISTED
    _ENABLED, _STORE, _LISTED = False, None, {}
    _INDEXES.clear()


def index_for(path: str, project) -> WrapperIndex | None:
    """The index covering every module the check of `path` can resolve (None: none does, or
    this is no batch run)."""
    if not _ENABLED or project.overlay:
        return None  # unsaved buffers are read through the project index, never listed here
    root = _root_for(path)
    if root is None:
        return None
    if root not in _INDEXES:
        index = _loaded(root)
        _INDEXES[root] = build(root, _STORE, _LISTED) if index is _UNKNOWN else index
    return _INDEXES[root]


def imports_a_wrapper(text: str, path: str, project) -> bool:
    """QL102's import trigger: the file imports a function of another module of the project
    that inserts what it is given (or a class it subclasses has such a method). In a run over
    many files, only imports the project's index of wrapper names holds are looked up."""
    index = index_for(path, project)
    imports = _wrapper_imports(text, path, project, index)
    return bool(imports) and _wrapper_found(text, path, project, index, imports)


def _wrapper_imports(text: str, path: str, project, index: WrapperIndex | None) -> list[tuple[str, str]]:
    """The imports through which the wrapper search may find a wrapper (`helper_imports`: most
    files have none, and need no search made)."""
    from qlint.analysis.graphs.imported_helpers import helper_imports  # with the search's modules

    return helper_imports(project, path, text, index)


def _wrapper_found(text: str, path: str, project, index: WrapperIndex | None, imports) -> bool:
    """The wrapper search through `imports` (what `_wrapper_imports` kept of the file's)."""
    return wrapper_search(project, None, path, deep=True).imports_helper(project, path, text, index, imports)


def inserts_through_imports(text: str, path: str, project) -> bool:
    """QL102's import trigger, for a file `triggered_by` turned away: it inserts, itself or
    through an imported wrapper, and a packet can reach it, from its text or from what it
    imports (`packet_text`, `packet_imports`). Where QL101's import trigger found already, in
    this check, that no packet can, wrappers are not searched for.

    The halves are asked in the cheaper order, and the answer is their conjunction either way.
    In a run over many files (`enable`) the wrapper search asks only the imports the project's
    index of wrapper names holds (`_wrapper_imports`: most files none), so that gate goes
    first; a file it lets through is asked the packet question next, and searched last: on
    ExecuTorch the search of the 99 files the gate let through cost ~0.23 s of CPU and found no
    wrapper, where the packet question cost ~0.13 s for them and let 3 through (what a search
    works out of other modules is kept, for later checks, only where it runs). In a check of
    one file or of an editor's buffer there is no index, and the search resolves every
    imported name the file may call, through the project's modules, while the packet question
    reads only the modules the file imports from (ExecuTorch's vulkan test_vulkan_delegate.py:
    ~50 ms against ~8 ms; 2-10x on most files of a sample of 60), so the packet question goes
    first there."""
    if answered(text, path, project) is False:
        return False
    if writes_insertion(text):
        return may_hold_packet(text, path, project)
    if _ENABLED and not project.overlay:
        index = index_for(path, project)
        imports = _wrapper_imports(text, path, project, index)
        return (
            bool(imports)
            and may_hold_packet(text, path, project)
            and _wrapper_found(text, path, project, index, imports)
        )
    return may_hold_packet(text, path, project) and imports_a_wrapper(text, path, project)


def rebuilt_digest(root: str, store, listed: dict[str, Listing] | None = None) -> str | None:
    """The digest of the index of `root` worked out again from the project as it is now (and
    kept in `store`), for the results cache when the kept one no longer holds. None where no
    index can be made."""
    index = build(root, store, listed)
    return index.digest if index is not None else None


def _loaded(root: str) -> WrapperIndex | object | None:
    """The index the store keeps for `root` while it holds, None where it keeps the marker of
    a root with no index (past `_MAX_NAMES`) and that holds; else `_UNKNOWN`: make it."""
    record = _STORE.load(root) if _STORE is not None else None
    if record is None or not record.still_valid(_stat, _LISTED):
        return _UNKNOWN
    if record.dirty and _STORE is not None:
        _STORE.save(record)
    return _index(record) if record.indexed else None


_UNKNOWN = object()  # `_loaded`: no record holds, the index is to be made


def _index(record: wrapper_record.Record) -> WrapperIndex:
    return WrapperIndex(
        record.root,
        record.functions,
        record.classes,
        record.digest,
        record.sink_functions,
        record.sink_classes,
        record.sink_modules,
    )


def _stat(path: str) -> tuple[int, int] | None:
    """(size, mtime_ns), the order `wrapper_record` keeps (a content key is the reverse)."""
    key = content_key({}, path, True)
    return None if key is None else (key[1], key[0])


def build(root: str, store=None, listed: dict[str, Listing] | None = None, part=None) -> WrapperIndex | None:
    """Read the project under `root` once (listed, or from the directories in `listed`): the
    functions and classes of its inserting modules that may be wrappers, and every name
    re-exports bind them to. None where a symbolic link leads out of the root (the helper
    search may resolve modules there, which the listing does not walk), or past `_MAX_NAMES`
    names (an index ruling out too few lookups to pay for its making). `part`: the first
    modules, read by another child (`wrapper_reads.FirstPart`, in the index's child)."""
    # Imported here: only building the index reads module texts (see `Reads.read`).
    from qlint.analysis.graphs import wrapper_reads
    from qlint.analysis.graphs.sink_index import helper_module_stems
    from qlint.analysis.graphs.wrapper_candidates import TooManyNames, candidates

    links: list[str] = []
    dirs: list[str] = []
    started = time.time_ns()
    files = disk_files(root, True, listed, links, dirs)
    if len(files) > _MAX_FILES or links_out(root, links):
        return None
    reads = wrapper_reads.read(files, part)
    # Here only, where the index is built: a check that reads a kept index imports none of the
    # helper search wrapper_chains brings in (a one-file check pays for every module it imports).
    from qlint.analysis.graphs.wrapper_chains import CHAIN_LINKS

    renames = reads.renames
    try:
        functions, classes = candidates(reads.sinks, renames, reads.chains.more, links=CHAIN_LINKS, limit=_MAX_NAMES)
        linked: list = []  # the modules naming no sink that `candidates` read for QL101's
        sink_functions, sink_classes = candidates(
            reads.ql101,
            renames,
            _keeping(reads.ql101_chains.more, linked),
            instances=False,
            links=CHAIN_LINKS,
            limit=_MAX_NAMES,
        )
    except TooManyNames:
        # Kept as the marker of a root with no index (`wrapper_record`), with the modules every
        # name found starts from: the next run gives the making up before it starts.
        if store is not None:
            sinks = [m.path for m in (*reads.sinks, *reads.ql101)]
            snapshot = wrapper_record.take_snapshot(dirs, reads.stats, links, started)
            store.save(wrapper_record.Record(root, (), (), reads.stats, snapshot=snapshot, too_many=sinks))
        return None
    snapshot = wrapper_record.take_snapshot(dirs, reads.stats, links, started)
    helpers = sink_functions | sink_classes
    sink_modules = helper_module_stems([*reads.ql101, *linked], reads.importing(helpers), helpers)
    record = wrapper_record.Record(
        root, functions, classes, reads.stats, sink_functions, sink_classes, snapshot, sink_modules=sink_modules
    )
    if store is not None:
        store.save(record)
    return _index(record)


def _keeping(more: Callable[..., list], kept: list) -> Callable[..., list]:
    """`more`, keeping in `kept` every module it hands `candidates`."""

    def more_kept(*args) -> list:
        added = more(*args)
        kept.extend(added)
        return added

    return more_kept
