"""QL201/QL202/QL203: modes set through a flag a call passes, an override of `train` alone, an
`eval` override delegating to one field, each module's `training` flag set in a loop, and
reflective switches alone in a file (issue 14; `carried_flags`, `reflective_switches`,
`delegating_evals`, `looped_switches`, `graph_returns`).

What each form does was read on torch 2.13 from the `training` arguments of the exported
graph's `batch_norm` and `dropout` (Conv→BN→Dropout): `set_mode(m, False)` with `def
set_mode(m, training): m.train(training)` captures in eval mode; `m.eval()` on a class that
overrides only `train(self, mode=True)` runs that override with `mode=False` (forwarding it to
`super().train(mode)` evals; doing nothing leaves train mode); `m.eval()` running `def
eval(self): self.model.eval(); return self` evals what `self.model` holds and nothing else;
`for mod in m.modules():
mod.training = False` (or `setattr`) captures in eval mode, `children()` leaves the modules
inside a child in train mode. `getattr(gm, "eval")()` and `nn.Module.eval(gm)` raise on an
exported graph in a file that names no prepare call as well.

Each case is a module of one repository, read by a run over the tree, by `qlint check FILE`
and from standard input, which must agree.
"""

from __future__ import annotations

import pytest

from qlint.analysis.flow.graph_returns import may_switch_graph
from tests.conftest import check_file, package_repository
from tests.switch_cases import capture_cases, file_findings, graph_cases, stdin_findings, tree_findings

HEAD = """
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e

from pkg.modes import set_mode_elsewhere


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
        self.bn = nn.BatchNorm2d(3)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.bn(self.conv(x)))


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = Net()

    def forward(self, x):
        return self.body(x)


class Forwarding(Net):
    def train(self, mode=True):
        super().train(mode)
        return self


class Ignoring(Net):
    def train(self, mode=True):
        return self


class Delegating(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Net()

    def forward(self, x):
        return self.model(x)

    def eval(self):
        self.model.eval()
        return self


class Returning(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Net()

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


def set_mode(m, training):
    m.train(training)


def set_mode_kw(m, training=True):
    m.train(mode=training)


def set_mode_flipped(m, training):
    training = not training
    m.train(training)


def set_mode_inside(m, training):
    def inner(mod, training):
        mod.train(training)

    inner(m, not training)


def run(q, x):
    model = {cls}()
{switch}
    ep = torch.export.export(model, (x,)).module()
    return prepare_{prep}(ep, q)
"""
MODES = """
def set_mode_elsewhere(m, training):
    m.train(training)
"""
CAPTURE = "    ep = torch.export.export(model, (x,)).module()"

# (model class, what runs before the capture): the model is in eval mode there.
EVALED = {
    "helper-flag-false": ("Net", "set_mode(model, False)"),
    "helper-keyword-flag-false": ("Net", "set_mode_kw(model, training=False)"),
    "helper-flag-bound-once": ("Net", "off = False\nset_mode(model, off)"),
    "helper-of-another-module": ("Net", "set_mode_elsewhere(model, False)"),
    "forwarding-override-eval": ("Forwarding", "model.eval()"),
    "forwarding-override-train-false": ("Forwarding", "model.train(False)"),
    "modules-loop-assigns-flag": ("Outer", "for mod in model.modules():\n    mod.training = False"),
    "modules-loop-setattr-flag": ("Outer", "for mod in model.modules():\n    setattr(mod, 'training', False)"),
    "named-modules-loop-flag": ("Outer", "for _, mod in model.named_modules():\n    mod.training = False"),
    # The override evals the one field holding all the wrapper's batch norm and dropout.
    "eval-delegating-to-a-field": ("Delegating", "model.eval()"),
    "eval-returning-a-field": ("Returning", "model.eval()"),
}

# The model is in train mode at the capture.
TRAINING = {
    "helper-flag-true": ("Net", "model.eval()\nset_mode(model, True)"),
    "helper-default-flag": ("Net", "model.eval()\nset_mode_kw(model)"),
    "helper-flag-bound-once-true": ("Net", "on = True\nmodel.eval()\nset_mode(model, on)"),
    "helper-of-another-module-true": ("Net", "model.eval()\nset_mode_elsewhere(model, True)"),
    # `Module.eval` runs the override, which does nothing.
    "ignoring-override-eval": ("Ignoring", "model.eval()"),
    "forwarding-override-train": ("Forwarding", "model.eval()\nmodel.train()"),
    # The flags of the direct children only: the batch norm inside `body` keeps train mode.
    "children-loop-flag": ("Outer", "for mod in model.children():\n    mod.training = False"),
    "modules-loop-flag-true": ("Outer", "model.eval()\nfor mod in model.modules():\n    mod.training = True"),
    # `Module.train` is not overridden: it switches the field back too.
    "eval-delegating-then-train": ("Delegating", "model.eval()\nmodel.train()"),
}

