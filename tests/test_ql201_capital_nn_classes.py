"""QL201: torch.nn classes whose names are all capitals are constructions (issue 14, item 7;
`model_apis.is_class_call`).

A callee no class of the project resolves to is judged by the shape of its name, and an
all-capitals name read as a constant (`MODELS()`), so `torch.nn.GLU()`, `nn.GELU()` and
`nn.LSTM(...)` built nothing: ExecuTorch's Qualcomm `test_qnn_backend_glu` hands
`[torch.nn.GLU(), torch.nn.GLU(dim=0)]` to `get_qdq_module` from another module, and that
caller was not classified; in the helper's own module an `nn.LSTM(..., dropout=0.5)` handed
to it was not seen at all. A name torch.nn lists as a class is a construction, whose content
is read from that table.
"""

from __future__ import annotations

import pytest

from tests.conftest import check_file, package_repository
from tests.test_ql201_loop_items import CAPTURE_ROW, HEAD, ql201

MODELS = "\n\ndef MODELS():\n    return nn.Dropout(0.5)\n"


def _other_module(tmp_path, body: str):
    """The diagnostics of the helper's module when `body` calls it from another module."""
    caller = "import torch\nfrom torch import nn\nfrom pkg.suite import MODELS, quantize\n\n\ndef main(x, q):\n" + body
    root = package_repository(tmp_path / "repo", suite=HEAD + MODELS, test_rows=caller)
    return check_file(root / "pkg" / "suite.py", ("QL201",)).diagnostics


QUIET = {
    "ExecuTorch's form: a list of GLUs looped over": (
        "    modules = [torch.nn.GLU(), torch.nn.GLU(dim=0)]\n"
        "    for i, module in enumerate(modules):\n"
        "        module = quantize(module, (x,), q)\n"
    ),
    "GELU": "    quantize(nn.GELU(), (x,), q)\n",
    "an LSTM without dropout": "    quantize(nn.LSTM(4, 4, 2), (x,), q)\n",
}


@pytest.mark.parametrize("body", QUIET.values(), ids=QUIET.keys())
def test_mode_free_capital_classes_from_another_module_keep_the_helper_quiet(tmp_path, body):
    assert _other_module(tmp_path, body) == []


LOUD = {
    "an LSTM with dropout": "    quantize(nn.LSTM(4, 4, 2, dropout=0.5), (x,), q)\n",
    "a constant's call: no class": "    quantize(MODELS(), (x,), q)\n",
}


@pytest.mark.parametrize("body", LOUD.values(), ids=LOUD.keys())
def test_dropout_or_a_capital_name_that_is_no_class_keeps_the_finding(tmp_path, body):
    (d,) = _other_module(tmp_path, body)
    assert d.range.start.row == CAPTURE_ROW


def test_an_lstm_with_dropout_handed_over_in_the_helpers_module_is_the_finding():
    (d,) = ql201("def main(x, q):\n    quantize(nn.LSTM(4, 4, 2, dropout=0.5), (x,), q)\n")
    assert d.range.start.row == CAPTURE_ROW
    assert "LSTM (dropout)" in d.message
