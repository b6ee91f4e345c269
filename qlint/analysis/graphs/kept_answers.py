"""QL101/QL102's answers about other modules (`forwarding`: which imported names are
helpers, what a function forwards, a module's chain links; `packet_kinds`: what an
imported name is bound to), kept between runs.

Within a process those answers are shared by every check while the modules they were read
from keep their content keys. A new process worked them out again: on ExecuTorch, the check
of one edited file spent about a third of its time re-deriving, from the texts and
summaries of ~56 other modules, what the run before had found. With a summary store (the
CLI's cache) they are written beside the summaries, each with what it was read from:

- per module read: its stat, content hash and dotted name when the answer was worked out
  (absent: no stat, hash ""). A later run takes the answer only if every such module has
  the same content now (the same stat, or else the same hash: a touched file still counts)
  and the same dotted name (an `__init__.py` added above renames it and changes what its
  relative imports mean);
- per module lookup made on the way (which file `a.b` is, from a given import root): the
  file it found, or that there was none; looked up again, it must find the same.

As the results cache and `scan_memo` do, a stat is trusted only if the file was last
modified at least two seconds before the process that read it started; an answer read from
an editor's unsaved buffer, or from a file modified since, is not written down.

The answers are kept by the checks of one buffer (`qlint check -`, as editors run it) and
the runs that check one file (`qlint check FILE` after an edit, as pre-commit runs it), in a
shard per file checked (`checking`: the file whose check asked; `summary_cache`): a few dozen
answers to a few hundred each (torch's fx/experimental/symbolic_shapes.py: ~215 KB). A check
reads its file's shard once, when the first answer is asked for, and at its end, only when
there is something new, writes over what the shard holds then. Kept in one file per store,
they were read and rewritten whole by every check, and grew with every file ever edited: on
torch, 487 KB after 30 edited files, up to 54 M instructions of a check's ~450 M
(inductor's fx_passes/quantization.py); at its cap of 20,000 answers, ~7 MB. Now what a
check reads and writes of them no longer depends on how many other files were checked.

An answer its shard lacks (the first check of a file, or an edit asking something new) is
looked up in the pool: a shard of the answers the latest checks of any file learned, the
least recently learned going past 1,000 (~370 KB on torch) or 1 MB, read only then (and
merged into when the check learned something); one taken from it is written in the file's
shard too. Files of a project ask much the same about the modules they import: the first
edited check of torch's _inductor/compile_fx.py after 30 other files' took 864 M
instructions, against 1,392 M with nothing kept; loading and merging the pool costs a first
check ~45 M (torch's _inductor/fx_passes/quantization.py: 487 M against 442 M).

Runs over many files (a whole tree) read none (which their checks need not pay for) and write
only the tables registered `small`, in the shard of each file whose check asked for the
answer (`asked`; one taken from the memo counts): answers that rest on one module found
("this module spells the name", "this one subclasses the class": `named_texts`,
`project_search`, `subclassed_methods`), and the verdicts of a helper's callers
(`kept_caller_verdicts`), a few per module checked. The first edited check after a
whole-tree run otherwise searched the project again for each (ExecuTorch's
qualcomm/tests/utils.py: ~1,015 M instructions, against ~608 M once a check had kept them).
The others are asked thousands of times by such a run (torch: the helper search's ~1,300,
740 KB; the name kinds ~4,400, 1.5 MB), which a check of one file would load whole to use a
few dozen: they go in a shard of their own, decoded a module at a time (below).

A table registered `whole` (`packet_kinds`' name kinds: what an imported name is bound
to; the helper search's answers worked out without the wrapper-name index) is also written
whole by such a run, in one shard of its own (`RUN`), grouped by the module each answer is
about and each group marshalled apart: a check of one file looks there for an answer its own
shard and the pool lack, and decodes that module's group alone. On the installed torch, which
no wrapper index covers, the first edited check after a whole-tree run otherwise read again,
through their import cycles, the modules every name the file imports comes from
(_dynamo/eval_frame.py: ~750 names of 74 modules, most of that check's CPU), and searched
again for the helpers the run had just searched (fx/experimental/symbolic_shapes.py: about
half of its first check).

A shard past 5,000 answers (what the file's earlier versions asked) starts again from what
its check took and learned; the store keeps the 2,000 shards most recently written or read
(`SummaryStore.prune_answers`). A shard cut, corrupted or of another file is absent.
"""

