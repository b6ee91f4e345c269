"""Which bodies of the checked module an analysis read: a function or class taken from the
scope other modules' analyses see of it, recorded among the reads of the analysis kept across
checks (`ProjectIndex.reads`), so that an edit of a body it did not read leaves it valid.
"""

from __future__ import annotations

import weakref

from qlint.analysis.names.scope import ClassScope, ModuleScope
from qlint.analysis.names.watched_scopes import watch_class

# In `ProjectIndex.reads`, (BODY_READ, node): a function or class of the checked module was
# taken from the scope other modules' analyses see of it (`watch_bodies`). Not a file: what
# compares reads' digests passes over it (`shared_flows`).
BODY_READ = "\0body read"


def watch_module_bodies(index, scope: ModuleScope | None) -> None:
    """Every function or method taken from `scope` (the checked module, as other modules'
    analyses see it), and every class node, while an analysis records its reads is one of
    them (`BODY_READ`): an analysis of a caller kept across the checked module's edits
    (`caller_modules`) is still right after an edit of a body it did not read. As for
    the checked module's own flows (`carried_flows`), taking a class reads no body by
    itself; taking its node or all its methods at once (None: bodies unnamed) does."""
    for table in (getattr(scope, "functions", None), getattr(scope, "classes", None)):
        if hasattr(table, "watch") and table.watch is None:
            table.watch = index.body_reads.taken


class BodyReads:
    """Tells the analysis recording its reads (`ProjectIndex.reads`) of a body of the checked
    module taken (`watch_module_bodies`)."""

    __slots__ = ("project",)

    def __init__(self, project: weakref.ref):
        self.project = project

    def taken(self, value) -> None:
        """A function, or a class (whose node and methods are then watched), was taken."""
        if isinstance(value, ClassScope):
            watch_class(value, self)
        else:
            self.read(value)

    def read(self, body=None) -> None:
        project = self.project()
        reads = project.reads if project is not None else None
        if reads is not None:
            reads.append((BODY_READ, body))
