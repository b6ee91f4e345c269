"""QL201: `.to(device)` and its kin (`.cuda()`, `.float()`, ...) return the module they are
called on, so a model moved between its construction and the capture keeps its mode.

Issue 14 asked whether `model.to(d)`, `model = model.to(d).eval()` and `self.net.to(device)`
were followed; they are. These pin it: each form is loud where the moved model is still in
train mode at the capture, and quiet where an eval on the same object (before, in the chain,
or after the move) reaches the capture.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.snippets import CONV_BN_NET
from tests.test_model_sources import check

NET = CONV_BN_NET


def _function(body: str) -> str:
    return NET + "\ndef quantize(quantizer, x, d):\n" + textwrap.indent(textwrap.dedent(body), "    ")


def _ql201(src: str) -> list[str]:
    return [d.message for d in check(src, select=("QL201",))]


CAPTURE = "prepare_pt2e(export(m, (x,)).module(), quantizer)\n"


@pytest.mark.parametrize(
    "moves",
    [
        "m = Net()\nm.to(d)\n",  # the result dropped: `to` moved m in place
        "m = Net()\nm = m.to(d)\n",
        "m = Net().to(d)\n",
        "m = Net().cuda()\n",
        "m = Net()\nm = m.to(d).float()\n",
        # An eval before the move, undone by a train after it.
        "m = Net().eval()\nm = m.to(d)\nm.train()\n",
        "m = Net().eval()\nm.to(d).train()\n",
    ],
)
def test_a_moved_model_in_train_mode_is_reported(moves):
    (message,) = _ql201(_function(moves + CAPTURE))
    assert "BatchNorm2d" in message


def test_a_model_moved_inside_the_capture_call_is_reported():
    (message,) = _ql201(_function("m = Net()\nprepare_pt2e(export(m.to(d), (x,)).module(), quantizer)\n"))
    assert "BatchNorm2d" in message


@pytest.mark.parametrize(
    "moves",
    [
        "m = Net().to(d).eval()\n",
        "m = Net()\nm = m.to(d).eval()\n",
        "m = Net()\nm.to(d).eval()\n",
        "m = Net().eval()\nm = m.to(d)\n",
        "m = Net().eval()\nm.to(d)\n",
        "m = Net()\nm.eval()\nm = m.to(d)\n",
        "m = Net().to(d)\nm.eval()\n",
        # A train undone by an eval chained after the move.
        "m = Net()\nm.train()\nm.to(d).eval()\n",
        # Moving a tensor says nothing of the model.
        "m = Net().eval()\nx = x.to(d)\n",
    ],
)
def test_a_moved_model_evaled_on_every_path_is_quiet(moves):
    assert _ql201(_function(moves + CAPTURE)) == []


HOLDER = """
class Holder:
    def __init__(self, d):
{init}
    def quantize(self, quantizer, x):
        prepare_pt2e(export(self.net, (x,)).module(), quantizer)
"""


def test_a_held_model_moved_in_init_is_reported():
    init = "        self.net = Net()\n        self.net.to(d)"
    (message,) = _ql201(NET + HOLDER.format(init=init))
    assert "`self.net`" in message


@pytest.mark.parametrize(
    "init",
    [
        "        self.net = Net().to(d).eval()",
        "        self.net = Net().eval()\n        self.net.to(d)",
    ],
)
def test_a_held_model_moved_and_evaled_in_init_is_quiet(init):
    assert _ql201(NET + HOLDER.format(init=init)) == []
