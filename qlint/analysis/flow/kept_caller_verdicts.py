"""What one caller module passes a helper of the checked module, judged, kept between runs.

A helper that captures its parameter is vouched for by its callers (`caller_verdicts`): each
module calling it is parsed, the functions making the calls are analysed and what each call
passes is judged. ExecuTorch's backends/qualcomm/tests/utils.py has its `get_qdq_module`
called 532 times from test_qnn_delegate.py (465 KB): a fresh process checking utils.py after
an edit parsed that module and analysed 261 of its functions again (~1 s), although the edit
changed nothing they read.

A caller module whose every call passes a harmless model, read the plain way (no call handed
on to its own callers, no registry's dispatch, no `self.model` stored by a constructor: what
those read is not all recorded here), is kept (`kept_answers`, table `caller-verdicts-1`,
written by whole-tree runs too: `small`) as the number of such calls, with:

- the trail of files its reading recorded (`ProjectIndex.reads`, and what its model flows
  read, `shared_flows.Tracker.sink`): the caller module first, each with its stat, hash and
  dotted name, as `kept_module_facts` keeps a module fact; a later run takes the verdict only
  while every one of them has that content;
- the checked module, which is being edited, not by its hash: its text with the body of every
  function and method masked (newlines kept: every line stays where it was), and the text
  and position of each function, method or class of it that the analyses took
  (`body_reads.BODY_READ`), as `caller_modules` keeps a caller's analysis across keystrokes
  in an editor. Anything else read of it (its names, imports, signatures, class headers,
  decorators, comments outside bodies) is in the masked text, so any edit outside the bodies
  not taken makes the verdict worked out again.

Not kept: a verdict that read anything but files and bodies it can name (a listing of the
project, a body taken unnamed), one whose caller module was analysed before the recording
began (what that analysis read was not seen) unless every reading of it since it was built
was recorded (`caller_modules.Kept.recorded`: QL202's search after QL201's verdicts), or one
read from an unsaved buffer of another module (`kept_answers` writes no trail holding one).

A check taking them reads none of those modules; QL202, which asks the same caller modules
for its own search (`call_paths`), keeps its answers on them the same way (`kept_qat_callers`).
"""

from __future__ import annotations

import ast
import contextlib
import os
from collections.abc import Iterator

from qlint.analysis.flow import caller_modules
from qlint.analysis.graphs import file_keys, kept_answers, kept_module_facts
from qlint.analysis.names.body_reads import BODY_READ
from qlint.short_digests import content_sha256_hex
from qlint.source import lf_row_bytes

# (checked module, helper, parameter, name searched, kind, caller module) -> (calls, shape, trail)
_KEPT: dict[tuple, tuple] = {}
# A whole-tree run writes these too: the first check of one edited helper module after it takes them.
kept_answers.register("caller-verdicts-1", _KEPT, lambda key, entry: entry[:-1], small=True)
_NAME = "caller-verdicts-1"
_SHAPE = "kept_caller_verdicts.shape"  # on the checked module's context: its masked text and bodies


