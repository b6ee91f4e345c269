"""The module lookups of QL101/QL102's packet gate (`packet_imports`, `packet_kinds`): where
`from <module> import name` finds the project's module, kept per import root for a run whose
files stay put, and each lookup recorded as part of what the answer resting on it was read
from (a module made later where it found none, or ahead of the one it found, changes it).
"""

from __future__ import annotations

import os

from qlint.analysis.graphs import kept_answers
from qlint.analysis.names.import_paths import lookup_root, tried_apart
from qlint.analysis.names.modules import import_root, module_name_for
from qlint.analysis.names.project import ProjectIndex

__all__ = ["find_module", "found_now"]


def find_module(project, module: str, requester: str, deps: list) -> str | None:
    """The file of the project's `module` as `requester` imports it, or None; the lookup, and
    the paths that may come to answer it, are appended to `deps`."""
    run = _run()
    root = run["roots"].get(requester)
    if root is None:
        root = run["roots"][requester] = import_root(requester)
    root = lookup_root(module, requester, root)
    key = (module, root)
    found = run["found"]
    if ProjectIndex.fixed_layout and key in found:
        where = found[key]
    else:
        # A run whose files stay put asks the listings first (`layout_lookups`): most modules
        # asked for are not the project's, found nowhere without a `stat`.
        where = project.find_module_in_check(module, requester)
        if ProjectIndex.fixed_layout:
            # Files under one import root find a module at the same place (`module_bases`).
            found[key] = where
    # The lookup is part of what a name's kind was read from: a module made later where it
    # found none, or ahead of the one it found, changes the answer (`packet_kinds._still_valid`).
    deps.append((("find", module, root), where))
    if ProjectIndex.wants_dependencies:  # a run without a cache keeps no answer for later
        # What `root` does not stand for: the requester's package directory, which may come to hold it.
        deps += ((path, None) for path in tried_apart(module, os.path.abspath(requester), root, where))
    if where is None:
        mine = run["names"].get(requester)
        if mine is None:
            mine = run["names"][requester] = module_name_for(requester) or ""
        if mine.split(".")[0] == module.split(".")[0]:
            # A module of this project that does not exist yet: creating it changes the answer.
            deps.append((os.path.join(root, *module.split(".")) + ".py", None))
    return where


def _run() -> dict:
    """What module lookups found, for the run (`ProjectIndex.layouts`) whose files stay put."""
    global _RUN
    if _RUN["layouts"] != ProjectIndex.layouts:
        _RUN = {"layouts": ProjectIndex.layouts, "found": {}, "roots": {}, "names": {}}
    return _RUN


_RUN: dict = {"layouts": -1}


def found_now(project, module: str, root: str) -> str | None:
    """`find_module`'s lookup of `module` from the import root `root`, as a trail re-checks it."""
    found = _run()["found"]
    key = (module, root)
    if ProjectIndex.fixed_layout and key in found:
        return found[key]
    where = project.find_module_in_check(module, kept_answers.root_requester(root))
    if ProjectIndex.fixed_layout:
        found[key] = where
    return where