from __future__ import annotations

import contextlib
import itertools
import marshal
import os
import sys
from collections.abc import Callable
from typing import Protocol

from qlint.analysis.racy_stats import RACY_NS

# Past this many answers in one file's shard (what its earlier versions asked: names of
# helpers long renamed, modules deleted) it starts again from what this check asked.
_MAX = 5_000
# The pool's shard: what the latest checks of any file learned, for a check that does not
# find an answer in its own (no file is checked under an empty path). Past `_POOL_MAX`
# answers or `_POOL_BYTES`, the least recently learned go. On torch 1,000 were ~370 KB; kept
# to 256 KB (~360: an answer whose trail names many modules is large), the first check of
# _inductor/compile_fx.py after 30 other files' found none of those it could take.
POOL = ""
# The shard of the `whole` tables, as the runs over many files wrote them: table -> module
# (the key's first item) -> the marshalled {key: entry} of the answers about it. Past
# `_RUN_BYTES`, a run's flush starts it again from what that run found.
RUN = "\x00run"
_RUN_BYTES = 16 << 20
_POOL_MAX = 1_000
_POOL_BYTES = 1 << 20


class AnswerStore(Protocol):
    def get_answers(self, asker: str) -> dict | None: ...

    def put_answers(self, asker: str, answers: dict) -> None: ...


class _State:
    def __init__(self) -> None:
        self.store: AnswerStore | None = None
        self.asker: str | None = None  # the file checked now (`checking`)
        self.saved: dict | None = None  # what its shard held when first asked
        self.pool: dict | None = None  # (table, key) -> entry: the pool, when first missed
        self.pooled: dict[tuple[str, object], tuple] = {}  # what was found there, as written
        self.taken: set[int] = set()  # ids of the in-memory entries that came from it
        self.written: set[int] = set()  # ids of those this process wrote down since
        # name -> (the process's memo, what of an entry is written besides its trail)
        self.memos: dict[str, tuple[dict, Callable[[object, tuple], tuple | None]]] = {}
        self.small: set[str] = set()  # the tables a run over many files writes too
        # Those it writes whole, in the shard `RUN`: name -> the group of a key (None: not written).
        self.whole: dict[str, Callable[[object], object]] = {}
        self.run: dict | None = None  # that shard, when first looked in
        self.run_groups: dict[tuple[str, object], dict] = {}  # (table, module) -> its answers, decoded
        self.only_small = False  # such a run: nothing read, only the small tables written
        # Such a run: (table, key) -> the files whose checks asked for the answer (`asked`).
        self.askers: dict[tuple[str, object], set[str]] = {}


_STATE = _State()


def register(
    name: str,
    memo: dict,
    value_of: Callable[[object, tuple], tuple | None],
    small: bool = False,
    whole: bool | Callable[[object], object] = False,
) -> None:
    """`memo` (key -> (..., trail)) is the process's memo of the answers called `name`;
    `value_of(key, entry)` is what of an entry is written besides its trail (None: it is
    not written, e.g. an answer about a function known only by its tree). `small`: an answer
    rests on one module and a run asks a few per module it checks, so a run over many files
    writes them down too (`use(store, only_small=True)`), in the shard of each file whose
    check asked for it: the table's consumer says so (`asked`) each time it asks. `whole`: such
    a run writes every answer of the table it worked out in the shard `RUN` (True: keys are tuples
    whose first item names the module the answer is about; else a function of the key giving
    that item, None for an answer not to write), where a check of one file looks for what its
    own shard and the pool lack."""
    _STATE.memos[name] = (memo, value_of)
    if small:
        _STATE.small.add(name)
    if whole:
        _STATE.whole[name] = _first if whole is True else whole


