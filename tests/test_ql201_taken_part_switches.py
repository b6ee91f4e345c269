"""QL201: a wrapper that took a part of the module it was given (`self.body = net.body`), that
module switched back to train after the construction (`held_parts`, `stored_fields.held_part_fields`).

    class W(nn.Module):
        def __init__(self, net):
            super().__init__()
            self.body = net.body
    net = Net().eval()
    w = W(net)
    net.train()          # switches net.body too: the very module `w.body` is
    prepared = prepare_pt2e(export(w, args).module(), q)

was quiet: the wrapper was judged by `net` as it was at the construction. On torch 2.13 and
torchao 0.18 (XNNPACK quantizer, Conv2d -> ReLU -> BatchNorm2d) the captured graph runs
`aten.batch_norm` in train mode and calibration moves its running mean; evaled again, or with
the switch before the construction and an `.eval()` after, it does not.

The same reach for `net.train(True)`, `net.apply(lambda m: m.train())`, `net.body.train()`, a
loop training `net.children()` or `net.modules()`, and a helper that trains `net` (also when
the wrapper stores `net` itself, `self.net = net`); an `.eval()` of `net` by any of those undoes
it. Quiet when the switch reaches nothing the wrapper holds (another part, another module, a
part holding no batch norm, dropout or `self.training`), when it runs on some paths only, and
when the wrapper copies what it is given.
"""

from __future__ import annotations

import pytest

from tests.conftest import lint

HEAD = """\
import copy
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 3, 1), nn.ReLU(), nn.BatchNorm2d(3))
        self.conv = nn.Conv2d(3, 3, 1)
        self.head = nn.Dropout(0.5)

    def forward(self, x):
        return self.head(self.conv(self.body(x)))


class W(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.body = net.body

    def forward(self, x):
        return self.body(x)


class S(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)


class ConvOnly(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.conv = net.conv

    def forward(self, x):
        return self.conv(x)


class Copying(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.body = copy.deepcopy(net.body)

    def forward(self, x):
        return self.body(x)


def train_it(m):
    m.train()


def eval_it(m):
    m.eval()


def run(q, args, flag):
    BODY
    return prepare_pt2e(torch.export.export(w, args).module(), q)
"""


def messages(body: str, head: str = HEAD) -> list[str]:
    src = head.replace("BODY", body.replace("\n", "\n    "))
    return [d.message for d in lint(src, select=("QL201",))]


SWITCHES = [
    ("net.train()", "net.train()"),
    ("net.train(True)", "net.train(True)"),
    ("net.apply(lambda m: m.train())", "m.train()"),
    ("net.body.train()", "net.body.train()"),
    ("for p in net.children():\n    p.train()", "p.train()"),
    ("for p in net.modules():\n    p.train()", "p.train()"),
    ("train_it(net)", "m.train()"),  # the helper's switch, as for `net` itself
]


@pytest.mark.parametrize(("switch", "named"), SWITCHES)
@pytest.mark.parametrize("wrapper", ["W", "S"])
def test_a_switch_after_the_construction_reaches_what_the_wrapper_took(switch, named, wrapper):
    (message,) = messages(f"net = Net().eval()\nw = {wrapper}(net)\n{switch}")
    assert "`w` is captured for PTQ in train mode" in message
    assert f"(after `{named}`" in message
    # What the switch reached in the wrapper: W took the body only (no Dropout), and
    # `net.body.train()` reaches only the body of the `net` S holds.
    assert f"in `{wrapper}`, the mode changes BatchNorm2d" in message
    assert ("Dropout" in message) is (wrapper == "S" and switch != "net.body.train()")


@pytest.mark.parametrize(
    "body",
    [
        "net = Net().eval()\nw = W(net=net)\nnet.train()",
        "net = Net()\nw = W(net.eval())\nnet.train()",
        "m = Net().eval()\nnet = S(m)\nw = W(net)\nm.train()",  # the body of S's net: m's body
    ],
)
def test_the_part_is_followed_however_the_module_was_handed(body):
    (message,) = messages(body)
    assert "captured for PTQ in train mode (after `" in message and "BatchNorm2d" in message


def test_a_wrapper_class_written_in_the_function_is_followed_too():
    head = HEAD.replace(
        "def run(q, args, flag):\n",
        "def run(q, args, flag):\n"
        "    class Local(nn.Module):\n"
        "        def __init__(self, net):\n"
        "            super().__init__()\n"
        "            self.body = net.body\n\n"
        "        def forward(self, x):\n"
        "            return self.body(x)\n\n",
    )
    (message,) = messages("net = Net().eval()\nw = Local(net)\nnet.train()", head=head)
    assert "(after `net.train()`" in message and "in `Local`, the mode changes BatchNorm2d" in message
    assert messages("net = Net().eval()\nw = Local(net)\nnet.train()\nnet.eval()", head=head) == []


