"""Model flows of the checked module's functions, carried from its last check to the next.

An editor re-checks a module after every keystroke, and a keystroke changes one function's
body. The flows of the other functions are what they were when nothing they read changed. A
flow is carried when all of these hold (each is what makes it equal to a new analysis):

- the edit changed one function's body and nothing else (`statement_reuse.confined_edit`):
  every other statement, the module's scope and its classes' headers are the last check's
  objects, so the function is the very node it was, and the scope is brought up to date in
  place (`statement_reuse.update_scope`), the one object the flows refer to;
- its analysis read nothing of the module outside its own body but the module's and its
  classes' names, imports and assignments: no function, method or class node taken from the
  scope (`_Watched` reports any, and the frames of the analyses under way are marked, as
  `shared_flows.Tracker` marks order dependence), so the changed body cannot be among them;
- what it read of other modules is unchanged and the class index answers alike
  (`Tracker.carried`, as for other modules' helpers).

It then gets a resolver on the updated scope (the one a new analysis would make). A function
written in another function, or a method of a class written there, reads its surroundings in
ways the scope does not show: it is carried only when it does not stand in the function the
edit changed (`nested_carry`).
"""

from __future__ import annotations

from qlint.analysis.names.scope import ModuleScope, WatchedClassScope
from qlint.analysis.names.watched_scopes import watch_class, watched_table


class _Hook:
    """The tracker of the check under way: the one whose frames a read marks."""

    __slots__ = ("tracker",)

    def __init__(self) -> None:
        self.tracker = None

    def read(self, body=None) -> None:
        """`body` (a function or class node) was taken; None: bodies that cannot be named."""
        tracker = self.tracker
        if tracker is not None and tracker.frames:
            tracker.outside_read(body)


def watch(scope: ModuleScope, tracker) -> None:
    """Report to `tracker` every read of `scope`'s bodies from now on (once per scope object;
    a scope kept across checks is handed the new check's tracker)."""
    hook = getattr(scope.functions, "hook", None)
    if hook is None:
        hook = _Hook()
        for cls in dict.values(scope.classes):
            watch_class(cls, hook)
        scope.functions = watched_table(scope.functions, hook)
        scope.classes = watched_table(scope.classes, hook)
    hook.tracker = tracker


def watched_class(class_scope) -> bool:
    return class_scope is None or type(class_scope) is WatchedClassScope


__all__ = ["watch", "watched_class"]
