"""QL201/QL202: a class that hands a module made outside it to a function of the project it calls
is not known to be mode-free (issue 14, items 1 and 8; `stored_values.handed_names`).

`self.b = make_block(BN)`: the content reading read the call as `make_block`'s body alone, where
`m` is a parameter (`nn.Sequential(m, nn.Linear(3, 3))`), so the module the class handed it was
never read. `BN`, a train-mode batch norm made at module level, ends up inside the model, and the
capture was judged mode-free and went unreported. The arguments of such calls are read as those
handed to a class of the project are (`test_mode_free_handed_arguments`): constants, functions,
classes, builtins, torch's and the standard library's names and the method's parameters hold no
model; anything else may, unless the function never reads the parameter it binds or reads it
only as a torch.nn layer's argument or in a test.
"""

from __future__ import annotations

import textwrap

from tests.test_model_sources import INIT_NET as NET
from tests.test_model_sources import beside_blocks, check

TRAIN_MODE = "modules start in train mode)"
CAPTURE = "    prepare_pt2e(export(model, (x,)).module(), quantizer)\n"

FUNCTIONS = """
def make_block(m, dim=3):
    return nn.Sequential(m, nn.Linear(dim, dim))

def build_layers(cfg, norm=None):
    return nn.ModuleList([nn.Linear(cfg, cfg), norm])

def same(m):
    return m

def linear(size, bias=True):
    return nn.Linear(size, size, bias)

def ignore(m):
    return nn.Linear(3, 3)

def choose(flag):
    return nn.Linear(3, 3) if flag else nn.ReLU()

class Factory:
    @staticmethod
    def make(m):
        return nn.Sequential(m)

    @classmethod
    def plain(cls, m):
        return nn.Linear(3, 3)
"""


def _module(prelude: str, line: str, build: str = "Net()", capture: str = CAPTURE) -> str:
    """A module with `prelude` at its top, the functions, a `Net` whose `__init__` runs `line`,
    and a function capturing `build`."""
    classes = textwrap.dedent(FUNCTIONS) + textwrap.dedent(NET).format(line=line)
    body = f"def quantize(quantizer, x):\n    model = {build}\n{capture}"
    return textwrap.dedent(prelude).strip("\n") + "\n" + classes + "\n" + body


def _in_test(prelude: str, line: str) -> str:
    """The same functions and class written in a test after `prelude`, which builds objects
    they may read."""
    classes = textwrap.dedent(NET).format(line=line)
    body = textwrap.indent(textwrap.dedent(prelude).strip("\n") + "\n" + classes, "    ")
    test = f"def test_quantize(quantizer, x):\n{body}\n    model = Net()\n{CAPTURE}"
    return textwrap.dedent(FUNCTIONS) + "\n" + test


def _loud(src: str, code: str = "QL201") -> bool:
    found = check(src)
    return len(found) == 1 and found[0].code == code and found[0].message.endswith(TRAIN_MODE)


# -- loud: a module from outside handed to a function that builds a part --------------------------
def test_a_module_level_batch_norm_handed_to_a_project_function_is_reported():
    prelude = "BN = nn.BatchNorm1d(3)"
    for line in [
        "self.b = make_block(BN)",
        "self.b = make_block(m=BN)",  # by keyword
        "m = BN; self.b = make_block(m)",  # through a local
        "self.b = build_layers(c, norm=BN)",  # beside an `__init__` parameter
        "self.b = same(BN)",  # returned as it came
        "self.b = Factory.make(BN)",  # a staticmethod of a class of the module
        "self.b = nn.Sequential(make_block(BN))",  # built inside a container
    ]:
        assert _loud(_module(prelude, line, "Net(3)")), line


def test_a_module_level_batch_norm_copied_or_compiled_into_the_class_is_reported():
    # `copy.deepcopy` and `torch.compile` build nothing themselves, but hand back the module.
    prelude = "import copy\nimport torch\nBN = nn.BatchNorm1d(3)"
    for line in ["self.b = copy.deepcopy(BN)", "self.b = copy.copy(BN)", "self.b = torch.compile(BN)"]:
        assert _loud(_module(prelude, line)), line
    # Copies of what holds no model stay quiet: a constant, an `__init__` parameter the caller built.
    assert check(_module("import copy\nSIZES = (3, 3)", "self.s = copy.deepcopy(SIZES); self.b = nn.ReLU()")) == []
    assert check(_module("import copy", "self.b = copy.deepcopy(c)", "Net(nn.ReLU())")) == []


