"""QL201/QL202: each direct child's `training` flag set in a loop (`direct_children`), and an
`eval` override delegating to one field on a class that inherits its `__init__`
(`inherited_inits`), issue 14, stop 70's leftovers.

Read on torch 2.13 from the `training` arguments of the exported graph's `batch_norm` and
`dropout`: `for mod in m.children(): mod.training = False` captures Net's own batch norm and
dropout in eval mode, but a batch norm inside a child (a `Net` held by `Outer`, an
`nn.Sequential`, a part given after the build) in train mode, and `m`'s own flag stays True (a
`forward` reading `self.training` takes its train branch). `Sub().eval()`, with `class
Sub(Delegating)` writing no `__init__`, runs `Delegating.__init__` and its `eval`, which evals
`self.model`: Net's batch norm and dropout capture in eval mode.

Each case is a module of one repository, read by a run over the tree, by `qlint check FILE`
and from standard input, which must agree.
"""

from __future__ import annotations

import pytest

from tests.conftest import package_repository
from tests.switch_cases import capture_cases, file_findings, stdin_findings, tree_findings

HEAD = """
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e

from pkg.bases import Delegating as Elsewhere


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
        self.bn = nn.BatchNorm2d(3)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.bn(self.conv(x)))


class Inherits(Net):
    pass


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
        self.act = nn.Sequential(nn.ReLU(), nn.Identity())

    def forward(self, x):
        return self.act(self.conv(x))


class Shell(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Plain()
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(self.block(x))


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = Net()

    def forward(self, x):
        return self.body(x)


class Stacked(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 3, 3), nn.BatchNorm2d(3))

    def forward(self, x):
        return self.body(x)


class Encoded(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.enc = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)

    def forward(self, x):
        return self.enc(self.proj(x))


class Wraps(nn.Module):
    def __init__(self, block):
        super().__init__()
        self.body = nn.Sequential(block)
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(self.body(x))


class Reads(Net):
    def forward(self, x):
        y = super().forward(x)
        return y * 2 if self.training else y


class Grows(Net):
    def grow(self):
        self.bn = nn.Sequential(nn.BatchNorm2d(3))


class Delegating(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Net()

    def forward(self, x):
        return self.model(x)

    def eval(self):
        self.model.eval()
        return self


class Taking(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)

    def eval(self):
        return self.model.eval()


class Beside(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Net()
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(self.model(x))

    def eval(self):
        self.model.eval()
        return self


class Retraining(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Net()

    def forward(self, x):
        self.model.train()
        return self.model(x)

    def eval(self):
        self.model.eval()
        return self


class SubDelegating(Delegating):
    pass


class SubSub(SubDelegating):
    def forward(self, x):
        return self.model(x) + 1


class SubTaking(Taking):
    pass


class SubElsewhere(Elsewhere):
    pass


class SubReads(Delegating):
    def forward(self, x):
        y = self.model(x)
        return y * 2 if self.training else y


class SubGrows(Delegating):
    def grow(self):
        self.extra = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.extra(self.model(x))


class SubBeside(Beside):
    pass


class SubRetraining(Retraining):
    pass


def built_and_given():
    model = Net()
    model.bn = nn.Sequential(nn.BatchNorm2d(3))
    return model


class SubIgnoring(Delegating):
    def eval(self):
        return self


def run(q, x):
    model = {build}
{switch}
    ep = torch.export.export(model, (x,)).module()
    return prepare_{prep}(ep, q)
"""
BASES = """
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(x)


class Delegating(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Net()

    def forward(self, x):
        return self.model(x)

    def eval(self):
        self.model.eval()
        return self
"""
CAPTURE = "    ep = torch.export.export(model, (x,)).module()"
LOOP = "for mod in model.children():\n    mod.training = False"

# (the model's construction, what runs before the capture): the model is in eval mode there.
EVALED = {
    "children-flag-all-direct": ("Net()", LOOP),
    "named-children-setattr-all-direct": (
        "Net()",
        "for _, mod in model.named_children():\n    setattr(mod, 'training', False)",
    ),
    "children-flag-inherited-init": ("Inherits()", LOOP),
    # The child holding more modules holds none whose mode matters.
    "children-flag-beside-a-mode-free-child": ("Shell()", LOOP),
    "eval-delegating-inherited-init": ("SubDelegating()", "model.eval()"),
    "eval-delegating-two-classes-up": ("SubSub()", "model.eval()"),
    "eval-returning-inherited-init-given-the-model": ("SubTaking(Net())", "model.eval()"),
    "eval-delegating-base-of-another-module": ("SubElsewhere()", "model.eval()"),
}

