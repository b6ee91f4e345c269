"""QL201: a caller in a test unittest skips on every run passes nothing (issue 14, item 7;
`skipped_tests.never_runs`).

ExecuTorch's Qualcomm `test_qnn_backend_moe_feed_forward` is under
`@unittest.skip("UT pass before QNN 2.26, segfault during partitioner")` and hands a
`MOEFeedForward(ModelArgs())` of unknown content to `get_qdq_module`. unittest's skip
decorators replace the function with one that raises `SkipTest` when called: its body never
runs, whoever calls it, so its call of the helper passes no model and is no caller to judge.
pytest's marks and a skip on the class only tell a runner (a direct call still runs the
body), and a condition that is no constant skips somewhere only: those callers still count.
"""

from __future__ import annotations

import pytest

from tests.conftest import check_file, package_repository, rows_of
from tests.test_ql201_loop_items import HEAD

SUITE_ROW = HEAD.splitlines().index("    return prepare_pt2e(torch.export.export(model, x).module(), q)") + 1
TESTS = """
import unittest

import pytest
import torch

from pkg.suite import Net, Shuffle, quantize


{class_decorator}
class TestQ(unittest.TestCase):
    def test_shuffle(self):
        quantize(Shuffle(), (torch.randn(2, 4),), None)

    {decorator}
    def test_net(self):
        quantize(Net(), (torch.randn(2, 4),), None)
"""


def _rows(tmp_path, decorator: str, class_decorator: str = "") -> list[int]:
    tests = TESTS.replace("{decorator}", decorator).replace("{class_decorator}", class_decorator)
    root = package_repository(tmp_path / "repo", suite=HEAD, test_suite=tests)
    return rows_of(check_file(root / "pkg" / "suite.py", ("QL201",)).diagnostics)


@pytest.mark.parametrize(
    "decorator",
    [
        '@unittest.skip("segfault during partitioner")',
        "@unittest.skip",
        '@unittest.skipIf(True, "never")',
        '@unittest.skipUnless(False, "never")',
    ],
)
def test_a_caller_unittest_always_skips_is_no_caller(tmp_path, decorator):
    assert _rows(tmp_path, decorator) == []


@pytest.mark.parametrize(
    ("decorator", "class_decorator"),
    [
        ("", ""),  # runs: the batch norm model is the finding
        ('@pytest.mark.skip(reason="slow")', ""),  # a runner's mark: a direct call runs it
        ('@unittest.skipIf(torch.cuda.is_available(), "gpu")', ""),  # skipped somewhere only
        ('@unittest.skipIf(False, "never")', ""),
        ("", '@unittest.skip("all")'),  # on the class: a direct call of the method runs it
    ],
)
def test_a_caller_that_may_run_still_counts(tmp_path, decorator, class_decorator):
    assert _rows(tmp_path, decorator, class_decorator) == [SUITE_ROW]
