"""QL201: a container a helper builds around its parameter holds what each call passes (issue 14,
item 5 of stop 50's "What I left out").

`def make_block(m): return nn.Sequential(m, nn.Linear(3, 3))`, then `model = make_block(...)`
captured: read alone, `m` may hold anything, so every capture of `make_block(...)` was reported
in train mode ("built at line N", no part named) whatever the call passed. The container's own
`training` flag is True, but only its parts' modes matter and a construction switches none of
them: each call now binds `m` to what it passes (`held_slots`). Quiet where every argument is
evaled or mode-free; loud, naming the part, where one is a train-mode module holding batch norm
or dropout, and loud where one is unknown or something switched the container or the argument.
"""

from __future__ import annotations

from tests.conftest import lint, write_package
from tests.test_model_sources import HEAD, check

TRAIN_MODE = "modules start in train mode)"
NAMES_BN = "; in `nn.Sequential`, the mode changes BatchNorm1d"

NET = """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(3)

    def forward(self, x):
        return self.bn(x)
"""
MODULE = (
    "\n"
    + NET
    + """
class Free(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(x)

def make_block(m):
    return nn.Sequential(m, nn.Linear(3, 3))

def make_one(m):
    return nn.Sequential(m)

def make_kw(*, body, head=None):
    return nn.Sequential(body, nn.Linear(3, 3))

def make_default(m=nn.ReLU()):
    return nn.Sequential(m, nn.Linear(3, 3))

def make_default_dropout(m=nn.Dropout(0.1)):
    return nn.Sequential(m, nn.Linear(3, 3))

def make_all(*ms):
    return nn.Sequential(*ms)

def make_all_beside(*ms):
    return nn.Sequential(*ms, nn.Linear(3, 3))

def outer(m):
    return make_block(m)

def switched_inside(m):
    s = nn.Sequential(m, nn.Linear(3, 3))
    s.train()
    return s

def switched_outside(m):
    s = make_block(m)
    s.train()
    return s

def quantize(quantizer, x, net, c):
    {line}
    prepare_pt2e(export(model, (x,)).module(), quantizer)
"""
)


def _check(line: str):
    return check(MODULE.format(line=line), select=("QL201",))


def _loud(line: str, ending: str = TRAIN_MODE) -> bool:
    found = _check(line)
    return len(found) == 1 and found[0].code == "QL201" and found[0].message.endswith(ending)


# -- quiet: every argument evaled or mode-free ------------------------------------------------------
def test_an_evaled_argument_is_quiet():
    for line in [
        "model = make_block(net.eval())",
        "n = Net()\n    n.eval()\n    model = make_block(n)",  # a local evaled before
        "n = Net().eval()\n    model = make_block(n)",
        "model = make_one(net.eval())",  # `nn.Sequential(m)` alone
        "model = make_block(m=net.eval())",  # by keyword
        "model = make_kw(body=net.eval())",  # a keyword-only parameter
        "model = outer(net.eval())",  # a helper calling the helper
        "model = make_all(net.eval(), nn.ReLU())",  # `*ms`
    ]:
        assert _check(line) == [], line


def test_star_args_beside_a_layer_stay_quiet_when_evaled():
    # Quiet before too: `*ms` was taken as one of the parts, so `make_all_beside(Net())` passed.
    assert _check("model = make_all_beside(net.eval())") == []


def test_a_mode_free_argument_is_quiet():
    for line in [
        "model = make_block(nn.ReLU())",  # a torch.nn layer with no train/eval behaviour
        "model = make_block(Free())",  # a project class judged mode-free
        "model = make_one(nn.ReLU())",
        "model = outer(Free())",
        "model = make_default()",  # the default, a mode-free layer
    ]:
        assert _check(line) == [], line


def test_the_same_helper_called_elsewhere_with_a_batch_norm_leaves_an_evaled_call_quiet():
    assert _check("other = make_block(Net())\n    model = make_block(net.eval())") == []


# -- loud: a train-mode argument holding a mode-dependent part, or one of unknown content -------------
def test_a_train_mode_argument_holding_batch_norm_is_reported_and_named():
    for line in [
        "model = make_block(Net())",
        "model = make_one(Net())",
        "model = make_block(m=Net())",
        "model = make_kw(body=Net())",
        "model = outer(Net())",
        "model = make_all(nn.ReLU(), Net())",
        "model = make_all_beside(Net())",  # read as one of the parts before: quiet
    ]:
        assert _loud(line, NAMES_BN), line