@pytest.mark.parametrize(
    "body",
    [
        # No switch, or switched before the construction and evaled again.
        "net = Net().eval()\nw = W(net)",
        "net = Net().eval()\nnet.train()\nnet.eval()\nw = W(net)",
        # Switched back: `.eval()`, `apply`, a loop, a helper; or the wrapper evaled.
        "net = Net().eval()\nw = W(net)\nnet.train()\nnet.eval()",
        "net = Net().eval()\nw = W(net)\nnet.train()\nnet.apply(lambda m: m.eval())",
        "net = Net().eval()\nw = W(net)\nnet.train()\nfor p in net.modules():\n    p.eval()",
        "net = Net().eval()\nw = W(net)\nnet.train()\neval_it(net)",
        "net = Net().eval()\nw = S(net)\nnet.apply(lambda m: m.train())\nnet.eval()",
        "net = Net().eval()\nw = W(net)\nnet.train()\nw.eval()",
        # Another module, or a part the wrapper does not hold.
        "net = Net().eval()\nother = Net().eval()\nw = W(net)\nother.train()",
        "net = Net().eval()\nother = Net().eval()\nw = W(net)\ntrain_it(other)",
        "net = Net().eval()\nw = W(net)\nnet.head.train()",
        "net = Net().eval()\nw = W(net)\nfor p in net.head.children():\n    p.train()",
        # What the switch reaches holds nothing whose behaviour depends on the mode.
        "net = Net().eval()\nw = ConvOnly(net)\nnet.train()",
        "net = Net().eval()\nw = S(net)\nnet.conv.train()",
        # A copy.
        "net = Net().eval()\nw = Copying(net)\nnet.train()",
        # The model holds another part now; the wrapper keeps the old one, evaled.
        "net = Net().eval()\nw = W(net)\nnet.body = nn.Identity()\nnet.train()",
        # On some paths only: a branch that returns before the capture, a `try`.
        "net = Net().eval()\nw = W(net)\nif flag:\n    net.train()\n    return None",
        "net = Net().eval()\nw = W(net)\nif flag:\n    net.apply(lambda m: m.train())\n    return None",
        "net = Net().eval()\nw = W(net)\nif flag:\n    train_it(net)\n    return None",
        "net = Net().eval()\nw = W(net)\ntry:\n    train_it(net)\nexcept RuntimeError:\n    pass",
    ],
)
def test_a_switch_that_reaches_nothing_the_wrapper_holds_in_train_mode_is_quiet(body):
    assert messages(body) == []


def test_a_helper_that_trains_on_some_paths_only_is_not_followed():
    head = HEAD.replace("def train_it(m):\n    m.train()", "def train_it(m, on):\n    if on:\n        m.train()")
    assert messages("net = Net().eval()\nw = W(net)\ntrain_it(net, flag)", head=head) == []


def test_a_class_that_reassigns_the_taken_part_in_a_method_is_not_followed():
    head = HEAD.replace(
        "        return self.body(x)\n\n\nclass S(",
        "        return self.body(x)\n\n    def swap(self, other):\n        self.body = other\n\n\nclass S(",
    )
    assert messages("net = Net().eval()\nw = W(net)\nnet.train()", head=head) == []


CLOSURE = """\
class Reads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = net.body

    def forward(self, x):
        return self.body(x)

"""


@pytest.mark.parametrize(
    ("loop", "loud"),
    [
        ("for p in net.children():\n    p.train()", True),
        ("for name, p in net.named_children():\n    p.train()", True),
        ("for p in net.children():\n    p.eval()", False),
        ("for p in other.children():\n    p.train()", False),
    ],
)
def test_a_class_reading_the_functions_module_after_a_loop_that_trains_it(loop, loud):
    # `closure_part_switches`: a `.train()` of the module anywhere in the function leaves the wrapper a
    # fresh module in train mode; a loop training what it walks of the module is one.
    body = "net = Net().eval()\nother = Net().eval()\n" + CLOSURE + "w = Reads()\n" + loop
    found = messages(body)
    assert len(found) == loud
    if loud:
        assert "built at line" in found[0] and "modules start in train mode" in found[0]