def use(store: AnswerStore | None, only_small: bool = False) -> None:
    """Read and write answers there from now on (None: in memory only). `only_small`: a run
    over many files, which reads none and writes only the tables registered `small`."""
    _STATE.only_small = only_small and store is not None
    if store is not _STATE.store:
        _STATE.store = store
        _drop_read()


def checking(path: str) -> None:
    """The file at `path` is checked now (`engine.check_source`): the answers asked from now
    on are its check's, read from and written to its shard."""
    asker = os.path.abspath(path)
    if asker != _STATE.asker:
        _STATE.asker = asker
        _STATE.saved = None
        _STATE.pooled.clear()


def asked(name: str, key) -> None:
    """The check of the file checked now asks for the answer `name`/`key` of a table
    registered `small` (worked out now, taken from the memo, or to be found absent): a run
    over many files writes it down in the shard of each file that asked, so that the first
    edited check of any of them finds it."""
    if _STATE.only_small and _STATE.asker is not None:
        _STATE.askers.setdefault((name, key), set()).add(_STATE.asker)


def keeping() -> bool:
    """Answers worked out now are written down at the end (a store is in use, and not only
    for the small tables)."""
    return _STATE.store is not None and not _STATE.only_small


def writing(name: str) -> bool:
    """Answers of the table `name` worked out now are written down at the end (`keeping`, or
    a run over many files and the table is registered `small`)."""
    return _STATE.store is not None and (not _STATE.only_small or name in _STATE.small)


def saved(name: str, key) -> tuple | None:
    """(value..., trail as written) of the answer `name`/`key` an earlier run kept, or None.
    The caller checks the trail (`valid_trail`) before taking it."""
    if _STATE.store is None or _STATE.only_small or _STATE.asker is None:
        return None
    if _STATE.saved is None:
        payload = _STATE.store.get_answers(_STATE.asker)
        _STATE.saved = payload if isinstance(payload, dict) else {}
    table = _STATE.saved.get(name)
    try:
        found = table.get(key) if isinstance(table, dict) else None
        if not (isinstance(found, tuple) and found):  # not in the file's shard: in the pool?
            if _STATE.pool is None:
                payload = _STATE.store.get_answers(POOL)
                _STATE.pool = payload if isinstance(payload, dict) else {}
            found = _STATE.pool.get((name, key))
            if not (isinstance(found, tuple) and found):
                found = _from_run(name, key) if name in _STATE.whole else None
                if found is None:
                    return None
            _STATE.pooled[name, key] = found  # taken, it goes in the file's shard too
    except TypeError:  # an unhashable key: nothing was kept for it
        return None
    return found


def _from_run(name: str, key) -> tuple | None:
    """The answer `name`/`key` a run over many files wrote (`RUN`), or None. The shard is
    read once per process, and only the group of the module the key names is decoded."""
    if _STATE.run is None:
        payload = _STATE.store.get_answers(RUN) if _STATE.store is not None else None
        _STATE.run = payload if isinstance(payload, dict) else {}
    try:
        module = _STATE.whole[name](key)
        if module is None:
            return None
        group = (name, module)
        answers = _STATE.run_groups.get(group)
    except TypeError:  # an unhashable key: nothing was kept for it
        return None
    if answers is None:
        answers = _STATE.run_groups[group] = _group(_STATE.run.get(name), module)
    found = answers.get(key)
    return found if isinstance(found, tuple) and found else None


def _first(key) -> object:
    """The group of a key of a `whole` table registered with True: its first item."""
    return key[0] if isinstance(key, tuple) and key else None


def _group(table, module) -> dict:
    """The decoded answers about `module` in a table of the shard `RUN` ({} if none or damaged)."""
    blob = table.get(module) if isinstance(table, dict) else None
    if not isinstance(blob, bytes):
        return {}
    try:
        answers = marshal.loads(blob)
    except (EOFError, ValueError, TypeError):
        return {}
    return answers if isinstance(answers, dict) else {}


