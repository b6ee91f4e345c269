"""QL201/QL202: a capture helper called inside `self.assertRaises(Error, lambda: ...)`: unittest
runs the lambda once, right away, so its call is a caller read like any other (issue 14,
item 7; `asserted_lambdas`). ao's test_quantize_pt2e.py checks a refused quantizer so.
"""

from __future__ import annotations

from tests.test_ql201_subclass_callers import PTQ_ROW, QAT_ROW, _rows


def _suite(*asserted: str) -> str:
    lines = "".join(f"\n    def test_{i}(self):\n        {line}\n" for i, line in enumerate(asserted))
    return "\nclass TestOps(Suite):" + lines


def test_a_lambda_that_never_passes_is_qat_never_reaches_the_qat_capture(tmp_path):
    tests = _suite(
        "self.assertRaises(RuntimeError, lambda: self.check_quantizer(Net(), torch.randn(1, 3, 4, 4)))",
        "self.assertRaisesRegex(RuntimeError, 'bad', lambda: self.check_quantizer(Net(), torch.randn(1)))",
    )
    assert _rows(tmp_path, "QL202", test_ops=tests) == []


def test_a_lambda_passing_an_eval_mode_model_vouches_for_the_ptq_helper(tmp_path):
    tests = _suite("self.assertWarns(UserWarning, lambda: self.quantize(Net().eval(), torch.randn(1)))")
    assert _rows(tmp_path, "QL201", test_ops=tests) == []


def test_a_lambda_passing_is_qat_true_is_reported(tmp_path):
    tests = _suite(
        "self.assertRaises(RuntimeError, lambda: self.check_quantizer(Net(), torch.randn(1)))",
        "self.assertRaises(RuntimeError, lambda: self.check_quantizer(Net(), torch.randn(1), is_qat=True))",
    )
    assert _rows(tmp_path, "QL202", test_ops=tests) == [QAT_ROW]


def test_a_lambda_passing_a_train_mode_model_is_reported(tmp_path):
    tests = _suite("self.assertRaises(RuntimeError, lambda: self.quantize(Net(), torch.randn(1)))")
    assert _rows(tmp_path, "QL201", test_ops=tests) == [PTQ_ROW]


def test_lambdas_that_may_not_run_so_keep_the_callers_unknown(tmp_path):
    # A lambda with a parameter, one in the wrong place, an `assertRaises` of the class's own.
    for i, line in enumerate(
        (
            "self.assertRaises(RuntimeError, lambda m: self.quantize(m, torch.randn(1)), Net().eval())",
            "self.assertRaises(lambda: self.quantize(Net().eval(), torch.randn(1)))",
            "keep(lambda: self.quantize(Net().eval(), torch.randn(1)))",
        )
    ):
        assert _rows(tmp_path / str(i), "QL201", test_ops=_suite(line)) == [PTQ_ROW], line
    own = _suite("self.assertRaises(RuntimeError, lambda: self.quantize(Net().eval(), torch.randn(1)))")
    own += "\n    def assertRaises(self, error, later):\n        self.later = later\n"
    assert _rows(tmp_path / "own", "QL201", test_ops=own) == [PTQ_ROW]
