"""QL201: a class that builds a part of the project's around a module made outside it is not
known to be mode-free (issue 14, items 1 and 8; `stored_values.handed_names`).

`self.b = Block(BN)`: the content reading read the call as `Block` alone, whose own content
(`self.inner = inner`, a parameter) is what its constructions pass. Here the construction is
the class's own, and it passes `BN`, a train-mode batch norm made at module level: the capture
was judged mode-free and went unreported. The arguments of such calls are read as stored values
are (`test_mode_free_stored_parts`): constants, functions, classes, builtins, torch's and the
standard library's names, the method's parameters hold no model; anything else may.
"""

from __future__ import annotations

import textwrap

from tests.test_model_sources import INIT_NET as NET
from tests.test_model_sources import beside_blocks, check

TRAIN_MODE = "modules start in train mode)"
CAPTURE = "    prepare_pt2e(export(model, (x,)).module(), quantizer)\n"

BLOCK = """
class Block(nn.Module):
    def __init__(self, inner, dim=3):
        super().__init__()
        self.inner = inner
        self.lin = nn.Linear(dim, dim)

    def forward(self, x):
        return self.lin(x)
"""


def _module(prelude: str, line: str, build: str = "Net()") -> str:
    """A module with `prelude` at its top, `Block`, a `Net` whose `__init__` runs `line`, and a
    function capturing `build` for PTQ."""
    classes = textwrap.dedent(BLOCK) + textwrap.dedent(NET).format(line=line)
    capture = f"def quantize(quantizer, x):\n    model = {build}\n{CAPTURE}"
    return textwrap.dedent(prelude).strip("\n") + "\n" + classes + "\n" + capture


def _in_test(prelude: str, line: str) -> str:
    """The same classes written in a test after `prelude`, which builds objects they may read."""
    classes = textwrap.dedent(BLOCK) + textwrap.dedent(NET).format(line=line)
    body = textwrap.indent(textwrap.dedent(prelude).strip("\n") + "\n" + classes, "    ")
    return f"def test_quantize(quantizer, x):\n{body}\n    model = Net()\n{CAPTURE}"


def _loud(src: str) -> bool:
    found = check(src)
    return len(found) == 1 and found[0].code == "QL201" and found[0].message.endswith(TRAIN_MODE)


# -- loud: a module from outside handed to a class the class builds -------------------------------
def test_a_module_level_batch_norm_handed_to_a_project_class_is_reported():
    prelude = "BN = nn.BatchNorm1d(3)"
    for line in [
        "self.b = Block(BN)",
        "self.b = Block(inner=BN)",  # by keyword
        "m = BN; self.b = Block(m)",  # through a local
        "self.b = Block([BN, nn.ReLU()])",  # in a list
        "self.b = nn.Sequential(Block(BN))",  # built inside a container
    ]:
        assert _loud(_module(prelude, line)), line
    # The same class stored directly was loud before: both now read the same way.
    assert _loud(_module(prelude, "self.b = BN"))


def test_a_dropout_of_the_enclosing_test_handed_to_a_project_class_is_reported():
    assert _loud(_in_test("drop = nn.Dropout(0.5)", "self.b = Block(drop)"))
    # The same test handing a number: quiet.
    assert check(_in_test("size = 3", "self.b = Block(nn.ReLU(), size)")) == []


def test_a_model_imported_from_another_package_handed_to_a_project_class_is_reported():
    assert _loud(_module("from somelib import ENCODER", "self.b = Block(ENCODER)"))
    # torch's own names are known: a function of torch is no part of unknown mode.
    assert check(_module("import torch.nn.functional as F", "self.b = Block(F.relu)")) == []


# -- quiet: arguments that hold no model ----------------------------------------------------------
def test_arguments_that_hold_no_model_are_quiet():
    prelude = """
        import math
        import torch.nn.functional as F

        SCALE = 0.5
        WEIGHT = torch.ones(3)
        CONFIG = load_config()

        def helper(x):
            return x
    """
    for line in [
        "self.b = Block(3)",
        "self.b = Block(nn.ReLU())",  # built in place: read as one of the class's calls
        "self.b = Block(F.relu)",
        "self.b = Block(torch.ones(3))",
        "self.b = Block(WEIGHT)",
        "self.b = Block(SCALE, dim=3)",
        "self.b = Block(math.sqrt)",
        "self.b = Block(helper)",
        "self.b = Block(max)",
        "self.b = Block(Block)",
        "r = nn.ReLU(); self.b = Block(r)",  # a local built here
        "self.b = Block(nn.ReLU(), CONFIG.dim)",  # unknown, but Block only gives it to nn.Linear
        "self.b = Block(c)",  # an `__init__` parameter: what the construction passes, read there
        "self.s = print(WEIGHT, CONFIG)",  # no class of the project: read as a call
    ]:
        assert check(_module(prelude, line, "Net(nn.ReLU())")) == [], line
    # The parameter read at the construction: a batch norm there is reported, named.
    (found,) = check(_module(prelude, "self.b = Block(c)", "Net(nn.BatchNorm1d(3))"))
    assert found.message.endswith("the mode changes BatchNorm1d")


def test_an_unknown_value_a_class_may_store_keeps_the_report():
    # Look-alike of the hyperparameter case: `Block` stores what it is handed, so an unknown
    # object handed there (`CONFIG`, a call's result) may be any module.
    assert _loud(_module("CONFIG = load_config()", "self.b = Block(CONFIG)"))
    assert _loud(_module("CONFIG = load_config()", "self.b = Block(nn.ReLU(), dim=CONFIG.dim); self.c = Block(CONFIG)"))


def test_a_class_of_another_module_of_the_project_is_read_with_what_it_is_handed(tmp_path):
    blocks = "from torch import nn\n" + textwrap.dedent(BLOCK) + "\nENCODER = nn.Sequential(nn.Dropout(0.5))\n"
    imports = "from proj.blocks import Block, ENCODER\nBN = nn.BatchNorm1d(3)\n"
    capture = f"\ndef quantize(quantizer, x):\n    model = Net()\n{CAPTURE}"
    found = beside_blocks(tmp_path, blocks, imports, textwrap.dedent(NET), capture)

    for line in ["self.b = Block(BN)", "self.b = Block(ENCODER)"]:
        (loud,) = found(line)
        assert loud.message.endswith(TRAIN_MODE), line
    # A class of the project handed to it, or a number: quiet.
    for line in ["self.b = Block(Block)", "self.b = Block(nn.ReLU(), 3)"]:
        assert found(line) == [], line