# The override evals the field alone: the batch norm beside it captures in train mode (PTQ is
# reported), the field's in eval mode (so is QAT).
BOTH = {"eval-delegating-beside-a-batch-norm": ("Beside", "model.eval()")}

# Not known: neither rule reports it (the flag a call passes is not a constant there).
UNKNOWN = {
    "helper-flag-of-an-attribute": ("Net", "set_mode(model, q.flag)"),
    "helper-flag-bound-twice": ("Net", "off = True\noff = False\nset_mode(model, off)"),
    "helper-flag-starred": ("Net", "set_mode(model, *q.flags)"),
    "helper-default-under-kwargs": ("Net", "model.eval()\nset_mode_kw(model, **q.options)"),
    # The helper rebinds its parameter, or switches through a function of its own: the
    # value passed is not the one the switch sees (both capture in eval mode here).
    "helper-rebinding-its-flag": ("Net", "set_mode_flipped(model, True)"),
    "helper-switching-in-a-nested-function": ("Net", "set_mode_inside(model, True)"),
    "forwarding-override-train-flag": ("Forwarding", "model.train(q.flag)"),
}

GRAPH = """
import torch
from torch import nn


def run(model, x):
    gm = torch.export.export(model, (x,)).module()
    {switch}
    return gm
"""
RAISES = {
    "getattr-eval": 'getattr(gm, "eval")()',
    "getattr-train": "getattr(gm, 'train')(False)",
    "unbound-eval": "nn.Module.eval(gm)",
}
RAISES_NOTHING = {"unbound-train": "torch.nn.Module.train(gm, False)", "setattr": 'setattr(gm, "training", False)'}


def _modules() -> dict[str, tuple[str, list[tuple[str, int]]]]:
    """Module name -> (source, the findings it must give: (code, row))."""
    tables = ((EVALED, True), (TRAINING, False), (UNKNOWN, None), (BOTH, "both"))
    return {**capture_cases(HEAD, CAPTURE, tables), **graph_cases(GRAPH, RAISES, RAISES_NOTHING)}


MODULES = _modules()


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    sources = {n: s for n, (s, _) in MODULES.items()}
    return package_repository(tmp_path_factory.mktemp("carried_switches") / "repo", modes=MODES, **sources)


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
        "pt2e_helper_flag_true",
        "qat_pt2e_helper_flag_false",
        "qat_pt2e_forwarding_override_eval",
        "pt2e_ignoring_override_eval",
        "qat_pt2e_modules_loop_assigns_flag",
        "pt2e_children_loop_flag",
        "pt2e_eval_delegating_to_a_field",
        "qat_pt2e_eval_returning_a_field",
        "graph_getattr_eval",
        "graph_unbound_eval",
    ],
)
def test_standard_input_reads_them_alike(repo, name):
    source, expected = MODULES[name]
    assert stdin_findings(repo, name, source) == expected


def test_reports_quote_the_switch_as_written(repo):
    (part,) = check_file(repo / "pkg" / "qat_pt2e_eval_delegating_beside_a_batch_norm.py", ("QL202",)).diagnostics
    assert "with `self.model` in eval mode after `model.eval()` at line" in part.message
    (flag,) = check_file(repo / "pkg" / "qat_pt2e_modules_loop_setattr_flag.py", ("QL202",)).diagnostics
    assert "after `setattr(mod, 'training', False)` at line" in flag.message
    (helper,) = check_file(repo / "pkg" / "pt2e_helper_flag_true.py", ("QL201",)).diagnostics
    assert "after `m.train(training)` at line" in helper.message


def test_the_text_trigger_admits_a_reflective_switch_alone():
    for switch in RAISES.values():
        assert may_switch_graph(f".module()\n{switch}\n")
    assert not may_switch_graph('.module()\nsetattr(gm, "training", False)\n')
    assert not may_switch_graph('getattr(gm, "eval")()\n')  # no graph source