def test_a_dropout_of_the_enclosing_test_handed_to_a_project_function_is_reported():
    assert _loud(_in_test("drop = nn.Dropout(0.5)", "self.b = make_block(drop)"))
    # The same test handing a number: quiet.
    assert check(_in_test("size = 3", "self.b = make_block(nn.ReLU(), size)")) == []


def test_an_imported_model_handed_to_a_project_function_is_reported():
    assert _loud(_module("from somelib import ENCODER", "self.b = make_block(ENCODER)"))


def test_a_qat_capture_of_the_evaled_class_is_reported():
    # In eval mode for QAT: the model's content decides, and what `BN` holds is not known.
    qat = "    prepare_qat_pt2e(export(model, (x,)).module(), quantizer)\n"
    src = _module("BN = nn.BatchNorm1d(3)", "self.b = make_block(BN)", "Net().eval()", qat)
    (found,) = check(src)
    assert found.code == "QL202" and "no batch norm" not in found.message
    # Handed a number, the class holds Linears only: an eval-mode QAT capture of it is quiet.
    assert check(src.replace("make_block(BN)", "linear(3)")) == []


def test_the_message_still_names_the_parts_the_class_builds():
    line = "self.drop = nn.Dropout(0.5); self.b = make_block(BN)"
    (found,) = check(_module("BN = nn.BatchNorm1d(3)", line))
    assert found.code == "QL201" and found.message.endswith("; in `Net`, the mode changes Dropout")


# -- quiet: arguments that hold no model, or that the function does not keep ----------------------
def test_arguments_that_hold_no_model_are_quiet():
    prelude = """
        import math
        import torch.nn.functional as F

        SCALE = 0.5
        WEIGHT = torch.ones(3)
        CONFIG = load_config()
        FLAG = load_flag()
        BN = nn.BatchNorm1d(3)

        def helper(x):
            return x
    """
    for line in [
        "self.b = make_block(nn.ReLU(), 3)",  # built in place: read as one of the class's calls
        "self.b = make_block(nn.ReLU(), dim=SCALE)",
        "self.b = same(helper)",
        "self.b = same(F.relu)",
        "self.b = same(math.sqrt)",
        "self.b = same(WEIGHT)",
        "self.b = same(max)",
        "self.b = same(Net)",
        "r = nn.ReLU(); self.b = make_block(r)",  # a local built here
        "self.b = make_block(c)",  # an `__init__` parameter: what the construction passes, read there
        # Unknown, but the function only gives it to nn.Linear, tests it, or never reads it.
        "self.b = linear(CONFIG.dim)",
        "self.b = linear(3, bias=FLAG)",
        "self.b = choose(FLAG)",
        "self.b = ignore(BN)",
        "self.b = Factory.plain(BN)",
        "self.b = print(BN, CONFIG) or nn.ReLU()",  # no function of the project: read as a call
    ]:
        assert check(_module(prelude, line, "Net(nn.ReLU())")) == [], line
    # The parameter read at the construction: a batch norm there is reported, named.
    (found,) = check(_module(prelude, "self.b = make_block(c)", "Net(nn.BatchNorm1d(3))"))
    assert found.message.endswith("the mode changes BatchNorm1d")


def test_an_init_parameter_evaled_by_the_caller_is_quiet():
    # The caller builds the model in eval mode and hands it to `Net`, which hands it on.
    src = _module("", "self.b = make_block(c)", "Net(nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3)).eval())")
    assert check(src) == []


def test_a_function_that_keeps_an_unknown_value_keeps_the_report():
    # Look-alikes of the hyperparameter case: the value is kept, or read another way.
    prelude = "CONFIG = load_config()"
    assert _loud(_module(prelude, "self.b = make_block(CONFIG)"))
    assert _loud(_module(prelude, "self.b = same(CONFIG.encoder)"))
    # Keyword that binds no named parameter (`**kwargs`), or a position past the parameters.
    starred = "def wrap(*parts, **kw):\n    return nn.Linear(3, 3)\n"
    assert _loud(_module(prelude + "\n" + starred, "self.b = wrap(CONFIG)"))
    assert _loud(_module(prelude + "\n" + starred, "self.b = wrap(x=CONFIG)"))


