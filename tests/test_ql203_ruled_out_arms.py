"""QL203 on a value that is the exported graph on one arm of a test and a copy (or the eager
model) on the other, where the call or the body rules the graph's arm out (`arm_graphs`).

ao's `_test_quantizer` (test_x86inductor_quantizer.py, test_arm_inductor_quantizer.py) keeps
`export_model = m if is_qat else copy.deepcopy(m)` and returns it; called with `is_qat=False`
(or leaving that default) it hands back the copy, whose `.eval()` raises nothing on torch
2.13 / torchao 0.18, and QL203 reported it: the merged value's origins said it held the graph,
not that only the `is_qat` arm did. The arm's condition now goes with the value, and a call
whose constant arguments (or the helper's defaults) rule it out gets the copy back. Every case
below was run on torch 2.13 / torchao 0.18 (each snippet executed with a real model and
`XNNPACKQuantizer`): each quiet switch raised nothing, each loud one `NotImplementedError`.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import alone_and_in_run, lint, package_repository
from tests.test_ql203_returned_copies import _run  # QL203's findings in main.py, a whole run

HEAD = """\
import copy
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def to_eval(model):
    model.eval()

"""  # the snippets call `run(model, x, q)`; the last line is the switch

AO_SHAPE = """
class Case:
    def _test_quantizer(self, model, x, q, is_qat=False):
        m = copy.deepcopy(model)
        m = torch.export.export(m, (x,)).module()
        export_model = m if is_qat else copy.deepcopy(m)
        m = prepare_pt2e(m, q)
        m(x)
        prepare_model = copy.deepcopy(m)
        m = convert_pt2e(m)
        convert_model = copy.deepcopy(m)
        return export_model, prepare_model, convert_model

def run(model, x, q):
    e, p, c = Case()._test_quantizer(model, x, q{call})
    e.eval()
"""

TERNARY = """
def f(model, x, is_qat={default}):
    m = torch.export.export(model, (x,)).module()
    export_model = m if is_qat else copy.deepcopy(m)
    return export_model, 1

def run(model, x, q{param}):
    e, _ = f(model, x{call})
    {switch}
"""

STATEMENT = """
def f(model, x, is_qat=False):
    m = torch.export.export(model, (x,)).module()
    if is_qat:
        export_model = m
    else:
        export_model = copy.deepcopy(m)
    return export_model, 1

def run(model, x, q):
    e, _ = f(model, x{call})
    e.train()
"""

RETURNED = """
def f(model, x, is_qat=False):
    m = torch.export.export(model, (x,)).module()
    if is_qat:
        return m, 1
    return copy.deepcopy(m), 2

def run(model, x, q):
    e, _ = f(model, x{call})
    e.eval()
"""

DIRECT = """
def f(model, x, mode="ptq"):
    m = torch.export.export(model, (x,)).module()
    return copy.deepcopy(m) if mode != "qat" else m

def run(model, x, q):
    e = f(model, x{call})
    e.eval()
"""

EAGER = """
def f(model, x, is_qat=False):
    m = torch.export.export(model, (x,)).module()
    return m if is_qat else model

def run(model, x, q):
    e = f(model, x{call})
    e.eval()
"""

LOCAL = """
def run(model, x, q):
    is_qat = {value}
    m = torch.export.export(model, (x,)).module()
    e = m if is_qat else copy.deepcopy(m)
    e.eval()
"""

LITERAL = """
def run(model, x, q):
    m = torch.export.export(model, (x,)).module()
    e = m if {value} else copy.deepcopy(m)
    e.eval()
