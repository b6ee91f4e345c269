"""A test module's helper that another module "names" only through its own function of the same
name (`own_namesakes`): ExecuTorch's vulkan tests, where test_vulkan_delegate.py defines and
calls its own `quantize_and_lower_module` and test_vulkan_passes.py's copy has no caller (issue
14's vulkan QL201 row at the pin before 9116df7e). The copy is dead: its finding goes.

Loud look-alikes: the other module also reaches the helper (an attribute of the imported
module, a string lookup, an import of it under an alias, a `from ... import *`), or its own
namesake is no plain module-level function (a method, a `def` under an `if`, a name rebound).
"""

from __future__ import annotations

import textwrap

import pytest

from qlint.analysis.graphs.own_namesakes import only_own_namesake
from tests.test_dead_code import CONVERT_ROW, _helper, _rows

HELPER = "quantize_and_lower"
# The sibling's own copy, called by its tests, with a comment naming it (comments reach nothing).
OWN_COPY = f"""\
import torch


def {HELPER}(model, example):
    return torch.export.export(model, example)


def test_linear():
    # uses {HELPER} as test_passes does
    {HELPER}(torch.nn.Linear(2, 2), (torch.randn(1, 2),))
"""
UNCALLED = "\n\ndef test_other():\n    assert True\n"


def _files(sibling: str) -> dict[str, str]:
    return {"tests/test_passes.py": _helper(HELPER, UNCALLED), "tests/test_delegate.py": sibling}


def test_helper_a_sibling_names_only_by_its_own_copy_is_quiet(tmp_path):
    assert _rows(tmp_path, _files(OWN_COPY), "tests/test_passes.py") == []


@pytest.mark.parametrize(
    "extra",
    [
        # the sibling reaches the helper through the module object
        f"import test_passes\n\n\ndef test_more():\n    test_passes.{HELPER}(1, 2, 3)\n",
        # by a string lookup
        f'import test_passes\n\n\ndef test_more():\n    getattr(test_passes, "{HELPER}")(1, 2, 3)\n',
        # imported under its own name: the later `def` does not rebind what ran before it
        f"from test_passes import {HELPER} as helper\n\nhelper(1, 2, 3)\n",
        # a star import may bind the name before the module's own `def` runs
        "from test_passes import *\n",
    ],
    ids=["attribute", "string", "alias", "star"],
)
def test_helper_a_sibling_also_reaches_is_reported(tmp_path, extra):
    rows = _rows(tmp_path, _files(OWN_COPY + "\n\n" + extra), "tests/test_passes.py")
    assert rows == [CONVERT_ROW]


def test_helper_a_sibling_names_by_a_method_of_that_name_is_reported(tmp_path):
    sibling = f"class Case:\n    def {HELPER}(self):\n        return 1\n\n    def test_it(self):\n"
    sibling += f"        self.{HELPER}()\n"
    assert _rows(tmp_path, _files(sibling), "tests/test_passes.py") == [CONVERT_ROW]


def test_helper_whose_sibling_defines_its_copy_under_an_if_is_reported(tmp_path):
    sibling = f"import sys\n\nif sys.platform:\n\n    def {HELPER}(m):\n        return m\n\n\n{HELPER}(1)\n"
    assert _rows(tmp_path, _files(sibling), "tests/test_passes.py") == [CONVERT_ROW]


# -- QL201, as the vulkan row has it: a parameter captured for PTQ without eval() ---------------------

PTQ_HELPER = f"""\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def {HELPER}(model, example, quantizer):
    m = torch.export.export(model, example).module()
    m = prepare_pt2e(m, quantizer)
    m(*example)
    return convert_pt2e(m)


def test_other():
    assert True
"""
PTQ_CALLER = f"""\
import torch
from test_passes import {HELPER}


def test_dropout():
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout(0.5))
    {HELPER}(model, (torch.randn(1, 2),), None)
"""


def test_ptq_capture_in_a_helper_only_a_namesake_is_called_as_is_quiet(tmp_path):
    files = {"tests/test_passes.py": PTQ_HELPER, "tests/test_delegate.py": OWN_COPY}
    assert _rows(tmp_path, files, "tests/test_passes.py", ("QL201",)) == []


def test_ptq_capture_in_a_helper_a_sibling_calls_with_dropout_is_reported(tmp_path):
    files = {"tests/test_passes.py": PTQ_HELPER, "tests/test_delegate.py": OWN_COPY, "tests/test_x.py": PTQ_CALLER}
    assert _rows(tmp_path, files, "tests/test_passes.py", ("QL201",)) == [6]


# -- the text test itself ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "own"),
    [
        ("def f():\n    pass\n\n\nf()\n", True),
        ("async def f():\n    pass\n\n\ng = f  # f\n", True),
        ("def f():\n    pass\n\n\ndef g():\n    return f()\n", True),
        ("f()\n", False),  # no definition: another module's
        ("def f():\n    pass\n\n\nf = 1\n", False),  # rebound
        ("def f():\n    pass\n\n\ndef g(f):\n    return f\n", False),  # a parameter of that name
        ("def f():\n    pass\n\n\ndef g():\n    global f\n", False),
        ("def f():\n    pass\n\n\ng(f=1)\n", False),  # a keyword
        ('def f():\n    pass\n\n\n__all__ = ["f"]\n', False),
        ('def f():\n    pass\n\n\nx = f"{f}"\n', False),  # an f-string is a string token here
        ("import m\n\n\ndef f():\n    pass\n\n\nm.f()\n", False),
        ("def f(:\n", False),  # does not parse
        ("def f():\n    x = 'é'\n    return f\n", True),  # columns past non-ASCII text
    ],
)
def test_only_own_namesake(text, own):
    assert only_own_namesake(textwrap.dedent(text), "f") is own
