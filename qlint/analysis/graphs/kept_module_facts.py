"""Facts QL101/QL102 work out about other modules (`scanned_facts.module_facts`: what a module
inserts into graphs that carry packets, what its normalisers call; `packet_scan`: where a
consumer module keys graph nodes on the packets checked), kept between runs with everything
they were read from.

A fresh process checking one edited file parsed each such module again and worked its fact
out anew (ExecuTorch's `backends/cadence/aot/reorder_ops.py`: three other modules parsed, a
fifth of QL101's time; torchao's `pt2e/observer.py`: four consumer modules for QL102).
A fact is not the module's alone: resolving its names reads the modules it imports (and
records their absence where a module it asks for does not exist), so it cannot be a summary
fact (`summary_facts`, which may read its own module only). It is kept as `kept_answers` keeps
the helper search's answers: with its trail, the module itself and every module the
computation recorded as read, each with its stat, hash and dotted name. A later run takes the
fact only while every one of them has that content (the same stat, or the same hash) and name,
and every module absent then is absent still; otherwise it is worked out again, as before.

What the computation read is what the project index recorded meanwhile (`ProjectIndex.reads`):
the dependencies the results cache trusts a check's result with. A computation that recorded
anything but files (a listing of the project, the project's wrapper names, a body of the
checked module), or read an editor's buffer, is not kept: nothing here could tell whether
those still hold.

Only facts registered here (`keep_on_disk`) are kept, and only while answers are kept at all
(`kept_answers.keeping`: the checks of one buffer or one file with a cache).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any

from qlint.analysis.graphs import file_keys, kept_answers

# (fact name and variant, module path) -> (the value as written, or None: the module does not
# parse; trail)
_KEPT: dict[tuple[str, str], tuple[Any, tuple]] = {}
kept_answers.register("module_facts", _KEPT, lambda key, entry: entry[:-1])

# fact function -> (name, value -> plain data, plain data -> value or raise TypeError/ValueError)
_FACTS: dict[Callable, tuple[str, Callable[[Any], Any], Callable[[Any], Any]]] = {}

MISSING: Any = object()
_NO_LOOKUP = object()  # no lookup is written: a trail holding one (a damaged file) is not taken


def keep_on_disk(fact: Callable, name: str, dump: Callable[[Any], Any], load: Callable[[Any], Any]) -> None:
    """Keep `fact(module)` between runs under `name` (a new name when what it computes
    changes): `dump(value)` is plain data `marshal` writes, `load(data)` the value again, and
    raises TypeError or ValueError on data `dump` would not have written."""
    _FACTS[fact] = (name, dump, load)


def sorted_tuple(value) -> tuple:
    """A set as `keep_on_disk` writes it: in one order, whatever the hash seed."""
    return tuple(sorted(value))


def keeps(key: tuple | None) -> bool:
    """Whether facts of a module at content `key` are kept now (a store keeps answers, and
    the module is no editor's buffer)."""
    return key is not None and key[0] != "overlay" and kept_answers.keeping()


def _wanted(project, fact: Callable, key: tuple | None) -> tuple | None:
    spec = _FACTS.get(fact)
    return spec if spec is not None and keeps(key) else None


def taken(project, fact: Callable, path: str, key: tuple | None, variant: str = "") -> Any:
    """`(value,)` of `fact` for the module at `path` (content `key`), or None when it does not
    parse, as an earlier run worked it out while every module it read has the content it had;
    `MISSING` otherwise. `variant`: what else the fact was asked with (the ops of QL102's
    consumer sites), one value kept per variant."""
    spec = _wanted(project, fact, key)
    if spec is None:
        return MISSING
    saved = kept_answers.saved("module_facts", (spec[0] + variant, path))
    if saved is None or len(saved) != 2:
        return MISSING
    trail = kept_answers.valid_trail(
        saved[-1],
        lambda p: file_keys.content_key(project, p),
        lambda p, now: file_keys.digest(project, p, now),
        lambda module, root: _NO_LOOKUP,
    )
    if not trail or trail[0] != (path, key):
        return MISSING
    try:
        value = None if saved[0] is None else (spec[2](saved[0]),)
    except (TypeError, ValueError):
        return MISSING
    entry = _KEPT[spec[0] + variant, path] = (saved[0], trail)
    kept_answers.took(entry)
    return value


@contextlib.contextmanager
def computing(
    project, fact: Callable, path: str, key: tuple | None, variant: str = ""
) -> Iterator[Callable[[Any], None]]:
    """While inside, `fact` is worked out for the module at `path`; call what it yields with
    the result (`(value,)`, or None: the module does not parse) to keep it with what was read
    meanwhile. The reads are still handed to any outer reader of `project.reads`."""
    spec = _wanted(project, fact, key)
    if spec is None:
        yield lambda value: None
        return
    outer = project.reads
    reads: list[tuple[str, str]] = []
    project.reads = reads
    results: list[Any] = []
    # Every read recorded, as for a check whose result is cached: the check of a buffer wants
    # none (`dependencies_unwanted`), and answers reused from memos then record nothing.
    index = type(project)
    wanted = index.wants_dependencies
    index.wants_dependencies = True
    try:
        yield results.append
    finally:
        index.wants_dependencies = wanted
        project.reads = outer
        if outer is not None:
            outer.extend(reads)
    if len(results) == 1:
        trail = recorded_trail(project, path, key, reads)
        if trail is not None:
            value = results[0]
            _KEPT[spec[0] + variant, path] = (None if value is None else spec[1](value[0]), trail)


def recorded_trail(project, path: str, key: tuple, reads: list[tuple[str, str]]) -> tuple | None:
    """((path, content key now), ...): the module, then each file read as it was read (None:
    absent); None when a read is no file, or a file changed since it was read."""
    # `kept_answers` writes each file's hash beside its stat: the one this process knows for it.
    file_keys.remember_digest(path, key, file_keys.digest(project, path, key))
    out = [(path, key)]
    for dep, digest in reads:
        if not os.path.isabs(dep):  # a listing, the wrapper names, a body of the checked module
            return None
        now = file_keys.content_key(project, dep)
        if digest == "":
            if now is not None:
                return None
            out.append((dep, None))
            continue
        if now is None or now[0] == "overlay" or file_keys.digest(project, dep, now) != digest:
            return None
        file_keys.remember_digest(dep, now, digest)
        out.append((dep, now))
    return tuple(dict.fromkeys(out))


def forget() -> None:
    """Drop what this process kept (tests)."""
    _KEPT.clear()


__all__ = ["MISSING", "computing", "forget", "keep_on_disk", "keeps", "sorted_tuple", "taken"]
