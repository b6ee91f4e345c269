"""QL201: what a loop's target holds when a class hands it to a part it builds or stores it
(issue 14, item 8; `stored_values.comprehension_targets`, `iterated_names`).

ExecuTorch's Qualcomm static llama builds its layers as `nn.ModuleList([LlamaDecoderLayer(i,
config) for i in range(config.n_layers)])`. A comprehension's `i` was a name free in the method,
which may hold any module, so the model was never known in full; a `for` loop's was read through
what it loops over, but a call there (`enumerate([BN])`, `zip(...)`) handed on nothing, and a
batch norm looped over that way was judged mode-free. A loop's target now holds the items of
what it loops over: the names of that iterable, through any call (its object and arguments),
but `range`'s numbers; a comprehension's targets are its own, not the method's names.
"""

from __future__ import annotations

import pytest

from tests.test_mode_free_handed_arguments import _loud, _module, check

PRELUDE = """
BN = nn.BatchNorm1d(3)
i = nn.Dropout(0.5)
SIZES = (3, 4)
"""


# -- quiet: targets that hold numbers or modules built in place ------------------------------------
@pytest.mark.parametrize(
    "line",
    [
        "self.l = nn.ModuleList([Block(i) for i in range(3)])",  # the method's `i` is not read
        "self.l = nn.ModuleList([Block(j) for n in range(3) for j in range(n)])",
        "self.l = nn.ModuleList([Block(s) for s in SIZES])",  # a constant of the module
        "self.l = nn.ModuleList([Block(c) for c in range(3)])",  # shadows the parameter `c`
        "self.l = nn.ModuleList([nn.Sequential(m) for m in [nn.ReLU()]])",
        "self.l = nn.ModuleDict({str(k): Block(k) for k in range(3)})",
        "for k in range(3): self.b = Block(k)",
    ],
)
def test_loop_targets_over_numbers_are_quiet(line):
    assert check(_module(PRELUDE, line, "Net(nn.ReLU())")) == []


# -- loud: targets that hold a module from outside ---------------------------------------------------
@pytest.mark.parametrize(
    "line",
    [
        "self.l = nn.ModuleList([Block(m) for m in [BN]])",
        "self.l = nn.ModuleList([Block(c) for c in [BN]])",  # the comprehension's `c`, not the parameter
        "self.l = nn.ModuleList([Block(j) for row in [[BN]] for j in row])",  # a later loop over an earlier target
        "self.l = nn.ModuleList([nn.Sequential(m) for m in [BN]])",
        "self.l = nn.ModuleList([Block(m) for _, m in enumerate([BN])])",
        "self.l = nn.ModuleList([m for _, m in enumerate([BN])])",
        "for _, m in enumerate([BN]): self.b = Block(m)",  # a `for` loop through a call
        "for m, _ in zip([BN], SIZES): self.b = Block(m)",
        "for m in sorted([BN], key=id): self.b = Block(m)",
    ],
)
def test_loop_targets_over_a_module_from_outside_are_reported(line):
    assert _loud(_module(PRELUDE, line))


def test_a_name_the_comprehension_binds_is_its_own():
    # `i` in the comprehension holds numbers; the `i` read after it is the module's dropout.
    line = "self.l = nn.ModuleList([Block(i) for i in range(3)]); self.b = Block(i)"
    assert _loud(_module(PRELUDE, line))
    # And the other way round: the module's `i` is the first loop's iterable, read outside.
    assert _loud(_module(PRELUDE, "self.l = nn.ModuleList([Block(i) for i in [i]])"))
