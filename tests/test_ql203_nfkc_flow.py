"""QL203's own flow reads a module's text as Python reads its names (NFKC, PEP 3131), as its
triggers already did (`FileContext.words`): `gm.eval()` with a fullwidth `e` calls `eval`, and the bodies the flow
reads, the switching helpers, the graph fields and the helpers returning graphs were picked by
searches of the raw text, which never found it there (unreported at base).

Quiet: a string is not a name and keeps its characters (`getattr(gm, "eval")`, the `e`
fullwidth, looks up another attribute, `AttributeError` on torch 2.13), and a letter NFKC keeps (`éval`) names another
attribute for Python too."""

from __future__ import annotations

import ast

import pytest

from qlint.analysis.context import FileContext
from qlint.analysis.flow.relevant_bodies import segment, text_span
from qlint.source import LineIndex
from tests.conftest import check_file, write_package
from tests.test_ql10x_nfkc_spellings import wide
from tests.test_ql203 import ql203

CAPTURED = """
def f(model, x):
    gm = torch.export.export(model, (x,)).module()
    {switch}
"""


@pytest.mark.parametrize(
    ("switch", "mode"),
    [
        (f"gm.{wide('e')}val()", "eval"),
        (f"gm.{wide('eval')}()", "eval"),
        (f"gm.{wide('t')}rain()", "train"),
        (f"gm.{wide('train')}(False)", "eval"),
        (f"gm.\uff45val(); {wide('print')}(gm)", "eval"),
    ],
)
def test_a_switch_spelled_in_fullwidth_letters_is_reported(switch, mode):
    (d,) = ql203(CAPTURED.format(switch=switch), head="import torch\n")
    assert d.range.start.row == 5 and d.evidence["mode"] == mode
    assert d.fix is not None


def test_the_fix_calls_the_helper_on_the_graph():
    from tests.test_ql203 import fixed

    out = fixed(CAPTURED.format(switch="gm.\uff45val()"), head="import torch\n")
    assert "move_exported_model_to_eval(gm)" in out and "\uff45val" not in out


def test_a_module_body_switch_is_reported():
    src = "gm = torch.export.export(m, (x,)).module()\ngm.\uff45val()\n"
    (d,) = ql203(src, head="import torch\n")
    assert d.range.start.row == 3


@pytest.mark.parametrize(
    "switch",
    [
        'getattr(gm, "\uff45val")()',  # a string keeps its characters: `AttributeError`, no switch
        f'getattr(gm, "{wide("train")}")(False)',
        "gm.\u00e9val()",  # `é` is no `e` for Python either
        "gm.\uff45valuate()",  # another attribute
        "# gm.\uff45val()",  # a comment
        'print("gm.\uff45val()")',
    ],
)
def test_what_python_does_not_read_as_a_switch_stays_quiet(switch):
    assert ql203(CAPTURED.format(switch=switch), head="import torch\n") == []


def test_a_helper_called_in_fullwidth_letters_is_followed():
    src = f"""
    def to_eval(m):
        m.eval()

    def f(model, x, q):
        gm = prepare_pt2e(torch.export.export(model, (x,)).module(), q)
        {wide("to")}_eval(gm)
    """
    (d,) = ql203(src)
    assert d.range.start.row == 9 and "(line 5)" in d.message


def test_a_helper_switching_in_fullwidth_letters_is_followed():
    src = """
    def to_eval(m):
        m.\uff45val()

    def f(model, x, q):
        gm = prepare_pt2e(torch.export.export(model, (x,)).module(), q)
        to_eval(gm)
    """
    assert len(ql203(src)) == 1


def test_a_helper_spelling_its_switch_as_a_string_stays_quiet():
    src = """
    def to_eval(m):
        getattr(m, "\uff45val")()

    def f(model, x, q):
        gm = prepare_pt2e(torch.export.export(model, (x,)).module(), q)
        to_eval(gm)
    """
    assert ql203(src) == []


FIELD = """
class Runner:
    def build(self, model, x):
        self.gm = torch.export.export(model, (x,)).module()

    def calibrate(self):
        self.gm.{switch}
"""


def test_a_graph_field_switched_in_fullwidth_letters_is_reported():
    (d,) = ql203(FIELD.format(switch="\uff45val()"), head="import torch\n")
    assert d.range.start.row == 8


def test_a_graph_field_looked_up_by_a_string_stays_quiet():
    assert ql203(FIELD.format(switch='__getattribute__("\uff45val")()'), head="import torch\n") == []


def test_a_helper_returning_a_graph_called_in_fullwidth_letters_is_followed():
    src = f"""
    def capture(model, x):
        return torch.export.export(model, (x,)).module()

    def f(model, x):
        gm = {wide("capture")}(model, x)
        gm.eval()
    """
    (d,) = ql203(src, head="import torch\n")
    assert d.range.start.row == 8


def test_a_helper_of_another_module_switching_in_fullwidth_letters(tmp_path):
    pkg = write_package(
        tmp_path,
        "pkg",
        helpers="def to_eval(m):\n    m.\uff45val()\n    return m\n",
        run=(
            "import torch\nfrom torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\n"
            "from pkg.helpers import to_eval\n\n\ndef f(model, x, q):\n"
            "    gm = prepare_pt2e(torch.export.export(model, (x,)).module(), q)\n    to_eval(gm)\n"
        ),
    )
    (tmp_path / "pyproject.toml").write_text("")
    found = [d for d in check_file(pkg / "run.py", ("QL203",)).diagnostics]
    assert [d.range.start.row for d in found] == [8]


def _ctx(text: str) -> FileContext:
    return FileContext("m.py", text, ast.parse(text), LineIndex(text), None, None)


def test_a_segment_is_the_bodys_rows_as_python_reads_them():
    text = "x = '…'\ndef f(gm):\n    gm.\uff45val()\n"
    ctx = _ctx(text)
    func = ctx.tree.body[1]
    assert segment(ctx, func) == "def f(gm):\n    gm.eval()\n"
    start, end = text_span(ctx, func)
    assert ctx.words[start:end] == segment(ctx, func)


def test_an_ascii_segment_is_the_raw_text():
    text = "def f(gm):\n    gm.eval()\n"
    ctx = _ctx(text)
    assert ctx.words is ctx.text
    assert segment(ctx, ctx.tree) is text
