"""QL201: a class that stores as its part a module it did not build is not known to be mode-free
(issue 14, item 8; `stored_values`).

The content reading reads a class's calls. A wrapper written in a test around a model the test
built (`self.inner = inner`), a class holding a module-level model (`self.head = HEAD`), or a
container of either (`nn.Sequential(inner)`) holds a part no call of the class shows: a fresh
model in train mode, batch norm or dropout included. Such captures were judged mode-free and
went unreported. Values that hold no model (constants, functions, torch's and the standard
library's names, the class's own builds and parameters) stay quiet.
"""

from __future__ import annotations

import textwrap

from tests.test_model_sources import check, ql201_message

TRAIN_MODE = "modules start in train mode)"


def _in_test(prelude: str, classes: str, build: str = "Net()") -> str:
    """A test that builds `prelude`'s objects, defines `classes` and captures `build` for PTQ."""
    body = textwrap.indent(textwrap.dedent(prelude).strip("\n") + "\n" + textwrap.dedent(classes).strip("\n"), "    ")
    capture = "    prepare_pt2e(export(model, (x,)).module(), quantizer)\n"
    return f"def test_quantize(quantizer, x):\n{body}\n    model = {build}\n{capture}"


WRAPPER = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        {line}

    def forward(self, x):
        return x
"""
FRESH = "inner = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))"


# -- loud: a part from outside the class ----------------------------------------------------------
def test_a_wrapper_around_a_model_of_the_enclosing_test_is_reported():
    stored = [
        "self.inner = inner",
        "self.inner = inner[0]",  # a part of it
        "self.seq = nn.Sequential(inner, nn.ReLU())",  # in a torch.nn container
        "self.parts = nn.ModuleList([inner])",
        "self.parts = nn.ModuleList(); self.parts.append(inner)",
        "self.parts = nn.ModuleDict({'a': inner})",
        "m = inner; self.m = m",  # through a local
        "self.inner = inner if True else None",
        "self.all = nn.ModuleList([m for m in [inner]])",
    ]
    for line in stored:
        src = _in_test(FRESH, WRAPPER.format(line=line))
        assert ql201_message(src).endswith(TRAIN_MODE), line
    # The same wrapper built around a part it builds itself is quiet.
    assert check(_in_test("", WRAPPER.format(line="self.inner = nn.Linear(3, 3)"))) == []


def test_a_module_level_model_a_class_keeps_is_reported():
    src = """
        HEAD = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 3)
                self.head = HEAD

        def quantize(quantizer, x):
            model = Net()
            prepare_pt2e(export(model, (x,)).module(), quantizer)
    """
    assert ql201_message(src).endswith(TRAIN_MODE)
    # Imported from a library whose source is not read: it may be any module.
    imported = "        from somelib import ENCODER\n" + src.replace("self.head = HEAD", "self.head = ENCODER")
    assert ql201_message(imported).endswith(TRAIN_MODE)
    # A module-level constant is no module.
    constant = src.replace("HEAD = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))", "HEAD = (0.5, 'mean')")
    assert check(constant) == []


# -- quiet: values that hold no model -------------------------------------------------------------
def test_stored_values_that_hold_no_model_are_quiet():
    src = """
        import math
        import torch.nn.functional as F

        SCALE = 0.5
        WEIGHT = torch.ones(3)

        def helper(x):
            return x

        class Net(nn.Module):
            def __init__(self, lin, sizes=(3,)):
                super().__init__()
                self.lin = lin  # what the construction passes: read there
                self.scale = SCALE
                self.register_buffer("weight", WEIGHT)
                self.bias = WEIGHT
                self.act = F.relu
                self.root = math.sqrt
                self.fn = helper
                self.kind = Net
                self.pick = max
                first = nn.Linear(3, 3)
                self.first = first
                self.layers = nn.ModuleList()
                for size in sizes:
                    self.layers.append(nn.Linear(size, size))

            def forward(self, x):
                return self.act(self.lin(x)) * self.scale

        def quantize(quantizer, x):
            model = Net(nn.Linear(3, 3))
            prepare_pt2e(export(model, (x,)).module(), quantizer)
    """
    assert check(src) == []
    # The same class handed a batch norm: reported, naming it.
    message = ql201_message(src.replace("Net(nn.Linear(3, 3))", "Net(nn.BatchNorm1d(3))"))
    assert message.endswith("the mode changes BatchNorm1d")


# -- a wrapper around a model its function evaled (`evaled_wrappers`) -------------------------------
EVALED = "inner = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3)).eval()"
HOLDER = WRAPPER.format(line="self.inner = inner")


def test_a_wrapper_around_a_model_evaled_before_it_is_built_is_quiet():
    # The wrapper starts in train mode, but its child keeps its own eval mode: the graph is
    # the eval one, batch norm included.
    assert check(_in_test(EVALED, HOLDER)) == []
    later = FRESH + "\ninner.eval()"
    assert check(_in_test(later, HOLDER)) == []
    # Run by the wrapper's forward, printed by the test: still quiet.
    forward = HOLDER.replace("return x", "return self.inner(x)")
    assert check(_in_test(EVALED + "\nprint(inner)", forward)) == []


def test_a_wrapper_around_a_model_that_may_be_in_train_mode_is_reported():
    loud = {
        "evaled under a branch": (FRESH + "\nif x is not None:\n    inner.eval()", HOLDER, "Net()"),
        "evaled after the build": (FRESH, HOLDER + "\nwrapper = Net()\ninner.eval()", "wrapper"),
        "switched back": (EVALED + "\ninner.train()", HOLDER, "Net()"),
        "switched through the wrapper": (EVALED, HOLDER, "Net()\n    model.inner.train()"),
        "the wrapper switched": (EVALED, HOLDER, "Net()\n    model.train()"),
        "handed to a helper": (EVALED + "\ncalibrate(inner)", HOLDER, "Net()"),
        "bound twice": (EVALED + "\ninner = nn.Sequential(nn.BatchNorm1d(3))", HOLDER, "Net()"),
        "aliased": (EVALED + "\nalias = inner\nalias.apply(init)", HOLDER, "Net()"),
        "read by a closure": (EVALED + "\nhook = lambda: inner.train()", HOLDER, "Net()"),
    }
    for why, (prelude, classes, build) in loud.items():
        src = "from somelib import calibrate, init\n" + _in_test(prelude, classes, build)
        assert "captured for PTQ in train mode" in ql201_message(src), why
    # A part the wrapper builds itself still counts: its own dropout is reported, named.
    own = WRAPPER.format(line="self.inner = inner; self.drop = nn.Dropout(0.5)")
    assert ql201_message(_in_test(EVALED, own)).endswith("the mode changes Dropout")


def test_the_class_s_own_mode_dependent_code_keeps_the_report():
    # Look-alikes of a mode-free class the content reading must not take for one (issue 14,
    # item 8): a dropout whose p is a parameter (its default 0.0 included: a construction may
    # pass another), and a method reading `self.training`.
    by_parameter = """
    class Net(nn.Module):
        def __init__(self, p=0.0):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.drop = nn.Dropout(p)
    """
    assert ql201_message(_in_test("", by_parameter)).endswith("the mode changes Dropout")
    assert check(_in_test("", by_parameter.replace("nn.Dropout(p)", "nn.Dropout(0.0)"))) == []
    reads = WRAPPER.format(line="self.lin = nn.Linear(3, 3)").replace("return x", "return x if self.training else -x")
    assert ql201_message(_in_test("", reads)).endswith("code reading `self.training`")
