"""Whether a class derives from `torch.nn` module classes, through bases of other project
modules (QL201/QL202; issue 14, items 2-4): the gate on reading a factory that builds a class
imported from another module (`factory_methods`) and on `cls(...)` of a class whose base is
imported (`class_constructors`).

Each module says what it can of its classes (`nn_bases.local_bases`, kept in its summary with
the classes' mode facts, `class_facts`): a `torch.nn` base, or the dotted names of the bases it
imports. A name is looked up as the class of a project module (`ClassIndex.project_class`:
the summary's names, nothing parsed) and asked the same, a few levels up. Exact rather than
eager: a base of an installed library (`transformers.PreTrainedModel`), a name no project
module defines as a class (a re-export, a function's result), a class written in a function,
a circle of imports or a chain past `_DEPTH` is not known to be a module, and the answer is
no: the factory stays unread, its model unknown, the capture quiet. Reading every such
factory cost ExecuTorch's cold run +1.2% instructions (`factory_methods`): configs' and
stages' `from_dict`, analyzers returning report dataclasses, which this keeps unread.
"""

from __future__ import annotations

from qlint.analysis.flow.class_facts import summarised_bases
from qlint.analysis.flow.nn_bases import local_bases
from qlint.analysis.flow.resolved_classes import ModelClass

_DEPTH = 6  # classes of other modules up a chain of bases


def derives_from_nn(index, cls: ModelClass) -> bool:
    """`cls` derives from `torch.nn` module classes, by its module's text or through bases of
    other project modules (`index`: the check's `ClassIndex`, which finds them)."""
    return _derives(index, cls, set(), 0)


def named_nn_class(index, name: str) -> bool:
    """The project class of dotted name `name` (`pkg.nets.Net`) derives from `torch.nn`."""
    return _named(index, name, set(), 0)


def imported_nn_class(index, names) -> bool:
    """One of the project classes of dotted names `names` derives from `torch.nn`."""
    seen: set = set()
    return index is not None and any(_named(index, name, seen, 0) for name in names)


def _named(index, name: str, seen: set, depth: int) -> bool:
    if depth > _DEPTH or name in seen:
        return False  # a circle of imports, or past the levels read
    seen.add(name)
    cls = index.project_class(name)
    return cls is not None and _derives(index, cls, seen, depth + 1)


def _derives(index, cls: ModelClass, seen: set, depth: int) -> bool:
    if cls.around is not None:
        return False  # a class written in a function: not read so
    if cls.summarised:
        bases = summarised_bases(cls)
    else:
        top = cls.scope.classes.get(cls.name)
        bases = local_bases(cls.scope, top) if top is not None and top.node is cls.node else None
    if bases is None or bases is True:
        return bases is True
    return index is not None and any(_named(index, name, seen, depth) for name in bases)


__all__ = ["derives_from_nn", "imported_nn_class", "named_nn_class"]
