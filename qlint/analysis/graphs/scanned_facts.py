"""Facts of the project's other modules, for a check whose finding depends on them: what a
module the project scan keeps inserts or normalises (`module_facts`), and what a module it does
not keep inserts through the project's own wrapper (`unkept_module_facts`).

Each fact is kept per module content in this process, and between runs where
`kept_module_facts` holds it; a module's parse goes to its own later check (`tree_handover`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from qlint.analysis.context import FileContext
from qlint.analysis.graphs import kept_module_facts
from qlint.analysis.graphs.project_scan import (
    NO_PACKET_INSERTS,
    UNREAD,
    keeps_texts,
    kept_module_holds,
    probe_question,
    read_kept,
    scan_root,
    scanned_project,
)
from qlint.analysis.graphs.project_texts import module_context, text_holding
from qlint.analysis.project_files import listing_dependency

_UNSEEN = object()


def module_facts(
    ctx: FileContext,
    needles: tuple[str, ...],
    fact: Callable[[FileContext], Any],
    pattern: re.Pattern | None = None,
    own: bool = False,
    keep: bool = True,
    saved: bool = False,
    admits: Callable[[str, str], bool] | None = None,
    first: bool = False,
) -> list[Any]:
    """`fact(module)` for the project's other modules whose text holds one of `needles` and
    matches `pattern` (only modules that insert into graphs or normalise them are kept).
    `keep`: computed once per module content, for a fact that is not to be asked again when
    other modules change; otherwise from a fresh parse at each call.
    `saved`: whether each module's text holds the needles and pattern is also kept between
    runs (`scan_memo`), for a scan asked with the same few needles (not one per op, which
    would crowd out the memo's other questions).
    `admits(text, path)`: a module it refuses is skipped unparsed, for a fact not kept whose
    value for such a module is nothing (QL101's linked-module questions: a module that neither
    spells the checked one's name nor is imported by it is linked to it by no import, and each
    such question parsed every inserting module again).
    `first`: stop at the first module whose fact is true, for a caller asking whether any is
    (the modules after it are neither read nor parsed)."""
    root = scan_root(ctx.path)
    project = scanned_project(root, ctx)
    if root is not None:  # a module created later that holds a needle may change the answer
        ctx.project.record_listing(ctx.path, listing_dependency(root, True, needles))
    skip = None if own else os.path.abspath(ctx.path)
    out = []
    # Whether a module's text holds the needles and the pattern is kept per content too: an
    # editor's check asks on every keystroke, over every module the scan keeps (~470 in torch).
    probe = (needles, pattern)  # a compiled pattern is equal to, and hashes as, its recompiled self
    question = probe_question(needles, pattern) if saved else None
    keep_texts = keeps_texts(ctx.project)
    for path, (key, text) in project.files.items():
        if text is None or path == skip:
            continue
        known = project.facts.get(path) if keep else None
        if keep and (known is None or known[0] != key):
            known = project.facts[path] = (key, {})
        holds = known[1].get(probe) if known is not None else None
        if holds is None:
            holds, text = kept_module_holds(project, path, key, text, needles, pattern, question, keep_texts)
            if known is not None and holds is not None:
                known[1][probe] = holds
        if not holds:
            continue
        value = known[1].get(fact, _UNSEEN) if known is not None else _UNSEEN
        if value is _UNSEEN and fact is parses and known is not None:
            value = _parsed_before(known[1])
        # What an earlier run worked out, while everything it read holds: no read, no parse.
        kept = kept_module_facts.taken(ctx.project, fact, path, key) if value is _UNSEEN and admits is None else _UNSEEN
        if kept is kept_module_facts.MISSING or kept is _UNSEEN:
            if text is UNREAD:  # known to hold from this process's memo, its text not read since
                text = read_kept(project, path, key, keep_texts)
                if text is None:
                    continue
        else:
            value = kept
            if keep and known is not None:
                known[1][fact] = value
        if value is _UNSEEN and admits is not None and not admits(text, path):
            continue
        if value is _UNSEEN:
            with kept_module_facts.computing(ctx.project, fact, path, key) as learned:
                other = module_context(path, text, ctx)
                value = None if other is None else (fact(other),)
                learned(value)
            if keep and known is not None:
                known[1][fact] = value
        if value is not None:
            out.append(value[0])
            if first and value[0]:
                break
    return out


def parses(module: FileContext) -> bool:
    """The fact that the module parses (True; `module_facts` leaves out one that does not),
    answered without a parse from any other fact kept of the same content."""
    return True


def _parsed_before(facts: dict) -> Any:
    """`(True,)` or None (it does not parse) when a fact kept of the module's content says
    whether it parses (any value kept: a fact's `(value,)`, or None for no parse), else
    `_UNSEEN`. QL101 asks whether another module spells the packet right after asking what
    those modules insert, and parsed each again for it."""
    for fact, value in facts.items():
        if callable(fact) and fact is not parses:
            return None if value is None else (True,)
    return _UNSEEN


def unkept_module_facts(
    ctx: FileContext,
    needles: tuple[str, ...],
    fact: Callable[[FileContext], Any],
    pattern: re.Pattern,
    admits: Callable[[str, str], bool],
) -> list[Any]:
    """`fact(module)` for the project's other modules the scan does not keep (their text
    neither inserts nor normalises) whose text holds one of `needles`, matches `pattern` and
    is one `admits(text, path)`: a module that inserts only through the project's own wrapper
    (`insert_op(gm.graph, op, args)`, imported from another module) spells no insertion.
    `fact` is the packets a module inserts into graphs that carry packets: modules the scan
    found unable to (`NO_PACKET_INSERTS`) are skipped unread. Their texts
    are read when asked, not kept (they are most of a tree); a version that does not match is
    not read again, and the fact is kept per content as `module_facts` keeps it."""
    root = scan_root(ctx.path)
    project = scanned_project(root, ctx)
    if root is not None:
        ctx.project.record_listing(ctx.path, listing_dependency(root, True, needles))
    own = os.path.abspath(ctx.path)
    encoded = tuple(n.encode() for n in needles)
    if len(_UNKEPT_MISSES) > _MAX_MISSES:
        _UNKEPT_MISSES.clear()
    if len(NO_PACKET_INSERTS) > _MAX_MISSES:
        NO_PACKET_INSERTS.clear()
    out = []
    for path, (key, text) in project.files.items():
        if text is not None or key is None or path == own or _UNKEPT_MISSES.get((path, pattern.pattern)) == key:
            continue
        if NO_PACKET_INSERTS.get(path) == key:
            continue
        known = project.facts.get(path)
        value = known[1].get(fact, _UNSEEN) if known is not None and known[0] == key else _UNSEEN
        if value is _UNSEEN:
            read = text_holding(ctx.project, path, key, encoded)
            other = read[0] if read is not None else None
            if other is None or pattern.search(other) is None or not admits(other, path):
                _UNKEPT_MISSES[path, pattern.pattern] = key
                continue
            parsed = module_context(path, other, ctx)
            value = None if parsed is None else (fact(parsed),)
            if known is None or known[0] != key:
                known = project.facts[path] = (key, {})
            known[1][fact] = value
        if value is not None:
            out.append(value[0])
    return out


# (path, pattern) -> the content key of a version of a module the scan does not keep that
# `unkept_module_facts` found not to match: read again only once it changes.
_UNKEPT_MISSES: dict[tuple[str, str], tuple] = {}
_MAX_MISSES = 500_000
