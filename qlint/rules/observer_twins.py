"""QL401's observer twins: the imports of torch.ao observers a file makes that torchao ships
its own copies of (`Moves.twin`). torchao's prepare_pt2e does not insert torch.ao observers,
so a fix that moves a file's quantizer API to torchao moves them along, and is unsafe."""

from __future__ import annotations

import ast

from qlint.analysis.edits import import_edits as ie
from qlint.analysis.edits.pt2e_moves import OBSERVER_CONSUMERS, Move, Moves
from qlint.analysis.edits.pt2e_shims import guarded, import_statements
from qlint.diagnostic import Applicability, Edit, Fix
from qlint.rules.base import FileContext
from qlint.value_classes import value_class


@value_class
class Twins:
    """The file's imports of torch.ao observers that torchao ships its own copies of.

    torchao's prepare_pt2e does not insert torch.ao observers (a `with_args` constructor
    raises, a bare class yields no quantize/dequantize nodes), so a fix that moves a file's
    quantizer API to torchao moves these along, and is unsafe: they may serve eager code too.
    """

    statements: dict[ast.ImportFrom, list[tuple[ast.alias, str, str]]]

    def applies(self, moved: list[Move]) -> bool:
        return bool(self.statements) and any(m.module and m.module.startswith(OBSERVER_CONSUMERS) for m in moved)

    def edits(self, ctx: FileContext, skip: ast.stmt | None = None) -> list[Edit] | None:
        out: list[Edit] = []
        for stmt, items in self.statements.items():
            if stmt is not skip:
                edits = ie.regroup_from_import(ctx, stmt, items)
                if edits is None:
                    return None
                out.extend(edits)
        return out

    def note(self) -> str:
        names = ", ".join(
            dict.fromkeys(f"`{a.asname or a.name}`" for items in self.statements.values() for a, _, _ in items)
        )
        return (
            f"; the file also uses torch.ao observers ({names}), which torchao's prepare_pt2e does not insert: "
            "import them from `torchao.quantization.pt2e` too"
        )


def observer_twins(ctx: FileContext, moves: Moves, parents) -> Twins:
    found: dict[ast.ImportFrom, list[tuple[ast.alias, str, str]]] = {}
    for stmt in import_statements(ctx):
        if not isinstance(stmt, ast.ImportFrom):
            continue
        base = ie.import_base(ctx, stmt)
        twins = []
        for alias in stmt.names:
            twin = moves.twin(f"{base}.{alias.name}")
            if twin is not None:
                module, _, name = twin.rpartition(".")
                twins.append((alias, module, name))
        if twins and not guarded(ctx, moves, stmt, parents, {a.asname or a.name for a in stmt.names}):
            found[stmt] = twins
    return Twins(found)


def with_twins(ctx: FileContext, twins: Twins, moved: list[Move], fix: Fix | None) -> tuple[Fix | None, str]:
    """Extend a fix that moves quantizer API with the move of the file's torch.ao observers."""
    if fix is None or not twins.applies(moved):
        return fix, ""
    extra = twins.edits(ctx)
    if extra is None:
        return None, twins.note()
    return Fix(Applicability.UNSAFE, fix.message + " and the torch.ao observers", (*fix.edits, *extra)), twins.note()


__all__ = ["Twins", "observer_twins", "with_twins"]
