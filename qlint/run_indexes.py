"""The project's indexes a run over many files makes once, before its checks: QL102's wrapper
names (and QL101's sink helpers, `wrapper_index`) and the words of its modules
(`shared_words`), each by a child process while the run gets ready."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from qlint.settings import Settings
from qlint.worker_pool import import_for_checks, load_for_workers

if TYPE_CHECKING:
    from qlint.cache import Cache

# The import triggers whose searches the index answers: QL102's wrappers, QL101's sink helpers.
_INDEXED_TRIGGERS = ("qlint.analysis.graphs.wrapper_index:", "qlint.analysis.graphs.sinks:")


@contextlib.contextmanager
def project_indexes(
    cache: Cache | None, todo: list[str], settings: Settings, listed: dict, parallel: bool = False
) -> Iterator[None]:
    """A run over many files (`runner.MIN_PARALLEL_FILES` or more) answers QL102's import
    trigger (and QL101's) from the project's index of wrapper (and sink helper) names
    (`wrapper_index`), made once here (workers forked meanwhile inherit it) instead of
    resolving every file's imports, over the directories discovery listed. The project's
    words are cut meanwhile by another child, for every process of the run (`shared_words`).

    A run of one process cuts them itself while it waits for the index child (not when the
    results cache holds the index: it would not wait), and imports what its checks will
    (`import_for_checks`): it waited with a core idle, and then cut the words in its caller
    searches, after its project scans had read the modules for each name (ao: 6,700 reads of
    its modules before the first cut, ~16 scans). Not in a third process: the run's RSS,
    summed over its processes, would count the parent's pages once more while it lives (ao:
    62 MiB at the start, its end's peak being 65)."""
    if not any((r.import_trigger or "").startswith(_INDEXED_TRIGGERS) for r in settings.rules_for(todo[0])):
        yield
        return
    from qlint.analysis.graphs import wrapper_index
    from qlint.analysis.names import project_words, shared_words

    roots = wrapper_index.roots(todo)
    cutting: list = []  # the words' child (`_words_cut`), once forked
    here: list = []  # the words this process cut itself (`shared_words.cut_here`)

    def apart() -> None:  # one process: only beside the index child (`enable`)
        import_for_checks()  # what its checks import as they go
        paths = _project_paths(roots, listed)
        limit, cut = project_words.MAX_BYTES, project_words.module_words
        here.append(shared_words.cut_here(paths, limit, cut) if paths else None)

    def meanwhile() -> None:  # workers to come: while a child makes the index, else before
        # The index child is forked first: it sets the pace of the run's start (ExecuTorch:
        # 0.8 s of CPU before a worker can start, against 0.4 s for the words' child), and
        # listing and keying the 3,784 modules for the words' child (~0.015 s) came before it.
        # On a large project the child reading half its modules (`wrapper_reads.FirstPart`)
        # is forked next, before this.
        from qlint.analysis import held_interrupts  # `forked_call` has imported it

        held = held_interrupts.hold()  # a Ctrl-C waits until the words' child is where `stop` finds it
        try:
            cutting.append(_words_cut(roots, listed))
        finally:
            held_interrupts.release(held)
        load_for_workers()  # what the workers inherit, loaded while the children work

    try:
        store = cache.wrappers if cache is not None else None
        wrapper_index.enable(store, todo, listed, meanwhile if parallel else None, None if parallel else apart)
        if parallel:
            wrapper_index.compile_gates()
        # Waited for in here: a Ctrl-C before `wait` is entered stops the child as well.
        words = cutting[0] if cutting else None
        shared = words.wait() if words is not None else here[0] if here else None
    except BaseException:  # Ctrl-C, or a failure: the words are not waited for, nor kept mapped
        wrapper_index.disable()
        for words in cutting:
            if words is not None:
                words.stop()
        for cut in here:
            if cut is not None:
                cut.close()
        raise
    project_words.share(shared)
    try:
        yield
    finally:
        wrapper_index.disable()
        if shared is not None:
            project_words.share(None)
            shared.close()


def _words_cut(roots: set[str], listed: dict):
    """A child cutting the words of the modules under `roots` (`shared_words`), or None.

    The content keys taken for it are the run's (`ProjectIndex.run_keys`, a run whose files
    hold still): the workers forked next inherit them, where each process stat'ed every
    module again at its first project scan (ExecuTorch: 3,784 modules; 44,300 stats over a
    two-process run against 33,500 in one process)."""
    from qlint.analysis.names import project_words, shared_words
    from qlint.analysis.names.project import ProjectIndex

    paths = _project_paths(roots, listed)
    words = shared_words.start(paths, project_words.MAX_BYTES, project_words.module_words) if paths else None
    if words is not None and ProjectIndex.fixed_content:
        keys = ProjectIndex.run_keys
        for path, key in zip(words.paths, words.keys, strict=True):
            keys.setdefault(path, key)  # one taken before stays: the run's keys are taken once
    return words


def _project_paths(roots: set[str], listed: dict) -> list[str]:
    """The modules under `roots`, over the directories discovery listed."""
    from qlint.analysis.project_files import disk_files

    return sorted({p for root in roots for p in disk_files(root, True, listed)})
