"""Dead code's questions about the module's text, answered without a pass per finding: the
language server asks them on every keystroke (issue 13, `benchmarks/lsp_bench.py`).

- a function whose name the text spells once (its `def`) has no name of it in the module:
  no walk of the module for its names (`_called_only_where_dead`); one spelled more often
  has its names looked for in the top-level statements on the rows spelling it alone
  (`_module_names`), not by a walk of the whole module;
- whether the module looks names up at run time (`globals()`, `vars()`, `__dict__`) or gets
  a module object of itself (`sys.modules`, `import_module`) is searched once per check, not
  once per function holding a finding.

The answers are the ones the walks and the searches gave: the look-alikes below (a name in a
comment, in a longer name, in a text that is not ASCII; a word of the patterns in a comment,
and the real lookups) keep theirs.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from qlint.analysis.context import FileContext
from qlint.analysis.graphs import dead_code, never_called
from qlint.analysis.tree_walk import names_by_id
from qlint.source import LineIndex
from tests.conftest import check_file, rows_of


def _ctx(text: str) -> FileContext:
    return FileContext("m.py", text, ast.parse(text), LineIndex(text), None, None)  # type: ignore[arg-type]


def _func(ctx: FileContext, name: str) -> ast.FunctionDef:
    return next(n for n in ctx.tree.body if isinstance(n, ast.FunctionDef) and n.name == name)


DEF = "import sys\n\ndef _helper(m):\n    return m\n"


def test_a_function_spelled_once_is_settled_without_the_module_names(monkeypatch):
    ctx = _ctx(DEF + "\ndef main():\n    sys.exit(0)\n")
    asked = []
    monkeypatch.setattr(dead_code, "names_by_id", lambda node: asked.append(node) or {})
    assert dead_code._called_only_where_dead(ctx, _func(ctx, "_helper")) is False
    assert asked == []


@pytest.mark.parametrize(
    ("text", "dead"),
    [
        (DEF, False),  # its def alone
        (DEF + "\ndef main():\n    sys.exit(0)\n    _helper(1)\n", True),  # called only after an exit
        (DEF + "\n# _helper is kept for later\n", False),  # a comment spells it: walked, no name
        (DEF + "\ndef _helper2(m):\n    return m\n", False),  # a longer name holds it
        (DEF + "\n_helper2 = 1\n\ndef main():\n    sys.exit(0)\n    _helper(1)\n", True),  # and a call
        ("# café\n" + DEF, False),  # not ASCII: never settled by the text
        ("# café\n" + DEF + "\ndef main():\n    sys.exit(0)\n    _helper(1)\n", True),
    ],
)
def test_the_text_gate_answers_as_the_walk(monkeypatch, text, dead):
    ctx = _ctx(text)
    assert dead_code._called_only_where_dead(ctx, _func(ctx, "_helper")) is dead
    monkeypatch.setattr(dead_code, "_spelled_once", lambda ctx, name: False)  # the walk alone
    walked = _ctx(text)
    assert dead_code._called_only_where_dead(walked, _func(walked, "_helper")) is dead


def test_a_text_that_is_not_ascii_is_never_spelled_once():
    assert dead_code._spelled_once(_ctx(DEF), "_helper")
    assert not dead_code._spelled_once(_ctx("# café\n" + DEF), "_helper")
    assert not dead_code._spelled_once(_ctx(DEF + "_helper(1)\n"), "_helper")
    assert dead_code._spelled_once(_ctx(DEF + "_helper2 = _helper3 = 1\n"), "_helper")


NAMED = textwrap.dedent(
    """
    import sys
    from m import _helper as h2

    def _helper(m):
        return _helper(m - 1) if m else m

    @register(_helper)
    def other(m):
        return f"{_helper(m)!r}"

    class Holder(Base):
        x = _helper
        def method(self):
            return self._helper, "_helper", _helper2

    TEXT = \"\"\"
    _helper
    \"\"\"; _helper(1)

    def main():
        sys.exit(0)
        _helper(
            1,
        )
    """
)


@pytest.mark.parametrize("text", [NAMED, "# café\n" + NAMED, NAMED.replace("_helper(1)", "1")])
@pytest.mark.parametrize("name", ["_helper", "_helper2", "h2", "m", "sys", "missing", "register"])
def test_the_names_on_the_spelling_rows_are_the_index_names(text, name):
    ctx = _ctx(text)
    assert {id(n) for n in dead_code._module_names(ctx, name)} == {id(n) for n in names_by_id(ctx.tree).get(name, [])}


def test_only_the_statements_spelling_the_name_are_walked(monkeypatch):
    text = DEF + "\ndef main():\n    sys.exit(0)\n    _helper(1)\n" + "\ndef unrelated(gm):\n    return gm\n" * 50
    ctx = _ctx(text)
    walked = []
    real = dead_code.walk_kinds
    monkeypatch.setattr(dead_code, "walk_kinds", lambda node, kinds: walked.append(node) or real(node, kinds))
    monkeypatch.setattr(dead_code, "names_by_id", lambda node: pytest.fail("the module's index was built"))
    assert dead_code._called_only_where_dead(ctx, _func(ctx, "_helper")) is True
    assert [n.name for n in walked] == ["_helper", "main"]


EXITS = textwrap.dedent(
    """
    import sys

    def a(m):
        if m:
            return 1
            _helper(m)
        else:
            sys.exit(0)
            _helper(2)
        while m:
            break
            _helper(3)
        else:
            raise ValueError
            _helper(4)
        try:
            exit(1)
            _helper(5)
        except ValueError:
            return
            _helper(6)
        finally:
            os._exit(1)
            _helper(7)
        match m:
            case 1:
                return
                _helper(8)
        @deco(_helper)
        def inner():
            quit()
            _helper(9)
        class K:
            def f(self):
                return
                _helper(10)
        return
        _helper(11)

    _helper(12)
    """
)


def _all_dead_spans(tree: ast.Module) -> set[tuple[int, int]]:
    """Every block's statements after an exit, by a walk of every node (as before the rows)."""
    spans = set()
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                stop = next((i for i, s in enumerate(block) if isinstance(s, ast.stmt) and dead_code._exits(s)), None)
                if stop is not None:
                    spans.update((s.lineno, s.end_lineno) for s in block[stop + 1 :])
    return spans


