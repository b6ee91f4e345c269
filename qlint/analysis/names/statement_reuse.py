"""The statements of a file's last check, put back into the tree of its next check.

A keystroke in an editor changes one statement; the language server checks the whole buffer
again. The per-body answers the analyses keep on syntax-tree nodes (`node_memo.kept_on_node`:
a function's local bindings, its calls, its constant flags, ...) live as long as the node:
with a fresh parse every check, each was computed again for every unchanged function.

After the new text is parsed, every statement whose lines lie wholly outside the edited lines,
at the same position as before, is replaced by the node the last check had for it. Such a
statement's text is the same, character for character, and so are its line and column
numbers: the parser gives an equal subtree, so the old one is the same answer with its kept
facts. A statement on an edited line, or one whose lines moved (an Enter or a deleted line
above it), keeps the new parse (its positions differ; a node's facts may hold rows). The
blocks holding an edited statement are the new ones too, with their unchanged statements
reused one level down.
"""

from __future__ import annotations

import ast

_BLOCKS = ("body", "orelse", "finalbody", "handlers")


def _first_line(stmt: ast.AST) -> int:
    decorators = getattr(stmt, "decorator_list", None)
    return min([stmt.lineno, *(d.lineno for d in decorators)]) if decorators else stmt.lineno


def _key(stmt: ast.AST) -> tuple:
    return (type(stmt), stmt.lineno, stmt.col_offset, stmt.end_lineno, stmt.end_col_offset, _first_line(stmt))


def _children(node: ast.AST):
    """The statement lists directly inside `node`. Except-handlers count as statements (they
    have positions); a match case has none, so only the statements of its body do."""
    for name in _BLOCKS:
        block = getattr(node, name, None)
        if block:
            yield block
    for case in getattr(node, "cases", None) or ():
        yield case.body


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix (a binary search of C-speed slice compares)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[low:mid] == b[low:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _common_suffix(a: str, b: str, limit: int) -> int:
    low, high = 0, limit
    while low < high:
        mid = (low + high + 1) // 2
        if a[len(a) - mid : len(a) - low] == b[len(b) - mid : len(b) - low]:
            low = mid
        else:
            high = mid - 1
    return low


def edited_lines(old: str, new: str) -> tuple[int, int, int]:
    """(first edited line, last edited line in the new text, lines added): every line before
    the first, and with no lines added or removed every line after the last, is the same
    line of text, at the same number, in both."""
    prefix = _common_prefix(old, new)
    suffix = _common_suffix(old, new, min(len(old), len(new)) - prefix)
    first = new.count("\n", 0, prefix) + 1
    last = new.count("\n", 0, len(new) - suffix) + 1
    return first, last, new.count("\n") - old.count("\n")


def graft(old_text: str, old_tree: ast.Module, new_text: str, new_tree: ast.Module) -> int:
    """Put `old_tree`'s unchanged statements into `new_tree` in place; how many were put."""
    first, last, added = edited_lines(old_text, new_text)

    def unchanged(stmt: ast.AST) -> bool:
        return stmt.end_lineno < first or (added == 0 and _first_line(stmt) > last)

    old: dict[tuple, ast.AST] = {}
    stack = [old_tree]
    while stack:
        for block in _children(stack.pop()):
            for stmt in block:
                if unchanged(stmt):
                    old[_key(stmt)] = stmt
                else:
                    stack.append(stmt)
    put = 0
    stack = [new_tree]
    while stack:
        for block in _children(stack.pop()):
            for i, stmt in enumerate(block):
                if not unchanged(stmt):
                    stack.append(stmt)
                    continue
                before = old.get(_key(stmt))
                if before is not None:
                    block[i] = before
                    put += 1
    return put


class PreviousTrees:
    """The last checked text and tree of the few files an editor has open."""

    def __init__(self, limit: int = 8):
        self.limit = limit
        self._trees: dict[str, tuple[str, ast.Module]] = {}

    def reuse(self, path: str, text: str, tree: ast.Module) -> int:
        """Graft the last check's unchanged statements of `path` into `tree` (see above)."""
        previous = self._trees.get(path)
        if previous is None or previous[1] is tree:
            return 0
        return graft(previous[0], previous[1], text, tree)

    def keep(self, path: str, text: str, tree: ast.Module) -> None:
        self._trees.pop(path, None)
        self._trees[path] = (text, tree)
        while len(self._trees) > self.limit:
            del self._trees[next(iter(self._trees))]

    def drop(self, path: str) -> None:
        self._trees.pop(path, None)