"""

QUIET = {
    "ao-shape-default": AO_SHAPE.format(call=""),
    "ao-shape-keyword-false": AO_SHAPE.format(call=", is_qat=False"),
    "ao-shape-positional-false": AO_SHAPE.format(call=", False"),
    "ternary-default": TERNARY.format(default="False", param="", call="", switch="e.eval()"),
    "ternary-false-handed-to-a-switching-helper": TERNARY.format(
        default="False", param="", call=", is_qat=False", switch="to_eval(e)"
    ),
    "ternary-default-true-passed-false": TERNARY.format(default="True", param="", call=", False", switch="e.eval()"),
    "statement-default": STATEMENT.format(call=""),
    "returns-under-the-flag-default": RETURNED.format(call=""),
    "direct-return-compared-default": DIRECT.format(call=""),
    "direct-return-compared-ptq": DIRECT.format(call=', mode="ptq"'),
    "eager-model-on-the-other-arm": EAGER.format(call=""),
    "local-flag-false": LOCAL.format(value="False"),
    "literal-false": LITERAL.format(value="False"),
    "literal-not-true": LITERAL.format(value="not True"),
}

LOUD = {
    "ao-shape-qat": AO_SHAPE.format(call=", is_qat=True"),
    "ternary-true": TERNARY.format(default="False", param="", call=", is_qat=True", switch="e.eval()"),
    "ternary-default-true": TERNARY.format(default="True", param="", call="", switch="e.eval()"),
    "ternary-flag-unknown": TERNARY.format(default="False", param=", flag", call=", flag", switch="e.eval()"),
    "ternary-flag-unknown-handed": TERNARY.format(default="False", param=", flag", call=", flag", switch="to_eval(e)"),
    "ternary-star-args": TERNARY.format(default="False", param=", *rest", call=", *rest", switch="e.eval()"),
    "statement-true": STATEMENT.format(call=", True"),
    "returns-under-the-flag-true": RETURNED.format(call=", is_qat=True"),
    "direct-return-compared-qat": DIRECT.format(call=', mode="qat"'),
    "eager-model-on-the-other-arm-true": EAGER.format(call=", True"),
    "local-flag-true": LOCAL.format(value="True"),
    "literal-true": LITERAL.format(value="True"),
}


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in lint(HEAD + textwrap.dedent(src), select=("QL203",))]


@pytest.mark.parametrize("src", QUIET.values(), ids=QUIET.keys())
def test_the_copy_or_model_the_call_takes_is_quiet(src):
    assert rows(src) == []


@pytest.mark.parametrize("src", LOUD.values(), ids=LOUD.keys())
def test_the_graph_the_call_may_take_is_reported(src):
    full = HEAD + textwrap.dedent(src)
    assert rows(src) == [full.rstrip("\n").count("\n") + 1]  # the switch, on the last line


def test_a_flag_the_helper_rebinds_decides_nothing():
    # `is_qat = is_qat or env_qat()`: the test may see another value than the caller's.
    src = TERNARY.replace("    m = torch.export", "    is_qat = is_qat or bool(x)\n    m = torch.export")
    assert rows(src.format(default="False", param="", call="", switch="e.eval()")) != []


def test_the_switch_inside_the_helper_is_judged_there():
    # In the body that makes the graph the flag is a parameter, unknown there: reported (the
    # callers' constants decide what is returned, not what the body itself switches).
    src = """
    def f(model, x, is_qat=False):
        m = torch.export.export(model, (x,)).module()
        e = m if is_qat else copy.deepcopy(m)
        e.eval()

    def run(model, x, q):
        f(model, x)
    """
    assert rows(src) == [13]


def test_a_switch_under_the_other_arm_of_the_same_flag():
    # `e` is the graph under `is_qat` only: a switch where `is_qat` is false meets the copy.
    src = """
    def run(model, x, q, is_qat):
        m = torch.export.export(model, (x,)).module()
        e = m if is_qat else copy.deepcopy(m)
        if not is_qat:
            e.eval()
        if is_qat:
            e.train()
    """
    assert rows(src) == [16]


HELPERS_MODULE = """\
import copy

import torch


def capture(model, x, is_qat=False):
    m = torch.export.export(model, (x,)).module()
    export_model = m if is_qat else copy.deepcopy(m)
    return export_model, m
"""

MAIN = """\
from pkg.helpers import capture


def ptq(model, x):
    e, _ = capture(model, x)
    e.eval()


def qat(model, x):
    e, _ = capture(model, x, is_qat=True)
    e.train()
"""


def test_through_a_helper_of_another_module_alone_in_a_run_and_cached(tmp_path):
    root = package_repository(tmp_path / "repo", helpers=HELPERS_MODULE, main=MAIN)
    script, cache = root / "pkg" / "main.py", tmp_path / "cache"
    assert [(c, r) for c, r, _ in alone_and_in_run(script, root, ("QL203",), cache)] == [("QL203", 11)]
    assert _run(root, cache, True) == [("QL203", 11)]
    assert _run(root, cache, True) == [("QL203", 11)]  # answered from the cache
    # The helper's default turned to QAT: `ptq`'s call now takes the graph's arm too.
    (root / "pkg" / "helpers.py").write_text(HELPERS_MODULE.replace("is_qat=False", "is_qat=True"))
    assert _run(root, cache, True) == [("QL203", 6), ("QL203", 11)]
    assert [(c, r) for c, r, _ in alone_and_in_run(script, root, ("QL203",), cache)] == [("QL203", 6), ("QL203", 11)]
