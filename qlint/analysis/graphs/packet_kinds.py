"""What a module of the project binds a name to, for QL101/QL102's packet gate
(`packet_imports`): a packet (or a collection that may hold one), a namespace, an ops root,
or none of those, read from the statements binding it, with the names they use, through the
module's own imports and star imports, recursively (`packet_modules` reads the texts,
`packet_lookups` finds the modules). Import cycles are read to their least fixpoint.

Each answer is kept with its trail (the modules, lookups and other names it was read from),
compared before it is used again: in this run, or from an earlier one (`kept_answers`).
"""

from __future__ import annotations

from qlint.analysis.graphs import file_keys, kept_answers
from qlint.analysis.graphs.packet_lookups import find_module, found_now
from qlint.analysis.graphs.packet_modules import ModuleText, read_module
from qlint.analysis.graphs.packet_text import PACKET, ROOT_WORDS, Reading, scan
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.star_imports import star_sources

__all__ = ["held_trails", "kind_of", "known_kind"]


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
# check records the modules behind such names too (`packet_imports._flat`).
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
# The names whose known answer is being compared (`kind_of`): one asked again meanwhile is read.
_VALIDATING: set[tuple[str, str]] = set()
_BEGUN = [0]  # readings begun so far: one begun after another, under way, is inside it
_STALE = [0]  # names found more than they were taken to be while read (another pass due)
kept_answers.register("kinds", _KINDS, lambda key, entry: entry[:1], whole=True)


def kind_of(project, path: str, name: str, deps: list, own: bool = False) -> str:
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
            kind = _name_kind(project, read_module(project, key[0], mine), key[1], mine)
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
    held = held_trails(project)
    if held is not None and held.get(id(trail)) is trail:
        return True
    for path, key in trail:
        if type(path) is tuple:
            if path[0] == "kind":
                if not _kind_holds(project, path[1], path[2], key):
                    return False
            elif found_now(project, path[1], path[2]) != key:
                return False
        elif file_keys.content_key(project, path) != key:
            return False
    if held is not None:
        held[id(trail)] = trail  # kept alive by the memo: its id names no other trail
    return True


def _held_trail(project, trail: tuple) -> bool:
    """Whether `trail` was found to hold in this run whose files hold still (`_still_valid`)."""
    held = held_trails(project)
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
        now = kind_of(project, path, name, [])
    finally:
        low = _LOW.pop()
    if low < depth:
        _took(low)  # (read with a kind taken: the reading that took it is read in passes)
        return False
    return now == kind


def held_trails(project) -> dict[int, tuple] | None:
    """The trails found to hold in this run (id -> trail), or None outside a run whose files
    hold still. Per project index (its buffers are part of the keys) and per run (`run_keys`
    is made anew for each, and the lookups `found_now` keeps are per `layouts`)."""
    global _HELD
    if not (ProjectIndex.fixed_content and ProjectIndex.fixed_layout):
        return None
    keys = ProjectIndex.run_keys
    if _HELD[0] is not keys or _HELD[1] is not project or _HELD[2] != ProjectIndex.layouts:
        _HELD = (keys, project, ProjectIndex.layouts, {})
    return _HELD[3]


_HELD: tuple[object, object, int, dict[int, tuple]] = (None, None, -1, {})


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
        lambda module, root: found_now(project, module, root),
        lambda path, name, kind: _kind_holds(project, path, name, kind),
    )
    if trail is None:
        return None
    if key in _KINDS and _KINDS[key] is not known_before:
        return _KINDS[key]  # read afresh while the trail was compared (a name it rests on asked it)
    entry = _KINDS[key] = _entry(key, kept[0], trail)
    kept_answers.took(entry)
    return entry


def _name_kind(project, module: ModuleText, name: str, deps: list) -> str:
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
        where = find_module(project, source, module.path, deps) if source else None
        if where is not None and where != module.path:
            kinds.add(kind_of(project, where, attr, deps))
    if module.stars and not kinds and full is None and not module.defines(name):
        for base in star_sources(project, module.path, None):
            where = find_module(project, base, module.path, deps)
            if where is not None and where != module.path:
                kinds.add(kind_of(project, where, name, deps))
    kinds.discard("")
    if PACKET in kinds or len(kinds) > 1:
        return PACKET
    return kinds.pop() if kinds else ""


def _statement_kind(project, module: ModuleText, span: tuple[int, int], name: str, deps: list) -> str:
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
        kind = kind_of(project, path, word, deps, own=True)
        if kind == PACKET:
            return PACKET
        if kind:
            anchors[word] = kind
    packet, bound = scan(read, anchors)
    if packet:
        return PACKET
    return bound.get(name, "")


def known_kind(key: tuple[str, str]) -> tuple[str, tuple, tuple] | None:
    """What `_KINDS` holds for `key` now, or None."""
    return _KINDS.get(key)
