"""The project's other modules as texts and parses: which of them spell a name (a caller, a
constructor or a consumer there is one a one-module reading does not see), read without
keeping those that do not, and the parse of one for a question asked of it.

Each module read or listed is recorded as a dependency of the check (`listing_dependency`,
`record_read`), as the project scan records its own.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from qlint.analysis import scan_memo
from qlint.analysis.context import FileContext
from qlint.analysis.graphs.project_scan import MAX_BYTES, scan_root
from qlint.analysis.identifier_text import named_holding, normalised
from qlint.analysis.module_keys import project_keys
from qlint.analysis.names import project_words
from qlint.analysis.names.live_trees import parse as live_parse
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.tree_handover import HANDOVER
from qlint.analysis.project_files import listing_dependency
from qlint.analysis.word_search import spells_word
from qlint.source import DecodeError, LineIndex, decode_source


def text_holding(project, path: str, key: tuple, needles: tuple[bytes, ...]) -> tuple[str, bytes | None] | None:
    """(text, bytes read) of a module the project does not keep, when its bytes hold one of
    `needles` (an editor's buffer: its text, whatever it holds; None: a module too big to scan,
    unreadable, or holding none)."""
    if key[0] == "overlay":
        return project.overlay[path], None
    if project_words.known_to_lack(path, key, needles):
        return None  # its words, cut for a caller search, hold none of them: no read
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_BYTES or not (any(n in data for n in needles) or named_holding(data, needles)):
        return None
    try:
        return decode_source(data), data
    except DecodeError:
        return None


def project_modules(
    ctx: FileContext, needles: tuple[str, ...], root: str | None = None
) -> list[tuple[str, tuple | None]]:
    """Every module of the project (path, content key), each recorded as a dependency of this
    check, for scans that need modules this one does not keep (QL102's packet consumers) and
    skip those whose text holds none of `needles` (a new one holding one may change them).
    `root` overrides the package's root (a script's repository, for the dead-code search)."""
    root = root or scan_root(ctx.path)
    if root is None:
        return []
    ctx.project.record_listing(ctx.path, listing_dependency(root, True, needles))
    # The listing and keys alone: whether each module inserts or normalises (`scanned_project`, which
    # asks every module of torch that question) is none of these scans' business.
    return list(project_keys(ctx, root).items())


def texts_naming(ctx: FileContext, name: str, root: str | None = None) -> Iterator[tuple[str, str]]:
    """(path, text) of each other module of the project (or under `root`) whose text spells
    `name` as a word (a caller or constructor there is one a one-module reading does not see)."""
    return ((path, text) for path, text, _ in texts_spelling(ctx, (name,), root))


def texts_spelling(
    ctx: FileContext, names: tuple[str, ...], root: str | None = None, question: str | None = None
) -> Iterator[tuple[str, str, list[str]]]:
    """(path, text, which of `names` it spells) of each other module of the project (or under
    `root`) whose text spells one of `names` as a word, each module read once for all of them.
    With `question`, what each module answered for a name is kept between runs (`scan_memo`,
    asked as `question` + the name), so a later run reads only the modules spelling one (a
    scan's few names; a question per name of every search would crowd out the memo's others)."""
    own = os.path.abspath(ctx.path)
    modules = [(p, k) for p, k in project_modules(ctx, names, root) if k is not None and os.path.abspath(p) != own]
    # What a whole scan of this check found for each name (the project's keys are taken once
    # per check): a later scan of names all asked already reads no module but those spelling
    # one. torch: QL102 asks each of a pass module's functions alone and all five together,
    # QL101 thrice whether a private function is named elsewhere; each a read of 2,285 modules.
    # Kept with the modules and content keys they were found in, and taken only for the same;
    # kept from a scan with a `question` too (the modules it skips are known not to spell the
    # name), but taken only without one: a scan with one notes each module's answers for
    # later runs.
    memo = ctx.cache.setdefault(_SPELLING, {})
    known_names = [memo.get((root, n)) for n in names] if question is None else None
    if known_names is not None and all(k is not None and k[0] == modules for k in known_names):
        for path, _ in modules:
            spelled = [n for n, (_, held) in zip(names, known_names, strict=True) if path in held]
            if spelled:
                yield path, known_names[names.index(spelled[0])][1][path], spelled
        return
    if question is None:
        listed = ((p, k, None) for p, k in modules)
    else:
        listed = scan_memo.unanswered(modules, [question + n for n in names])
    found: dict[str, dict[str, str]] = {n: {} for n in names}
    for path, key, known in listed:
        asked = [i for i, answer in enumerate(known or [None] * len(names)) if answer is not False]
        if not asked:
            continue
        read = text_holding(ctx.project, path, key, tuple(names[i].encode() for i in asked))
        words = normalised(read[0]) if read is not None else ""
        spelled = []
        for i in asked:
            holds = read is not None and spells_word(words, names[i])
            if question is not None:
                scan_memo.note(path, question + names[i], key, holds)
            if holds:
                spelled.append(names[i])
                found[names[i]][path] = read[0]
        if spelled:
            yield path, read[0], spelled
    # The scan ran to its end (a caller that stops early keeps nothing).
    for name, held in found.items():
        memo[root, name] = (modules, held)


# `FileContext.cache` key of `texts_spelling`'s answers in a check: (root, name) -> (the modules
# scanned with their content keys, {path: text} of those spelling the name), from a scan that
# ran to its end.
_SPELLING = "project_texts.texts_spelling"


def parsed_module(ctx: FileContext, path: str, text: str) -> FileContext | None:
    """Another module of the check's project, parsed, for questions asked of it (None when it
    does not parse)."""
    try:
        tree = live_parse(text, path)
    except (SyntaxError, ValueError, RecursionError):
        return None
    return FileContext(path, text, tree, LineIndex(text), ctx.optable, ctx.project, module_name_for(path))


def read_module(ctx: FileContext, path: str) -> FileContext | None:
    """The module at `path` (as the check's imports found it), parsed; its content is recorded
    as read by the check (None: unreadable or not parsed)."""
    text = ctx.project.text(path)
    if text is None:
        return None
    ctx.project.record_read(ctx.path, path, ctx.project.digest(path))
    return parsed_module(ctx, path, text)


def module_context(path: str, text: str, ctx: FileContext) -> FileContext | None:
    # A module of the scan that this run checks later (torch: ~20 of the scan's ~30 parses):
    # the tree a summary kept for its check, or this parse, kept for it (`tree_handover`),
    # as long as the file's bytes are the ones the text was decoded from (not so with a BOM
    # or a coding cookie: then its check parses it again).
    absolute = os.path.abspath(path)
    data = text.encode("utf-8", "surrogatepass") if HANDOVER.expects(absolute) else None
    tree = HANDOVER.peek(absolute, data) if data is not None else None
    if tree is None:
        try:
            tree = live_parse(text, path)
        except (SyntaxError, ValueError, RecursionError):
            return None
        if data is not None:
            HANDOVER.keep(absolute, data, tree)
    return FileContext(path, text, tree, LineIndex(text), ctx.optable, ctx.project, module_name_for(path))
