"""Whether a module, with what it imports from other modules of the project, can hand
QL101/QL102 an `OpOverloadPacket`: the part of their exact gate (`packet_text`) that reads
other modules, asked by the rules' import triggers for a file whose own text makes none.

`Resolver` follows `from <module> import name` (and star imports) into the module of the
project that binds `name`: a packet, a collection holding one, a namespace or an ops root
bound there (directly, through the names its statement uses, or through its own imports)
reaches the checked file. `name_kind` answers that from the texts, on demand: a module is
read once per content, split into its module-level statements only once a name asked about
is assigned in it, and only the statements binding that name are read (with the names they
use, recursively). Every module read, and every module of the project looked for and not
found, is a dependency of the check that asked.
"""

from __future__ import annotations

import copy
import keyword
import os

from qlint.analysis.graphs import file_keys, kept_answers
from qlint.analysis.graphs.packet_text import (
    NAMESPACE,
    PACKET,
    ROOT,
    ROOT_WORDS,
    WORD,
    Reading,
    identifiers,
    import_kind,
    is_word,
    scan,
    spells_packet,
    torch_names,
)
from qlint.analysis.names.import_paths import lookup_root, tried_apart
from qlint.analysis.names.modules import import_root, module_name_for
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.star_imports import star_sources
from qlint.analysis.names.text_imports import file_imports, import_spans, text_imports
from qlint.lazy_patterns import lazy
from qlint.short_digests import content_sha256_hex
from qlint.source import DecodeError, decode_source

__all__ = ["NAMESPACE", "PACKET", "ROOT", "may_hold_packet", "name_kind"]


# -- the checked file, with what it imports from the project --------------------------------------


def may_hold_packet(text: str, path: str, project) -> bool:
    """The text, with the names it imports from other modules of the project, can make a
    packet. The modules read (and those looked for and absent) are dependencies of the
    check of `path`."""
    known = answered(text, path, project)
    if known is not None:
        return known  # its dependencies are the check's already
    try:
        answer = _may_hold_packet(text, path, project)
    except RecursionError:
        # A chain of names deeper than the stack allows (each name read inside the one using
        # it; torch's cycles go ~200 names deep): the file is checked, as a packet would be.
        answer = True
    global _ANSWERED
    checks = getattr(project, "checks", None)
    _ANSWERED = (text, path, project, checks, answer) if checks is not None else None
    return answer


def answered(text: str, path: str, project) -> bool | None:
    """What `may_hold_packet` answered of this text in the check under way (QL101's import
    trigger asks before QL102's), or None: not asked yet."""
    last = _ANSWERED
    if last is None or last[0] is not text or last[1] != path or last[2] is not project:
        return None
    return last[4] if last[3] == getattr(project, "checks", None) else None


# (text, path, project, the project's check count, answer) of the last question: the import
# triggers of one check ask about the same text object (`ProjectIndex.begin_check` counts).
_ANSWERED: tuple[str, str, object, int, bool] | None = None


def _may_hold_packet(text: str, path: str, project) -> bool:
    if spells_packet(text):
        return True
    if "import" not in text:
        return False
    deps: list = []
    extra: dict[str, str] = {}
    own = None  # the file's absolute path, made once it finds a module
    try:
        for local, full in file_imports(text, path):
            if import_kind(full) is not None:
                continue
            module, _, name = full.rpartition(".")
            where = _find(project, module, path, deps) if module else None
            if where is None:
                continue
            if own is None:
                own = os.path.abspath(path)
            if where == own:
                continue
            kind = _kind(project, where, name, deps)
            if kind == PACKET:
                return True
            if kind:
                extra[local] = kind
        if "*" in text:
            for base in star_sources(project, path, None):
                where = _find(project, base, path, deps)
                if where is not None:
                    kinds = _star_kinds(project, where, deps)
                    if PACKET in kinds.values():
                        return True
                    extra.update(kinds)
        if not extra:
            return False
        read = Reading(identifiers(text))
        return scan(read, {**ROOT_WORDS, **torch_names(read.text, read.spans), **extra})[0]
    finally:
        if ProjectIndex.wants_dependencies:  # a run without a cache reads none
            # Every module the answers rest on, through the names they were read from.
            # The lookups too: a module made where one found none, or ahead of the one it found.
            file_keys.record_trail(project, path, tuple(dict.fromkeys(_flat(project, deps))))