def took(entry: tuple) -> None:
    """`entry` was installed in a memo from what was kept: nothing new to write for it."""
    _STATE.taken.add(id(entry))


def valid_trail(trail, key_of, digest_of, find, holds=None) -> tuple | None:
    """The trail as the memos hold it ((path, content key now) and lookups) if every module
    in the written `trail` has the content and dotted name it had, and every lookup finds
    what it found; else None. `key_of(path)`/`digest_of(path, key)`: the checking project's
    content key and hash; `find(module, root)`: its lookup; `holds(path, name, value)`:
    whether another answer the trail names (("kind", path, name) in a memo's trail: what
    `packet_kinds` found a name bound to) is still `value` (None: such a trail is not
    taken)."""
    from qlint.analysis.names import content_keys
    from qlint.analysis.names.modules import module_name_for

    if not isinstance(trail, tuple):
        return None
    out = []
    try:
        for entry in trail:
            if len(entry) == 3:  # another answer it used: ((path, name), its value, "kind")
                (path, name), value, table = entry
                if holds is None or table != "kind" or not holds(path, name, value):
                    return None
                out.append(((table, path, name), value))
                continue
            if len(entry) == 2:  # a lookup: ((module, root), file found or None)
                (module, root), found = entry
                if find(module, root) != found:
                    return None
                out.append((("find", module, root), found))
                continue
            path, key, digest, name = entry
            now = key_of(path)
            if digest == "":
                if now is not None:
                    return None
            elif now is None or (now != tuple(key) and digest_of(path, now) != digest):
                return None
            elif now == tuple(key) and content_keys.known_digest(path, now) is None:
                # The stat it was written with (trusted then): the hash it had is the one the
                # check records as the dependency, without reading the file for it.
                content_keys.remember_digest(path, now, digest)
            if digest and _module_name(path, module_name_for) != name:
                return None
            out.append((path, now))
    except (TypeError, ValueError):  # a damaged entry: as if absent
        return None
    return tuple(out)


def one_module_trail(project, trail) -> tuple | None:
    """`valid_trail` for an answer that rests on one module and no lookup ("this module
    spells the name"): ((path, content key now),) while it keeps its content, else None."""
    from qlint.analysis.graphs import file_keys

    found = valid_trail(
        trail,
        lambda path: file_keys.content_key(project, path),
        lambda path, now: file_keys.digest(project, path, now),
        lambda module, root: False,  # none is written: a trail holding one is not taken
    )
    return found if found is not None and len(found) == 1 else None


_NAMES: dict[str, str | None] = {}


def _module_name(path: str, name_for: Callable[[str], str | None]) -> str | None:
    """`module_name_for`, once per path and process (the answers of one run name the same
    modules over and over; the package layout does not change while a run checks)."""
    if path not in _NAMES:
        _NAMES[path] = name_for(path)
    return _NAMES[path]


def flush() -> None:
    """Write down the answers this process worked out, in the shard of the file whose check
    asked for them (over what the shard holds now: a worker beside this one may have written
    meanwhile). Nothing new: nothing written."""
    store = _STATE.store
    if store is None:
        return
    learned: dict[str, dict[str, dict]] = {}  # asker -> table -> key -> entry as written
    pool: dict[tuple[str, object], tuple] = {}  # what a check of one file learned, for the pool
    run: dict[str, dict[object, dict]] = {}  # a run over many files: table -> module -> key -> entry
    for name, (memo, value_of) in _STATE.memos.items():
        if _STATE.only_small and name not in _STATE.small:
            if name in _STATE.whole:
                _run_answers(name, memo, value_of, run)
            continue
        for key, entry in list(memo.items()):
            if id(entry) in _STATE.written:
                continue
            if id(entry) in _STATE.taken:
                found = _STATE.pooled.get((name, key))
                if found is not None and _STATE.asker is not None:  # from the pool: now the file's
                    learned.setdefault(_STATE.asker, {}).setdefault(name, {})[key] = found
                continue
            askers = _askers(name, key)
            if not askers:
                continue
            value = value_of(key, entry)
            written = _written(value, entry[-1]) if value is not None else None
            if written is not None:
                for asker in askers:
                    learned.setdefault(asker, {}).setdefault(name, {})[key] = written
                if not _STATE.only_small:
                    pool[name, key] = written
    for asker, tables in learned.items():
        with _locked(store, asker):
            _merge(store, asker, tables)
    if pool:
        with _locked(store, POOL):
            _merge_pool(store, pool)
    if run:
        with _locked(store, RUN):
            _merge_run(store, run)
    if learned or run:
        for memo, _ in _STATE.memos.values():
            _STATE.written.update(id(e) for e in memo.values())


