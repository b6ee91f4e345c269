"""The calls in a function's own body (not in its nested functions or classes), kept on the
function: the helper search (`forwarding`) and the summaries of other modules' functions
(`forwarding_facts`) read them for each sink kind.
"""

from __future__ import annotations

import ast
from bisect import bisect_left, bisect_right
from collections.abc import Iterable

from qlint.analysis.node_memo import kept_on_node, kept_on_node_by
from qlint.analysis.tree_walk import own_nodes


def own_calls(func: ast.AST, rows: list[int] | None = None) -> Iterable[ast.Call]:
    """Calls in a function body, not in nested functions or classes; with `rows`, only
    those spanning one of them (a helper's sink call holds the sink's text on a row).
    All of them are kept on the function: the forwarding of each sink kind (QL101's matchers,
    QL102's insertions) asks about every method of the classes a module's classes inherit
    from, and walked each (43 walks of torch's observer.py per check)."""
    if rows is None:
        return kept_on_node(func, _CALLS, _walked_calls)
    # With rows, kept on the function too, under the rows among its own (its body lies within
    # them): every check of an editor asks each function on the rows of its module's needles,
    # and gets the unchanged functions' very nodes again (`statement_reuse`).
    end = func.end_lineno or func.lineno
    low = bisect_left(rows, func.lineno)
    key = tuple(rows[low : bisect_right(rows, end, low)])
    return kept_on_node_by(
        func,
        _ROW_CALLS,
        key,
        _ROW_CALLS_KEPT,
        lambda: tuple(n for n in own_nodes(func, scopes=False, rows=rows) if isinstance(n, ast.Call)),
    )


_CALLS = "_qlint_forwarding_calls"
_ROW_CALLS = "_qlint_forwarding_row_calls"
_ROW_CALLS_KEPT = 8


def _walked_calls(func: ast.AST) -> tuple[ast.Call, ...]:
    return tuple(n for n in own_nodes(func, scopes=False) if isinstance(n, ast.Call))