def test_the_dead_spans_holding_a_row_are_those_of_the_whole_module():
    ctx = _ctx(EXITS)
    every = _all_dead_spans(ctx.tree)
    assert len(every) == 11  # each exit above leaves one dead call
    rows = range(1, EXITS.count("\n") + 2)
    for row in rows:
        found = dead_code._dead_statements(ctx, [row])
        assert {s for s in found if s[0] <= row <= s[1]} == {s for s in every if s[0] <= row <= s[1]}, row
    assert set(dead_code._dead_statements(ctx, list(rows))) == every


def test_the_dead_spans_are_looked_for_down_the_rows_alone(monkeypatch):
    ctx = _ctx(DEF + "\ndef main():\n    sys.exit(0)\n    _helper(1)\n" + "\ndef unrelated(gm):\n    return gm\n" * 50)
    monkeypatch.setattr(dead_code, "_exits", lambda s, real=dead_code._exits: asked.append(s) or real(s))
    asked: list[ast.stmt] = []
    assert dead_code._called_only_where_dead(ctx, _func(ctx, "_helper")) is True
    assert not any(isinstance(s, ast.Return) for s in asked)  # the fifty functions' bodies are not read


# -- run-time lookups, once per check ------------------------------------------------------------

QUANTIZE = """

def {name}(model, quantizer, example):
    m = torch.export.export(model.eval(), example).module()
    m = prepare_pt2e(m, quantizer)
    return convert_pt2e(m)
"""
# Two helpers with a QL204 finding each, called only after an exit: dead, both asked about.
MODULE = (
    "import torch\nfrom torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e\n"
    + QUANTIZE.format(name="static_quantize")
    + QUANTIZE.format(name="dynamic_quantize")
    + "\n\ndef export(model):\n    exit(0)\n    static_quantize(model, None, ())\n"
    + "    dynamic_quantize(model, None, ())\n"
)


def _searches(monkeypatch, pattern) -> list[str]:
    """The texts `pattern` (a lazy pattern, shared by the modules that import it) searches."""
    pattern.search("")  # compiled: its `search` is now an attribute of its own
    real, searched = pattern.search, []
    monkeypatch.setattr(pattern, "search", lambda text: searched.append(text) or real(text))
    return searched


def _rows(tmp_path: Path, text: str) -> list[int]:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "quant.py").write_text(textwrap.dedent(text))
    return rows_of(check_file(tmp_path / "pkg" / "quant.py", ("QL204",)).diagnostics)


@pytest.mark.parametrize(
    ("extra", "searches", "rows"),
    [
        ("", 1, []),  # none of the patterns' words
        ("# no vars or import_module here\n", 1, []),  # the words, no lookup: searched once each
        ("SEEN = vars()\n", 1, [8, 14]),  # a run-time lookup: any function may be called
    ],
)
def test_run_time_lookups_are_searched_once_per_check(monkeypatch, tmp_path, extra, searches, rows):
    dynamic = _searches(monkeypatch, never_called.DYNAMIC_LOOKUP)
    own = _searches(monkeypatch, dead_code._SELF_MODULE)
    assert _rows(tmp_path, MODULE + extra) == rows
    assert len(dynamic) == searches
    assert len(own) == (searches if not rows else 0)


def test_a_module_object_of_itself_keeps_the_helpers_live(tmp_path):
    # `getattr(sys.modules[__name__], name)` may call any of its functions.
    extra = "\n\ndef by_name(name):\n    return getattr(sys.modules[__name__], name)\n"
    assert _rows(tmp_path, "import sys\n" + MODULE + extra) == [9, 15]