def _run_answers(name: str, memo: dict, value_of, run: dict) -> None:
    """Into `run`, the answers of the `whole` table `name` this run over many files worked out
    and has not written yet, as written, by the module each is about."""
    group_of = _STATE.whole[name]
    for key, entry in list(memo.items()):
        if id(entry) in _STATE.written:
            continue
        module = group_of(key)
        if module is None:
            continue
        value = value_of(key, entry)
        written = _written(value, entry[-1]) if value is not None else None
        if written is not None:
            run.setdefault(name, {}).setdefault(module, {})[key] = written


def _merge_run(store: AnswerStore, learned: dict[str, dict[object, dict]]) -> None:
    """`learned` into the shard `RUN` (each module's group decoded, updated and marshalled
    again); past `_RUN_BYTES`, the shard starts again from `learned`."""
    current = store.get_answers(RUN)
    current = current if isinstance(current, dict) else {}
    try:
        for name, modules in learned.items():
            table = current.get(name)
            if not isinstance(table, dict):
                table = current[name] = {}
            for module, answers in modules.items():
                merged = _group(table, module)
                merged.update(answers)
                table[module] = marshal.dumps(merged)
        if sum(len(b) for t in current.values() if isinstance(t, dict) for b in t.values()) > _RUN_BYTES:
            current = {
                name: {module: marshal.dumps(answers) for module, answers in modules.items()}
                for name, modules in learned.items()
            }
    except ValueError:  # not marshallable: written nowhere
        return
    store.put_answers(RUN, current)


def _askers(name: str, key) -> tuple[str, ...] | set[str]:
    """The files whose checks asked for the answer: a check of one file, that file; a run
    over many files, those that said so (`asked`)."""
    if not _STATE.only_small:
        return (_STATE.asker,) if _STATE.asker is not None else ()
    try:
        return _STATE.askers.get((name, key), ())
    except TypeError:  # an unhashable key: no one asked for it by it
        return ()


def _locked(store: AnswerStore, asker: str):
    """The store's lock on a shard while one process merges into it (`answers_lock`): the
    workers of a run over many files flush as they exit, side by side, and a merge read
    before another's write and written after it would drop what the other found."""
    lock = getattr(store, "answers_lock", None)
    return lock(asker) if lock is not None else contextlib.nullcontext()


def _merge(store: AnswerStore, asker: str, learned: dict[str, dict]) -> None:
    current = store.get_answers(asker)
    current = current if isinstance(current, dict) else {}
    size = sum(len(t) for t in current.values() if isinstance(t, dict))
    if size + sum(len(t) for t in learned.values()) > _MAX:
        current = _taken_of(current)
    for name, table in learned.items():
        mine = current.get(name)
        if not isinstance(mine, dict):
            mine = current[name] = {}
        mine.update(table)
    store.put_answers(asker, current)
    if asker == _STATE.asker and not _STATE.only_small:
        _STATE.saved = current


