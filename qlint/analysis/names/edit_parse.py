"""The tree of a module after a keystroke in one function, from a parse of that function only.

An editor checks the whole buffer after every keystroke, and `ast.parse` of a 4,300-line module
takes ~45 ms, with ~10 ms more to free the statements `statement_reuse` then replaces by the
last check's. When the edit left the number of lines alone and lies within one function of the
module or one method of a class of the module (its decorators to its last line), only that
function's text is parsed, at its own rows and columns: newlines pad it to its first row, and a
method is wrapped in `if 1:` so that its indentation stays its own. The module is the last
check's statements with that one replaced (its class a new node with the other methods), which
is what parsing the whole text gives with the unchanged statements put back.

Why that is the whole text's parse: the text before the function is unchanged, so the tokenizer
reaches the function's first row in the state it reached it in before (a statement starting at
the function's indentation), and the text after it is unchanged and was not part of the
function: its next code row is indented no deeper than the `def`. So when the function's rows
parse on their own as exactly one function (no bracket, string or block left open at their end,
which a wrapper-less EOF would reject), the whole text parses as the same statements around it.
Anything else (rows added or removed, an edit outside one such function, a parse error, a text
with carriage returns, whose rows `statement_reuse` does not count, or `barry_as_FLUFL`, a
future import that changes how the rows parse) is parsed whole, as before.
"""

from __future__ import annotations

import ast

from qlint.analysis.tree_walk import first_row

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _holding(stmts: list[ast.stmt], first: int, last: int) -> int | None:
    """The index of the statement whose rows (decorators included) hold rows first..last."""
    for i, stmt in enumerate(stmts):
        if first_row(stmt) <= first and last <= stmt.end_lineno:
            return i
        if stmt.lineno > last:
            return None
    return None


def edited_function(tree: ast.Module, first: int, last: int) -> tuple[int, int | None] | None:
    """(index in the module, index in the class or None) of the function of the module or method
    of a class of the module whose rows hold the edited rows; None for any other edit."""
    i = _holding(tree.body, first, last)
    if i is None:
        return None
    stmt = tree.body[i]
    if isinstance(stmt, _FUNCTIONS):
        return i, None
    if isinstance(stmt, ast.ClassDef):
        j = _holding(stmt.body, first, last)
        if j is not None and isinstance(stmt.body[j], _FUNCTIONS):
            return i, j
    return None


def parse_edited(tree: ast.Module, text: str, first: int, last: int, added: int) -> ast.Module | None:
    """The tree of `text` built from `tree` (the last check's, of a text that differs from
    `text` in rows first..last only, `added` rows more) and a parse of the edited function;
    None when that cannot be done (the caller parses the whole text)."""
    if added or "\r" in text or "barry_as_FLUFL" in text:
        return None
    where = edited_function(tree, first, last)
    if where is None:
        return None
    i, j = where
    cls = tree.body[i] if j is not None else None
    old = tree.body[i] if j is None else cls.body[j]
    start, end = first_row(old), old.end_lineno
    rows = text.split("\n", end)
    if len(rows) < end:
        return None
    segment = "\n".join(rows[start - 1 : end])
    if cls is None:
        source = "\n" * (start - 1) + segment
    else:
        source = "\n" * (start - 2) + "if 1:\n" + segment
    try:
        parsed = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    body = parsed.body if cls is None else _wrapped(parsed.body)
    if body is None or len(body) != 1 or type(body[0]) is not type(old):
        return None
    new = body[0]
    if (new.lineno, new.col_offset) != (old.lineno, old.col_offset) or first_row(new) != start:
        return None
    module_body = list(tree.body)
    if cls is None:
        module_body[i] = new
    else:
        methods = list(cls.body)
        methods[j] = new
        fields = {f: getattr(cls, f) for f in cls._fields}
        fields["body"] = methods
        positions = {a: getattr(cls, a) for a in cls._attributes}
        if j == len(methods) - 1:  # the class ends where its last statement now ends
            positions["end_lineno"], positions["end_col_offset"] = new.end_lineno, new.end_col_offset
        module_body[i] = ast.ClassDef(**fields, **positions)
    return ast.Module(body=module_body, type_ignores=list(tree.type_ignores))


def _wrapped(body: list[ast.stmt]) -> list[ast.stmt] | None:
    if len(body) != 1 or not isinstance(body[0], ast.If) or body[0].orelse:
        return None
    return body[0].body


__all__ = ["edited_function", "parse_edited"]
