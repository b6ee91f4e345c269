"""Which functions and classes of a project may forward a parameter to one of QL101's default
sinks (`checkGraphModuleNodes(gm, expected_node_occurrence=occ)`), from texts alone.

QL101's helper search (`Forwarding.helper_names`) asked, in every file it checked, whether
each name the file imports and calls is such a helper: it resolved the name through the module
it names and read that module's imports in turn (ExecuTorch: 1.7 s of a cold run, for 8
modules in 3,800 that name a sink at all). `wrapper_index` reads the project once per run
anyway; it keeps these names beside the insertion wrappers' (one record, one dependency), and
the search then asks only about imports that can lead to one of them.

The search finds a helper in a module whose text names a sink (`holds_sink`: one of the
needles), or in one that names none but calls a function such a module defines (a chain's one
link, `wrapper_chains.forwards_on`). Those are read as `wrapper_candidates` reads the inserting
modules, with every needle written in code standing for a sink call any parameter of the
function around it may reach: a function is a candidate when it spans one, or passes a
parameter to a call of a candidate; a class when a function it spans is, or its bases name
one. A superset of what the search finds, as for the wrappers.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable

from qlint.analysis.graphs.module_text import ModuleText
from qlint.analysis.wrapper_record import QL101_NEEDLES

_NEEDLE = re.compile("|".join(re.escape(n.decode()) for n in sorted(QL101_NEEDLES, key=len, reverse=True)))


def holds_sink(data: bytes) -> bool:
    """Whether a module's bytes may hold one of the default sinks (the search's `holds_sink`:
    a needle anywhere in the text)."""
    for needle in _SHORTEST:  # noqa: SIM110 - asked of every module: no generator made each time
        if needle in data:
            return True
    return False


# The needles no other one holds (`expected_node` is in `expected_node_list`): one search each.
_SHORTEST = tuple(n for n in QL101_NEEDLES if not any(o != n and o in n for o in QL101_NEEDLES))


def sink_module_text(text: str, path: str = "", needles: tuple[str, ...] | None = None) -> ModuleText:
    """A module naming a sink, read for `candidates`: its sink calls stand where the inserting
    modules' insertions do, each one any parameter may reach (a superset of the search's
    sinks: a keyword or callee named in code, whatever the call). `needles`: the sinks'
    (`sinks.sink_needles`: a rule given `extra-sinks` names more); default, the default ones'."""
    return ModuleText(text, path, _needle_sites if needles is None else _sites_of(needles))


def _needle_sites(masked: str) -> list[tuple[int, frozenset[str] | None]]:
    return [(m.start(), None) for m in _NEEDLE.finditer(masked)]


@functools.lru_cache(maxsize=16)  # one per sink kind (rule options) the run checks with
def _sites_of(needles: tuple[str, ...]) -> Callable[[str], list[tuple[int, frozenset[str] | None]]]:
    pattern = re.compile("|".join(re.escape(n) for n in sorted(set(needles), key=len, reverse=True)))
    if pattern.pattern == _NEEDLE.pattern:
        return _needle_sites
    return lambda masked: [(m.start(), None) for m in pattern.finditer(masked)]


def helper_module_stems(modules: list[ModuleText], importing: list[str], names: set[str]) -> frozenset[str]:
    """The stems (`module_stem`) of the `modules` defining one of `names` at their level, and of
    the modules `importing` one: the words an import of a module through which a helper can
    be reached (`from pkg import checks`, then `checks.assert_nodes(...)` or `class
    T(checks.NodeChecks)`) ends in. A module holding none of QL101's trigger texts is asked
    about such an import with a set lookup per import (`helper_modules`), not a scan of its
    text."""
    from qlint.analysis.names.modules import module_stem

    defining = [m.path for m in modules if any(not span[5] and span[1] in names for span in m.spans)]
    return frozenset(map(module_stem, [*defining, *importing, *_packages(defining)]))


def _packages(paths: list[str]) -> list[str]:
    """The packages' `__init__.py` of the modules at `paths`: `import pkg`, then
    `pkg.checks.assert_nodes(...)`, reaches a helper of `pkg/checks.py` through the package's
    attribute, an import ending in the package's stem."""
    out = []
    for path in paths:
        directory = os.path.dirname(path)
        if os.path.basename(path) == "__init__.py":
            directory = os.path.dirname(directory)
        out.append(os.path.join(directory, "__init__.py"))
    return out
