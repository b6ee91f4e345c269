"""The modules of a helper's callers, parsed and analysed for the check of the helper's module,
kept across its checks while what their analyses read stays the same.

An editor checks a module again at every keystroke. A helper of it that captures its
parameter has its callers in the project read (`project_callers`): ExecuTorch's
qualcomm/export_utils.py has 44 caller modules, and each check parsed and analysed them all
again (~0.5 s), although a keystroke in one function body changes nothing most of them read.
A caller module's analysis is kept (`Kept`) with what it depends on, and reused by a later
check of the helper's module when all of these hold:

- the caller module has the same content (its content key is part of the key);
- every other module its analyses read has the content it had (`reads`, digests compared);
- the helper's module changed by edits confined to one function's body each
  (`statement_reuse.confined_edit`: every other statement, its scope's names and its classes'
  headers are the last check's), and no function or class whose body an edit changed was
  taken by the analyses (`bodies`: the project index reports each one taken from the scope
  other modules see of the checked module, `ProjectIndex.watch_bodies`, through the
  analyses' reads, also those of other modules' helper flows kept and reused,
  `shared_flows`). That is what a flow of the checked module itself needs to be carried
  (`carried_flows`), here for the flows of its callers.

What is looked up again at each check (the helper module's new scope, the class index's
answers, the uses of the helper found in the module, what the caller module's own checks
cached) is forgotten on reuse (`ModelFlow.renew`); the bodies analysed are kept. Within one
check QL202 asks the callers QL201 asked: an editor's index keeps every caller module of the
module checked (the language server holds ExecuTorch's 44 for export_utils.py while it is
edited), a command-line run those of the check under way (it checks each module once).
"""

from __future__ import annotations

import os
import weakref

from qlint.analysis.context import FileContext
from qlint.analysis.flow import caller_slices
from qlint.analysis.flow.function_flows import FunctionFlow
from qlint.analysis.flow.module_analysis import ModelFlow
from qlint.analysis.graphs import file_keys
from qlint.analysis.names.body_reads import BODY_READ
from qlint.analysis.names.live_trees import parse as live_parse
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.tree_handover import HANDOVER
from qlint.source import DecodeError, LineIndex, decode_source

# A command-line run keeps the caller modules one check parsed and analysed until that check
# ends (`checked_once`), as an editor's index does across keystrokes: QL202 then reads the
# callers QL201 read. With only the most recently asked one kept (to bound the check's peak:
# ExecuTorch's qualcomm/export_utils.py holds 44 caller modules, ~15 MiB traced) QL202 parsed
# and analysed all 44 again, 88 analyses of 135 over the whole ExecuTorch tree (~0.25 s of a
# 7 s run); the run's peak resident size went from 142 to 144 MiB.


class Kept:
    """A caller module's context, analysis and bodies analysed (`module`, the tuple
    `project_callers` hands on), with what they read of the other modules and of the checked one."""

    __slots__ = ("bodies", "check", "module", "optable", "reads", "recorded", "tree")

    def __init__(self, module: tuple, ctx: FileContext):
        self.module = module
        self.optable = ctx.optable
        # The tree of the checked module its analyses read: not held (the checked module's
        # last tree is, by an editor's index, `statement_reuse`), so that a check's tree goes
        # when the check does elsewhere.
        self.tree = weakref.ref(ctx.tree)
        self.check = getattr(ctx.project, "checks", None)
        self.bodies: dict[int, object] = {}  # its functions, methods, class nodes taken (None: unnamed)
        self.reads: dict[str, str] = {}  # every other module read: path -> digest
        # (check, everything read, a flow of an earlier check reused) while every reading of
        # it in this check was recorded (`kept_caller_verdicts`); None otherwise.
        self.recorded: tuple | None = None

    def take(self, own: str):
        def take(reads: list) -> None:
            for path, digest in reads:
                if path == BODY_READ:
                    self.bodies[id(digest)] = digest
                elif os.path.abspath(path) != own:
                    self.reads[path] = digest

        return take


# (path, content key, the checked module's path, the project index) -> the caller module kept.
_MODULES: dict[tuple, Kept] = {}
# The caller modules (`id` of their `Kept`) whose reading a recording of a kept verdict watches
# now, and whether such a recording is asking for one (`kept_caller_verdicts.Verdicts.watch`):
# a module asked for otherwise is read unseen, and its record is dropped.
WATCHED: set[int] = set()
ARMING = [False]
# How many caller modules were parsed and analysed anew (what the tests count).
BUILT = [0]


def checked_once(path: str) -> None:
    """The check of `path` ended and the file will not be checked again (a command-line run):
    the caller modules parsed for it go now rather than when the next check parses one, so
    the next checks do not allocate on top of them (ExecuTorch's qualcomm/export_utils.py
    keeps 59 parsed callers, ~18 MiB)."""
    if not _MODULES:  # most files asked for no caller (3,822 checks, 132 caller modules on ExecuTorch)
        return
    path = os.path.abspath(path)
    for key in [k for k in _MODULES if k[2] == path]:
        del _MODULES[key]


