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
"""

from __future__ import annotations

import os
from collections.abc import Callable

from qlint.analysis.graphs.kept_state import POOL, RUN, STATE, AnswerStore, module_name, run_group


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
    STATE.memos[name] = (memo, value_of)
    if small:
        STATE.small.add(name)
    if whole:
        STATE.whole[name] = _first if whole is True else whole


def use(store: AnswerStore | None, only_small: bool = False) -> None:
    """Read and write answers there from now on (None: in memory only). `only_small`: a run
    over many files, which reads none and writes only the tables registered `small`."""
    STATE.only_small = only_small and store is not None
    if store is not STATE.store:
        STATE.store = store
        STATE.drop_read()


def checking(path: str) -> None:
    """The file at `path` is checked now (`engine.check_source`): the answers asked from now
    on are its check's, read from and written to its shard."""
    asker = os.path.abspath(path)
    if asker != STATE.asker:
        STATE.asker = asker
        STATE.saved = None
        STATE.pooled.clear()


def asked(name: str, key) -> None:
    """The check of the file checked now asks for the answer `name`/`key` of a table
    registered `small` (worked out now, taken from the memo, or to be found absent): a run
    over many files writes it down in the shard of each file that asked, so that the first
    edited check of any of them finds it."""
    if STATE.only_small and STATE.asker is not None:
        STATE.askers.setdefault((name, key), set()).add(STATE.asker)


def keeping() -> bool:
    """Answers worked out now are written down at the end (a store is in use, and not only
    for the small tables)."""
    return STATE.store is not None and not STATE.only_small


def writing(name: str) -> bool:
    """Answers of the table `name` worked out now are written down at the end (`keeping`, or
    a run over many files and the table is registered `small`)."""
    return STATE.store is not None and (not STATE.only_small or name in STATE.small)


def saved(name: str, key) -> tuple | None:
    """(value..., trail as written) of the answer `name`/`key` an earlier run kept, or None.
    The caller checks the trail (`valid_trail`) before taking it."""
    if STATE.store is None or STATE.only_small or STATE.asker is None:
        return None
    if STATE.saved is None:
        payload = STATE.store.get_answers(STATE.asker)
        STATE.saved = payload if isinstance(payload, dict) else {}
    table = STATE.saved.get(name)
    try:
        found = table.get(key) if isinstance(table, dict) else None
        if not (isinstance(found, tuple) and found):  # not in the file's shard: in the pool?
            if STATE.pool is None:
                payload = STATE.store.get_answers(POOL)
                STATE.pool = payload if isinstance(payload, dict) else {}
            found = STATE.pool.get((name, key))
            if not (isinstance(found, tuple) and found):
                found = _from_run(name, key) if name in STATE.whole else None
                if found is None:
                    return None
            STATE.pooled[name, key] = found  # taken, it goes in the file's shard too
    except TypeError:  # an unhashable key: nothing was kept for it
        return None
    return found


def _from_run(name: str, key) -> tuple | None:
    """The answer `name`/`key` a run over many files wrote (`RUN`), or None. The shard is
    read once per process, and only the group of the module the key names is decoded."""
    if STATE.run is None:
        payload = STATE.store.get_answers(RUN) if STATE.store is not None else None
        STATE.run = payload if isinstance(payload, dict) else {}
    try:
        module = STATE.whole[name](key)
        if module is None:
            return None
        group = (name, module)
        answers = STATE.run_groups.get(group)
    except TypeError:  # an unhashable key: nothing was kept for it
        return None
    if answers is None:
        answers = STATE.run_groups[group] = run_group(STATE.run.get(name), module)
    found = answers.get(key)
    return found if isinstance(found, tuple) and found else None


def _first(key) -> object:
    """The group of a key of a `whole` table registered with True: its first item."""
    return key[0] if isinstance(key, tuple) and key else None


def took(entry: tuple) -> None:
    """`entry` was installed in a memo from what was kept: nothing new to write for it."""
    STATE.taken.add(id(entry))


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
            if digest and module_name(path, module_name_for) != name:
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


def forget() -> None:
    """Drop what was read from the store (tests; a new process starts without it)."""
    STATE.asker = None
    STATE.drop_read()


def root_requester(root: str) -> str:
    """A file path under the import root `root`, for looking a module up from it again."""
    return os.path.join(root, "_.py")


__all__ = [
    "asked",
    "checking",
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
