"""Model flows of other modules' helpers, kept across the checks of one process.

Every file that calls `backends/qualcomm/utils/utils.py`'s helpers had them interpreted again
(ExecuTorch: 1,455 analyses of 329 helper bodies for 169 files). A helper's flow is the same
for every caller when its analysis did not depend on where it started, so it is analysed
once per module content and reused. Kept on the module's scope (the project index holds one
scope per content, so an edited module's flows go with its old scope), each with what it read:

- `reads`: (path, sha256) of every module the analysis looked up, through helpers of helpers:
  compared before reuse, so an edit anywhere it looked refreshes it (the language server);
- `lookups`: the answers of the class index that depend on the file checked (where project
  modules are found from, `model_classes.ClassIndex.log`): asked again of the new check's
  index, which makes them its dependencies, and reused only if every answer is the same.

A flow is not kept when its analysis depended on the order the check met things in: it met a
body still in progress (recursion through another body), or a flow that was itself not kept
(`Tracker.taint`). Those are analysed again by each check, as before. Nothing else may make a
flow depend on where its analysis started: a kept flow is reused wherever the next check meets
it (`module_analysis.ModelFlow.for_module` follows modules at any depth for that reason).

A body whose analysis asks the class index something the file checked decides (`utils`, found
beside ExecuTorch's examples/qualcomm scripts and nowhere from backends/qualcomm) keeps one
flow per set of answers, up to `_VARIANTS`: with one, the checks of export_utils.py's callers,
alternating between the two directories, analysed `to_edge_transform_and_lower_to_qnn` again
at each turn (13 times in one check). The flow kept last is tried first.

Whether a module is the one whose callers the analysis reads (`module_analysis._Memo.follow`,
`project_callers`) is one of those answers (`ClassIndex.followed`): that module's classes'
methods and constructions are read where they are used then, and not in a check of its own.
A flow kept by a caller search was reused, when kept last, by any check: `qlint check
helper.py` alone and after a check of a script calling the same helper of a third module
disagreed, whichever was analysed first (`test_shared_flows`).

Why on the scope, and only for other modules' bodies (stop 51, ExecuTorch, -j1: 368 of ~2,950
body analyses repeat an earlier one, ~0.3 s of ~11 s CPU). 159 are of a module set aside
(`set_asides`) and parsed again: new nodes. Never setting modules aside leaves 133
repeats but max RSS goes 117 -> 307 MB. About 185 are of the same node met on another scope
(the checked module's own, or one rebuilt after a set-aside). Keeping flows on the node, the
checked module's too, took 139 of them (`--select QL201,QL202`: 33,011 -> 32,486 M
instructions, -1.6%; the whole tree: 63,564 -> 63,525 M, -0.06%), but a flow kept on its node
refers back to it (node -> flow -> resolver -> scope -> node): checked files' trees were left
to the cyclic collector (1.47 million objects collected against 641) and peak RSS (-j2) went 97
-> 157 MB, above ruff's. Released with the index's scope (`let_go`, or when its check ends if
the index holds none), it took 50 of them (~0.4%) at +24% RSS.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.function_flows import FunctionFlow
from qlint.analysis.names.body_reads import BODY_READ
from qlint.analysis.names.scope import KEPT_FLOWS
from qlint.value_classes import value_class

_KEY = KEPT_FLOWS  # in the scope's `__dict__`, as the resolver keeps its star sources
_VARIANTS = 4  # flows kept per body, for as many sets of answers of the class index


@value_class(frozen=True)
class Shared:
    func: ast.AST
    class_scope: object
    flow: FunctionFlow
    reads: tuple[tuple[str, str], ...]
    lookups: tuple
    # The project index's check it was analysed in (`ProjectIndex.checks`): one of an earlier
    # check read the module checked now before its bodies were watched (`body_reads`).
    check: int | None = None


class _Frame:
    __slots__ = ("bodies", "contained", "kept", "key", "lookups", "reads")

    def __init__(self, key, reads: int, lookups: int):
        self.key = key  # the body's key in `module_analysis._Memo.functions`
        self.kept = True
        # The functions and classes of the checked module it read besides its own body
        # (`carried_flows`); `contained` is False when it read ones it cannot name (all of them).
        self.bodies: list = []
        self.contained = True
        self.reads = reads  # where its slice of the logs starts
        self.lookups = lookups


class Tracker:
    """The analyses in progress in one check (one `module_analysis._Memo`), and what each read."""

    def __init__(self, project, classes):
        self.project = project
        self.classes = classes
        self.frames: list[_Frame] = []
        self.reads: list[tuple[str, str]] = []
        self.lookups: list = []
        # Memo key -> (reads, lookups) of flows analysed or reused in this check and kept:
        # a body that uses one of them read what it read. Keys are `model_flow`'s memo keys
        # (the function's id): whatever that key holds besides the function, the kept flows do too.
        self.deps: dict[int, tuple[tuple, tuple]] = {}
        self.untaken: set[int] = set()  # flows of this check that are not kept
        self.uncontained: set[int] = set()  # flows of this check that read bodies of its module unnamed
        self.bodies: dict[int, tuple] = {}  # key -> the bodies of its module a flow of this check read
        self._digests: dict[str, str] = {}
        self._saved: tuple = (None, None)
        # Told everything each analysis read, when it ends (a caller module kept across
        # checks, `caller_modules`, collects what its analyses depend on).
        self.sink = None
        # The check each kept flow reused was analysed in, while a verdict kept between runs
        # records what it read (`kept_caller_verdicts`): one of an earlier check, analysed
        # before the checked module's bodies were watched, read them unnamed.
        self.reused: list | None = None

    # -- frames ----------------------------------------------------------------------
    def push(self, key) -> None:
        if not self.frames:
            self._saved = (getattr(self.project, "reads", None), self.classes.log)
            if hasattr(self.project, "reads"):
                self.project.reads = self.reads
            self.classes.log = self.lookups
        self.frames.append(_Frame(key, len(self.reads), len(self.lookups)))

    def pop(self, flow: FunctionFlow | None) -> tuple[tuple, tuple] | None:
        """The reads and lookups of the body analysed last, or None when it cannot be kept."""
        frame = self.frames.pop()
        if not frame.contained:
            self.uncontained.add(frame.key)
        else:
            self.bodies[frame.key] = tuple({id(b): b for b in frame.bodies}.values())
        deps = None
        if frame.kept and flow is not None:
            deps = (
                tuple(dict.fromkeys(self.reads[frame.reads :])),
                _unique(self.lookups[frame.lookups :]),
            )
            self.deps[frame.key] = deps
        else:
            self.untaken.add(frame.key)
            if self.frames:
                self.frames[-1].kept = False
        if not self.frames:
            if self.sink is not None:
                self.sink(self.reads)
            if hasattr(self.project, "reads"):
                self.project.reads = self._saved[0]
            self.classes.log = self._saved[1]
            self._depend(self.reads)
            self.reads.clear()
            self.lookups.clear()
        return deps

    def _depend(self, reads) -> None:
        """What the analyses read is a dependency of the check (its results cache entry): a
        module looked up from another module's analysis (`Child(Base)` with `Base` in a third
        module) was recorded for that module, not for the file checked."""
        record = getattr(self.project, "record_flow_reads", None)
        if record is not None and reads:
            record(self.classes.requester, reads)

    def taint(self) -> None:
        """The body analysed now depends on the order things were met in."""
        if self.frames:
            self.frames[-1].kept = False

    def in_progress(self, key) -> None:
        """The body of `key` is analysed further up: every body from it to here saw it unfinished."""
        for i in range(len(self.frames) - 1, -1, -1):
            if self.frames[i].key == key:
                if i < len(self.frames) - 1:  # a body calling itself is the same from anywhere
                    for frame in self.frames[i:]:
                        frame.kept = False
                return
        self.taint()

    def outside_read(self, body=None) -> None:
        """The bodies analysed now read `body`, a function or class of the checked module
        (None: bodies they cannot name)."""
        for frame in self.frames:
            if body is None:
                frame.contained = False
            else:
                frame.bodies.append(body)

    def read_bodies(self, key) -> tuple | None:
        """The bodies of its module the flow of `key` read (None: any)."""
        return None if key in self.uncontained else self.bodies.get(key, ())

    def used(self, key) -> None:
        """A flow of this check is used by the body analysed now."""
        if self.frames:
            read = self.read_bodies(key)
            if read is None:
                self.outside_read()
            else:
                for body in read:
                    self.outside_read(body)
        if key in self.untaken:
            self.taint()
        elif self.frames and key in self.deps:
            reads, lookups = self.deps[key]
            self.reads.extend(reads)
            self.lookups.extend(lookups)

    # -- kept flows ------------------------------------------------------------------
    def reuse(self, scope, key, func: ast.AST, class_scope) -> FunctionFlow | None:
        """A flow kept from an earlier check, if what it read is unchanged and the class
        index answers alike from here."""
        for shared in scope.__dict__.get(_KEY, {}).get(key, ()):
            if self._holds(shared, func, class_scope):
                if self.reused is not None:
                    self.reused.append(shared.check)
                self.deps[key] = (shared.reads, shared.lookups)
                if self.frames:
                    self.reads.extend(shared.reads)
                    self.lookups.extend(shared.lookups)
                else:
                    # Reused by no analysis in progress: what it read goes to the sink as a
                    # frame's reads do (a caller's analysis kept, `caller_modules`,
                    # `kept_caller_verdicts`, depends on it as much).
                    if self.sink is not None:
                        self.sink(shared.reads)
                    self._depend(shared.reads)
                return shared.flow
        return None

    def _holds(self, shared: Shared, func: ast.AST, class_scope) -> bool:
        if shared.func is not func or shared.class_scope is not class_scope:
            return False
        if not self._same(shared.reads):
            return False
        log, self.classes.log = self.classes.log, None  # the answers are added by the caller, once
        try:
            return self.classes.replay(shared.lookups)
        finally:
            self.classes.log = log

    def carried(self, key, deps: tuple[tuple, tuple], bodies: tuple) -> bool:
        """A flow of the checked module kept from its last check (`carried_flows`) may be
        used if what it read of other modules is unchanged and the class index answers alike."""
        reads, lookups = deps
        if not self._same(reads):
            return False
        log, self.classes.log = self.classes.log, None
        try:
            same = self.classes.replay(lookups)
        finally:
            self.classes.log = log
        if not same:
            return False
        self.deps[key] = deps
        self.bodies[key] = bodies
        if self.frames:
            self.reads.extend(reads)
            self.lookups.extend(lookups)
            for body in bodies:
                self.outside_read(body)
        else:
            self._depend(reads)
        return True

    def keep(self, scope, key, func: ast.AST, class_scope, flow: FunctionFlow, deps: tuple[tuple, tuple]) -> None:
        kept = scope.__dict__.setdefault(_KEY, {})
        # The one made last first; the others for the answers they were made with, while they
        # hold the same body.
        older = tuple(s for s in kept.get(key, ()) if s.func is func and s.class_scope is class_scope)
        check = getattr(self.project, "checks", None)
        kept[key] = (Shared(func, class_scope, flow, *deps, check), *older[: _VARIANTS - 1])

    def _same(self, reads) -> bool:
        """Every module read has the content it had (a body of the checked module read, which
        its digest covers, is no module: `caller_modules` reads those)."""
        return all(path == BODY_READ or self._digest(path) == digest for path, digest in reads)

    def renew(self) -> None:
        """The analysis serves another check: modules may have changed since their digests were taken."""
        self._digests.clear()

    def _digest(self, path: str) -> str:
        known = self._digests.get(path)
        if known is None:
            digest = getattr(self.project, "digest", None)
            known = self._digests[path] = digest(path) if digest is not None else ""
        return known


def _unique(lookups: list) -> tuple:
    """One entry per question (the answers of one check agree)."""
    return tuple({(kind, question): (kind, question, answer) for kind, question, answer in lookups}.values())


__all__ = ["Shared", "Tracker"]
