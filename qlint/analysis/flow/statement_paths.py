"""Where a statement lies among the blocks of a body, and which statements a path from one
reaches: QL202's order test (`moved_graphs`) asks whether a use of the graph runs after its
binding and whether a move covers it on every path.

A statement's place is its chain: the (block id, index, exclusive) steps from the body down to
it, `exclusive` when the statement at that step holds blocks no one path runs two of (an `if`'s
arms, a `match`'s cases)."""

from __future__ import annotations

import ast

from qlint.analysis.statement_walk import statement_lists
from qlint.analysis.tree_walk import SCOPES

_EXCLUSIVE = (ast.If, ast.Match)  # statements whose blocks no one path runs two of
LOOPS = (ast.For, ast.AsyncFor, ast.While)


def runs_after(start: tuple, chain: tuple) -> bool:
    """A statement at `chain` runs on some path after the one at `start`: later in its block or
    in a block after it, not in another arm of an `if` or `match` around it (`_EXCLUSIVE`,
    known by the blocks' kinds in the chain: the step's block id and the statement holding
    it), and not only through a loop's next pass back above it."""
    for (block, index, _), (other, there, _) in zip(start, chain, strict=False):
        if block != other:
            return not _exclusive(start, chain)
        if index != there:
            return there > index
    return False  # the same statement, or one holding (or held by) it


def _exclusive(start: tuple, chain: tuple) -> bool:
    depth = next(i for i, (a, b) in enumerate(zip(start, chain, strict=False)) if a[0] != b[0])
    return depth > 0 and start[depth - 1][2]


def statement_chains(body: ast.AST) -> tuple[dict[int, tuple], dict[int, list[ast.stmt]]]:
    """Statement id -> the (block id, index, exclusive) steps that lead to it from `body`:
    `exclusive` when the statement holds blocks no one path runs two of (`_EXCLUSIVE`); and
    block id -> the block."""
    out: dict[int, tuple] = {}
    blocks: dict[int, list[ast.stmt]] = {}
    stack = [(body.body, ())]
    while stack:
        block, chain = stack.pop()
        blocks[id(block)] = block
        for i, stmt in enumerate(block):
            here = (*chain, (id(block), i, isinstance(stmt, _EXCLUSIVE)))
            out[id(stmt)] = here
            if isinstance(stmt, SCOPES):
                continue
            stack.extend((inner, here) for inner in statement_lists(stmt))
    return out, blocks


def cover_reaches(cover: tuple | None, chain: tuple | None) -> bool:
    """A use at `chain` follows the cover's statement in the cover's own block: every path to
    it runs the cover first."""
    if cover is None or chain is None or len(chain) < len(cover):
        return False
    block, index, _ = cover[-1]
    return (
        chain[: len(cover) - 1] == cover[:-1] and chain[len(cover) - 1][0] == block and chain[len(cover) - 1][1] > index
    )


def leaves_through(cover: tuple, start: tuple, chain: tuple, blocks: dict) -> bool:
    """The cover follows the binding at `start` in a block around it (`prepared =
    prepare_qat_pt2e(...)` then the move, in an `if` arm), and the use at `chain` lies outside
    that block: a path from the binding leaves the block through the cover, unless a `break`
    or `continue` between them jumps out of a loop around the block first."""
    depth = len(cover) - 1
    if len(start) <= depth or cover[:depth] != start[:depth] or cover[depth][0] != start[depth][0]:
        return False
    if cover[depth][1] <= start[depth][1]:
        return False
    if chain[:depth] == cover[:depth] and len(chain) > depth and chain[depth][0] == cover[depth][0]:
        return False  # in the block itself, before the cover (after it: `cover_reaches`)
    for k in range(depth, len(start)):
        block = blocks[start[k][0]]
        between = block[start[k][1] + 1 : cover[depth][1] if k == depth else None]
        if any(_jumps(s) for s in between) and not any(
            isinstance(blocks[start[j][0]][start[j][1]], LOOPS) for j in range(depth, k)
        ):
            return False  # out of a loop the block lies in, past the cover
    return True


def _jumps(stmt: ast.stmt) -> bool:
    """`stmt` holds a `break` or `continue` of a loop around it."""
    stack = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Break, ast.Continue)):
            return True
        if isinstance(node, (*LOOPS, *SCOPES)):
            continue  # a loop's own (its `else` aside: rare), or another scope's
        if isinstance(node, ast.stmt):
            stack.extend(s for block in statement_lists(node) for s in block)
    return False


__all__ = ["LOOPS", "cover_reaches", "leaves_through", "runs_after", "statement_chains"]
