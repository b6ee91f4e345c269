"""QL204's function summaries (`calibration.Calibration`), carried from a module's last check
to the next (the language server re-checks a module after every keystroke; issue 13).

A summary is worked out once per check and memoised by function; a helper asked for deeper
than `calibration._MAX_DEPTH` calls below the function being summarised is not summarised
(None), and a helper whose summary is still being worked out (recursion) is opaque (None).
Both make some summaries depend on the order the check met things in: `f` summarised first
at depth 3 sees its helpers' helpers as opaque, summarised first at depth 0 it does not, and
a memoised summary is handed out at any depth. A summary is *stable* when no such answer
entered it: every helper it asked for (and theirs) was summarised below the limit, from any
depth it was asked at, and none was in progress but its own body (a body calling itself
sees itself opaque from anywhere). Its `height` is how many calls deep its helpers went.

A stable summary is what any order of the same check computes for that function when it is
asked for at a depth `d` with `d + height <= _MAX_DEPTH`: each helper it asks for is then
stable too and gets the same answer whether memoised or summarised there. So a summary kept
from the last check is taken when, and only when:

- the edit changed one function's body and nothing else (`statement_reuse.confined_edit`:
  every other function is the node it was, the module scope is the same object brought up to
  date), and that body is not among the functions it was worked out from (`reach`: its own
  and every helper's, through memoised ones too);
- it is asked for at a depth its height fits under, and none of those functions is in
  progress now or memoised unstable in this check (a fresh analysis would have met that);
- every module lookup made on the way (`lookups`: module name and requesting file to scope,
  through helpers of helpers) finds the very same scope object now: the project index keeps
  one scope per module content, so a module edited, created ahead of the one found (a new
  `pkg/x.py` before `pkg/x/__init__.py`) or removed gives another answer.

It is then installed with the summaries of its `reach`, as a fresh analysis would memoise
them; unstable summaries are worked out again, in the order of the check, as before.

A command-line run carries summaries from one file's check to the next the same way
(`run_carry`): no module changes while it checks (`ProjectIndex.fixed_content` and
`fixed_layout`), the project index keeps one scope per module, whose functions are parsed once
(the same nodes for every check), so a stable summary of another module's function is what
the next check that asks for it would work out. Only those are kept: functions of the file
checked (a new tree at each check) are not, nor a summary worked out from one of them. On
ExecuTorch (-j1) QL204 walked 1,198 bodies, 254 of them walked before by another check.
"""

from __future__ import annotations

import ast
import os

_MISSING = object()


class Kept:
    """A stable summary of `func` and what it was worked out from."""

    __slots__ = ("func", "height", "home", "lookups", "reach", "summary")

    def __init__(self, func: ast.AST, summary, height: int, reach: frozenset[int], lookups: dict) -> None:
        self.func, self.summary, self.height, self.reach, self.lookups = func, summary, height, reach, lookups
        self.home = None  # in a run's pool: the scope the project index held for func's module


class _Frame:
    __slots__ = ("height", "key", "lookups", "reach", "stable")

    def __init__(self, key: int) -> None:
        self.key = key
        self.stable = True
        self.height = 0
        self.reach: set[int] = set()
        self.lookups: dict = {}


class Lookups:
    """The project index as the analysis sees it: every module lookup is written down for the
    summary being worked out (`module_scope` is the one way the analysis reaches another module)."""

    def __init__(self, project, frames: list[_Frame]) -> None:
        self._project = project
        self._frames = frames

    def module_scope(self, module: str, requester: str):
        scope = self._project.module_scope(module, requester)
        if self._frames:
            self._frames[-1].lookups[(module, requester)] = scope
        return scope

    def __getattr__(self, name: str):
        return getattr(self._project, name)


