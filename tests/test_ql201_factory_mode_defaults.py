"""QL201/QL202 on a model a factory builds and puts in eval mode under a test of its own
parameter (`def build_sam2(..., mode="eval")` ... `if mode == "eval": model.eval()`,
axinc-ai/segment-anything-2): the arm the call's arguments, or the default it leaves, rule
out adds no mode to what the call returns (`helper_calls.apply`, as for a sink in the
helper). `build()` returns an eval-mode model, `build(mode="train")` a train-mode one; with
`**options`, or a body that rebinds the parameter, both arms stay possible."""

from __future__ import annotations

import textwrap

from tests.conftest import lint

HEAD = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1)
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(self.conv(x))


def build(mode="eval"):
    model = Net()
    if mode == "eval":
        model.eval()
    return model

"""  # the snippets start on line 22


def found(src: str, **kw):
    return lint(HEAD + textwrap.dedent(src), select=("QL201", "QL202"), **kw)


def rows(src: str) -> list[tuple[str, int]]:
    return [(d.code, d.range.start.row) for d in found(src)]


def test_the_default_builds_an_evaled_model():
    assert (
        rows(
            """
        def ptq(q, x):
            model = build()
            return prepare_pt2e(torch.export.export(model, (x,)).module(), q)


        def ptq_keyword(q, x):
            return prepare_pt2e(torch.export.export(build(mode="eval"), (x,)).module(), q)
        """
        )
        == []
    )


def test_an_argument_that_skips_the_eval():
    (d,) = found(
        """
        def ptq(q, x):
            model = build(mode="train")
            return prepare_pt2e(torch.export.export(model, (x,)).module(), q)
        """
    )
    assert (d.code, d.range.start.row) == ("QL201", 25)
    assert "in train mode" in d.message
    assert "some paths only" not in d.message  # the evaled arm cannot run for this call


def test_a_positional_argument_and_qat():
    assert rows(
        """
        def qat_wrong(q, x):
            return prepare_qat_pt2e(torch.export.export(build(), (x,)).module(), q)


        def qat_right(q, x):
            return prepare_qat_pt2e(torch.export.export(build("train"), (x,)).module(), q)
        """
    ) == [("QL202", 24)]


def test_options_that_may_pass_the_mode_leave_both_arms():
    assert rows(
        """
        def ptq(q, x, **options):
            model = build(**options)
            return prepare_pt2e(torch.export.export(model, (x,)).module(), q)
        """
    ) == [("QL201", 25)]


def test_a_factory_that_rebinds_its_parameter_leaves_both_arms():
    assert rows(
        """
        def build_checked(mode="eval"):
            mode = mode.lower()
            model = Net()
            if mode == "eval":
                model.eval()
            return model


        def ptq(q, x):
            model = build_checked()
            return prepare_pt2e(torch.export.export(model, (x,)).module(), q)
        """
    ) == [("QL201", 33)]


def test_a_factory_in_another_module():
    factory = """\
    from torch import nn


    def build_model(mode="eval"):
        model = nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3))
        if mode == "eval":
            model.eval()
        return model
    """
    src = """\
    import torch
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

    from factory import build_model


    def ptq(q, x):
        return prepare_pt2e(torch.export.export(build_model(), (x,)).module(), q)


    def ptq_train(q, x):
        return prepare_pt2e(torch.export.export(build_model(mode="train"), (x,)).module(), q)
    """
    diags = lint(src, select=("QL201",), overlay={"factory.py": factory, "snippet.py": src})
    assert [d.range.start.row for d in diags] == [12]
