"""How the answers a process worked out are written down (`flush`): in the shard of the file
whose check asked for them, the pool, and the run's shard (`kept_answers` says which and why),
each merged into what the store holds then, under its lock.

A shard past 5,000 answers (what the file's earlier versions asked) starts again from what
its check took and learned; the store keeps the 2,000 shards most recently written or read
(`SummaryStore.prune_answers`). A shard cut, corrupted or of another file is absent.
"""

from __future__ import annotations

import contextlib
import itertools
import marshal
import sys

from qlint.analysis.graphs.kept_state import POOL, RUN, STATE, AnswerStore, module_name, run_group
from qlint.analysis.racy_stats import RACY_NS

# Past this many answers in one file's shard (what its earlier versions asked: names of
# helpers long renamed, modules deleted) it starts again from what this check asked.
_MAX = 5_000
# The pool's bounds (`POOL`): past `_POOL_MAX` answers or `_POOL_BYTES`, the least recently
# learned go. On torch 1,000 were ~370 KB; kept to 256 KB (~360: an answer whose trail names
# many modules is large), the first check of _inductor/compile_fx.py after 30 other files'
# found none of those it could take.
_POOL_MAX = 1_000
_POOL_BYTES = 1 << 20
# Past this, a run's flush starts the run's shard (`RUN`) again from what that run found.
_RUN_BYTES = 16 << 20


def flush() -> None:
    """Write down the answers this process worked out, in the shard of the file whose check
    asked for them (over what the shard holds now: a worker beside this one may have written
    meanwhile). Nothing new: nothing written."""
    store = STATE.store
    if store is None:
        return
    learned: dict[str, dict[str, dict]] = {}  # asker -> table -> key -> entry as written
    pool: dict[tuple[str, object], tuple] = {}  # what a check of one file learned, for the pool
    run: dict[str, dict[object, dict]] = {}  # a run over many files: table -> module -> key -> entry
    for name, (memo, value_of) in STATE.memos.items():
        if STATE.only_small and name not in STATE.small:
            if name in STATE.whole:
                _run_answers(name, memo, value_of, run)
            continue
        for key, entry in list(memo.items()):
            if id(entry) in STATE.written:
                continue
            if id(entry) in STATE.taken:
                found = STATE.pooled.get((name, key))
                if found is not None and STATE.asker is not None:  # from the pool: now the file's
                    learned.setdefault(STATE.asker, {}).setdefault(name, {})[key] = found
                continue
            askers = _askers(name, key)
            if not askers:
                continue
            value = value_of(key, entry)
            written = _written(value, entry[-1]) if value is not None else None
            if written is not None:
                for asker in askers:
                    learned.setdefault(asker, {}).setdefault(name, {})[key] = written
                if not STATE.only_small:
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
        for memo, _ in STATE.memos.values():
            STATE.written.update(id(e) for e in memo.values())


def _run_answers(name: str, memo: dict, value_of, run: dict) -> None:
    """Into `run`, the answers of the `whole` table `name` this run over many files worked out
    and has not written yet, as written, by the module each is about."""
    group_of = STATE.whole[name]
    for key, entry in list(memo.items()):
        if id(entry) in STATE.written:
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
                merged = run_group(table, module)
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
    if not STATE.only_small:
        return (STATE.asker,) if STATE.asker is not None else ()
    try:
        return STATE.askers.get((name, key), ())
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
    if asker == STATE.asker and not STATE.only_small:
        STATE.saved = current


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
    for name, (memo, _) in STATE.memos.items():
        table = current.get(name)
        if not isinstance(table, dict):
            continue
        for key, entry in memo.items():
            if id(entry) in STATE.taken and key in table:
                kept.setdefault(name, {})[key] = table[key]
    return kept


def flush_at_worker_exit() -> None:
    """In a worker of a parallel run (`qlint.runner`) that keeps answers, `flush` once as it
    exits (the pool's shutdown waits for that), as `scan_memo` does; the parent flushes when
    its summary store closes."""
    multiprocessing = sys.modules.get("multiprocessing")
    if STATE.store is not None and multiprocessing is not None and multiprocessing.parent_process() is not None:
        from multiprocessing.util import Finalize

        Finalize(None, flush, exitpriority=10)


def _written(value: tuple, trail: tuple) -> tuple | None:
    """The entry as the file holds it, or None when it must not be kept (read from a buffer
    or a file modified too recently to trust its stat, or changed since it was read).

    A module the check read without hashing it (the helper search reads other modules' texts
    for their imports and calls: torch's symbolic_shapes.py, 123 of them) is hashed now, while
    it keeps the stat it was read at: without it such an answer was never written, and every
    edited check of that file worked it out again (QL101 and QL102 ~270 ms of ~460; ~85 ms
    once kept). Module names as `valid_trail` takes them (`kept_state.module_name`): one
    answer's trail repeats the modules of the next (exir/tests/test_passes.py: 1,233 names of a
    few hundred paths)."""
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
        out.append((path, key, digest, module_name(path, module_name_for)))
    return (*value, tuple(dict.fromkeys(out)))
