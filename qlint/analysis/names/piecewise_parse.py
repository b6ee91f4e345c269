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

A large piece that is one class (a test suite's, spanning the module: torchao's
test_quantize_pt2e.py, 177 KB, is two classes) is cut again at the lines that open its
members, and each member is parsed under a stand-in `class _:` line right above it, so that
its positions are the whole parse's (`_class_by_members`); the same argument makes its cuts
true ones, and a member piece followed by a statement at the top level (which would end the
class) leaves the piece to the whole parse.

Neighbouring pieces are parsed together up to `_PIECE` characters (`_grouped`): every piece
is padded with the line breaks before it, which the tokenizer reads one by one (~50 ns each),
and a test suite cut at every member padded ExecuTorch's qualcomm `test_qnn_delegate.py`
(~12,000 lines) with ~1.2 M of them. Dropping cuts keeps the argument above: the cuts left
are some of the candidate ones, each still shown a true boundary by its pieces parsing.
"""

from __future__ import annotations

import ast
import itertools

from qlint.lazy_patterns import lazy

# Line starts after the text's first (none is a cut there), found from the line break before
# them: the parser's text holds no lone carriage return (`_WHOLE_ONLY`), and a leading literal
# lets the regex engine skip to each line break, where `^` under re.M was tried at every
# character. The indentation is possessive: a member line begins with no blank after it, so
# backtracking into it (once per blank, on every indented line) never found one. The cutters
# of torch's 157 modules over `_SMALL`: 0.34 -> 0.10 s and 0.65 -> 0.15 s.
_CUT = lazy(r"\n(?=(?:def|async[ \t]+def|class)[ \t(]|@)")
_MEMBER = lazy(r"\n([ \t]++)(?:(?:def|async[ \t]+def|class)[ \t(]|@)")
_WHOLE_ONLY = ("\r", "barry_as_FLUFL")
# Below this many characters one parse costs little: cutting would only add parses.
_SMALL = 64_000
_JOINS = 8  # pieces one is joined with before the whole text is parsed instead
# Neighbouring pieces are parsed as one while together they are at most this long: few
# paddings, and a parser peak far below the whole module's (~45 bytes a character at most).
_PIECE = 16_000
# Readers that parse any module (the engine's check, `live_trees`' default) parse in pieces from
# this many characters: the pieces cost ~15% more instructions than one parse, and the peak
# they save matters on the largest modules (ExecuTorch's qualcomm test_qnn_delegate.py, 465 KB:
# ~25 MiB off the worker checking it). At 256,000 before, the checks of torchao's 177 KB
# test_quantize_pt2e.py (its parser's own tree ~6.5 MiB beside the 5.6 MiB one it returns,
# torch's common_quantization.py parsed for QL201 beside both: `installed_classes`) and 103 KB
# test_qat.py made the peak of a run over ao, on top of what its earlier checks left mapped
# (one process: RSS 65.1 -> 60.9 MiB; ruff's is 63.6). Modules from here on: ao 5 (2 at 128,000),
# ExecuTorch 15 (2 at 256,000), the installed torch 81 (15).
LARGE = 100_000


def parse_whole_or_in_pieces(text: str, path: str) -> ast.Module:
    """`ast.parse(text, filename=path)`: in pieces (`parse_by_definitions`) for a text of at
    least `LARGE` characters."""
    return parse_by_definitions(text, path) if len(text) >= LARGE else ast.parse(text, filename=path)


def parse_by_definitions(text: str, path: str) -> ast.Module:
    """`ast.parse(text, filename=path)`, for a text that parses: the same nodes and positions."""
    if len(text) < _SMALL or any(s in text for s in _WHOLE_ONLY):
        return ast.parse(text, filename=path)
    cuts = _grouped(_cuts(text))
    body: list[ast.stmt] = []
    lines_before = 0
    first = 0
    while first < len(cuts) - 1:
        # A piece that does not parse alone (a decorator spanning lines, a `def` line in a
        # string) is joined to the next one, a few times at most: then the whole is parsed.
        for last in range(first + 1, min(first + 1 + _JOINS, len(cuts))):
            piece = text[cuts[first] : cuts[last]]
            # A class that spans much of the module (a test suite's) is cut again, at its members.
            found = _class_by_members(piece, lines_before, path) if len(piece) > _SMALL else None
            if found is not None:
                break
            try:
                found = ast.parse("\n" * lines_before + piece, filename=path).body
            except (SyntaxError, ValueError):
                continue
            break
        else:
            return ast.parse(text, filename=path)
        body.extend(found)
        lines_before += piece.count("\n")
        first = last
    return ast.Module(body=body, type_ignores=[])


def _class_by_members(piece: str, lines_before: int, path: str) -> list[ast.stmt] | None:
    """The statements of `piece` (a top-level piece, after `lines_before` lines), when it is a
    class statement (and the top-level statements after it) whose members are parsed one at
    a time, each under a stand-in `class _:` header on the line above it, so that its
    positions are the whole parse's; None when it is no class or a cut does not parse. The
    cuts are the lines that open a `def`, `class` or decorator at the indentation of the
    first such line; as at the top level, a cut that parses is a true one: each member piece
    but the last must be members only (a statement at the top level ends the class)."""
    cuts = _grouped(_member_cuts(piece))
    if not cuts:
        return None
    indent = piece[cuts[0] : len(piece) - len(piece[cuts[0] :].lstrip(" \t"))]
    for first in range(min(_JOINS, len(cuts) - 1)):
        header = piece[: cuts[first]]
        try:
            # The header with a `pass` of ours after its own statements (it may have none).
            head = ast.parse("\n" * lines_before + header + indent + "pass\n", filename=path).body
        except (SyntaxError, ValueError):
            continue  # a member line in the docstring, a decorator spanning lines
        break
    else:
        return None
    if len(head) != 1 or not isinstance(head[0], ast.ClassDef) or not isinstance(head[0].body[-1], ast.Pass):
        return None
    cls = head[0]
    cls.body.pop()
    after: list[ast.stmt] = []
    lines = lines_before + header.count("\n")
    while first < len(cuts) - 1:
        for last in range(first + 1, min(first + 1 + _JOINS, len(cuts))):
            chunk = piece[cuts[first] : cuts[last]]
            try:
                tree = ast.parse("\n" * (lines - 1) + "class _:\n" + chunk, filename=path)
            except (SyntaxError, ValueError):
                continue
            break
        else:
            return None
        if last < len(cuts) - 1 and len(tree.body) != 1:
            return None  # a top-level statement, then an indented member: not one class
        cls.body.extend(tree.body[0].body)
        after = tree.body[1:]
        lines += chunk.count("\n")
        first = last
    cls.end_lineno, cls.end_col_offset = cls.body[-1].end_lineno, cls.body[-1].end_col_offset
    return [cls, *after]


def _member_cuts(piece: str) -> list[int]:
    """Where the member pieces of a class statement start, and the piece's end ([]: none)."""
    found = list(_MEMBER.finditer(piece))
    if not found or not piece.startswith(("class", "@")):
        return []
    indent = found[0].group(1)
    cuts = []
    for m in found:
        at = m.start(1)
        above = piece.rfind("\n", 0, at - 1) + 1
        if m.group(1) == indent and not piece.startswith(indent + "@", above):
            cuts.append(at)
    cuts.append(len(piece))
    return cuts


def _grouped(cuts: list[int]) -> list[int]:
    """`cuts` (the first one, ..., the text's end) without those between neighbouring pieces
    that together are at most `_PIECE` characters long: a piece longer than that stays alone
    (a class spanning the module is still cut at its members, and the first cut stays)."""
    if len(cuts) < 3:
        return cuts
    kept = [cuts[0]]
    for at, after in itertools.pairwise(cuts[1:]):  # each cut but the first, and the next
        if after - kept[-1] > _PIECE:
            kept.append(at)
    kept.append(cuts[-1])
    return kept


def _cuts(text: str) -> list[int]:
    """Where pieces start (the text's start and each line opening a definition, not one that
    a decorator line right above opens), and its end."""
    cuts = [0]
    for m in _CUT.finditer(text):
        at = m.end()
        above = text.rfind("\n", 0, at - 1) + 1
        if not text.startswith("@", above):
            cuts.append(at)
    cuts.append(len(text))
    return cuts