class Ledger:
    """The summaries being worked out in one check, which are stable, and the carry."""

    def __init__(self, project, max_depth: int, carry=None) -> None:
        self.project = project
        self.max_depth = max_depth
        self.frames: list[_Frame] = []
        self.kept: dict[int, Kept] = {}  # key -> this check's stable summaries
        self.unstable: set[int] = set()
        self._last: dict[int, Kept] = carry.last_of("calibration") if carry is not None else {}
        self._next: dict[int, Kept] | None = carry.next_of("calibration") if carry is not None else None
        self._changed = carry.changed_bodies() if carry is not None else ()
        self._found: dict[tuple[str, str], object] = {}

    # -- what the summary being worked out met ------------------------------------------
    def unsettled(self) -> None:
        """An answer that depends on the order of the check entered it."""
        if self.frames:
            self.frames[-1].stable = False

    def met(self, key: int, found, depth: int) -> None:
        """A memoised answer (`found`, None while in progress) for a request at `depth`."""
        if not self.frames:
            return
        frame = self.frames[-1]
        if found is None:
            if frame.key != key:
                frame.stable = False
            return
        kept = self.kept.get(key)
        if kept is None or depth + kept.height > self.max_depth:
            frame.stable = False
            return
        frame.height = max(frame.height, kept.height + 1)
        frame.reach.add(key)
        frame.reach |= kept.reach
        frame.lookups.update(kept.lookups)

    def push(self, key: int) -> None:
        self.frames.append(_Frame(key))

    def pop(self, func: ast.AST, summary) -> None:
        frame = self.frames.pop()
        if not frame.stable or summary is None:
            self.unstable.add(frame.key)
            self.unsettled()
            return
        kept = Kept(func, summary, frame.height, frozenset(frame.reach), frame.lookups)
        self._keep(frame.key, kept)
        if self.frames:
            parent = self.frames[-1]
            parent.height = max(parent.height, kept.height + 1)
            parent.reach.add(frame.key)
            parent.reach |= kept.reach
            parent.lookups.update(kept.lookups)

    def _keep(self, key: int, kept: Kept) -> None:
        self.kept[key] = kept
        if self._next is not None and not isinstance(kept.func, ast.Module):  # a module's tree is new each check
            self._next[key] = kept

    # -- the last check's summaries ------------------------------------------------------
    def take(self, key: int, func: ast.AST, depth: int, memo: dict) -> bool:
        """Install the last check's summary of `func` (and those it was worked out from) in
        `memo` if it is what working it out now would give (see the module's docstring)."""
        kept = self._last.get(key)
        if kept is None or kept.func is not func or depth + kept.height > self.max_depth:
            return False
        reach = kept.reach
        if any(id(body) in reach for body in self._changed):
            return False
        last = self._last
        for member in reach:
            now = memo.get(member, _MISSING)
            if now is None or (now is not _MISSING and member not in self.kept) or member not in last:
                return False
        found = self._found
        for question, scope in kept.lookups.items():
            answer = found.get(question, _MISSING)
            if answer is _MISSING:
                answer = found[question] = self.project.module_scope(*question)
            if answer is not scope:
                return False
        for member in reach:
            if member not in memo:
                memo[member] = last[member].summary
                self._keep(member, last[member])
        memo[key] = kept.summary
        self._keep(key, kept)
        return True


class _RunCarry:
    """The carry of one check in a command-line run: the run's kept summaries (`pool`), and
    where this check keeps the ones the next checks may take."""

    def __init__(self, pool: dict, checked: str, project=None) -> None:
        self._pool = pool
        self._checked = checked
        self._project = project

    def last_of(self, name: str) -> dict:
        return self._pool if name == "calibration" else {}

    def next_of(self, name: str) -> _RunKeeps:
        return _RunKeeps(self._pool, self._checked, self._project)

    def changed_bodies(self) -> tuple:
        return ()


class _RunKeeps:
    """`Ledger._keep`'s target in a run: a summary of another module's function, worked out
    from such summaries only (their nodes live as long as the run's scopes, so their ids name
    them for the whole run), goes to the pool."""

    def __init__(self, pool: dict, checked: str, project=None) -> None:
        self._pool = pool
        self._checked = checked
        self._project = project

    def __setitem__(self, key: int, kept: Kept) -> None:
        pool = self._pool
        home = os.path.abspath(kept.summary.path)
        if key in pool or home == self._checked:
            return
        if all(member in pool for member in kept.reach):
            held = getattr(self._project, "held_scope", None)
            kept.home = held(home) if held is not None else None
            pool[key] = kept


# (the run: project index and layout count, its pool, the index's count of set-asides when pruned)
_RUN: list = [None, {}, 0]


def run_carry(project, path: str) -> _RunCarry | None:
    """The carry of a command-line run's check of `path`, None elsewhere (modules may change)."""
    cls = type(project)
    if not (getattr(cls, "fixed_content", False) and getattr(cls, "fixed_layout", False)):
        return None
    if getattr(project, "overlay", True):
        return None
    run = (id(project), getattr(cls, "layouts", None))
    aside = getattr(project, "set_aside", None)
    asides = aside.count if aside is not None else 0
    if _RUN[0] != run:
        _RUN[0], _RUN[1], _RUN[2] = run, {}, asides
    elif asides != _RUN[2]:
        _RUN[2] = asides
        _prune(_RUN[1], project)
    return _RunCarry(_RUN[1], os.path.abspath(path), project)


def _prune(pool: dict, project) -> None:
    """Drop the summaries worked out from a module the project index has set aside since
    (`set_asides`). Kept, they held its old scope, with the statements parsed and
    the flows analysed on it, for the rest of the run, which the set-aside was meant to free:
    ExecuTorch (-j1) ended with 300 such scopes, 70 MB of live objects instead of 32. A lookup's
    scope set aside means the summary can never be taken (the module is rebuilt as a new scope
    object, `take` compares them); a function's own module set aside means it can be taken only
    if the rebuilt scope serves the very same node, from a whole tree of the module another
    reader still holds (`live_trees`): seldom (ExecuTorch -j1 walks the same 1,030 bodies with
    and without these), and then the body is walked again, as before the carry."""
    held = project.held_scope
    stale = {
        key
        for key, kept in pool.items()
        if (kept.home is not None and held(kept.home.path) is not kept.home)
        or any(scope is not None and held(scope.path) is not scope for scope in kept.lookups.values())
    }
    if stale:
        # A summary worked out from a dropped one is taken only with it (`take`: `reach`).
        stale.update(key for key, kept in pool.items() if not stale.isdisjoint(kept.reach))
        for key in stale:
            del pool[key]


__all__ = ["Kept", "Ledger", "Lookups", "run_carry"]