# The model is in train mode at the capture.
TRAINING = {
    # A batch norm inside a child keeps its mode.
    "children-flag-a-child-holds-net": ("Outer()", LOOP),
    "children-flag-a-sequential-holds-a-batch-norm": ("Stacked()", LOOP),
    # The transformer layer's own flag is set, not its dropouts' (its attention's is its own).
    "children-flag-a-transformer-layer": ("Encoded()", LOOP),
    "children-flag-back-to-train": ("Net()", "model.eval()\nfor mod in model.children():\n    mod.training = True"),
    # The subclass's own `eval` does nothing (`Module.eval` is not run).
    "eval-overridden-by-the-subclass": ("SubIgnoring()", "model.eval()"),
}

# Partly switched on torch, and the loop is not read: the model keeps the train mode it had
# (the PTQ capture is reported; the QAT capture, whose direct children are in eval mode, is
# not: a loop switching some modules by their flags is not recorded).
NOT_READ = {
    # The model's own flag stays True: its `forward` takes the train branch.
    "children-flag-model-reads-its-flag": ("Reads()", LOOP),
    # The direct batch norm replaced by a container holding one, before the loop.
    "children-flag-given-a-part-first": ("Net()", "model.bn = nn.Sequential(nn.BatchNorm2d(3))\n" + LOOP),
    "children-flag-a-part-added-first": ("Net()", "model.add_module('bn', nn.Sequential(nn.BatchNorm2d(3)))\n" + LOOP),
    "children-flag-a-class-adding-parts": ("Grows()", "model.grow()\n" + LOOP),
    "children-flag-given-a-part-by-its-factory": ("built_and_given()", LOOP),
    # The block handed in is held inside `body`.
    "children-flag-handed-a-block": ("Wraps(Net())", LOOP),
    "children-flag-of-batch-norms-only": (
        "Net()",
        "for mod in model.children():\n    if isinstance(mod, nn.BatchNorm2d):\n        mod.training = False",
    ),
}

# The field is evaled, what the wrapper holds besides it (or reads: its own flag) is not: the
# PTQ capture is reported for that, the QAT capture for the field.
BOTH = {
    "eval-delegating-inherited-beside-a-batch-norm": ("SubBeside()", "model.eval()"),
    "eval-delegating-subclass-reads-its-flag": ("SubReads()", "model.eval()"),
    "eval-delegating-subclass-adds-a-part": ("SubGrows()", "model.grow()\nmodel.eval()"),
    # The base's `forward` trains the field again: torch captures it all in train mode. The
    # PTQ capture is reported; so is the QAT one, as for `Retraining()` itself (a switch
    # `forward` makes is not followed: a false alarm kept from before).
    "eval-delegating-base-retrains-the-field": ("SubRetraining()", "model.eval()"),
}


MODULES = capture_cases(HEAD, CAPTURE, ((EVALED, True), (TRAINING, False), (NOT_READ, False), (BOTH, "both")), "build")


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    sources = {n: s for n, (s, _) in MODULES.items()}
    return package_repository(tmp_path_factory.mktemp("direct_children") / "repo", bases=BASES, **sources)


@pytest.fixture(scope="module")
def tree_run(repo) -> dict[str, list[tuple[str, int]]]:
    return tree_findings(repo, MODULES)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_reading_agrees_with_torch(repo, tree_run, name):
    expected = MODULES[name][1]
    assert sorted(tree_run[name]) == expected
    assert file_findings(repo, name) == expected


@pytest.mark.parametrize(
    "name",
    [
        "pt2e_children_flag_all_direct",
        "qat_pt2e_children_flag_all_direct",
        "pt2e_children_flag_a_child_holds_net",
        "pt2e_eval_delegating_inherited_init",
        "qat_pt2e_eval_delegating_base_of_another_module",
    ],
)
def test_standard_input_reads_them_alike(repo, name):
    source, expected = MODULES[name]
    assert stdin_findings(repo, name, source) == expected
