"""What each answer of the helper search (`forwarding`) was read from: its trail, the modules
read and the module lookups made while it was worked out, each with what it found. An answer
shared across checks (`forwarding_memos`), or kept between runs (`kept_answers`), is reused
only while its trail holds; every module and lookup read is also a dependency of the check
that read it (`file_keys`), so that an edit of one refreshes the check. `fw` is the check's
`Forwarding`, which holds the trails being worked out (`trails`, innermost last), the
lookups and content keys of the check, and the dependencies it recorded.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from qlint.analysis.graphs import file_keys, kept_answers
from qlint.analysis.graphs.forwarding_memos import MEMO_NAMES
from qlint.analysis.names.import_paths import lookup_root, tried_apart
from qlint.analysis.names.project import ProjectIndex


def module_file(fw, module: str, requester: str) -> str | None:
    """The file of `module` as `requester` imports it, looked up once per check and root.
    The answer is a dependency of the fact being worked out: a module created where the
    lookup found none, or ahead of the one it found, changes it (`trail_key`)."""
    root = lookup_root(module, requester)
    found = looked_up(fw, module, root, requester)
    if fw.trails:
        fw.trails[-1].append((("find", module, root), found))
    # What `root` does not stand for: the requester's package directory, which may come to hold it.
    apart = tried_apart(module, os.path.abspath(requester), root, found) if ProjectIndex.wants_dependencies else ()
    if apart:
        replay(fw, tuple((path, None) for path in apart))
    return found


def looked_up(fw, module: str, root: str, requester: str | None = None) -> str | None:
    key = (module, root)
    if key not in fw.module_files:
        asker = requester if requester is not None else kept_answers.root_requester(root)
        fw.module_files[key] = fw.project.find_module_in_check(module, asker)
    return fw.module_files[key]


def read_module(fw, project, path: str) -> None:
    key = trail_key(fw, path)
    if fw.trails:  # the innermost fact; each hands its trail on to the one around it
        fw.trails[-1].append((path, key))
    record(fw, ((path, key),))


def trail_key(fw, path: str | tuple) -> tuple | str | None:
    """A module's content key; for a lookup in a trail (`module_file`), the file it finds now."""
    if type(path) is tuple:
        return looked_up(fw, path[1], path[2])
    if path not in fw.content_keys:
        fw.content_keys[path] = file_keys.content_key(fw.project, path)
    return fw.content_keys[path]


def holds(fw, deps) -> bool:
    return fw.project is not None and all(trail_key(fw, path) == key for path, key in deps)


def shared_entry(fw, memo: dict, key, load: Callable[[tuple], tuple] | None = None) -> tuple | None:
    """The entry of a memo of facts shared across checks (value..., trail) while its trail
    holds; else the one an earlier run kept (`kept_answers`), if its trail holds now."""
    known = memo.get(key)
    if known is not None and holds(fw, known[-1]):
        return known
    name = MEMO_NAMES.get(id(memo))  # None: a memo put in its place (tests)
    kept = kept_answers.saved(name, key) if name is not None else None
    if kept is None or fw.project is None:
        return None
    project = fw.project
    trail = kept_answers.valid_trail(
        kept[-1],
        lambda path: trail_key(fw, path),
        lambda path, now: file_keys.digest(project, path, now),
        lambda module, root: looked_up(fw, module, root),
    )
    if trail is None:
        return None
    known = memo[key] = (*(load(kept[:-1]) if load is not None else kept[:-1]), trail)
    kept_answers.took(known)
    return known


def record(fw, deps) -> None:
    if fw.project is None or not file_keys.recording(fw.project):
        return
    # Modules and lookups (a module made where one found none, or ahead of the one found).
    new = tuple((p, k) for p, k in deps if (type(p) is str or p[0] == "find") and p not in fw.recorded)
    if new and fw.project is not None:
        fw.recorded.update(p for p, _ in new)
        file_keys.record_trail(fw.project, fw.own_path, new)


def replay(fw, deps) -> None:
    if fw.trails:
        fw.trails[-1].extend(deps)
    record(fw, deps)
