"""Findings in a test every run skips (`skipped_tests`, ao's `test_mixing_qat_ptq` under
`@unittest.skip`): quiet, as in any code nothing runs. Loud look-alikes: a condition that is
no constant (a platform, a missing library, a string pytest evaluates), a constant that lets
the test run, `xfail`, a project's own `skip`, a program that calls its tests itself."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.conftest import check_file, rows_of

HEAD = """\
import sys
import unittest

import pytest
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

HAS_CUDA = torch.cuda.is_available()
"""
# QL204: converted without calibration; its row is CONVERT_ROW.
METHOD = """

class TestQ(unittest.TestCase):
    {decorator}
    def {name}(self):
        m = torch.export.export(torch.nn.ReLU().eval(), (1,)).module()
        m = prepare_pt2e(m, self.quantizer)
        return convert_pt2e(m)
"""
CONVERT_ROW = 16


def _rows(tmp_path: Path, text: str, name: str = "tests/test_q.py") -> list[int]:
    (tmp_path / ".git").mkdir()
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return rows_of(check_file(path, ("QL204",)).diagnostics)


def _method(decorator: str, name: str = "test_quantize", head: str = HEAD) -> str:
    return head + METHOD.format(decorator=decorator, name=name)


@pytest.mark.parametrize(
    "decorator",
    [
        '@unittest.skip("Failing with AssertionError")',
        "@unittest.skip",
        '@pytest.mark.skip(reason="flaky")',
        "@pytest.mark.skip",
        '@unittest.skipIf(True, "broken")',
        '@unittest.skipUnless(False, "broken")',
        '@pytest.mark.skipif(True, reason="broken")',
    ],
)
def test_always_skipped_test_method_is_quiet(tmp_path, decorator):
    assert _rows(tmp_path, _method(decorator)) == []


def test_skip_imported_by_name_is_quiet(tmp_path):
    head = HEAD.replace("import unittest\n", "import unittest\nfrom unittest import skip\n")
    assert _rows(tmp_path, _method('@skip("later")', head=head)) == []


def test_skipped_test_beside_a_computed_getattr_is_quiet(tmp_path):
    # ao's test module reads fake-quant modules with `getattr(m, node.target)`.
    helper = "\n\ndef fake_quant(m, node):\n    return getattr(m, node.target)\n"
    assert _rows(tmp_path, _method('@unittest.skip("later")') + helper) == []


def test_test_of_a_skipped_class_is_quiet(tmp_path):
    text = _method("").replace("\nclass TestQ", '\n@unittest.skip("later")\nclass TestQ')
    assert _rows(tmp_path, text) == []


def test_skipped_test_function_is_quiet(tmp_path):
    text = HEAD + textwrap.dedent(
        """

        @pytest.mark.skip(reason="later")
        def test_quantize(quantizer):
            m = torch.export.export(torch.nn.ReLU().eval(), (1,)).module()
            m = prepare_pt2e(m, quantizer)
            return convert_pt2e(m)
        """
    )
    assert _rows(tmp_path, text) == []


@pytest.mark.parametrize(
    "decorator",
    [
        "",
        '@unittest.skipIf(sys.platform == "win32", "no Windows")',
        '@unittest.skipIf(not HAS_CUDA, "needs CUDA")',
        '@unittest.skipUnless(HAS_CUDA, "needs CUDA")',
        '@unittest.skipIf(False, "fixed")',
        '@unittest.skipUnless(True, "fixed")',
        '@pytest.mark.skipif("sys.platform == \'win32\'", reason="no Windows")',
        '@pytest.mark.skipif(not HAS_CUDA, reason="needs CUDA")',
        '@pytest.mark.xfail(reason="flaky")',
        "@unittest.expectedFailure",
    ],
)
def test_test_run_somewhere_is_reported(tmp_path, decorator):
    assert _rows(tmp_path, _method(decorator)) == [CONVERT_ROW]


def test_project_skip_helper_is_reported(tmp_path):
    # A decorator of the project's own named `skip`: what it does is not unittest's.
    head = HEAD + "\n\ndef skip(reason):\n    return lambda f: f\n"
    assert _rows(tmp_path, _method('@skip("later")', head=head)) == [CONVERT_ROW + 4]


def test_skipped_class_helper_method_is_reported(tmp_path):
    # Not a test: another class may call it (not followed).
    text = _method("", name="quantize").replace("\nclass TestQ", '\n@unittest.skip("later")\nclass TestQ')
    text += "\n\nclass TestR(unittest.TestCase):\n    def test_it(self):\n        TestQ.quantize(self)\n"
    assert _rows(tmp_path, text) == [CONVERT_ROW + 1]


def test_skipped_test_of_a_program_is_reported(tmp_path):
    # A `__main__` block that calls the tests itself: the skip is the runner's, not this program's.
    main = '\n\nif __name__ == "__main__":\n    TestQ().test_quantize()\n'
    text = _method('@pytest.mark.skip(reason="later")') + main
    assert _rows(tmp_path, text) == [CONVERT_ROW]