def test_a_default_holding_dropout_is_reported_and_named():
    assert _loud("model = make_default_dropout()", "; in `nn.Sequential`, the mode changes Dropout")


def test_an_argument_of_unknown_content_is_reported():
    for line in [
        "model = make_block(net)",  # a parameter whose callers are not read
        "model = make_one(net)",
        "model = make_all(*[net.eval()])",  # not listed
        "model = make_default_dropout(net) if c else make_block(net.eval())",
    ]:
        assert _loud(line), line


def test_a_switch_after_the_build_is_reported():
    for line in [
        "model = make_block(net.eval())\n    model.train()",  # the container, at the caller
        "n = Net().eval()\n    model = make_block(n)\n    n.train()",  # the argument, after the call
    ]:
        assert len(_check(line)) == 1, line
    for line in ["model = switched_inside(net.eval())", "model = switched_outside(net.eval())"]:
        (found,) = _check(line)
        assert found.code == "QL201" and "after `" in found.message, line


def test_two_calls_merged_keep_what_each_passed():
    # The evaled call's container does not stand for the other's: each call binds its own.
    for line in [
        "if c:\n        model = make_block(net.eval())\n    else:\n        model = make_block(Net())",
        "if c:\n        model = make_block(Net())\n    else:\n        model = make_block(net.eval())",
    ]:
        (found,) = _check(line)
        assert found.code == "QL201", line


# -- a helper of another module ---------------------------------------------------------------------
BLOCKS = """
import torch.nn as nn

def make_block(m):
    return nn.Sequential(m, nn.Linear(3, 3))
"""
QUANT = (
    """
from proj.blocks import make_block

"""
    + NET
    + """
def quantize(quantizer, x, net):
    model = {arg}
    prepare_pt2e(export(model, (x,)).module(), quantizer)
"""
)


def test_a_helper_of_another_module_binds_its_parameter_too(tmp_path):
    path = str(write_package(tmp_path, "proj", blocks=BLOCKS) / "quant.py")

    def run(arg: str):
        return lint(HEAD + QUANT.format(arg=arg), path=path, select=("QL201",))

    assert run("make_block(net.eval())") == []
    assert run("make_block(nn.ReLU())") == []
    (found,) = run("make_block(Net())")
    assert found.message.endswith(NAMES_BN)
    (found,) = run("make_block(net)")
    assert found.message.endswith(TRAIN_MODE)


# -- handed to a helper that captures it -------------------------------------------------------------
CALLERS = (
    MODULE.replace("def quantize(quantizer, x, net, c):\n    {line}\n", "def quantize(quantizer, x, model):\n")
    + """
def first(net, q, x):
    quantize(q, x, make_block(net.eval()))

def second(q, x):
    quantize(q, x, make_one(nn.ReLU()))
"""
)


def test_callers_handing_bound_containers_to_a_capturing_helper_are_read_at_each_call():
    assert check(CALLERS, select=("QL201",)) == []
    (found,) = check(CALLERS + "\ndef third(q, x):\n    quantize(q, x, make_block(Net()))\n", select=("QL201",))
    # One note per construction: the one bound to `Net()` among others still names its part.
    assert "; in `nn.Sequential`, the mode changes BatchNorm1d" in found.message
    switched = CALLERS.replace(
        "quantize(q, x, make_block(net.eval()))", "m = make_block(net.eval())\n    m.train()\n    quantize(q, x, m)"
    )
    assert len(check(switched, select=("QL201",))) == 1


# -- a method or a staticmethod building it ------------------------------------------------------------
METHODS = (
    MODULE.split("def quantize")[0]
    + """
class Builder:
    def make(self, m):
        return nn.Sequential(m, nn.Linear(3, 3))

    @staticmethod
    def smake(m):
        return nn.Sequential(m, nn.Linear(3, 3))

    def run(self, net, q, x):
        model = {call}
        prepare_pt2e(export(model, (x,)).module(), q)
"""
)


def test_a_method_or_staticmethod_binds_its_parameter_past_self():
    for arg, loud in [("net.eval()", False), ("nn.ReLU()", False), ("Net()", True)]:
        for call in (f"self.make({arg})", f"Builder.smake({arg})"):
            found = check(METHODS.replace("{call}", call), select=("QL201",))
            if loud:
                assert len(found) == 1 and found[0].message.endswith(NAMES_BN), call
            else:
                assert found == [], call
