"""QL201: a model built in a loop's round and handed over later in that round (issue 14,
item 7; `model_bindings._block_of`).

ExecuTorch's Qualcomm tests build the model in the loop over their inputs and lower what the
helper returned: `for sample_input in sample_inputs: module = HadamardMatMul(dim=128);
module = self.get_qdq_module(module, sample_input); ...` or `module =
self.get_qdq_module(Copy(torch.randn(3, 4, 5)), sample_input)`, then
`self.lower_module_and_test_output(module, sample_input)`. How long a name holds the model
was read in the function's own body only, so in a loop the name held it to the end of the
function and the lowering (which may add parts) counted as a change before the next round's
call: the caller was not classified. The round's block is read from the build: the call
after it takes the model that round built, and what runs later is done to a model already
handed over, or to the next round's.
"""

from __future__ import annotations

import pytest

from tests.test_ql201_loop_items import CAPTURE_ROW, ql201

LOWER = """
class Copy(torch.nn.Module):
    def __init__(self, x):
        super().__init__()
        self.x = x

    def forward(self, y):
        return self.x + y


def lower(m, x):
    m.extra = nn.Dropout(0.5)

"""

QUIET = {
    "ExecuTorch's form: built, handed over and the result lowered in each round": """
def main(q, inputs):
    for sample_input in inputs:
        module = Shuffle()
        module = quantize(module, sample_input, q)
        lower(module, sample_input)
""",
    "built in the call that hands it over": """
def main(q, inputs):
    for i, sample_input in enumerate(inputs):
        module = quantize(Copy(torch.randn(3, 4, 5)), sample_input, q)
        lower(module, sample_input)
""",
    "built under a with block of the round": """
def main(q, inputs, ctx):
    for s in inputs:
        with ctx:
            module = Shuffle()
        quantize(module, s, q)
        lower(module, s)
""",
    "in a branch": """
def main(q, inputs, check):
    for s in inputs:
        if check:
            module = Shuffle()
            quantize(module, s, q)
            lower(module, s)
""",
}


@pytest.mark.parametrize("caller", QUIET.values(), ids=QUIET.keys())
def test_what_a_round_does_after_the_hand_over_is_not_in_the_capture(caller):
    assert ql201(LOWER + caller) == []


LOUD = {
    "lowered between the build and the call": """
def main(q, inputs):
    for s in inputs:
        module = Shuffle()
        lower(module, s)
        quantize(module, s, q)
""",
    "lowered in a branch between the build and the call": """
def main(q, inputs, check):
    for s in inputs:
        module = Shuffle()
        if check:
            lower(module, s)
        quantize(module, s, q)
""",
    "built in a branch, handed over after it": """
def main(q, inputs, check):
    for s in inputs:
        if check:
            module = Shuffle()
        lower(module, s)
        quantize(module, s, q)
""",
    "built at the end of a round, handed over in the next": """
def main(q, inputs):
    module = Shuffle()
    for s in inputs:
        quantize(module, s, q)
        lower(module, s)
        module = Shuffle()
""",
    "the same model for every round": """
def main(q, inputs):
    module = Shuffle()
    for s in inputs:
        quantize(module, s, q)
        lower(module, s)
""",
    "a batch norm built in the round": """
def main(q, inputs):
    for s in inputs:
        module = Net()
        module = quantize(module, s, q)
""",
}


@pytest.mark.parametrize("caller", LOUD.values(), ids=LOUD.keys())
def test_a_change_before_the_hand_over_or_a_mode_dependent_model_stays_the_finding(caller):
    (d,) = ql201(LOWER + caller)
    assert d.range.start.row == CAPTURE_ROW