def caller_module(ctx: FileContext, path: str, data: bytes, apart: bool = False) -> tuple | None:
    """(context, analysis, bodies analysed, uses memo) of the caller module at `path` (content
    `data`) for the check of `ctx`; None when it does not parse. `apart`: its tree is not
    handed over to its own check (`release`)."""
    own = os.path.abspath(ctx.path)
    key = (path, file_keys.content_key(ctx.project, path), own, ctx.project)
    kept = _MODULES.pop(key, None)
    if kept is not None and _still(kept, ctx, own):
        _MODULES[key] = kept  # most recently asked last
        if not ARMING[0] and id(kept) not in WATCHED:
            kept.recorded = None  # read where no recording sees what it reads
        return kept.module
    if kept is not None and kept.optable is ctx.optable:
        other = kept.module[0]  # its text is the same: its tree, scope and lines are too
        other.cache.clear()
    else:
        try:
            text = decode_source(data)
            # The tree the project index just parsed for the module's summary, if it did, or
            # one another reader still holds (`live_trees`).
            tree = ctx.project.take_tree(path, data) or live_parse(text, path)
        except (DecodeError, SyntaxError, ValueError, RecursionError):
            return None
        # A caller this process checks later: its check takes this tree (`tree_handover`; the
        # runner checks it next), instead of parsing the file again many checks on.
        if not apart:
            HANDOVER.keep(os.path.abspath(path), data, tree)
        other = FileContext(path, text, tree, LineIndex(text), ctx.optable, ctx.project, module_name_for(path))
    BUILT[0] += 1
    # Those kept for another module checked serve it no more (an editor's index: the module
    # edited changed; a run: each file is checked once).
    for stale in [k for k in _MODULES if k[2] != own]:
        del _MODULES[stale]
    # The helper's calls are read even where its module has a library's name (torchao's tree).
    flow = ModelFlow(other.scope, other.project, other.optable, follow=own)
    kept = _MODULES[key] = Kept((other, flow, {}, {}), ctx)
    if getattr(ctx.project, "previous_trees", None) is not None:
        # What a later check needs to know whether it may take it (a run checks each file once).
        flow.tracker.sink = kept.take(own)
    return kept.module


def kept_of(module: tuple) -> Kept | None:
    """The entry holding `module` (a tuple `caller_module` returned), if it is still kept."""
    return next((kept for kept in _MODULES.values() if kept.module is module), None)


def release(ctx: FileContext, path: str) -> None:
    """The caller module at `path` is read no more by the check of `ctx` (a command-line run):
    what was built for it goes now, not when the check ends. An editor's index keeps it for
    the next keystroke, as it keeps every caller module."""
    if getattr(ctx.project, "previous_trees", None) is not None:
        return
    own = os.path.abspath(ctx.path)
    for key in [k for k in _MODULES if k[0] == path and k[2] == own]:
        del _MODULES[key]


def body_flow(flow, analysed: dict, body, refs: dict) -> FunctionFlow | None:
    """The flow of the caller's body holding the calls `refs` names: walking only what can
    affect what they pass (`caller_slices`), unless the body was walked whole already."""
    key = id(body.node)
    slot = key
    if key not in analysed and key not in flow.memo.functions:
        cut = caller_slices.dropped(body.node, list(refs.values()))
        slot = key if cut is None else (key, cut)
    if slot not in analysed:
        try:
            if slot is key:
                analysed[key] = flow.function(body.node, body.class_scope)
            else:
                analysed[slot] = flow.sliced(body.node, body.class_scope, slot[1])
        except RecursionError:  # a caller too deep to follow: its call is not read
            analysed[slot] = None
    return analysed[slot]


def analysed_flows(analysed: dict) -> list[FunctionFlow]:
    """The flows of a caller module's bodies analysed so far (`caller_module`'s third part),
    a body walked in part (`caller_slices`) only while it was not walked whole."""
    return [f for k, f in analysed.items() if f is not None and (type(k) is int or k[0] not in analysed)]


def _still(kept: Kept, ctx: FileContext, own: str) -> bool:
    """Whether the analysis kept is the one this check would make (see the module's doc);
    if so, it is made ready for this check."""
    project = ctx.project
    checks = getattr(project, "checks", None)
    if kept.optable is not ctx.optable:
        return False
    if kept.check == checks and kept.tree() is ctx.tree:
        return True  # asked again in the same check
    previous = getattr(project, "previous_trees", None)
    if previous is None:
        return False  # nothing was recorded: a run checks each file once
    if kept.tree() is not ctx.tree:
        edit = previous.edit_of(own, ctx.tree)
        if edit is None or edit[0] is not kept.tree() or edit[1] is None:
            return False
        changed = (edit[1].old, edit[1].old_class)
        if id(None) in kept.bodies or any(node is not None and id(node) in kept.bodies for node in changed):
            return False  # a body the edit changed was read (or bodies that cannot be named)
    if any(project.digest(path) != digest for path, digest in kept.reads.items()):
        return False
    other, flow, _, uses = kept.module
    uses.clear()  # found through the checked module's scope, which is a new one
    other.cache.clear()  # what the caller module's own checks asked (`call_sites`) is asked again
    flow.renew(own)
    kept.tree, kept.check = weakref.ref(ctx.tree), checks
    return True


__all__ = [
    "ARMING",
    "BUILT",
    "WATCHED",
    "Kept",
    "analysed_flows",
    "body_flow",
    "caller_module",
    "checked_once",
    "kept_of",
    "release",
]
