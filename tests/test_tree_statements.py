"""`statement_walk.statements`: every statement `ast.walk` finds, from the statement blocks alone,
and `packet_scan.imported_names` read through it."""

from __future__ import annotations

import ast
from pathlib import Path

from qlint.analysis.context import FileContext
from qlint.analysis.statement_walk import statements
from qlint.rules.packet_scan import imported_names
from qlint.source import LineIndex

NESTED = """
import a.b
if x:
    from c import d
else:
    import e as f
try:
    import g
except ImportError:
    from h import i
else:
    import j
finally:
    import k
for _ in y:
    while z:
        with w:
            import l
    else:
        import m
def fn():
    import n
    class Inner:
        from o import p
async def afn():
    async with q:
        import r
match v:
    case 1:
        import s
    case _ if t:
        from . import u
handler = lambda: __import__("not_a_statement")
"""


def _walked(tree: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]


def test_statements_are_those_walk_finds() -> None:
    tree = ast.parse(NESTED)
    assert {id(n) for n in statements(tree)} == {id(n) for n in _walked(tree)}


def test_statements_on_real_modules() -> None:
    root = Path(__file__).resolve().parents[1] / "qlint"
    for path in sorted(root.rglob("*.py"))[:200]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert {id(n) for n in statements(tree)} == {id(n) for n in _walked(tree)}, path


def test_imported_names_in_every_block() -> None:
    tree = ast.parse(NESTED)
    module = FileContext("m.py", NESTED, tree, LineIndex(NESTED), None, None)
    assert imported_names(module) == set("bcdeghijklmnoprsu")
