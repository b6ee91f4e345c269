"""QL201/QL202: a constructor value the class stores on itself and only tests afterwards.

zentorch's PT2E tests (amd/ZenDNN-pytorch-plugin) build `Model(m, n, mul_arg_pos,
add_arg_pos)` in a loop over a table of positions: `__init__` keeps the positions as
`self.mul_arg_pos` and `forward` only compares them. Whatever value is passed, nothing runs
it, so a model of Linears built so is known in full and its mode cannot change the graph.
A stored value that may run (called, passed on, kept, reached through the module tree, or
read by a base class's methods) keeps the report.
"""

from __future__ import annotations

import textwrap

from tests.test_model_sources import check

TABLE_TEST = """
    class Model(torch.nn.Module):
        def __init__(self, n_in, n_out, mul_arg_pos, add_arg_pos):
            super().__init__()
            self.linear = torch.nn.Linear(n_in, n_out)
            self.mul_arg_pos = mul_arg_pos
            self.add_arg_pos = add_arg_pos

        def forward(self, x, other):
            x = self.linear(x)
            y = torch.mul(x, other) if self.mul_arg_pos == 0 else torch.mul(other, x)
            if self.add_arg_pos == 0:
                return torch.add(y, other)
            return torch.add(other, y)


    def quantize(model, example_inputs, quantizer):
        exported = export(model, example_inputs, strict=True).module()
        return prepare_pt2e(exported, quantizer)


    POSITIONS = {"first": {"mul": 0, "add": 0}, "second": {"mul": 1, "add": 1}}


    def test_fusion(quantizer):
        for _, pos in POSITIONS.items():
            model = Model(4, 4, pos["mul"], pos["add"])
            quantize(model, (torch.randn(2, 4), torch.randn(2, 4)), quantizer)
"""


def _codes(src: str) -> list[str]:
    return [d.code for d in check(src)]


def test_positions_stored_and_compared_in_forward_are_quiet():
    assert _codes(TABLE_TEST) == []


def test_flags_stored_and_only_tested_are_quiet():
    for test in ["if self.add_arg_pos:", "if not self.add_arg_pos:", "if self.add_arg_pos and other is not None:"]:
        src = TABLE_TEST.replace("if self.add_arg_pos == 0:", test)
        assert _codes(src) == [], test


def test_a_stored_value_that_may_run_keeps_the_report():
    runs = [
        "y = self.add_arg_pos(y)",  # called
        "y = torch.add(y, self.add_arg_pos)",  # handed to a call
        "y = self.add_arg_pos or y",  # kept through `or`
        "y = [self.add_arg_pos][0](y)",  # kept in a list
    ]
    # Stored and never read again: the class shows no use of it, so it stays unknown.
    never = TABLE_TEST.replace("if self.add_arg_pos == 0:", "if other is None:")
    assert _codes(never) == ["QL201"]
    for line in runs:
        at = "            if self.add_arg_pos == 0:"
        src = TABLE_TEST.replace(at, f"            {line}\n            if other is None:")
        assert _codes(src) == ["QL201"], line


def test_a_class_that_reaches_its_modules_another_way_keeps_the_report():
    reached = [
        "for m in self.children(): x = m(x)",
        "for _, m in self.named_modules(): pass",
        "x = self._modules['linear'](x)",
        "x = getattr(self, 'linear')(x)",
    ]
    for line in reached:
        at = "            x = self.linear(x)\n"
        src = TABLE_TEST.replace(at, f"{at}            {line}\n")
        assert _codes(src) == ["QL201"], line


def test_a_value_read_by_another_method_or_a_base_keeps_the_report():
    # A property hands the stored value out: whoever reads it may call it.
    prop = TABLE_TEST.replace(
        "        def forward(self, x, other):",
        "        @property\n        def add_op(self):\n            return self.add_arg_pos\n\n"
        "        def forward(self, x, other):",
    )
    assert _codes(prop) == ["QL201"]
    # A project base class's methods are not read here.
    base = TABLE_TEST.replace(
        "    class Model(torch.nn.Module):",
        "    class Base(torch.nn.Module):\n        pass\n\n\n    class Model(Base):",
    )
    assert _codes(base) == ["QL201"]
    # Stored as the training flag: not a value the mode leaves alone.
    training = TABLE_TEST.replace("self.add_arg_pos = add_arg_pos", "self.training = add_arg_pos")
    assert _codes(training) == ["QL201"]


def test_the_same_table_with_a_mode_dependent_part_is_reported():
    bn = TABLE_TEST.replace(
        "self.linear = torch.nn.Linear(n_in, n_out)",
        "self.linear = torch.nn.Sequential(torch.nn.Linear(n_in, n_out), torch.nn.Dropout(0.1))",
    )
    (d,) = check(bn)
    assert d.code == "QL201" and "Dropout" in d.message


def test_qat_capture_of_the_same_table_after_eval_is_quiet():
    """QL202 reads the same content: an evaled model of Linears and compared flags."""
    src = textwrap.dedent(TABLE_TEST).replace("prepare_pt2e(exported", "prepare_qat_pt2e(exported")
    src = src.replace("        quantize(model,", "        model.eval()\n        quantize(model,")
    assert [d.code for d in check(src)] == []
    assert [d.code for d in check(src.replace("if self.add_arg_pos == 0:", "if self.add_arg_pos(y):"))] == ["QL202"]
