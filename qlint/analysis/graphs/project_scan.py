"""What other modules of the project do to graphs, asked only when a finding is at stake.

Two facts decide whether a packet matcher is right that cannot be read from its module:
- another module inserts that very packet into graphs (directly or through the project's
  own wrapper), so the graphs the matcher sees carry it;
- the graphs are normalised to packets before the matcher sees them: a function that runs
  `strip_overloads` (or rewrites `n.target = n.target.overloadpacket`) and then calls the
  matcher, or a decorator whose wrapper does so (found by `project_normalisers` among the
  modules this scan keeps).

The project is the top-level package holding the file. What the scan keeps is keyed on
each module's content (its stat, or the editor's buffer through the project index's
overlay), and the directory is listed again at each check that asks, so a module created or
edited later is seen by the next check; every module the scan read is recorded as a
dependency of the check, for the results cache and the language server's dependents.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterator
from typing import Any

from qlint.analysis import scan_memo
from qlint.analysis.context import FileContext
from qlint.analysis.graphs import file_keys, kept_module_facts
from qlint.analysis.graphs.graph_context import MARKER_WORDS, marked_path, may_carry_packets
from qlint.analysis.identifier_text import named_holding, normalised
from qlint.analysis.names import project_words
from qlint.analysis.names.content_keys import known_digest
from qlint.analysis.names.live_trees import parse as live_parse
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.tree_handover import HANDOVER
from qlint.analysis.project_files import listing_dependency, project_keys
from qlint.analysis.word_search import spells_word
from qlint.short_digests import content_sha256_hex
from qlint.source import DecodeError, LineIndex, decode_source, read_source
from qlint.value_classes import field, value_class

_INSERTS = ("call_function", "create_node")
# The last: a library decorator whose wrapper strips the graph (`project_normalisers`).
NORMALISES = ("strip_overloads", "overloadpacket", "make_simple_dynamo_backend")
_NEEDLE_BYTES = tuple(n.encode() for n in _INSERTS + NORMALISES)
_MAX_BYTES = 2_000_000
_UNSEEN = object()
# `scan_memo`'s question: the module's bytes hold one of the needles (its text is kept).
_QUESTION = "project-scan:" + ",".join(_INSERTS + NORMALISES)
_UNREAD: Any = object()  # in `_Project.files`: holds a needle, text not read yet


def scan_root(path: str) -> str | None:
    """The directory of the top-level package `path` belongs to (None for a module outside any
    package: a script's neighbours are not its project), counted up from the file by its
    module name. In a repository whose package maps onto its root, that is the repository,
    even where a directory on the way lacks `__init__.py` (ExecuTorch's
    `backends/nxp/aten_passes`): the import root joined with the package's name would then
    name no directory at all."""
    module = module_name_for(path)
    if not module or "." not in module:
        return None
    directory = os.path.dirname(os.path.abspath(path))
    levels = module.count(".") - (0 if os.path.basename(path) in ("__init__.py", "__init__.pyi") else 1)
    for _ in range(levels):
        directory = os.path.dirname(directory)
    return directory


@value_class
class _Project:
    # path -> (content key, text when it holds an insertion or normalisation, else None; `_UNREAD`
    # until a scan needs the text, and always in a command-line run: `keeps_texts`)
    files: dict[str, tuple[tuple | None, str | None]] = field(default_factory=dict)
    # path -> (content key, {fact: (its value,) or None when the module does not parse}): what
    # was read off each module's parse. The parse itself is dropped: whole-tree contexts kept
    # for the run were a third of each worker's memory on ao.
    facts: dict[str, tuple[tuple | None, dict[Callable, tuple | None]]] = field(default_factory=dict)
    # qualified names normalisers call or decorate, and the keys of the modules they came from
    normalised: tuple[tuple, set[str]] | None = None
    keys: dict | None = None  # the check's `project_keys` the files were brought up to date with


_PROJECTS: dict[str, _Project] = {}
_BATCH = 64  # modules to look up at once, past which the saved answers are read in one pass
_NO_PROJECT = _Project()


def scanned_project(root: str | None, ctx: FileContext) -> _Project:
    """The project's modules as they are now (`project_files.project_keys`: listed and
    stat-checked once per check, each a dependency of it), with the text of those that insert
    or normalise kept per content."""
    if root is None:
        return _NO_PROJECT
    root = os.path.abspath(root)
    found = _PROJECTS.setdefault(root, _Project())
    keys = project_keys(ctx, root)
    if found.keys is keys:
        return found
    project = ctx.project
    files = found.files
    # What earlier runs found about the modules not kept at their key yet, in one pass over the
    # saved answers (`known_sets`) when they are many: asked module by module, torch's 2,285
    # cost ~10 ms of each fresh process's check. An editor's next check asks about a few.
    pending = {
        path: key
        for path, key in keys.items()
        if key is not None and key[0] != "overlay" and ((known := files.get(path)) is None or known[0] != key)
    }
    holds, misses = scan_memo.known_sets(pending, [_QUESTION])[0] if len(pending) > _BATCH else (set(), set())
    seen: dict[str, tuple[tuple | None, str | None]] = {}
    for path, key in keys.items():
        known = files.get(path)
        if known is not None and known[0] == key:
            seen[path] = known
        elif (path in holds) != (path in misses):  # answered, and by every root alike
            seen[path] = (key, _UNREAD if path in holds else None)
        else:
            seen[path] = _read(project, path, key)
    found.files = seen
    found.keys = keys
    return found


def keeps_texts(project) -> bool:
    """Whether the scan keeps the texts of the modules that insert or normalise, for the next
    probe of them. An editor's index does (a keystroke's check asks anew over all of them); a
    command-line run re-reads one when a probe not answered yet needs it (ExecuTorch: ~4,000
    reads over a run, each one a page-cache read): kept for the whole run, the ~500 texts were
    ~11 MiB in each process, both workers' copies at the run's peak."""
    return project.track_dependents


def _read(project, path: str, key: tuple | None) -> tuple[tuple | None, str | None]:
    """(key, the text if the module inserts or normalises, else None); `_UNREAD` for a module
    an earlier run found does (`scan_memo`), or that does in a run that keeps no texts
    (`keeps_texts`): read when a scan asks for its text."""
    if key is None:
        return key, None
    if key[0] == "overlay":
        text = project.overlay[path]
        return key, text if any(n in text for n in _INSERTS + NORMALISES) else None
    held = scan_memo.answers(path, key, [_QUESTION])[0]
    if held is not None:
        return key, _UNREAD if held else None
    if _words_rule_out(path, key):
        # What `_text` would find and keep, without a read and a hash of the module (ExecuTorch:
        # 2,816 of 3,784 modules, read by every process of the run).
        scan_memo.note(path, _QUESTION, key, False)
        _NO_PACKET_INSERTS[path] = key
        return key, None
    return _text(path, key, keeps_texts(project), project.wants_dependencies)


def _words_rule_out(path: str, key: tuple) -> bool:
    """Whether the module's words, cut already at `key` (a parallel run's child cut every
    module's before the checks began: `shared_words`), show that its text holds no needle and
    that it inserts no packet (`_text`'s `_NO_PACKET_INSERTS`): no `ops`, or no marker of
    graphs that carry packets (`graph_context.MARKER_WORDS`) in a module whose path has none.
    False where they cannot tell (not cut at this key, or over their size limit)."""
    if not project_words.known_to_lack(path, key, _NEEDLE_BYTES):
        return False
    if project_words.known_to_lack(path, key, (b"ops",)):
        return True
    return not marked_path(path) and project_words.known_to_lack(path, key, MARKER_WORDS)


def _text(path: str, key: tuple, keep: bool = True, digest: bool = True) -> tuple[tuple | None, str | None]:
    """`digest`: its digest is worked out now, as it is read, for the dependencies the run
    records. A `--no-cache` run records none (`ProjectIndex.wants_dependencies`): a module the
    index summarises later is hashed then, the others never (ao: 2.0 of 3.1 MB hashed)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None, None
    if digest and known_digest(path, key) is None:  # a module the index summarised is not hashed again
        file_keys.remember_digest(path, key, content_sha256_hex(data))
    # Bytes first: most modules hold neither, and decoding them all costs more.
    holds = len(data) <= _MAX_BYTES and any(n in data for n in _NEEDLE_BYTES)
    scan_memo.note(path, _QUESTION, key, holds)
    if not holds:
        if b"ops" not in data or not may_carry_packets(data, path):
            _NO_PACKET_INSERTS[path] = key
        return key, None
    if not keep:
        return key, _UNREAD
    try:
        return key, decode_source(data)
    except DecodeError:
        return key, None


# `scan_memo`'s questions of `module_facts(saved=True)`: the module's text holds these needles
# and matches that pattern (its source in the question: a changed pattern asks anew).
_PROBE = "project-facts:"


def probe_question(needles: tuple[str, ...], pattern) -> str | None:
    """The memo's question for a probe, None for a pattern that cannot be named: a compiled
    pattern by its source and flags, a filter object by its `question`."""
    if pattern is None:
        described = ""
    elif isinstance(pattern, re.Pattern):
        described = f"{pattern.pattern}/{pattern.flags}"
    else:
        described = getattr(pattern, "question", None)
        if not isinstance(described, str):
            return None
    return f"{_PROBE}{','.join(needles)}:{described}"


def kept_module_holds(
    project: _Project, path: str, key, text, needles, pattern, question: str | None, keep: bool = True
):
    """(whether the kept module's text holds one of `needles` and matches `pattern`, its text
    or `_UNREAD`). A module whose text was not read in this process (`_UNREAD`) is answered
    from what an earlier run found (`question`) when it can be: on torch, one check of an edit
    of `ao/quantization/observer.py` read and searched the 251 kept modules for the front-end
    rename (~60 ms of its ~180), none of which holds it. (None, None): the module cannot be read."""
    if text is _UNREAD and question is not None and scan_memo.answers(path, key, [question])[0] is False:
        return False, text
    if text is _UNREAD and project_words.known_to_lack(path, key, _encoded(needles)):
        # Its words, cut at this key, hold none of the needles (op names: word characters, which
        # a text holds exactly where its bytes do): no read (ExecuTorch: most of the ~2,000
        # reads of inserting modules that probes for one op made in each process).
        if question is not None:
            scan_memo.note(path, question, key, False)
        return False, text
    if text is _UNREAD:
        text = _read_kept(project, path, key, keep)
        if text is None:
            return None, None
    holds = any(n in text for n in needles) and (pattern is None or pattern.search(text) is not None)
    if question is not None:
        scan_memo.note(path, question, key, holds)
    return holds, text


@functools.lru_cache(maxsize=256)
def _encoded(needles: tuple[str, ...]) -> tuple[bytes, ...]:
    """The needles as the words hold them (UTF-8; a needle outside ASCII is never answered
    from the words: `project_words.known_to_lack`)."""
    return tuple(n.encode("utf-8", "surrogatepass") for n in needles)


def _read_kept(project: _Project, path: str, key, keep: bool = True) -> str | None:
    """The text of a kept module not read yet in this process, kept from now on unless the
    run keeps no texts (`keeps_texts`): then read again at each ask, and only decoded (its
    digest and the memo's answer were taken at its first read)."""
    if key is None:
        return None
    if not keep:
        return read_source(path)
    entry = project.files[path] = _text(path, key)
    return entry[1]


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
            if text is _UNREAD:  # known to hold from this process's memo, its text not read since
                text = _read_kept(project, path, key, keep_texts)
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
    found unable to (`_NO_PACKET_INSERTS`) are skipped unread. Their texts
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
    if len(_NO_PACKET_INSERTS) > _MAX_MISSES:
        _NO_PACKET_INSERTS.clear()
    out = []
    for path, (key, text) in project.files.items():
        if text is not None or key is None or path == own or _UNKEPT_MISSES.get((path, pattern.pattern)) == key:
            continue
        if _NO_PACKET_INSERTS.get(path) == key:
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
# path -> the content key of a version the scan read that can insert no packet into graphs
# that carry packets: it spells no op (no `ops`: not `torch.ops`, `exir_ops`, nor an alias
# assigned from one), or nothing makes its graphs carry packets (`may_carry_packets`).
_NO_PACKET_INSERTS: dict[str, tuple] = {}


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
            data = fh.read(_MAX_BYTES + 1)
    except OSError:
        return None
    if len(data) > _MAX_BYTES or not (any(n in data for n in needles) or named_holding(data, needles)):
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
_SPELLING = "project_scan.texts_spelling"


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
