"""What QL102 scans for each packet it would report, narrowed to where the answer can be: the
definitions enclosing the insertion's row (`never_called`), and the rows naming the op in a
module keyed on it (`packet_sites`, through the module's line index, numbered as
`str.splitlines` numbers them). Same answers as the whole scans: the loud and quiet cases of
each are kept here beside the narrowing."""

from __future__ import annotations

import ast
import textwrap

import pytest

from qlint.analysis.context import FileContext
from qlint.analysis.graphs import never_called
from qlint.rules import packet_sites
from qlint.source import LineIndex
from tests.test_ql102_stripped_later import _rows

INSERT = "gm.graph.call_function(torch.ops.aten.relu, (x,))"

GUARDED = textwrap.dedent(
    f"""\
    import torch

    if torch.cuda.is_available():
        def _on_gpu(gm, x):
            {INSERT}
    else:
        def _on_cpu(gm, x):
            {INSERT}

    try:
        import other
    except ImportError:
        other = None


    def run(gm, x):
        return _on_cpu(gm, x)
    """
)


def test_only_the_statements_holding_the_row_are_searched_for_definitions(tmp_path):
    tree = ast.parse(GUARDED)
    cpu = [d.name for d in never_called._definitions(tree, 8) if d.lineno <= 8 <= d.end_lineno]
    assert cpu == ["_on_cpu"]
    # The `if` spans the row: its branches are read; the `try` and `run` hold other rows only.
    assert {d.name for d in never_called._definitions(tree, 8)} == {"_on_cpu", "_on_gpu", "run"}
    assert {d.name for d in never_called._definitions(tree, 12)} == {"run"}
    # A guarded private function nothing calls is quiet, the one `run` calls is loud.
    assert _rows(tmp_path, GUARDED) == [8]


def _context(text: str) -> FileContext:
    return FileContext("m.py", text, ast.parse(text), LineIndex(text), None, None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "breaks",
    [
        ("\n", "\n", "\n"),
        ("\r\n", "\r\n", "\r\n"),
        ("\r", "\n", "\r\n"),
        ("\n", "\x0c\n", "\n"),  # a form feed: a break to `str.splitlines`, not to the parser
        ("\n", "  # \u2028\n", "\n"),
        ("\n", "  # \x1c\n", "  # \x85\n"),
    ],
)
def test_rows_naming_a_word_are_numbered_as_splitlines_numbers_them(breaks):
    parts = ["x = aten.relu", "y = 1", "n.target in TABLE and aten.relu", "z = 2"]
    text = "".join(p + b for p, b in zip(parts, [*breaks, "\n"], strict=True))
    lines = packet_sites._Lines(_context(text))
    for word in ("aten.relu", ".target", "TABLE", "z = 2", "absent"):
        expected = {i for i, line in enumerate(text.splitlines(), 1) if word in line}
        assert lines.holding(word) == expected, (word, breaks)
        assert all(word in lines.line(row) for row in expected)


def test_a_plain_module_is_searched_through_its_line_index(monkeypatch):
    ctx = _context("import torch\nx = torch.ops.aten.relu\nif n.target == x:\n    pass\n")
    asked: list[tuple[str, ...]] = []
    real = FileContext.lines_containing

    def spy(self, *needles):
        asked.append(needles)
        return real(self, *needles)

    monkeypatch.setattr(FileContext, "lines_containing", spy)
    assert packet_sites._Lines(ctx).holding("relu") == {2}
    assert asked == [("relu",)]
