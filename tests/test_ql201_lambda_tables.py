"""QL201: a model class that calls a lambda from a table it keeps on itself (issue 14, item 7;
`lambda_tables`).

ExecuTorch's Qualcomm test model `Index` writes `self.dispatcher = {0: lambda x: ..., 1: ...,
2: ...}` in `__init__` and runs `self.dispatcher[self.axis](x)` in `forward`; the call of a
table's item read as one that may build any module, so `Index(0)`, `Index(1)` and `Index(2)`
were not known in full and the caller handing them to `get_qdq_module` was not classified.
The call runs one of the class's own lambdas, read with the class.
"""

from __future__ import annotations

import pytest

from tests.test_ql201_loop_items import CAPTURE_ROW, ql201

INDEX = """
class Index(torch.nn.Module):
    def __init__(self, axis):
        super().__init__()
        self.idx0 = torch.tensor([[0, 1], [2, 3]], dtype=torch.int32)
        self.axis = axis
        self.dispatcher = {TABLE}
        EXTRA

    def forward(self, x):
        return self.dispatcher[self.axis](x)


def make(x):
    return nn.Dropout(0.5)(x)


def main(x, q):
    for i, module in enumerate([Index(0), Index(1)]):
        quantize(module, (x,), q)
"""
LAMBDAS = "{0: lambda x: x[self.idx0], 1: lambda x: x[:, self.idx0]}"


def _ql201(table: str = LAMBDAS, extra: str = "pass"):
    return ql201(INDEX.replace("{TABLE}", table).replace("EXTRA", extra))


@pytest.mark.parametrize("table", [LAMBDAS, "[lambda x: x[self.idx0], lambda x: x + 1]"])
def test_a_table_of_the_classs_lambdas_leaves_the_model_known(table):
    assert _ql201(table) == []


def test_a_lambda_that_runs_a_dropout_is_the_finding():
    (d,) = _ql201("{0: lambda x: x[self.idx0], 1: lambda x: nn.Dropout(0.5)(x)}")
    assert d.range.start.row == CAPTURE_ROW
    assert "Dropout" in d.message


@pytest.mark.parametrize(
    ("table", "extra"),
    [
        ("{0: lambda x: x[self.idx0], 1: make}", "pass"),  # a function of the module, not read here
        (LAMBDAS, "self.dispatcher[2] = make"),  # an item written after the literal
        (LAMBDAS, "self.pick = self.dispatcher"),  # the table kept under another name
        (LAMBDAS, "self.dispatcher = {0: make}"),  # bound twice
        ("{0: lambda x: x, **OTHER}", "pass"),  # items from elsewhere
    ],
)
def test_a_table_the_class_does_not_keep_to_its_own_lambdas_stays_the_finding(table, extra):
    (d,) = _ql201(table, extra)
    assert d.range.start.row == CAPTURE_ROW
