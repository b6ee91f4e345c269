"""Attribute chains that reach the old PT2E package, and the rows worth walking for them.

`torch.ao.quantization.quantize_pt2e.prepare_pt2e` reached through `import torch`, an alias
(`tq = torch.ao.quantization`), a function's own import or a class attribute (`self.q`):
a chain's qualified name is its head's plus the rest, so only rows holding a head that can
name the old package, or the word `quantization`, are walked (`identifier_rows`). For a
chain found, `outermost_move` gives the longest prefix the moves table knows, and
`module_alias_fix` says how safely a name bound to a removed module can be rebound.
"""

from __future__ import annotations

import ast
from bisect import bisect_right
from collections.abc import Iterator

from qlint.analysis.context import FileContext
from qlint.analysis.edits.pt2e_moves import OLD_PACKAGE, Move, Moves, worst
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.tree_walk import parents as tree_parents

_CHAIN_TYPES = (ast.Name, ast.Attribute)


def chain_words(body, resolver: Resolver, owned: set) -> set[str]:
    """Words on a row of every chain of `body` that can name something under the old package,
    so only those rows are walked (module-level heads are asked once, by the caller).

    A chain's qualified name is its head's plus the rest: a head naming `torch` or
    `torch.ao` needs an attribute `quantization` later in the chain, a head naming the old
    package or below is itself the word, and `self.x`/`cls.x` resolve through the class's
    attributes, so those names count."""
    words = set()
    local = body.local
    for head in local.keys() - owned:
        if head in ("self", "cls") and body.class_scope is not None:
            continue
        # A local names a module only through its one value, a chain of names: not when its
        # first binding is anything else (a call, a parameter), which most locals are.
        values = local[head]
        if not values or type(values[0]) not in _CHAIN_TYPES:
            continue
        if names_old(resolver.qualname(ast.Name(head))):
            words.add(head)
    # The function's own imports (`import torch.ao.quantization as tq` in its body).
    imported = getattr(local, "imports", ())
    words.update(h for h in imported if h not in owned and names_old(resolver.qualname(ast.Name(h))))
    if body.class_scope is not None:
        words.update(body.class_scope.assigns)
    return words


def bound_in(body, name: str) -> bool:
    """A local of the function, or a name one of its own import statements binds."""
    return name in body.local or name in getattr(body.local, "imports", ())


def identifier_rows(ctx: FileContext, words: frozenset[str]) -> frozenset[int]:
    """Rows on which one of `words` occurs as a whole identifier (kept per check and word: the
    module's words are looked for once, whatever each body adds)."""
    key = ("ql401.rows", words)
    found = ctx.cache.get(key)
    if found is None:
        found = ctx.cache[key] = frozenset().union(*(_rows_of(ctx, word) for word in words))
    return found


def _rows_of(ctx: FileContext, word: str) -> frozenset[int]:
    key = ("ql401.word", word)
    found = ctx.cache.get(key)
    if found is None:
        text, starts, rows = ctx.text, ctx.lines.starts, set()
        at = text.find(word)
        while at != -1:
            end = at + len(word)
            if not (at and _continues(text[at - 1])) and not (end < len(text) and _continues(text[end])):
                rows.add(bisect_right(starts, at))
            at = text.find(word, end)
        found = ctx.cache[key] = frozenset(rows)
    return found


def _continues(char: str) -> bool:
    """`char` may be part of an identifier (so a word next to it is part of a longer one)."""
    return char.isalnum() or char == "_"


def names_old(name: str | None) -> bool:
    return name is not None and (name == OLD_PACKAGE or name.startswith(OLD_PACKAGE + "."))


def in_type_check(node: ast.AST, parents: dict) -> bool:
    parent = parents.get(id(node))
    if isinstance(parent, ast.Tuple):
        parent = parents.get(id(parent))
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id in ("isinstance", "issubclass")
        and node is not parent.args[0]
    )


def outermost_move(resolver: Resolver, moves: Moves, node: ast.Attribute) -> tuple[ast.Attribute, Move] | None:
    """The longest prefix of an attribute chain that names something torch removed."""
    sub: ast.AST = node
    fallback = None
    while isinstance(sub, ast.Attribute):
        qual = resolver.qualname(sub)
        if qual is None or not qual.startswith(OLD_PACKAGE + "."):
            return fallback
        move = moves.exact(qual)
        if move is not None:
            return sub, move
        if fallback is None and moves.removed_module(qual):
            fallback = (sub, moves.find(qual))
        sub = sub.value
    return fallback


def chain_moves(ctx: FileContext, moves: Moves, prefix: tuple[str, ...]) -> Iterator[tuple[ast.Attribute, Move]]:
    """Uses of a plainly imported removed module: the longest known prefix of each chain."""
    parents = tree_parents(ctx.tree)
    old = ".".join(prefix)
    for node in ast.walk(ctx.tree):
        if not isinstance(node, ast.Attribute) or isinstance(parents.get(id(node)), ast.Attribute):
            continue
        parts = dotted_parts(node)
        if parts is None or tuple(parts[: len(prefix)]) != prefix:
            continue
        sub, best = node, None
        while isinstance(sub, ast.Attribute) and best is None:
            text = ".".join(dotted_parts(sub))
            if len(text) >= len(old):
                move = moves.exact(text)
                best = (sub, move) if move is not None else None
            sub = sub.value
        yield best or (node, moves.find(".".join(parts)))


def module_alias_fix(ctx: FileContext, moves: Moves, local: str, move: Move) -> str:
    """How safely a name bound to a removed module can be rebound to its successor.

    Every `local.attr` in the file must name something that now lives at
    `successor.attr`; anything else (a name that moved elsewhere, or one qualified cannot
    vouch for) makes the rebinding display-only.
    """
    level = "safe"
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == local:
            used = moves.exact(f"{move.old}.{node.attr}")
            expected = f"{move.module}.{node.attr}"
            if used is None or used.new != expected:
                return "display"
            level = worst(level, used.fix)
    return level
