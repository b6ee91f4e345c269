"""QL201/QL202: a torch.nn container built from some modules the walk followed and some it did
not is not known to be mode-free (issue 14, the capture-site hole of stop 50's probes).

`model = nn.Sequential(BN, nn.Linear(3, 3))` with a module-level train-mode `BN`, or the same
built by a project function from its parameter (`def make_block(m): return nn.Sequential(m,
nn.Linear(3, 3))`, then `model = make_block(BN)`): the construction's `parts` held the Linear
the walk built, and `Built._arguments` took every name argument as one of `parts`, so `BN` (or
`m`) was never read and the capture was judged mode-free and went unreported, while
`nn.Sequential(BN)` alone was reported. The arguments `parts` came from are now recorded
(`Built.wrapped`); the others are read as any argument is.
"""

from __future__ import annotations

from tests.test_model_sources import INIT_NET, check

TRAIN_MODE = "modules start in train mode)"

MODULE = """
BN = nn.BatchNorm1d(3)

def make_block(m):
    return nn.Sequential(m, nn.Linear(3, 3))

def ignore(m):
    return nn.Sequential(nn.Linear(3, 3), nn.ReLU())

def sized(dim):
    return nn.Sequential(nn.Linear(dim, dim), nn.ReLU())

def quantize(quantizer, x):
    {line}
    prepare_pt2e(export(model, (x,)).module(), quantizer)
"""


def _check(line: str):
    return check(MODULE.format(line=line))


def _loud(line: str) -> bool:
    found = _check(line)
    return len(found) == 1 and found[0].code == "QL201" and found[0].message.endswith(TRAIN_MODE)


# -- loud: a module the walk did not follow beside one it built ------------------------------------
def test_a_module_level_batch_norm_beside_a_built_layer_is_reported():
    for line in [
        "model = nn.Sequential(BN, nn.Linear(3, 3))",
        "model = nn.Sequential(nn.Linear(3, 3), BN)",  # either order
        "model = nn.Sequential(BN)",  # alone: reported before too
    ]:
        assert _loud(line), line


def test_a_module_level_batch_norm_handed_to_a_project_function_at_the_capture_site_is_reported():
    for line in ["model = make_block(BN)", "model = make_block(m=BN)", "m = BN\n    model = make_block(m)"]:
        assert _loud(line), line


def test_a_parameter_wrapped_beside_a_built_layer_is_reported():
    # What the callers pass is not followed into the container: it may hold a batch norm.
    src = MODULE.format(line="model = nn.Sequential(backbone, nn.Linear(3, 3))")
    src = src.replace("def quantize(quantizer, x):", "def quantize(quantizer, x, backbone):")
    src += "\ndef main(q, x):\n    quantize(q, x, BN)\n"
    (found,) = check(src)
    assert found.code == "QL201"


# -- quiet: every argument known, or the model evaled --------------------------------------------
def test_containers_of_built_layers_are_quiet():
    for line in [
        "model = nn.Sequential(nn.Linear(3, 3), nn.ReLU())",
        "lin = nn.Linear(3, 3)\n    model = nn.Sequential(lin, nn.ReLU())",  # a local the walk built
        "model = ignore(BN)",  # the function ignores what it is handed
        "model = sized(3)",  # a number, read only by nn.Linear
    ]:
        assert _check(line) == [], line


def test_an_evaled_model_is_quiet():
    for line in [
        "model = make_block(BN).eval()",
        "model = make_block(BN)\n    model.eval()",
        "model = nn.Sequential(BN, nn.Linear(3, 3)).eval()",
    ]:
        assert _check(line) == [], line


def test_the_message_still_names_a_batch_norm_the_walk_built():
    line = "bn = nn.BatchNorm1d(3)\n    model = nn.Sequential(bn, nn.Linear(3, 3))"
    (found,) = _check(line)
    assert found.code == "QL201" and "the mode changes BatchNorm1d" in found.message


