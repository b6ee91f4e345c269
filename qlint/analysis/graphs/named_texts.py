"""Whether another module of the project spells a name as a word (`project_texts.texts_naming`
asked for one module only: dead code's "named elsewhere", a pass named in another module).

Found once, the module that spells it decides the answer alone while it keeps its content
(its text, hence the word in it, is the same), in this process and the next (`kept_answers`),
and is the check's one dependency for it. Searched again at every check, the answer cost an
edited one-file check of ExecuTorch's qualcomm/tests/utils.py the listing and stat of its
~3,800 modules and the reading of ~2,000 of them (the first that spells `get_qdq_module`
comes late in the listing), and an editor the walk over them at every keystroke.
A word spelled nowhere is searched again each time (any module may come to spell it).
"""

from __future__ import annotations

import os

from qlint.analysis.context import FileContext
from qlint.analysis.graphs import file_keys, kept_answers
from qlint.analysis.graphs.own_namesakes import only_own_namesake
from qlint.analysis.graphs.project_scan import scan_root
from qlint.analysis.graphs.project_texts import texts_naming
from qlint.analysis.module_keys import project_keys
from qlint.analysis.names import content_keys
from qlint.analysis.recent_entries import RecentEntries

# (root, name) -> (True, ((path, content key),) of a module under the root whose text spells
# the name as a word): the answer while that module keeps that key.
_SPELLED: RecentEntries[tuple[str, str], tuple[bool, tuple]] = RecentEntries(4096)
kept_answers.register("spelled", _SPELLED, lambda key, entry: entry[:-1], small=True)


def spelled_elsewhere(ctx: FileContext, name: str, root: str | None = None) -> bool:
    """Whether a module of the project (or under `root`) other than the one checked spells
    `name` as a word, other than as its own function of that name (`own_namesakes`):
    `texts_naming` has a first such answer."""
    root = root or scan_root(ctx.path)
    if root is None:
        return False
    root = os.path.abspath(root)
    kept_answers.asked("spelled", (root, name))
    if _still_spelled(ctx, root, name):
        return True
    # A module spelling it only as its own function of that name reaches not this one (`own_namesakes`).
    found = next((f for f in texts_naming(ctx, name, root) if not only_own_namesake(f[1], name)), None)
    if found is None:
        return False
    path = found[0]
    key = project_keys(ctx, root).get(path)  # the key the search read it at (kept per check)
    if key is not None and key[0] != "overlay":
        # Its hash, as the check records it, is what `kept_answers` writes beside the stat.
        value = file_keys.digest(ctx.project, path, key)
        if value:
            content_keys.remember_digest(path, key, value)
    _SPELLED[root, name] = (True, ((path, key),))
    return True


def _still_spelled(ctx: FileContext, root: str, name: str) -> bool:
    """The module found spelling `name` before (in this process, or kept by an earlier run)
    has the content it had then, and is not the one checked (whose buffer the search skips)."""
    kept = _SPELLED.get((root, name)) or _kept(ctx, root, name)
    if kept is None:
        return False
    ((path, key),) = kept[-1]
    project = ctx.project
    if key is None or project.content_key(path, True) != key:
        del _SPELLED[root, name]
        return False
    if path == os.path.abspath(ctx.path):
        return False
    if project.wants_dependencies:
        project.record_read(ctx.path, path, project.digest(path, key))
    return True


def _kept(ctx: FileContext, root: str, name: str) -> tuple[bool, tuple] | None:
    """What an earlier run found spelling `name`, if that module has the content (and dotted
    name) it had then."""
    saved = kept_answers.saved("spelled", (root, name))
    if saved is None or saved[:-1] != (True,):
        return None
    trail = kept_answers.one_module_trail(ctx.project, saved[-1])
    if trail is None:
        return None
    kept = _SPELLED[root, name] = (True, trail)
    kept_answers.took(kept)
    return kept