class Verdicts:
    """The kept verdicts of the callers of one helper's parameter `index`, for the check of
    `ctx` (the helper searched for as `asked` says)."""

    __slots__ = ("_flow_reads", "_reads", "_sink", "_tainted", "_vouched", "ctx", "index", "key", "memo", "table")

    def __init__(self, ctx, index, kept: tuple[str, dict] | None = None):
        self.ctx = ctx
        self.index = index
        # The table the verdicts are kept in and its memo: QL201's, or another consumer's
        # (`kept_qat_callers`: `index` then says what it asks of each caller module).
        self.table, self.memo = kept or (_NAME, _KEPT)
        self.key: tuple | None = None
        self._reads: list | None = None  # what the index recorded while the module is read
        self._flow_reads: list = []  # what its model flows read (`shared_flows.Tracker.sink`)
        self._sink: tuple | None = None  # (tracker, its sink and reused before, the one recording)
        self._tainted = False
        self._vouched = 0  # calls of the module read now found to pass harmless models

    def asked(self, target: str, word: str, method: str) -> None:
        """The helper is `target` (`project_callers`), searched under `word`, of kind `method`."""
        self.key = (os.path.abspath(self.ctx.path), target, self.index, word, method)

    def taken(self, path: str, key: tuple | None) -> int | None:
        """How many calls of the module at `path` (content `key`) pass harmless models, the
        others never running, as an earlier run judged them while everything read holds; None
        otherwise."""
        if self.key is None or not _keeps(key):
            return None
        saved = kept_answers.saved(self.table, (*self.key, path))
        if saved is None or len(saved) != 3 or not isinstance(saved[0], int) or saved[0] <= 0:
            return None
        project = self.ctx.project
        trail = kept_answers.valid_trail(
            saved[-1],
            lambda p: file_keys.content_key(project, p),
            lambda p, now: file_keys.digest(project, p, now),
            lambda module, root: None,  # none is written: a trail holding one is not taken
        )
        if not trail or trail[0] != (path, key) or any(type(p) is tuple for p, _ in trail):
            return None
        if saved[1] != _shape_now(self.ctx, saved[1]):
            return None
        entry = self.memo[(*self.key, path)] = (saved[0], saved[1], trail)
        kept_answers.took(entry)
        # What the verdict read is what this check's answer depends on, as when it is worked out.
        file_keys.record(project, self.ctx.path, trail)
        return saved[0]

    @contextlib.contextmanager
    def recording(self, path: str, key: tuple | None) -> Iterator[None]:
        """While inside, the calls of the module at `path` are read (`watch` when its analysis
        is built) and judged; `judged` then keeps the verdict with what was read meanwhile."""
        self._reads = None
        self._flow_reads = []
        self._tainted = False
        self._vouched = 0
        if self.key is None or not _keeps(key) or not kept_answers.writing(self.table):
            yield
            return
        project = self.ctx.project
        reads: list = []
        outer = project.reads
        project.reads = reads
        index = type(project)
        wanted = index.wants_dependencies
        index.wants_dependencies = True  # every read recorded, also answers memos reuse
        self._reads = reads
        try:
            yield
        finally:
            if self._sink is not None:
                tracker, sink, seen, reused, kept = self._sink
                # What every recording of the module read, for the next one in this check.
                checks = getattr(project, "checks", None)
                earlier = any(check != checks for check in tracker.reused)
                kept.recorded = (checks, (*reads, *self._flow_reads), earlier)
                caller_modules.WATCHED.discard(id(kept))
                if tracker.sink is seen:
                    tracker.sink = sink
                tracker.reused = reused
                self._sink = None
            index.wants_dependencies = wanted
            project.reads = outer
            if outer is not None:
                outer.extend(reads)
            self._reads = None

    def watch(self, module_of) -> None:
        """`module_of()` builds the analysis of the module recorded now: what its model flows
        read is recorded too (`shared_flows.Tracker.sink`). One built before (for another
        verdict of this check) read what it read unseen: its verdict is not kept."""
        if self._reads is None:
            return
        built = caller_modules.BUILT[0]
        caller_modules.ARMING[0] = True
        try:
            module = module_of()
        finally:
            caller_modules.ARMING[0] = False
        kept = caller_modules.kept_of(module) if module is not None else None
        if kept is None:
            self._tainted = True
            return
        if caller_modules.BUILT[0] == built:
            # Built before in this check (QL201's verdicts read the callers QL202 searches
            # next): what was read then is known when every reading of it since it was built
            # was recorded (`caller_modules.WATCHED`), and none reused a flow of an earlier check.
            record = kept.recorded
            if record is None or record[0] != getattr(self.ctx.project, "checks", None) or record[2]:
                self._tainted = True
                return
            self._flow_reads.extend(record[1])
        reads = self._flow_reads
        tracker = module[1].tracker
        sink = tracker.sink

        def seen(flow_reads, sink=sink) -> None:
            reads.extend(flow_reads)
            if sink is not None:
                sink(flow_reads)

        tracker.sink = seen
        self._sink = (tracker, sink, seen, tracker.reused, kept)
        tracker.reused = []
        caller_modules.WATCHED.add(id(kept))

    def taint(self) -> None:
        """The call judged now was read another way than the plain one: not kept."""
        self._tainted = True

    def vouched(self) -> None:
        """The call judged now passes harmless models (one that never runs does not count)."""
        self._vouched += 1

    def judged(self, path: str, key: tuple) -> None:
        """The consumer asks for the next module: no call of this one passes a risky model.
        Kept, with what was read, when at least one vouched (the others never run)."""
        reads, self._reads = self._reads, None
        if reads is None or self._tainted or self._vouched <= 0:
            return
        checks = getattr(self.ctx.project, "checks", None)
        if self._sink is not None and any(check != checks for check in self._sink[0].reused):
            # A flow an earlier check kept was reused (`shared_flows`): analysed before the
            # checked module's bodies were watched, it read them unnamed. (A run over the tree
            # checks ExecuTorch's test_qnn_delegate.py, keeping flows of tests/utils.py's
            # methods, before tests/utils.py: that verdict is kept by the first edited check.)
            return
        kept = _kept_reads(self.ctx, path, key, [*reads, *self._flow_reads])
        if kept is not None:
            self.memo[(*self.key, path)] = (self._vouched, *kept)
            kept_answers.asked(self.table, (*self.key, path))


def branch_conditions(needsets: tuple) -> tuple:
    """The branch conditions on a helper's parameters (`call_paths`: a tuple of sets of `Need`)
    as part of a key: the question a walk of the helper's callers answers depends on them."""
    return tuple(tuple(sorted((n.name, n.right, n.polarity) for n in needs)) for needs in needsets)


def _keeps(key: tuple | None) -> bool:
    return key is not None and key[0] != "overlay"


