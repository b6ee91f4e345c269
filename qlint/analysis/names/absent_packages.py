"""Imports of packages the project does not hold (`os`, `typing`, `re` in most files), told
apart before the helper search reads a file's imports one by one.

`Forwarding.imports_helper` (QL101's and QL102's import triggers) asks, for each name a file
imports, whether the text calls it, calls a path on it (`gu.insert_op(...)`), builds it or
subclasses it: each a search of the whole text for the name, and a memo of the name's answer
to validate. Over the installed torch (no wrapper index: its import root is all of
site-packages) that was ~0.25 s of a cold run, most of it for names of the standard library.
Every way to a helper from an import `full` looks up a module whose dotted name starts with
`full`'s first part, and finds none where no import root can hold that package
(`layout_lookups.holds_none_under`): such an import leads nowhere, and is left out before
any search.

Only in a run whose files stay put (`ProjectIndex.fixed_layout`), where lookups are answered
from the same listings (no overlay, no watcher). Not for the requester's own top-level
package, whose absent modules a lookup records as dependencies (a module created later).
"""

from __future__ import annotations

from qlint.analysis.names import layout_lookups
from qlint.analysis.names.import_paths import module_roots
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.project import ProjectIndex

# (the run: `ProjectIndex.layouts`, roots -> top-level name -> whether no root holds it,
# requester -> the first part of its module's name: both import triggers ask of a file)
_RUN: tuple[int, dict[tuple, dict[str, bool]], dict[str, str]] = (-1, {}, {})


def project_imports(project, imports: list[tuple[str, str]], requester: str) -> list[tuple[str, str]]:
    """`imports` (local name, dotted name) without those of packages no module lookup from
    `requester` can find in this run (all of them outside such a run)."""
    if not ProjectIndex.fixed_layout or project.overlay or getattr(project, "watched", None) is not None:
        return imports
    global _RUN
    run = ProjectIndex.layouts
    if _RUN[0] != run:
        _RUN = (run, {}, {})
    roots = module_roots(requester)
    absent = _RUN[1].get(roots)
    if absent is None:
        absent = _RUN[1][roots] = {}
    kept: list[tuple[str, str]] | None = None
    own: str | None = None
    for i, (name, full) in enumerate(imports):
        top = full.partition(".")[0]
        none = absent.get(top)
        if none is None:
            none = absent[top] = layout_lookups.holds_none_under(top, roots, run)
        if none:
            if own is None:
                own = _own_package(requester)
            none = top != own
        if none:
            if kept is None:
                kept = imports[:i]
        elif kept is not None:
            kept.append((name, full))
    return imports if kept is None else kept


def _own_package(requester: str) -> str:
    owners = _RUN[2]
    own = owners.get(requester)
    if own is None:
        if len(owners) > 100_000:
            owners.clear()
        own = owners[requester] = (module_name_for(requester) or "").partition(".")[0]
    return own