# -- a function written inside `__init__` that the class hands a module ------------------------------
NET = (
    "\nBN = nn.BatchNorm1d(3)\n"
    + INIT_NET
    + """
def quantize(quantizer, x):
    model = {build}
    prepare_pt2e(export(model, (x,)).module(), quantizer)
"""
)
SEQUENTIAL = "def mk(m):\n            return nn.Sequential(m)\n        "


def _net(line: str, build: str = "Net()"):
    return check(NET.format(line=line, build=build))


def test_a_module_level_batch_norm_handed_to_a_function_written_in_init_is_reported():
    # `mk`'s body was read with `m` a parameter, and `BN` was never read: judged mode-free.
    for line in [
        SEQUENTIAL + "self.b = mk(BN)",
        "def mk(m):\n            return nn.Sequential(m, nn.Linear(3, 3))\n        self.b = mk(BN)",
        # written twice: which body runs is not read
        "if c:\n            def mk(m):\n                return nn.Linear(3, 3)\n        else:\n"
        "            def mk(m):\n                return nn.Linear(3, 3)\n        self.b = mk(BN)",
    ]:
        (found,) = _net(line)
        assert found.code == "QL201" and found.message.endswith(TRAIN_MODE), line


def test_the_message_still_names_the_parts_the_class_builds_beside_the_inner_function():
    (found,) = _net(SEQUENTIAL + "self.d = nn.Dropout(0.1); self.b = mk(BN)")
    assert found.code == "QL201" and found.message.endswith("; in `Net`, the mode changes Dropout")


def test_a_function_written_in_init_handed_no_model_is_quiet():
    for line, build in [
        ("def mk(m):\n            return nn.Linear(3, 3)\n        self.b = mk(BN)", "Net()"),  # ignored
        ("def mk(m):\n            return nn.Linear(m, m)\n        self.b = mk(3)", "Net()"),  # a number
        (SEQUENTIAL + "self.b = mk(nn.ReLU())", "Net()"),  # built inline: read
        (SEQUENTIAL + "self.b = mk(c)", "Net(nn.ReLU())"),  # an `__init__` parameter the caller built
        (SEQUENTIAL + "self.b = mk(BN)", "Net().eval()"),  # evaled
    ]:
        assert _net(line, build) == [], line


# -- a subclass overriding the method its base's `__init__` hands a module --------------------------
BASE = """
BN = nn.BatchNorm1d(3)

class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.b = self._make(BN)

    def _make(self, m):
        return nn.Linear(3, 3)

    def forward(self, x):
        return self.b(x)

class Net(Base):
    {body}

def quantize(quantizer, x):
    model = {build}
    prepare_pt2e(export(model, (x,)).module(), quantizer)
"""
KEEPS = "def _make(self, m):\n        return nn.Sequential(m)"


def _sub(body: str, build: str = "Net()"):
    return check(BASE.format(body=body, build=build))


def test_an_override_keeping_what_the_base_hands_it_is_reported():
    # `Base` was read with its own `_make`, which drops `BN`; `Net()` runs `Net._make`.
    for body in [
        KEEPS,
        "@staticmethod\n    def _make(m):\n        return nn.Sequential(m)",
        "_make = staticmethod(lambda m: nn.Sequential(m))",  # not read: unknown
    ]:
        (found,) = _sub(body)
        assert found.code == "QL201" and found.message.endswith(TRAIN_MODE), body


def test_the_message_still_names_the_parts_the_subclass_builds():
    body = KEEPS + "\n\n    def __init__(self):\n        super().__init__()\n        self.d = nn.Dropout(0.1)"
    (found,) = _sub(body)
    assert found.code == "QL201" and found.message.endswith("; in `Net`, the mode changes Dropout")


def test_an_override_dropping_the_module_or_the_base_alone_is_quiet():
    for body, build in [
        ("def _make(self, m):\n        return nn.Linear(3, 3)", "Net()"),  # drops it as the base's does
        ("def _make(self, m):\n        return nn.Linear(3, 3)\n\n    def other(self, m):\n        return m", "Net()"),
        ("pass", "Net()"),  # no override
        (KEEPS, "Base()"),  # the base runs its own
        (KEEPS, "Net().eval()"),  # evaled
    ]:
        assert _sub(body, build) == [], body
