"""What a process knows of the answers kept between runs (`kept_answers`): the store in use,
the file checked now, what was read from its shard, the pool and the run's shard, and which
in-memory answers came from them or went to them. Read by `kept_answers`, which takes kept
answers, and `kept_shards`, which writes new ones: one state for both, one store's (`use`).
"""

from __future__ import annotations

import marshal
from collections.abc import Callable
from typing import Protocol

# The pool's shard: what the latest checks of any file learned, for a check that does not
# find an answer in its own (no file is checked under an empty path), bounded as
# `kept_shards` writes it.
POOL = ""
# The shard of the `whole` tables, as the runs over many files wrote them: table -> module
# (the key's first item) -> the marshalled {key: entry} of the answers about it.
RUN = "\x00run"


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

    def drop_read(self) -> None:
        """What was read from the store, which answers came from it or went to it, who asked
        them, and the module names of their trails: one store's (`use`), one process's (`forget`)."""
        self.saved = None
        self.pool = None
        self.pooled.clear()
        self.taken.clear()
        self.written.clear()
        self.askers.clear()
        self.run = None
        self.run_groups.clear()
        _NAMES.clear()


STATE = _State()


def run_group(table, module) -> dict:
    """The decoded answers about `module` in a table of the shard `RUN` ({} if none or damaged)."""
    blob = table.get(module) if isinstance(table, dict) else None
    if not isinstance(blob, bytes):
        return {}
    try:
        answers = marshal.loads(blob)
    except (EOFError, ValueError, TypeError):
        return {}
    return answers if isinstance(answers, dict) else {}


_NAMES: dict[str, str | None] = {}


def module_name(path: str, name_for: Callable[[str], str | None]) -> str | None:
    """`module_name_for`, once per path and process (the answers of one run name the same
    modules over and over; the package layout does not change while a run checks)."""
    if path not in _NAMES:
        _NAMES[path] = name_for(path)
    return _NAMES[path]
