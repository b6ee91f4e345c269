"""Whether a module, with what it imports from other modules of the project, can hand
QL101/QL102 an `OpOverloadPacket`: the part of their exact gate (`packet_text`) that reads
other modules, asked by the rules' import triggers for a file whose own text makes none.

`Resolver` follows `from <module> import name` (and star imports) into the module of the
project that binds `name`: a packet, a collection holding one, a namespace or an ops root
bound there (directly, through the names its statement uses, or through its own imports)
reaches the checked file. `name_kind` answers that from the texts, on demand (`packet_kinds`
reads a name, `packet_modules` the texts of the modules, `packet_lookups` finds them): a
module is read once per content, split into its module-level statements only once a name
asked about is assigned in it, and only the statements binding that name are read (with the
names they use, recursively). Every module read, and every module of the project looked for
and not found, is a dependency of the check that asked: what the answers rest on, through
the names they were read from (`_flat`).
"""

from __future__ import annotations

import os

from qlint.analysis.graphs import file_keys
from qlint.analysis.graphs.packet_kinds import held_trails, kind_of, known_kind
from qlint.analysis.graphs.packet_lookups import find_module
from qlint.analysis.graphs.packet_modules import read_module
from qlint.analysis.graphs.packet_text import (
    NAMESPACE,
    PACKET,
    ROOT,
    ROOT_WORDS,
    Reading,
    identifiers,
    import_kind,
    scan,
    spells_packet,
    torch_names,
)
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.star_imports import star_sources
from qlint.analysis.names.text_imports import file_imports

__all__ = ["NAMESPACE", "PACKET", "ROOT", "may_hold_packet", "name_kind"]


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
            where = find_module(project, module, path, deps) if module else None
            if where is None:
                continue
            if own is None:
                own = os.path.abspath(path)
            if where == own:
                continue
            kind = kind_of(project, where, name, deps)
            if kind == PACKET:
                return True
            if kind:
                extra[local] = kind
        if "*" in text:
            for base in star_sources(project, path, None):
                where = find_module(project, base, path, deps)
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


def name_kind(project, path: str, name: str, deps: list) -> str:
    """What the module at `path` binds `name` to at module level: `PACKET` (or a collection
    that may hold one, or cannot tell), `NAMESPACE`, `ROOT`, or "" (none of those). What was
    read is appended to `deps`: every module and lookup, through the names read on the way."""
    mine: list = []
    kind = kind_of(project, path, name, mine)
    deps.extend(_flat(project, mine))
    return kind


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
    known = known_kind(key)
    if known is None:  # let go of since (`packet_kinds._KINDS` is cleared past 50,000): read again
        again: list = []
        kind_of(project, key[0], key[1], again)
        known = known_kind(key)
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
    """`_name_flat`'s answers in this run whose files hold still (`held_trails`), else None: each
    name's is worked out once per run, as its trail is compared once."""
    global _FLATS
    held = held_trails(project)
    if held is None:
        return None
    if _FLATS[0] is not held:
        _FLATS = (held, {})
    return _FLATS[1]


_FLATS: tuple[object, dict] = (None, {})


def _star_kinds(project, path: str, deps: list) -> dict[str, str]:
    """The names a star import of the module at `path` may bind to packets, namespaces and
    roots (every name it binds or imports: its `__all__` is not read, a superset)."""
    module = read_module(project, path, deps)
    out: dict[str, str] = {}
    for name in sorted(module.every_name()):
        kind = kind_of(project, path, name, deps)
        if kind:
            out[name] = kind
    return out