def test_a_function_of_another_module_of_the_project_is_read_with_what_it_is_handed(tmp_path):
    blocks = "from torch import nn\n" + textwrap.dedent(FUNCTIONS) + "\nENCODER = nn.Sequential(nn.Dropout(0.5))\n"
    imports = "from proj import blocks\nfrom proj.blocks import make_block, ignore, ENCODER\nBN = nn.BatchNorm1d(3)\n"
    capture = f"\ndef quantize(quantizer, x):\n    model = Net()\n{CAPTURE}"
    found = beside_blocks(tmp_path, blocks, imports, textwrap.dedent(NET), capture)

    for line in ["self.b = make_block(BN)", "self.b = make_block(ENCODER)", "self.b = blocks.same(BN)"]:
        (loud,) = found(line)
        assert loud.message.endswith(TRAIN_MODE), line
    # A function that does not keep it, or a number: quiet.
    for line in ["self.b = ignore(BN)", "self.b = blocks.linear(BN.num_features)", "self.b = make_block(nn.ReLU(), 3)"]:
        assert found(line) == [], line


def test_models_evaled_outside_are_quiet():
    # The whole model put in eval mode before a PTQ capture: whatever `BN` is, it is evaled too.
    assert check(_module("BN = nn.BatchNorm1d(3)", "self.b = make_block(BN)", "Net().eval()")) == []
    # A wrapper written in a test around a model the test evaled (`evaled_wrappers`), which also
    # hands the function a number: the evaled model keeps its mode, the function's part holds none.
    evaled = "inner = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3)).eval()\nsize = 3"
    assert check(_in_test(evaled, "self.inner = inner; self.b = make_block(nn.ReLU(), size)")) == []
    # The same wrapper around a fresh model: reported.
    fresh = evaled.replace(".eval()", "")
    assert _loud(_in_test(fresh, "self.inner = inner; self.b = make_block(nn.ReLU(), size)"))


# -- the same through the class's own methods and its base's `__init__` ---------------------------
METHODS = """
BN = nn.BatchNorm1d(3)
CONFIG = load_config()

class Base(nn.Module):
    def __init__(self, inner, dim=3):
        super().__init__()
        self.inner = inner
        self.lin = nn.Linear(dim, dim)

class Net({base}):
    def __init__(self):
        {line}

    def _make(self, m):
        return nn.Sequential(m)

    def _add(self, m):
        self.m = m

    def _linear(self, size):
        return nn.Linear(size, size)

    @staticmethod
    def _static(m):
        return nn.Sequential(m)

    def forward(self, x):
        return x

def quantize(quantizer, x):
    model = Net()
    prepare_pt2e(export(model, (x,)).module(), quantizer)
"""


def test_a_module_handed_to_an_own_method_or_to_the_base_init_is_reported():
    for base, line in [
        ("nn.Module", "super().__init__(); self.b = self._make(BN)"),
        ("nn.Module", "super().__init__(); self._add(BN)"),  # the method stores it
        ("nn.Module", "super().__init__(); self.b = self._static(BN)"),
        ("Base", "super().__init__(BN)"),  # the base stores it
        ("Base", "super().__init__(inner=CONFIG)"),
        ("nn.Sequential", "super().__init__(BN, nn.ReLU())"),  # a torch.nn container keeps it
    ]:
        assert _loud(METHODS.format(base=base, line=line)), (base, line)


def test_an_own_method_or_base_init_that_does_not_keep_the_value_is_quiet():
    for base, line in [
        ("nn.Module", "super().__init__(); self.b = self._linear(CONFIG.dim)"),
        ("nn.Module", "super().__init__(); self.b = self._make(nn.ReLU())"),
        ("Base", "super().__init__(nn.ReLU(), dim=CONFIG.dim)"),  # only given to nn.Linear
        ("Base", "super().__init__(nn.ReLU(), 3)"),
        ("nn.Sequential", "super().__init__(nn.Linear(3, 3), nn.ReLU())"),
    ]:
        assert check(METHODS.format(base=base, line=line)) == [], (base, line)
