"""QL201: a class written in a function reading the function's `net` (`closure_parts`), then a
`.train()` of `net` after the construction (lane closuremode; stop 55's lane wrapswitch found):

    net = Net()
    net.eval()
    class W(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = net.body          # the very module `net.body` names
        def forward(self, x): return self.body(x)
    w = W()
    net.train(); net.eval()               # back to eval before the capture
    prepared = prepare_pt2e(export(w, args).module(), q)

was "built in train mode": any `.train()` of `net` in the function left the construction a fresh
module. The capture runs the parts in the mode the last switch on every path left them: a
switch the walk hands on (`held_parts`, or the value the walk holds at the construction) is read
in order; any other (a branch, a loop, `apply`) is followed by an `.eval()` of `net` before the
wrapper is read, or the construction stays a fresh module in train mode. Measured on torch 2.13 +
torchao 0.18: `W` captured after `net.train()` has `aten.batch_norm(..., training=True)`, after
`net.train(); net.eval()` `training=False`; the same when `forward` runs `net.body` itself
(the same object, read at the capture).
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint

HEAD = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3))
        self.head = nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3))

    def forward(self, x):
        return self.head(self.body(x))


def run(args, q, data, flag):
    net = Net()
    net.eval()

"""
# `__init__` stores the part; `forward` runs it (read when the capture runs it).
IN_INIT = """\
class W(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = net.body

    def forward(self, x):
        return self.body(x)

"""
IN_FORWARD = """\
class W(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return net.body(x)

"""
CAPTURE = "return prepare_pt2e(torch.export.export(w, args).module(), q)\n"


def ql201(cls: str, after: str, capture: str = CAPTURE, before: str = "") -> list[str]:
    body = before + cls + "w = W()\n" + after + capture
    src = HEAD + textwrap.indent(body, "    ")
    return [d.message for d in lint(src, select=("QL201",)) if d.code == "QL201"]


TRAIN_THEN_EVAL = "net.train()\nnet.eval()\n"
LOOP_THEN_EVAL = "for x in data:\n    net.train()\n    net(x)\n"


def test_a_train_then_an_eval_after_the_construction_leaves_the_parts_in_eval_mode():
    for cls in (IN_INIT, IN_FORWARD):
        assert ql201(cls, TRAIN_THEN_EVAL) == []
        assert ql201(cls, "net.train(False)\n") == []


def test_an_eval_after_a_loop_or_a_branch_training_it_leaves_the_parts_in_eval_mode():
    for cls in (IN_INIT, IN_FORWARD):
        for after in (
            LOOP_THEN_EVAL + "net.eval()\n",
            "if flag:\n    net.train()\nnet.eval()\n",
            "for p in net.children():\n    p.train()\nnet.eval()\n",
        ):
            assert ql201(cls, after) == [], after


def test_a_train_only_before_the_construction_followed_by_an_eval_is_read_as_eval():
    for cls in (IN_INIT, IN_FORWARD):
        assert ql201(cls, "", before=TRAIN_THEN_EVAL) == []
        assert ql201(cls, "", before=LOOP_THEN_EVAL + "net.eval()\n") == []


def test_a_train_after_the_construction_and_no_eval_is_reported():
    for cls in (IN_INIT, IN_FORWARD):
        for after, switch in (
            ("net.train()\n", "net.train()"),
            ("net.eval()\nnet.train()\n", "net.train()"),
            ("net.body.train()\n", "net.body.train()"),
        ):
            (message,) = ql201(cls, after)
            assert f"captured for PTQ in train mode (after `{switch}` at line" in message, (cls, after)
            assert "the mode changes BatchNorm2d" in message


def test_a_train_after_an_early_exit_is_followed_too():
    # After `if flag: return`, the statements of the function's body run on every path left.
    for cls in (IN_INIT, IN_FORWARD):
        (message,) = ql201(cls, "if flag:\n    return None\nnet.train()\n")
        assert "(after `net.train()` at line" in message
        assert ql201(cls, "if flag:\n    return None\nnet.train()\nnet.eval()\n") == []


def test_a_train_the_walk_does_not_hand_on_is_reported_as_before():
    # In one branch, in a loop with no eval after it, through `apply`, or read by the capture
    # before the eval: the construction stays a fresh module in train mode. (A class whose
    # `__init__` builds nothing was read as evaling every part it holds: eval whatever `forward`
    # runs.)
    for cls in (IN_INIT, IN_FORWARD):
        for after in (
            "if flag:\n    net.train()\n",
            LOOP_THEN_EVAL,
            "net.apply(lambda m: m.train())\n",
            "for p in net.children():\n    p.train()\n",
            "calibrate(net)\n",
        ):
            (message,) = ql201(cls, after)
            assert "captured for PTQ in train mode (built at line" in message, (cls, after)
        between = (
            "if flag:\n    net.train()\nout = prepare_pt2e(torch.export.export(w, args).module(), q)\nnet.eval()\n"
        )
        assert len(ql201(cls, between, capture="return out\n")) == 1


def test_a_train_before_the_construction_in_a_loop_holding_it_is_not_read():
    # Written before the construction, but each round trains what the last round built, and
    # captures it.
    loop = (
        "out = None\n"
        "for x in data:\n"
        "    net.train()\n"
        "    net(x)\n"
        "    if out is None:\n"
        "        out = prepare_pt2e(torch.export.export(w, args).module(), q)\n"
        "    net.eval()\n"
        "    w = W()\n"
        "return out\n"
    )
    src = HEAD + textwrap.indent(IN_INIT + "w = Net().eval()\n" + loop, "    ")
    assert len([d for d in lint(src, select=("QL201",)) if d.code == "QL201"]) == 1


def test_a_train_of_a_part_the_class_does_not_hold_changes_nothing():
    assert ql201(IN_INIT, "net.head.train()\n") == []


def test_a_train_in_a_method_of_the_class_or_a_function_written_there_is_not_read():
    cls = IN_INIT.replace("return self.body(x)", "net.train()\n        return self.body(x)")
    assert len(ql201(cls, "")) == 1
    assert len(ql201(IN_INIT, "def hook():\n    net.train()\nhook()\nnet.eval()\n")) == 1


def test_a_forward_running_a_train_mode_module_of_the_function_is_reported():
    src = HEAD.replace("    net.eval()\n", "") + textwrap.indent(IN_FORWARD + "w = W()\n" + CAPTURE, "    ")
    assert len([d for d in lint(src, select=("QL201",)) if d.code == "QL201"]) == 1


def test_a_train_of_another_object_bound_to_the_name_later_changes_nothing():
    # `__init__` took the part of the first `net`; the second is another object.
    assert ql201(IN_INIT, "net = Net()\nnet.train()\n") == []


def test_a_forward_reading_values_of_the_function_that_are_no_modules_is_as_before():
    # `forward` multiplies by what the function read off its arguments: no module it runs.
    cls = IN_FORWARD.replace("return net.body(x)", "return x * scale + args.shift")
    after = "scale = args.scale\nnet.train()\n"
    assert ql201(cls, "", before=after) == []
