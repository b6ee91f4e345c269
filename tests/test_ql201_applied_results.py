"""QL201/QL202: what `Module.apply(fn)` returns (`inert_applies`). torch 2.13's `apply` calls `fn`
on every module and returns the module it was called on, so `m = Net().apply(init_weights)` is
`m` in train mode when `init_weights` cannot switch a module: as loud as `m = Net()` followed by
`m.apply(init_weights)`. Quiet where `fn` switches or may (it names a mode, hands the module on,
calls its own methods, is decorated or is not the project's): the result stays unknown, as
before. On an exported graph, whatever `fn` does, the result is the graph.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.test_model_sources import check
from tests.test_ql202_move_order import in_function, prepare_row, rows

NET = """
from lib import init_elsewhere


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
        self.bn = nn.BatchNorm2d(3)


def init_weights(mod):
    if isinstance(mod, nn.Conv2d):
        nn.init.kaiming_normal_(mod.weight)
        mod.bias.data.fill_(0.0)


def freeze_bn(mod):
    if isinstance(mod, nn.BatchNorm2d):
        mod.eval()


def freeze_some(mod):
    if chosen(mod):
        mod.eval()


def handed_on(mod):
    init_part(mod)


def reset(mod):
    if hasattr(mod, "reset_parameters"):
        mod.reset_parameters()


@registered
def decorated(mod):
    print(mod)


def quantize(quantizer, x):
"""
CAPTURE = "prepare_pt2e(export(m, (x,)).module(), quantizer)\n"


def _ql201(steps: str) -> list[str]:
    return [d.code for d in check(NET + textwrap.indent(steps + CAPTURE, "    "), select=("QL201",))]


@pytest.mark.parametrize("fn", ["init_weights", "lambda mod: print(type(mod))"])
def test_the_result_of_apply_is_the_train_mode_model(fn):
    assert _ql201(f"m = Net().apply({fn})\n") == ["QL201"]
    assert _ql201(f"m = Net()\nm = m.apply({fn})\n") == ["QL201"]
    assert _ql201(f"m = Net()\nm.apply({fn})\n") == ["QL201"]  # the statement, as before


def test_the_result_of_apply_on_an_evaled_model_is_quiet():
    assert _ql201("m = Net().eval().apply(init_weights)\n") == []
    assert _ql201("m = Net().apply(init_weights)\nm.eval()\n") == []


@pytest.mark.parametrize(
    "fn",
    [
        "freeze_bn",  # switches every batch norm: read by `looped_switches`
        "freeze_some",  # switches modules it picks by a call: which ones is unknown
        "lambda mod: mod.train(False)",
        "handed_on",  # hands the module to a function that may switch it
        "lambda mod: init_part(mod)",
        "reset",  # the module's own method
        "decorated",  # the decorator may hand `apply` another function
        "init_elsewhere",  # not the project's: not read
    ],
)
def test_apply_of_a_function_that_may_switch_leaves_the_result_unknown(fn):
    assert _ql201(f"m = Net().apply({fn})\n") == []


# -- QL202: `apply` on the prepared QAT graph of an eval-mode capture --------------------------

DISABLE = "prepared = prepared.apply(torch.ao.quantization.disable_observer)\n"


def test_apply_on_the_graph_hands_back_the_graph(tmp_path):
    steps = DISABLE + "move_exported_model_to_train(prepared)\ntrain_loop(prepared, data)\n"
    assert rows(in_function(steps), tmp_path) == []


def test_training_the_applied_graph_before_the_move_stays_reported(tmp_path):
    steps = DISABLE + "train_loop(prepared, data)\nmove_exported_model_to_train(prepared)\n"
    assert rows(in_function(steps), tmp_path) == [prepare_row(in_function(steps))]
