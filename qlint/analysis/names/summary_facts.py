"""Facts a module's summary carries beyond its bindings, and how to add one.

A check reads other modules of the project for a few facts each (which of their functions
forward a parameter to a sink, ...). Working them out from the module's tree in every check
that imports it, and keeping that tree alive for the next one, is what made cross-module
reach cost as much as the file's own check. A `SummaryFact` is computed once per module
content, from the one parse that builds the module's summary, and kept with the summary:
in memory (the language server) and in the disk store (the CLI; `qlint.summary_cache`),
both invalidated by the module's content digest. Rules then read the fact, never the
module's tree.

Adding a fact (e.g. "which imported functions this module calls with which model"):

1. Write a class with what the `SummaryFact` protocol asks, in the analysis module that needs
   it (no subclassing: analysis classes are not split across modules):
   - `key`: a string naming the fact and everything its value depends on besides the
     module's content: the format version and any rule option (QL101's sinks). Two facts
     with one key must compute the same value.
   - `compute(tree, scope, text)`: the value, as plain data only (dict with str keys, list,
     tuple, str, int, float, bool, None): the store `marshal`s it, and loading a cache must
     never run code. It may read this module alone: never another module (its summary is
     dropped when this module changes, not when another one does). Keep it small: it is
     read by every check that imports the module.
   - `load(path, summary, value)`: the in-memory form rules use.
     It raises TypeError/ValueError/KeyError on data it would not have written (a damaged
     or older store): the fact is then computed again, from a fresh parse.
   - optionally `lazy = True`: computed only for the modules it is asked of, not with every
     summary. Right for a fact asked of few of the modules summarised (the others are
     summarised for their names): asked of a module summarised before, it costs a parse.
2. Ask `ProjectIndex.module_fact(module, requester, fact)` (or `fact_at(path, fact)` when
   the path is known). The project index registers the fact, computes it with every other
   registered fact when it parses a module, records the module as a dependency of the
   requester's check (cached results are dropped when it changes), and caches the loaded
   form per content.

`qlint.analysis.graphs.forwarding_facts` is the worked example.
"""

from __future__ import annotations

import ast
from typing import Any, Protocol


class SummaryFact(Protocol):
    """What the project index asks of a fact (implement it, do not derive from it)."""

    key: str
    # lazy: bool  (optional; see above)

    def compute(self, tree: ast.Module, scope, text: str) -> Any: ...

    def load(self, path: str, summary, value: Any) -> Any: ...


_PLAIN = (str, int, float, bool, type(None))


def plain(value: Any, depth: int = 0) -> bool:
    """Whether `value` is data a summary may hold (what `marshal` writes back the same)."""
    if isinstance(value, _PLAIN):
        return True
    if depth > 64:
        return False
    if isinstance(value, (list, tuple)):
        return all(plain(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain(v, depth + 1) for k, v in value.items())
    return False
