"""A method whose class another module of the project subclasses: that module's uses of the
method that are none the flow reads (`self.<method>` taken as a value; any, for `__init__`
and `used_elsewhere`) leave its callers unknown whatever the other modules hold. Found once,
that module alone decides the answer (and is the check's one dependency for it) while it
keeps its content, in this process and the next (`kept_answers`), so a warm check validates
one module's stat rather than the project's.
"""

from __future__ import annotations

import os

from qlint.analysis import scan_memo
from qlint.analysis.context import FileContext
from qlint.analysis.flow.method_references import subclassed_in
from qlint.analysis.flow.project_search import (
    OWN,
    UNUSED,
    candidate_modules,
)
from qlint.analysis.graphs import file_keys, kept_answers
from qlint.analysis.names import content_keys

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
kept_answers.register("subclassing", _SUBCLASSING, lambda key, entry: entry[:-1], small=True)


def subclassed_elsewhere(ctx: FileContext, root: str, target: str, word: str, owner: str, also=None) -> bool:
    """Another module subclasses the method's class and spells `word` (the method's name, or
    the class's for `__init__`), and its text holds what `also(text)` asks, if given (the
    caller search reads a subclass's `self.<method>(...)`, and asks for one that takes the
    method as a value: `target` then names that question, `subclass_self_calls`): its uses
    are none the flow reads, so the callers are unknown whatever the other modules hold
    (`used_elsewhere` asks for any subclass: one that names the method uses it). That module
    alone is then the check's dependency for the answer (and is kept for the next run,
    `_SUBCLASSING`), not the project it was searched in: a warm `qlint check` of ExecuTorch's
    qualcomm/tests/utils.py validates one module's stat, not 3,784 (test_qnn_delegate.py
    subclasses its TestQNN, and hands on `self.get_qdq_module`)."""
    kept_answers.asked("subclassing", (root, target))
    if _still_subclassed(ctx, root, target, word):
        return True
    for path, data, key in candidate_modules(ctx, root, word, record=False) or ():
        if (also is None or also(data)) and subclasses(path, key, data, owner):
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
    if path == os.path.abspath(ctx.path) or any(scan_memo.known_miss(path, q + word, key) for q in (OWN, UNUSED)):
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
    trail = kept_answers.one_module_trail(ctx.project, saved[-1])
    if trail is None:
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


def subclasses(path: str, key: tuple, data: bytes, cls: str) -> bool:
    memo = (path, key, cls)
    found = _SUBCLASSED.get(memo)
    if found is None:
        if len(_SUBCLASSED) >= _MAX_SUBCLASSED:
            _SUBCLASSED.clear()
        found = _SUBCLASSED[memo] = subclassed_in(data, cls)
    return found