def _find(project, module: str, requester: str, deps: list) -> str | None:
    run = _run()
    root = run["roots"].get(requester)
    if root is None:
        root = run["roots"][requester] = import_root(requester)
    root = lookup_root(module, requester, root)
    key = (module, root)
    found = run["found"]
    if ProjectIndex.fixed_layout and key in found:
        where = found[key]
    else:
        # A run whose files stay put asks the listings first (`layout_lookups`): most modules
        # asked for are not the project's, found nowhere without a `stat`.
        where = project.find_module_in_check(module, requester)
        if ProjectIndex.fixed_layout:
            # Files under one import root find a module at the same place (`module_bases`).
            found[key] = where
    # The lookup is part of what a name's kind was read from: a module made later where it
    # found none, or ahead of the one it found, changes the answer (`_still_valid`).
    deps.append((("find", module, root), where))
    if ProjectIndex.wants_dependencies:  # a run without a cache keeps no answer for later
        # What `root` does not stand for: the requester's package directory, which may come to hold it.
        deps += ((path, None) for path in tried_apart(module, os.path.abspath(requester), root, where))
    if where is None:
        mine = run["names"].get(requester)
        if mine is None:
            mine = run["names"][requester] = module_name_for(requester) or ""
        if mine.split(".")[0] == module.split(".")[0]:
            # A module of this project that does not exist yet: creating it changes the answer.
            deps.append((os.path.join(root, *module.split(".")) + ".py", None))
    return where


def _run() -> dict:
    """What module lookups found, for the run (`ProjectIndex.layouts`) whose files stay put."""
    global _RUN
    if _RUN["layouts"] != ProjectIndex.layouts:
        _RUN = {"layouts": ProjectIndex.layouts, "found": {}, "roots": {}, "names": {}}
    return _RUN


_RUN: dict = {"layouts": -1}


# -- other modules ------------------------------------------------------------------------------


