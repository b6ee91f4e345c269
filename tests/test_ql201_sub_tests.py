"""QL201: unittest's `self.subTest(...)` handed what labels a case takes no model (issue 14,
item 7; `model_changes.READS`).

ExecuTorch's Qualcomm activation-fusion test loops over rows of cases and writes `with
self.subTest(tc["name"]):` before handing `tc[QCOM_MODULE]` to `get_qdq_module`. The row is
the container holding the model, and a call handed anything of it before the hand-over may
give the model parts, so the caller was not classified. `subTest(msg, **params)` only labels
the sub-test's report with what it is given.
"""

from __future__ import annotations

import pytest

from tests.test_ql201_loop_items import CAPTURE_ROW, ql201

CALLER = """
class Cases:
    def run(self, x, q, log):
        cases = [{"name": "a", "module": Shuffle()}, {"name": "b", "module": Shuffle()}]
        for case in cases:
            with {label}(case["name"]):
                module = quantize(case["module"], (x,), q)
"""


def test_a_sub_test_labelled_with_a_rows_item_takes_no_model():
    assert ql201(CALLER.replace("{label}", "self.subTest")) == []


@pytest.mark.parametrize("label", ["self.relabel", "log"])
def test_another_call_handed_an_item_of_the_row_may_change_it(label):
    (d,) = ql201(CALLER.replace("{label}", label))
    assert d.range.start.row == CAPTURE_ROW
