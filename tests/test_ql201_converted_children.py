"""QL201: children put back as converted graphs (`setattr(model, name, converted)` in a loop,
`model._modules[name] = ...`, torchao's `test_mixing_qat_ptq`) or as evaled modules add no part
whose mode matters (`converted_children`): quiet. Loud look-alikes: a batch norm the loop leaves
in place, a child put back unconverted or built anew, an evaled child switched back by a later
`.train()` of the whole model, a name bound to something else besides the converted graph."""

from __future__ import annotations

import textwrap

from tests.conftest import lint

HEAD = """\
import torch
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 3)
        self.linear = torch.nn.Linear(3, 8)

    def forward(self, x):
        return self.linear(self.conv(x))


class NetBn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 3)
        self.bn = torch.nn.BatchNorm2d(3)
        self.linear = torch.nn.Linear(3, 8)

    def forward(self, x):
        return self.linear(self.bn(self.conv(x)))
"""


def rows(src: str) -> list[int]:
    text = HEAD + textwrap.dedent(src)
    return [d.range.start.row - HEAD.count("\n") for d in lint(text, select=("QL201",))]


HELPER = """
def convert_children(model, quantizer, x):
    for name, child in model.named_children():
        converted = convert_pt2e(prepare_pt2e(export(child, (x,)).module(), quantizer))
        setattr(model, name, converted)


def quantize(quantizer, x):
    model = Net()
    convert_children(model, quantizer, x)
    return prepare_pt2e(export(model, (x,)).module(), quantizer)
"""
CAPTURE_ROW = 11  # the capture's row in HELPER


def test_children_put_back_converted_by_a_helper_are_quiet():
    assert rows(HELPER) == []


def test_children_put_back_converted_in_the_capturing_function_are_quiet():
    assert (
        rows(
            """
        def quantize(quantizer, x):
            model = Net()
            for name, child in model.named_children():
                setattr(model, name, convert_pt2e(prepare_pt2e(export(child, (x,)).module(), quantizer)))
            return prepare_pt2e(export(model, (x,)).module(), quantizer)
        """
        )
        == []
    )


def test_children_stored_in_modules_converted_are_quiet():
    src = HELPER.replace("setattr(model, name, converted)", "model._modules[name] = converted")
    assert rows(src) == []


def test_children_put_back_evaled_are_quiet():
    src = HELPER.replace(
        "converted = convert_pt2e(prepare_pt2e(export(child, (x,)).module(), quantizer))", "converted = child.eval()"
    )
    assert rows(src) == []


def test_batch_norm_left_by_the_loop_is_reported():
    src = HELPER.replace("    model = Net()", "    model = NetBn()").replace(
        "        converted = ",
        "        if not isinstance(child, torch.nn.Linear):\n            continue\n        converted = ",
    )
    assert rows(src) == [CAPTURE_ROW + 2]


def test_child_put_back_prepared_is_reported():
    src = HELPER.replace("converted = convert_pt2e(prepare_pt2e(", "converted = (prepare_pt2e(")
    assert rows(src) == [CAPTURE_ROW]


def test_child_put_back_new_is_reported():
    src = HELPER.replace("setattr(model, name, converted)", "setattr(model, name, torch.nn.Dropout())")
    assert rows(src) == [CAPTURE_ROW]


def test_child_put_back_evaled_then_switched_back_is_reported():
    src = HELPER.replace(
        "converted = convert_pt2e(prepare_pt2e(export(child, (x,)).module(), quantizer))",
        "converted = torch.nn.BatchNorm2d(3).eval()",
    ).replace(
        "    convert_children(model, quantizer, x)\n", "    convert_children(model, quantizer, x)\n    model.train()\n"
    )
    assert rows(src) == [CAPTURE_ROW + 1]


def test_name_bound_to_another_module_too_is_reported():
    src = HELPER.replace(
        "        setattr(model, name, converted)",
        "        if name == 'conv':\n            converted = torch.nn.Dropout()\n"
        "        setattr(model, name, converted)",
    )
    assert rows(src) == [CAPTURE_ROW + 2]


# -- the parts a loop replaces leave the model (`replaced_parts`) --------------------------------

LOOP = """
def quantize(quantizer, x):
    model = NetBn()
    for name, child in model.named_children():
        converted = convert_pt2e(prepare_pt2e(export(child, (x,)).module(), quantizer))
        setattr(model, name, converted)
    return prepare_pt2e(export(model, (x,)).module(), quantizer)
"""
LOOP_CAPTURE_ROW = 7


def test_batch_norm_replaced_with_every_child_is_quiet():
    assert rows(LOOP) == []


def test_batch_norm_replaced_by_name_is_quiet():
    src = LOOP.replace("for name, child in model.named_children():", 'for name in ("bn",):').replace(
        "export(child,", "export(getattr(model, name),"
    )
    assert rows(src) == []


def test_batch_norm_left_by_the_names_is_reported():
    src = LOOP.replace("for name, child in model.named_children():", 'for name in ("conv", "linear"):').replace(
        "export(child,", "export(getattr(model, name),"
    )
    assert rows(src) == [LOOP_CAPTURE_ROW]


def test_batch_norm_skipped_by_the_loop_is_reported():
    src = LOOP.replace(
        "        converted = ",
        "        if isinstance(child, torch.nn.BatchNorm2d):\n            continue\n        converted = ",
    )
    assert rows(src) == [LOOP_CAPTURE_ROW + 2]


def test_batch_norm_replaced_in_a_branch_is_reported():
    src = LOOP.replace(
        "        setattr(model, name, converted)",
        "        if name != 'bn':\n            setattr(model, name, converted)",
    )
    assert rows(src) == [LOOP_CAPTURE_ROW + 1]


def test_batch_norm_replaced_by_prepared_graphs_is_reported():
    src = LOOP.replace("converted = convert_pt2e(prepare_pt2e(", "converted = (prepare_pt2e(")
    assert rows(src) == [LOOP_CAPTURE_ROW]


def test_part_read_by_getattr_and_handed_on_is_reported():
    # `getattr(model, name)` is a part of `model`, as `model.linear` is: a helper of another
    # module may give it parts.
    assert rows(
        """
        from helpers import swap_parts


        def quantize(quantizer, x):
            model = Net()
            swap_parts(getattr(model, "linear"))
            return prepare_pt2e(export(model, (x,)).module(), quantizer)
        """
    ) == [8]
