"""The facts the helper search (`forwarding`) shares across the checks of one process and,
through `kept_answers`, across runs. Each entry carries its trail: the modules (and module
lookups) it was read from, with their content keys; it is reused only while those hold.
"""

from __future__ import annotations

import ast

from qlint.analysis.graphs import kept_answers

# Facts shared by the checks of one process, each with the modules (and their content keys)
# it was read from: reused only while those are unchanged.
IMPORTED: dict[tuple, tuple[bool | frozenset[str], tuple]] = {}
SHARED: dict[tuple, tuple[ast.AST, frozenset[str], tuple]] = {}
# (module, sink kind, without an index) -> its chain links (`wrapper_chains._links_of`).
LINKS_OF: dict[tuple, tuple[bool, tuple[tuple[str, str, str], ...], tuple]] = {}
# (module, name, links left, sink kind, without an index) -> `wrapper_chains._passes_on`.
PASSING: dict[tuple, tuple[bool, tuple]] = {}


# What of each memo's entries outlives the process (`kept_answers`): all but the trail; of
# `SHARED`, the answer about another module's function (known by its summary's key), not
# the function itself, nor answers about functions known only by their trees.
MEMO_NAMES = {id(IMPORTED): "imported", id(LINKS_OF): "links", id(PASSING): "passing", id(SHARED): "shared"}


def _run_group(key) -> object:
    """The group a run over many files writes an answer in (`kept_state.RUN`): the module
    or dotted name it is about; None for an answer worked out with the project's wrapper-name
    index, which a check of one file (without one) never asks. Keys: (name, root, (sink kind,
    without an index, chain links)), (module file, name, kind), ("base" or "chain", name or
    module, ..., kind), (module file, sink kind, without an index), (module, name, links left,
    sink kind, without an index)."""
    try:
        last = key[-1]
        if (last[1] if isinstance(last, tuple) else last) is not True:
            return None
        return key[1] if key[0] in ("base", "chain") else key[0]
    except (IndexError, KeyError, TypeError):  # no key of these memos
        return None


kept_answers.register("imported", IMPORTED, lambda key, entry: entry[:-1], whole=_run_group)
kept_answers.register("links", LINKS_OF, lambda key, entry: entry[:-1], whole=_run_group)
kept_answers.register("passing", PASSING, lambda key, entry: entry[:-1], whole=_run_group)
kept_answers.register("shared", SHARED, lambda key, entry: entry[1:-1] if isinstance(key[0], tuple) else None)


def unkept_function(value: tuple) -> tuple:
    """A kept `SHARED` answer as the memo holds it: the function itself is not kept."""
    return (None, *value)