class _Module:
    """What a module's text binds at module level, read once per content, and only as far as
    the names asked about need (most are functions and classes it defines)."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text = identifiers(text)
        self.spans = import_spans(text) if "import" in text else []
        self.torch = torch_names(text, self.spans)
        self.stars = "*" in text and bool(self.spans)
        self._imports: dict[str, str] | None = None
        self._import_text: str | None = None
        self._bindings: dict[str, list[tuple[int, int]]] | None = None
        # Whether the text closes a target list on a row of its own (`_CLOSED_TARGETS`): a
        # search of the whole text, which every name asked of the module would repeat.
        self._closed: bool | None = None
        # Per statement read: the names it uses that the module binds or imports (`words`).
        self._words: dict[tuple[int, int], list[str]] = {}

    def imported(self, name: str) -> str | None:
        """The dotted name `name` is imported as (an import statement spells it, or None)."""
        if self._imports is None:
            if self._import_text is None:
                self._import_text = "\n".join(self.text[start:end] for start, end in self.spans)
            if name not in self._import_text:
                return None
            self._imports = {}
            module = module_name_for(self.path) if _RELATIVE.search(self.text) else None
            for start, end in self.spans:
                self._imports.update(text_imports(self.text[start:end], module, self.path))
        return self._imports.get(name)

    def bindings(self, name: str) -> list[tuple[int, int]]:
        """The module-level statements that may bind `name` (read once a name is assigned)."""
        if self._bindings is None:
            if self._closed is None:
                self._closed = _CLOSED_TARGETS.search(self.text) is not None
            if not self._closed and not _assigned(self.text, name):
                return []
            self._bindings = {}
            _statements(self.text, self._bindings)
        return self._bindings.get(name, [])

    def words(self, span: tuple[int, int]) -> list[str]:
        """The names the statement at `span` uses (not the torch names: anchors already) that
        the module binds or imports, in the order written: read once per statement, which
        binds several names (torch's _dynamo/utils.py: one of 170 KB, read for each name)."""
        words = self._words.get(span)
        if words is None:
            torch = self.torch
            words = self._words[span] = [
                word
                for word in dict.fromkeys(WORD.findall(self.text, span[0], span[1]))
                if word not in torch and word not in ROOT_WORDS and not keyword.iskeyword(word)
                if self.bindings(word) or self.imported(word) is not None
            ]
        return words

    def every_name(self) -> set[str]:
        """Every name the module may bind at module level or import (a star import's reach)."""
        bindings: dict[str, list[tuple[int, int]]] = {}
        _statements(self.text, bindings)
        imports: dict[str, str] = {}
        for start, end in self.spans:
            imports.update(text_imports(self.text[start:end], None, self.path))
        return {*bindings, *imports, *self.torch}

    def defines(self, name: str) -> bool:
        """`def name` or `class name` at column 0."""
        text = self.text
        for word in ("def", "class"):
            spelled = f"{word} {name}"
            at = text.find(spelled)
            while at >= 0:
                end = at + len(spelled)
                row = text.rfind("\n", 0, at) + 1
                if text[row:at] in ("", "async ") and not (end < len(text) and is_word(text[end])):
                    return True
                at = text.find(spelled, end)
        return False


def _assigned(text: str, name: str) -> bool:
    """Whether `name` may be assigned in the text: followed on its row by an `=` (not `==`),
    or after `as`. (Or the text has a target list closed on a row of its own, `(a,\n b) = x`,
    which `_Module.bindings` asks once per text: `_CLOSED_TARGETS`.)"""
    size = len(name)
    at = text.find(name)
    while at >= 0:
        end = at + size
        alone = not (at and is_word(text[at - 1])) and not (end < len(text) and is_word(text[end]))
        if alone and (_EQUALS_AFTER.match(text, end) is not None or _AS_BEFORE.search(text, max(0, at - 16), at)):
            return True
        at = text.find(name, end)
    return False


_EQUALS_AFTER = lazy(r"[^\n]*?(?<![=!<>])=(?!=)")
_AS_BEFORE = lazy(r"\bas[ \t]+\Z")
# Led by the newline (a literal the search skips to): a first row cannot close a bracket.
_CLOSED_TARGETS = lazy(r"\n[ \t]*[)\]][ \t]*=(?!=)")


# A row starting at column 0 (led by the newline: a literal the search skips to).
_RELATIVE = lazy(r"from[ \t]+\.")
_HEAD = lazy(r"\n(?:[^\W\d]|@)")
_DEF = lazy(r"(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)")
_COMPOUND = frozenset({"if", "elif", "else", "try", "except", "finally", "with", "for", "while", "async", "match"})
_ROW_TARGETS = lazy(
    r"\n[ \t]*((?:[(\[]?[ \t]*[^\W\d][\w.]*(?:[ \t]*,[ \t]*[^\W\d][\w.]*)*[ \t]*,?[ \t]*[)\]]?"
    r"[ \t]*(?::[^=\n]*)?=(?!=)[ \t]*)+)",
)
_AS_TARGET = lazy(r"\bas[ \t]+([^\W\d]\w*)")
_NAME = lazy(r"[^\W\d]\w*")


def _statements(text: str, bindings: dict[str, list[tuple[int, int]]]) -> None:
    r"""Split the module-level code into statements and record the names each binds (every
    name assigned on any of its rows: a superset). A statement starts at a row that starts
    at column 0; a row while brackets are still open, after a row ending in `\`, or one that
    binds nothing (an element of a literal written at column 0, as far as this reading can
    tell) continues the one before. Brackets are counted in strings and comments too: an
    extra opening one joins statements, which only adds names."""
    starts = [m.start() + 1 for m in _HEAD.finditer(text)]
    if text[:1].isalpha() or text[:1] in "_@":
        starts.insert(0, 0)
    pieces: list[list] = []  # [start, end, names]
    depth = 0
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        piece = text[start:end]
        first = _NAME.match(text, start)
        head = first.group() if first is not None else "@"
        if head in ("def", "class", "@", "import", "from") or (head == "async" and _DEF.match(text, start)):
            names = None  # binds no name whose value this reading follows
        elif "=" not in piece and " as " not in piece:
            names = set()
        else:
            names = {
                n
                for target_row in _assigning_rows(piece)
                for target in target_row.split("=")[:-1]
                for n in _NAME.findall(target.split(":")[0])  # not the annotation's names
            }
            names.update(_AS_TARGET.findall(piece))
        opened = depth > 0 or text[start - 2 : start] == "\\\n"
        if pieces and (opened or (names is not None and not names)):
            previous = pieces[-1]
            previous[1] = end
            if names:
                previous[2] = (previous[2] or set()) | names
        else:
            pieces.append([start, end, names])
            depth = 0
        depth += piece.count("(") + piece.count("[") + piece.count("{")
        depth -= piece.count(")") + piece.count("]") + piece.count("}")
    for start, end, names in pieces:
        for name in names or ():
            bindings.setdefault(name, []).append((start, end))


def _assigning_rows(piece: str) -> list[str]:
    """The assignment targets (`_ROW_TARGETS`' group) of the rows of `piece` that start with
    some. A match holds no newline but the one before its row, so rows are matched one by
    one, and only those spelling an `=`: the pattern backtracks for ages on a row it cannot
    match (`        None,` in a dict literal: ~0.4 ms), and most rows of a module-level
    literal are such rows (ExecuTorch's QNN quantizer: ~5 ms of a one-file check)."""
    out = []
    for row in piece.split("\n"):
        if "=" in row:
            m = _ROW_TARGETS.match("\n" + row)
            if m is not None:
                out.append(m.group(1))
    return out


def _module(project, path: str, deps: list) -> _Module:
    key = file_keys.content_key(project, path)
    deps.append((path, key))
    known = _MODULES.pop(path, None)
    if known is None or known[0] != key:
        while len(_MODULES) >= _KEPT_MODULES:
            least = next(iter(_MODULES))  # the least recently read
            _set_aside(least, _MODULES.pop(least))
        shell = _SHELLS.pop(path, None)
        if shell is not None and shell[0] == key:
            module = shell[1]  # what was read of it before, its text read again
            module.text = identifiers(_text(project, path, key))
        else:
            module = _Module(path, _text(project, path, key))
        known = (key, module)
    _MODULES[path] = known  # last: the most recently read
    return known[1]


def _set_aside(path: str, known: tuple[tuple | None, _Module]) -> None:
    """Keep what was read of a module whose text is let go (`_SHELLS`): a copy, as a reading
    under way may still hold the module, and read its text."""
    while len(_SHELLS) >= _KEPT_SHELLS:
        del _SHELLS[next(iter(_SHELLS))]
    shell = copy.copy(known[1])
    shell.text = None  # read again, for the same key, when the module is asked again
    _SHELLS[path] = (known[0], shell)


def _text(project, path: str, key: tuple | None) -> str:
    """The module's text. While answers are kept (`kept_answers`), a file's digest is taken
    from the very bytes the text is decoded from: the answer is written down with it."""
    if key is None or key[0] == "overlay" or not kept_answers.keeping():
        return project.text(path) or ""
    try:
        with open(path, "rb") as fh:  # as `ProjectIndex.text` reads it
            data = fh.read()
    except OSError:
        return ""
    file_keys.remember_digest(path, key, content_sha256_hex(data))
    try:
        return decode_source(data)
    except DecodeError:
        return ""


# The modules read most recently, least recent first. What a name of a module is, is kept in
# `_KINDS` for the run; the text a module's next name is read from is kept for these only: kept
# for every module read, a worker held ~9 MiB of torch's texts after 700 of its files. 64: read
# exactly, torch's import cycles take ~540 modules (~420 taken for packets at their first
# repeat), and 32 rebuilt 870 of them (the gate's CPU in a torch -j1 run 0.97 -> 0.85 s, peak
# RSS +2 MiB).
_MODULES: dict[str, tuple[tuple | None, _Module]] = {}
_KEPT_MODULES = 64
# The modules let go of `_MODULES`, least recent first, without their texts: what was read of
# them (import statements, torch imports, the statements binding each name, the names each
# statement uses) is kept with the key it was read under, and a module asked again for the
# same key reads only its text again. Torch's import cycles ask 543 modules 785 times, and the
# 242 rebuilt split their texts into statements again: kept so, the gate's CPU in a torch -j1
# QL101/QL102 run fell by a fifth (1.28 -> 1.00 s) for +2 MiB of peak RSS; keeping every text
# instead saved a quarter for +13 MiB.
_SHELLS: dict[str, tuple[tuple | None, _Module]] = {}
_KEPT_SHELLS = 4096
# (path, name) -> (kind, (("kind", path, name), kind): what a trail resting on it names, the
# (path, key) pairs, lookups and such names it was read from)
_KINDS: dict[tuple[str, str], tuple[str, tuple, tuple]] = {}
# An import cycle (a module imports a name from one that imports it back, or a docstring's
# example `from pkg import Config` in the module defining `Config`, read as an import) is read
# as its least fixpoint: a name met again while it is being read binds what the cycle's
# bindings outside it make it (a packet only where some module of the cycle binds one). Taken
# for a packet at its first repeat, every name of such a cycle was one: 52 of the 58 files of
# the installed torch that the import triggers alone let in were parsed for nothing.
#
# The first name of a cycle read (its root: the names read inside its reading use what was
# taken for it, or for names read inside it, and no reading outside) reads the cycle in
# passes, each name once per pass: a name met again while it is being read is taken to be
# what the pass before found (`_APPROX`, none at first), and a pass that found a name taken
# so to be more is read again. Then every name read in the pass is final: kept in `_KINDS`,
# each with the trail of the whole cycle, and asked later is not read again. (A name reading
# its own cycle again until it held, inside a name doing the same, read torch's lowering.py
# an exponential number of times.)
#
# A trail names the modules and lookups its reading made and, for each other name it used
# that was final then (read outside every cycle under way), that name and its kind, compared
# by asking the name again: the cycle's trail is what its own names read, and a module only a
# name it used was read from, edited (an editor's buffer) without changing that name's kind,
# reads that name again and no name of the cycle (a cycle's names resting on a name outside it
# bind what they bound while it binds what it bound: their least fixpoint is the same). A
# check records the modules behind such names too (`_flat`).
#
# (path, name) -> [its depth among the readings under way, whether it was met again meanwhile]
_ASKING: dict[tuple[str, str], list] = {}
# Per reading under way, innermost last: the least depth of a reading under way whose kind
# it used, taken or read with one (more than its own depth: none, its answer is final).
_LOW: list[int] = []
# What the names of the cycles under way were found to be in the pass before (none at first),
# and when their reading began (`_BEGUN`).
_APPROX: dict[tuple[str, str], tuple[str, int]] = {}
# The names read in the pass under way and not final yet: (kind, least depth taken, trail,
# when its reading began: `_BEGUN`).
_PASS: dict[tuple[str, str], tuple[str, int, tuple, int]] = {}
# The names whose known answer is being compared (`_kind`): one asked again meanwhile is read.
_VALIDATING: set[tuple[str, str]] = set()
_BEGUN = [0]  # readings begun so far: one begun after another, under way, is inside it
_STALE = [0]  # names found more than they were taken to be while read (another pass due)
kept_answers.register("kinds", _KINDS, lambda key, entry: entry[:1], whole=True)


def name_kind(project, path: str, name: str, deps: list) -> str:
    """What the module at `path` binds `name` to at module level: `PACKET` (or a collection
    that may hold one, or cannot tell), `NAMESPACE`, `ROOT`, or "" (none of those). What was
    read is appended to `deps`: every module and lookup, through the names read on the way."""
    mine: list = []
    kind = _kind(project, path, name, mine)
    deps.extend(_flat(project, mine))
    return kind


def _kind(project, path: str, name: str, deps: list, own: bool = False) -> str:
    """`name_kind`, appending to `deps` what the answer rests on (`_KINDS`' trails): the
    modules and lookups read for it, and (("kind", path, name), kind) for each other name
    whose answer it used that was final (read outside every import cycle under way). `own`:
    asked while reading a name of the same module, which rests on that module already."""
    key = (path, name)
    known = _KINDS.get(key)
    if known is None or not _held_trail(project, known[2]):
        known = _compared(project, key, known)
    if known is not None:
        trail = known[2]
        if own and len(trail) == 1 and trail[0][0] == path:
            deps.append(trail[0])  # what it rests on is its module alone: the reader's own
        else:
            deps.append(known[1])
        return known[0]
    if _ASKING:
        read = _PASS.get(key)
        if read is not None:
            deps.extend(read[2])
            _took(read[1])
            return read[0]
        asking = _ASKING.get(key)
        if asking is not None:  # an import cycle: what the name is, is still being read
            asking[1] = True
            _took(asking[0])
            return _APPROX.get(key, ("",))[0]
    try:
        return _read(project, key, deps)
    except BaseException:
        if not _ASKING:
            _APPROX.clear()
            _PASS.clear()
        raise


def _compared(project, key: tuple[str, str], known: tuple | None) -> tuple | None:
    """`key`'s entry in `_KINDS` (`known`) if its trail holds now, else the one an earlier run
    kept, if its trail holds; None: to be read. Not for a name under way (none is known), nor
    for one whose known answer is being compared (asked meanwhile through a name that answer
    rests on: read afresh)."""
    if key in _VALIDATING or key in _ASKING:
        return None
    _VALIDATING.add(key)
    try:
        if known is not None and _still_valid(project, known[2]):
            return known
        return _kept(project, key)
    finally:
        _VALIDATING.discard(key)


def _entry(key: tuple[str, str], kind: str, trail: tuple) -> tuple[str, tuple, tuple]:
    """What `_KINDS` holds for `key`: its kind, what a trail resting on it names, its trail."""
    return (kind, _Ref((("kind", *key), kind)), trail)


class _Ref(tuple):
    """(("kind", path, name), kind) in a trail, one per entry of `_KINDS`, told apart by
    identity: the trails of a reading are made unique (`dict.fromkeys`) many times over, and
    a tuple's hash is worked out anew each time (two levels of them, for each name used)."""

    __slots__ = ()
    __hash__ = object.__hash__
    __eq__ = object.__eq__
    __ne__ = object.__ne__


def _read(project, key: tuple[str, str], deps: list) -> str:
    """Read what `key`'s module binds its name to: in passes, if it is the root of a cycle."""
    depth = len(_ASKING)
    stale = _STALE[0]
    first = _BEGUN[0] + 1
    mine: list = []
    while True:
        _BEGUN[0] += 1
        begun = _BEGUN[0]
        asking = _ASKING[key] = [depth, False]
        _LOW.append(depth + 1)
        try:
            kind = _name_kind(project, _module(project, key[0], mine), key[1], mine)
        finally:
            low = _LOW.pop()
            del _ASKING[key]
        if low > depth:
            break  # no reading under way was used: in no cycle, final
        before = _APPROX.get(key, ("",))[0]
        kind = _joined(before, kind)  # never less than the pass before found: it ends
        if kind != before:
            _APPROX[key] = (kind, begun)
            if asking[1]:
                _STALE[0] += 1  # taken to be less while it was read
        if low < depth:
            break  # read with what was taken for a name outside it: final once that one is
        inside = [k for k, v in _PASS.items() if v[3] > begun]
        if _STALE[0] == stale:
            # The root of its cycle: every name read inside it in this pass is final now.
            whole = tuple(dict.fromkeys(mine))
            for other in inside:
                _KINDS[other] = _entry(other, _PASS.pop(other)[0], whole)
            for other in [k for k, v in _APPROX.items() if v[1] >= first]:
                del _APPROX[other]  # (some not read in the last pass: a packet found sooner)
            break
        for other in inside:  # read with what was taken before: read again
            del _PASS[other]
        stale = _STALE[0]
    trail = tuple(dict.fromkeys(mine))
    if low < depth:
        deps.extend(trail)  # read with a kind taken for a name of its cycle: what that rests on
        _took(low)
        for other, (other_kind, other_low, other_trail, made) in _PASS.items():
            if other_low >= depth:  # read with what this name was taken to be
                _PASS[other] = (other_kind, low, other_trail, made)
        _PASS[key] = (kind, low, trail, begun)
        return kind
    _STALE[0] = stale  # what was taken inside it holds now
    if len(_KINDS) > 50_000:
        _KINDS.clear()
    entry = _KINDS[key] = _entry(key, kind, trail)
    deps.append(entry[1])
    return kind


def _took(low: int) -> None:
    """The reading under way used the kind taken for the one at depth `low` (or for one
    read with it)."""
    if low < _LOW[-1]:
        _LOW[-1] = low


def _joined(one: str, other: str) -> str:
    """The kind of a name bound to either (as `_name_kind` joins its bindings' kinds)."""
    if one == other or not other:
        return one
    return other if not one else PACKET


def _still_valid(project, trail: tuple) -> bool:
    """Every module the answer was read from has the key it had, and every lookup made on
    the way finds what it found. In a run whose files hold still (`ProjectIndex.fixed_content`
    and `fixed_layout`) the keys and lookups it compares are taken once, so a trail that held
    holds for the rest of the run: it is compared once (`qlint check -` of torch's
    eval_frame.py compared 7,454 trails, ~12,500 keys, for ~50 modules)."""
    held = _held(project)
    if held is not None and held.get(id(trail)) is trail:
        return True
    for path, key in trail:
        if type(path) is tuple:
            if path[0] == "kind":
                if not _kind_holds(project, path[1], path[2], key):
                    return False
            elif _found_now(project, path[1], path[2]) != key:
                return False
        elif file_keys.content_key(project, path) != key:
            return False
    if held is not None:
        held[id(trail)] = trail  # kept alive by the memo: its id names no other trail
    return True


def _held_trail(project, trail: tuple) -> bool:
    """Whether `trail` was found to hold in this run whose files hold still (`_still_valid`)."""
    held = _held(project)
    return held is not None and held.get(id(trail)) is trail


def _kind_holds(project, path: str, name: str, kind: str) -> bool:
    """Whether what the module at `path` binds `name` to is still `kind`, worked out exactly
    (its own trail compared, or read again), as a trail naming it (("kind", path, name)) asks.
    Not where that takes what a name under way was taken to be (the answer may be an import
    cycle's approximation), nor for a name whose own kept answer is being compared: the
    answer resting on it is read again instead."""
    key = (path, name)
    if key in _VALIDATING or key in _ASKING:
        return False
    depth = len(_ASKING)
    _LOW.append(depth)
    try:
        now = _kind(project, path, name, [])
    finally:
        low = _LOW.pop()
    if low < depth:
        _took(low)  # (read with a kind taken: the reading that took it is read in passes)
        return False
    return now == kind


def _flat(project, deps: list) -> list:
    """`deps` with each (("kind", path, name), kind) replaced by what that name's answer rests
    on, through the names it used in turn: the modules and lookups a check depends on."""
    memo = _flats(project)
    return list(_expanded(project, deps, {} if memo is None else memo))


def _expanded(project, deps, memo: dict) -> dict:
    """`deps` in order, each name entry replaced by what its answer rests on (`_name_flat`)."""
    out: dict = {}
    for dep in deps:
        path = dep[0]
        if type(path) is tuple and path[0] == "kind":
            out.update(dict.fromkeys(_name_flat(project, path[1:], memo)))
        else:
            out[dep] = None
    return out


def _name_flat(project, key: tuple[str, str], memo: dict) -> tuple:
    """What the answer of `key` rests on, modules and lookups only (`_flat`); `memo`: id of a
    trail -> (the trail, that)."""
    known = _KINDS.get(key)
    if known is None:  # let go of since (`_KINDS` is cleared past 50,000): read again
        again: list = []
        _kind(project, key[0], key[1], again)
        known = _KINDS.get(key)
        if known is None:
            return tuple(_flat(project, again))
    trail = known[2]
    hit = memo.get(id(trail))
    if hit is not None and hit[0] is trail:
        return hit[1]
    memo[id(trail)] = (trail, ())  # (a name resting on itself: none is read so)
    flat = tuple(_expanded(project, trail, memo))
    memo[id(trail)] = (trail, flat)
    return flat


def _flats(project) -> dict | None:
    """`_name_flat`'s answers in this run whose files hold still (`_held`), else None: each
    name's is worked out once per run, as its trail is compared once."""
    global _FLATS
    held = _held(project)
    if held is None:
        return None
    if _FLATS[0] is not held:
        _FLATS = (held, {})
    return _FLATS[1]


_FLATS: tuple[object, dict] = (None, {})


def _held(project) -> dict[int, tuple] | None:
    """The trails found to hold in this run (id -> trail), or None outside a run whose files
    hold still. Per project index (its buffers are part of the keys) and per run (`run_keys`
    is made anew for each, and the lookups `_found_now` keeps are per `layouts`)."""
    global _HELD
    if not (ProjectIndex.fixed_content and ProjectIndex.fixed_layout):
        return None
    keys = ProjectIndex.run_keys
    if _HELD[0] is not keys or _HELD[1] is not project or _HELD[2] != ProjectIndex.layouts:
        _HELD = (keys, project, ProjectIndex.layouts, {})
    return _HELD[3]


_HELD: tuple[object, object, int, dict[int, tuple]] = (None, None, -1, {})


def _found_now(project, module: str, root: str) -> str | None:
    """`_find`'s lookup of `module` from the import root `root`, as a trail re-checks it."""
    found = _run()["found"]
    key = (module, root)
    if ProjectIndex.fixed_layout and key in found:
        return found[key]
    where = project.find_module_in_check(module, kept_answers.root_requester(root))
    if ProjectIndex.fixed_layout:
        found[key] = where
    return where


def _kept(project, key: tuple[str, str]) -> tuple[str, tuple, tuple] | None:
    """The kind an earlier run worked out for `key` (`kept_answers`), if its trail holds now.
    A check of one edited file (pre-commit, an editor's `qlint check -`) otherwise reads again
    the modules every name it imports comes from: ExecuTorch's 930-line qualcomm/tests/utils.py,
    60 names, about 10 ms, to learn that none is a packet."""
    kept = kept_answers.saved("kinds", key)
    if kept is None or len(kept) != 2 or type(kept[0]) is not str:
        return None
    known_before = _KINDS.get(key)
    trail = kept_answers.valid_trail(
        kept[1],
        lambda path: file_keys.content_key(project, path),
        lambda path, now: file_keys.digest(project, path, now),
        lambda module, root: _found_now(project, module, root),
        lambda path, name, kind: _kind_holds(project, path, name, kind),
    )
    if trail is None:
        return None
    if key in _KINDS and _KINDS[key] is not known_before:
        return _KINDS[key]  # read afresh while the trail was compared (a name it rests on asked it)
    entry = _KINDS[key] = _entry(key, kept[0], trail)
    kept_answers.took(entry)
    return entry


def _name_kind(project, module: _Module, name: str, deps: list) -> str:
    kinds: set[str] = set()
    if name in module.torch:
        kinds.add(module.torch[name])
    for span in module.bindings(name):
        kind = _statement_kind(project, module, span, name, deps)
        if kind == PACKET or (kind and kinds - {"", kind}):
            return PACKET  # the join, whatever its other bindings are: not read (a cycle may be)
        kinds.add(kind)
    full = module.imported(name)
    if full is not None and name not in module.torch:
        source, _, attr = full.rpartition(".")
        where = _find(project, source, module.path, deps) if source else None
        if where is not None and where != module.path:
            kinds.add(_kind(project, where, attr, deps))
    if module.stars and not kinds and full is None and not module.defines(name):
        for base in star_sources(project, module.path, None):
            where = _find(project, base, module.path, deps)
            if where is not None and where != module.path:
                kinds.add(_kind(project, where, name, deps))
    kinds.discard("")
    if PACKET in kinds or len(kinds) > 1:
        return PACKET
    return kinds.pop() if kinds else ""


def _statement_kind(project, module: _Module, span: tuple[int, int], name: str, deps: list) -> str:
    """What a module-level statement binding `name` binds it to."""
    anchors = {**ROOT_WORDS, **module.torch}
    path = module.path
    words = [word for word in module.words(span) if word != name]
    words.sort(key=lambda word: (path, word) not in _KINDS)  # those known first
    read = Reading(module.text, span[0], span[1], module.spans)
    scanned = -1  # how many anchors the last scan had
    for word in words:
        if scanned != len(anchors) and (path, word) not in _KINDS:
            # Before a name is read (what it uses, maybe a whole import cycle): the statement
            # may spell a packet with the anchors known already, and more anchors only add
            # uses (`scan`), so it does with all of them (lowering.py's `logical_xor =
            # register_pointwise(aten.logical_xor, ...)` once `aten` is known).
            scanned = len(anchors)
            if scan(read, anchors)[0]:
                return PACKET
        kind = _kind(project, path, word, deps, own=True)
        if kind == PACKET:
            return PACKET
        if kind:
            anchors[word] = kind
    packet, bound = scan(read, anchors)
    if packet:
        return PACKET
    return bound.get(name, "")


def _star_kinds(project, path: str, deps: list) -> dict[str, str]:
    """The names a star import of the module at `path` may bind to packets, namespaces and
    roots (every name it binds or imports: its `__all__` is not read, a superset)."""
    module = _module(project, path, deps)
    out: dict[str, str] = {}
    for name in sorted(module.every_name()):
        kind = _kind(project, path, name, deps)
        if kind:
            out[name] = kind
    return out