def _merge_pool(store: AnswerStore, learned: dict[tuple[str, object], tuple]) -> None:
    """`learned` into the pool, as its most recent answers; past `_POOL_MAX`, the least
    recent go."""
    current = store.get_answers(POOL)
    current = current if isinstance(current, dict) else {}
    for key, entry in learned.items():
        current.pop(key, None)
        current[key] = entry
    for key in list(itertools.islice(current, max(0, len(current) - _POOL_MAX))):
        del current[key]
    try:
        while current and len(marshal.dumps(current)) > _POOL_BYTES:
            for key in list(itertools.islice(current, max(1, len(current) // 4))):
                del current[key]
    except ValueError:  # not marshallable: put_answers writes nothing either
        return
    store.put_answers(POOL, current)


def _taken_of(current: dict) -> dict:
    """Of a shard, the answers this process took from it: a shard started again keeps what
    the check asked."""
    kept: dict[str, dict] = {}
    for name, (memo, _) in _STATE.memos.items():
        table = current.get(name)
        if not isinstance(table, dict):
            continue
        for key, entry in memo.items():
            if id(entry) in _STATE.taken and key in table:
                kept.setdefault(name, {})[key] = table[key]
    return kept


def flush_at_worker_exit() -> None:
    """In a worker of a parallel run (`qlint.runner`) that keeps answers, `flush` once as it
    exits (the pool's shutdown waits for that), as `scan_memo` does; the parent flushes when
    its summary store closes."""
    multiprocessing = sys.modules.get("multiprocessing")
    if _STATE.store is not None and multiprocessing is not None and multiprocessing.parent_process() is not None:
        from multiprocessing.util import Finalize

        Finalize(None, flush, exitpriority=10)


def _written(value: tuple, trail: tuple) -> tuple | None:
    """The entry as the file holds it, or None when it must not be kept (read from a buffer
    or a file modified too recently to trust its stat, or changed since it was read).

    A module the check read without hashing it (the helper search reads other modules' texts
    for their imports and calls: torch's symbolic_shapes.py, 123 of them) is hashed now, while
    it keeps the stat it was read at: without it such an answer was never written, and every
    edited check of that file worked it out again (QL101 and QL102 ~270 ms of ~460; ~85 ms
    once kept). Module names as `valid_trail` takes them (`_module_name`): one answer's trail
    repeats the modules of the next (exir/tests/test_passes.py: 1,233 names of a few
    hundred paths)."""
    from qlint.analysis.names import content_keys
    from qlint.analysis.names.modules import module_name_for

    # What rules the entry out, before any module is hashed for it.
    for path, key in trail:
        if (
            type(path) is not tuple
            and key is not None
            and (key[0] == "overlay" or content_keys.STARTED_NS - key[0] < RACY_NS)
        ):
            return None
    out = []
    for dep in trail:
        path, key = dep
        if type(path) is tuple:  # ("find", module, root), or ("kind", path, name): its value
            out.append(((path[1], path[2]), key) if path[0] == "find" else ((path[1], path[2]), key, path[0]))
            continue
        if key is None:
            out.append((path, None, "", None))
            continue
        digest = content_keys.digest_at(path, key)
        if not digest:
            return None
        out.append((path, key, digest, _module_name(path, module_name_for)))
    return (*value, tuple(dict.fromkeys(out)))


def forget() -> None:
    """Drop what was read from the store (tests; a new process starts without it)."""
    _STATE.asker = None
    _drop_read()


def _drop_read() -> None:
    """What was read from the store, which answers came from it or went to it, who asked
    them, and the module names of their trails: one store's (`use`), one process's (`forget`)."""
    _STATE.saved = None
    _STATE.pool = None
    _STATE.pooled.clear()
    _STATE.taken.clear()
    _STATE.written.clear()
    _STATE.askers.clear()
    _STATE.run = None
    _STATE.run_groups.clear()
    _NAMES.clear()


def root_requester(root: str) -> str:
    """A file path under the import root `root`, for looking a module up from it again."""
    return os.path.join(root, "_.py")


__all__ = [
    "POOL",
    "RUN",
    "asked",
    "checking",
    "flush",
    "flush_at_worker_exit",
    "forget",
    "keeping",
    "register",
    "root_requester",
    "saved",
    "took",
    "use",
    "valid_trail",
    "writing",
]