def _kept_reads(ctx, path: str, key: tuple, reads: list) -> tuple | None:
    """(shape of the checked module, trail), or None when a read cannot be kept."""
    project = ctx.project
    own = os.path.abspath(ctx.path)
    text_digest = content_sha256_hex(ctx.text.encode("utf-8"))
    # A body taken from the scope other modules see of the checked module. Scopes of modules
    # checked before stay watched: a body taken from one of them is a body of that module,
    # whose file is read (and kept in the trail) like any other.
    scope = project.held_scope(own)
    if scope is None:
        return None
    ours = _scope_nodes(scope)
    if ours is None:
        return None
    bodies = []
    files = []
    for dep, digest in reads:
        if dep == BODY_READ:
            if digest is None:
                return None  # bodies it cannot name
            if id(digest) in ours:
                bodies.append(digest)
        elif not os.path.isabs(dep):
            return None  # a listing, the wrapper names
        elif os.path.abspath(dep) == own:
            if digest != text_digest:
                return None  # read as other content than the text checked
        else:
            files.append((dep, digest))
    shape = _shape_of(ctx, bodies)
    if shape is None:
        return None
    trail = kept_module_facts.recorded_trail(project, path, key, files)
    return None if trail is None else (shape, trail)


def _scope_nodes(scope) -> dict[int, ast.AST] | None:
    """id -> node of every function, class and method taken so far from the scope (read
    without telling its watch, `watched_scopes.WatchedTable`; of a summarised module's lazy tables,
    `summary._LazyTable`, the values built: the others were never taken). None: a table of
    another kind."""
    out: dict[int, ast.AST] = {}
    functions = _taken_values(scope.functions)
    classes = _taken_values(scope.classes)
    if functions is None or classes is None:
        return None
    for func in functions:
        out[id(func)] = func
    for cls in classes:
        node = cls.key_node() if hasattr(cls, "key_node") else cls.node
        out[id(node)] = node
        methods = _taken_values(cls.methods)
        if methods is None:
            return None
        for method in methods:
            out[id(method)] = method
    return out


def _taken_values(table) -> list | None:
    built = getattr(table, "_built", None)
    if isinstance(built, dict):
        return list(built.values())
    return list(dict.values(table)) if isinstance(table, dict) else None


def _shape_of(ctx, bodies: list) -> tuple | None:
    """(masked text's digest, ((kind, name, row, column, digest), ...) of the bodies taken),
    or None when one taken cannot be named (a node that is no function, method or class of
    the module's top level)."""
    masked, named = _module_shape(ctx)
    out = set()
    for body in bodies:
        where = (
            (type(body).__name__, getattr(body, "name", None), getattr(body, "lineno", None), body.col_offset)
            if isinstance(body, ast.AST) and hasattr(body, "col_offset")
            else None
        )
        if where is None or where not in named:
            return None
        out.add((*where, named[where]))
    return masked, tuple(sorted(out))


def _shape_now(ctx, saved) -> tuple | None:
    """The checked module's shape now, for the bodies `saved` names (None: one is gone)."""
    try:
        masked, named = _module_shape(ctx)
        return masked, tuple((*where, named[tuple(where)]) for *where, _ in saved[1])
    except (KeyError, TypeError, ValueError):
        return None


def _module_shape(ctx) -> tuple[str, dict]:
    """(digest of the module's text with every function's and method's body masked, its
    newlines kept; (kind, name, row, column) -> digest of the text of each top-level function,
    class and method of a top-level class, with its position)."""
    found = ctx.cache.get(_SHAPE)
    if found is not None:
        return found
    # Rows as every text reader reads them (`source.lf_row_bytes`: a lone `\r` made `\n`, the
    # same length), so that a masked body keeps its rows in a `\r`-only module too and the
    # module reads as its `\n` twin. Raw otherwise, not NFKC: the digests stand for the text's
    # content, and an edit NFKC would not see is still an edit.
    data = lf_row_bytes(ctx.text.encode("utf-8"))
    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def at(row: int, col: int) -> int:
        return starts[row - 1] + col

    named: dict[tuple, str] = {}
    spans = []
    for node in ctx.tree.body:
        members = [node, *(n for n in node.body if isinstance(n, _DEFS))] if isinstance(node, ast.ClassDef) else [node]
        for member in members:
            if not isinstance(member, (*_DEFS, ast.ClassDef)):
                continue
            first = min([member.lineno, *(d.lineno for d in member.decorator_list)])
            whole = data[starts[first - 1] : at(member.end_lineno, member.end_col_offset)]
            where = (type(member).__name__, member.name, member.lineno, member.col_offset)
            span = repr((first, member.end_lineno, member.end_col_offset)).encode()
            named[where] = content_sha256_hex(span + whole)
            if isinstance(member, _DEFS):
                head, last = member.body[0], member.body[-1]
                spans.append((at(head.lineno, head.col_offset), at(last.end_lineno, last.end_col_offset)))
    pieces = []
    last = 0
    for start, end in sorted(spans):
        pieces.append(data[last:start])
        pieces.append(b"\n" * data.count(b"\n", start, end))
        last = end
    pieces.append(data[last:])
    found = ctx.cache[_SHAPE] = (content_sha256_hex(b"".join(pieces)), named)
    return found


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


__all__ = ["Verdicts", "branch_conditions"]
