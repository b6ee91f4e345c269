"""A module's tree parsed one top-level definition at a time: the same tree as `ast.parse`
of the whole text, without the parser's peak on a large module.

`ast.parse` holds its own whole-module syntax tree while it builds the Python one, about as
much again as the tree it returns: QL102's consumer scan parses other modules of the project
that spell an op (ExecuTorch's qualcomm `test_qnn_delegate.py`, 465 KB: a 38 MiB peak for a
17 MiB tree). Cut at the lines that open a top-level `def`, `class` or decorator, each piece
is parsed alone (padded with the line breaks before it, so every position is the one the
whole parse gives) and the bodies are joined.

Why a cut that parses is a true one: each piece starts where the tokenizer is at the start
of a top-level line (the first at the start of the text; each next one by induction), and a
piece that ends inside a string, a bracket or a backslash continuation does not parse on
its own. So when every piece parses, every cut is a top-level statement boundary, and a
`def`, `class` or `@` line never continues the statement before it: the pieces' statements
are the module's. When one does not parse, the whole text is parsed (and raises what the
whole parse raises). Texts whose line breaks the cut does not follow (a lone carriage
return) or whose tokens depend on an earlier statement (`barry_as_FLUFL`) are parsed whole.
"""

from __future__ import annotations

import ast
import re

from qlint.lazy_patterns import lazy

_CUT = lazy(r"^(?:def|async[ \t]+def|class)[ \t(]|^@", re.M)
_WHOLE_ONLY = ("\r", "barry_as_FLUFL")
# Below this many characters one parse costs little: cutting would only add parses.
_SMALL = 64_000
_JOINS = 8  # pieces one is joined with before the whole text is parsed instead


def parse_by_definitions(text: str, path: str) -> ast.Module:
    """`ast.parse(text, filename=path)`, for a text that parses: the same nodes and positions."""
    if len(text) < _SMALL or any(s in text for s in _WHOLE_ONLY):
        return ast.parse(text, filename=path)
    cuts = _cuts(text)
    body: list[ast.stmt] = []
    lines_before = 0
    first = 0
    while first < len(cuts) - 1:
        # A piece that does not parse alone (a decorator spanning lines, a `def` line in a
        # string) is joined to the next one, a few times at most: then the whole is parsed.
        for last in range(first + 1, min(first + 1 + _JOINS, len(cuts))):
            piece = text[cuts[first] : cuts[last]]
            try:
                tree = ast.parse("\n" * lines_before + piece, filename=path)
            except (SyntaxError, ValueError):
                continue
            break
        else:
            return ast.parse(text, filename=path)
        body.extend(tree.body)
        lines_before += piece.count("\n")
        first = last
    return ast.Module(body=body, type_ignores=[])


def _cuts(text: str) -> list[int]:
    """Where pieces start (the text's start and each line opening a definition, not one that
    a decorator line right above opens), and its end."""
    cuts = [0]
    for m in _CUT.finditer(text):
        at = m.start()
        above = text.rfind("\n", 0, at - 1) + 1 if at else 0
        if at and not text.startswith("@", above):
            cuts.append(at)
    cuts.append(len(text))
    return cuts
