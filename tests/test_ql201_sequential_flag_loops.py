"""QL201/QL202: a whole `nn.Sequential` model under a loop setting each child's `training` flag
(text72's leftover, stop 72's closing note). `model = nn.Sequential(conv, bn)` then
`for m in model.children(): m.training = False` sets the flag of every module whose mode
matters when each child is a torch.nn module whose mode is its own flag: read on torch 2.13,
the exported batch norm and dropout run in eval mode (and train after `model.eval()` and the
loop setting True). `direct_children` read such a loop over a part built in place only; the
model itself, and children named by locals each bound once to such a construction, are now
read too (`sequential_children.flags_reach_all`). Loud as on torch: a container or a class of
the project among the children (its batch norm keeps its flag), a child whose construction is
not known, a part given before the loop, a child or the model switched back after it."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import lint

HEAD = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(x)

"""

RUN = """
def run(x, q, flag, layers):
    {before}
    model = {build}
    {whole}
    {loop}
    {after}
    return {prepare}(torch.export.export(model, (x,)).module(), q)
"""

NAMED = "conv = nn.Conv2d(3, 3, 1)\n    bn = nn.BatchNorm2d(3)"
LOOPS = {
    "flags": "for m in model.children():\n        m.training = {flag}",
    "setattr": 'for _, m in model.named_children():\n        setattr(m, "training", {flag})',
}
BUILDS = {
    "inline": ("", "nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3), nn.Dropout(0.5))"),
    "named": (NAMED, "nn.Sequential(conv, bn)"),
    "named and inline": (NAMED, "torch.nn.Sequential(conv, bn, nn.Dropout(0.5))"),
}


def codes(before="", build="", loop="", after="", whole="", prepare="prepare_pt2e") -> list[str]:
    src = HEAD + textwrap.dedent(RUN).format(
        before=before, build=build, whole=whole, loop=loop, after=after, prepare=prepare
    )
    return [d.code for d in lint(src, select=("QL201", "QL202"))]


@pytest.mark.parametrize("loop", LOOPS.values(), ids=LOOPS.keys())
@pytest.mark.parametrize(("before", "build"), BUILDS.values(), ids=BUILDS.keys())
def test_flags_set_false_on_every_child_evals_the_whole_sequential(before, build, loop):
    loop = loop.format(flag=False)
    assert codes(before, build, loop) == []
    assert codes(before, build, loop, prepare="prepare_qat_pt2e") == ["QL202"]


@pytest.mark.parametrize("loop", LOOPS.values(), ids=LOOPS.keys())
@pytest.mark.parametrize(("before", "build"), BUILDS.values(), ids=BUILDS.keys())
def test_flags_set_true_after_the_eval_train_the_whole_sequential(before, build, loop):
    loop = loop.format(flag=True)
    assert codes(before, build, loop, whole="model.eval()", prepare="prepare_qat_pt2e") == []
    assert codes(before, build, loop, whole="model.eval()") == ["QL201"]


FLAGS = LOOPS["flags"].format(flag=False)
NOT_REACHED = {
    "a container among the children": ("", "nn.Sequential(nn.Conv2d(3, 3, 1), nn.Sequential(nn.BatchNorm2d(3)))", ""),
    "a class of the project among them": ("conv = nn.Conv2d(3, 3, 1)\n    bn = Block()", "nn.Sequential(conv, bn)", ""),
    "a name bound to either": (
        "conv = nn.Conv2d(3, 3, 1)\n    bn = nn.BatchNorm2d(3) if flag else Block()",
        "nn.Sequential(conv, bn)",
        "",
    ),
    "a name bound twice": (NAMED + "\n    if flag:\n        bn = Block()", "nn.Sequential(conv, bn)", ""),
    "a name rebound by a step": (NAMED + '\n    bn = bn.to("cpu")', "nn.Sequential(conv, bn)", ""),
    "a parameter among them": ("conv = nn.Conv2d(3, 3, 1)", "nn.Sequential(conv, flag)", ""),
    "starred children": ("", "nn.Sequential(*layers)", ""),
    "a part given before the loop": (NAMED, "nn.Sequential(conv, bn)\n    model.append(nn.Dropout(0.5))", ""),
    "a child trained after the loop": (NAMED, "nn.Sequential(conv, bn)", "bn.train()"),
    "a child's flag set after the loop": (NAMED, "nn.Sequential(conv, bn)", "bn.training = True"),
    "the whole trained after the loop": (NAMED, "nn.Sequential(conv, bn)", "model.train()"),
}


@pytest.mark.parametrize(("before", "build", "after"), NOT_REACHED.values(), ids=NOT_REACHED.keys())
def test_children_the_flags_may_not_reach_stay_reported(before, build, after):
    assert codes(before, build, FLAGS, after) == ["QL201"]


MODULE_LOOPS = {
    "modules-eval": "for m in model.modules():\n        m.eval()",
    "modules-flags": "for m in model.modules():\n        m.training = False",
    "children-eval": "for m in model.children():\n        m.eval()",
}


@pytest.mark.parametrize("loop", MODULE_LOOPS.values(), ids=MODULE_LOOPS.keys())
def test_loops_switching_every_module_were_read_already(loop):
    # What this reading joins: loops that reach every module of the model, nested ones too.
    build = "nn.Sequential(nn.Conv2d(3, 3, 1), nn.Sequential(nn.BatchNorm2d(3)))"
    assert codes("", build, loop) == []
    assert codes("", build, loop.replace("eval()", "train()").replace("False", "True"), whole="model.eval()") == [
        "QL201"
    ]
