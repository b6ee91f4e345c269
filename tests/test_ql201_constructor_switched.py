"""QL201: a model the class's constructor switches to eval and stores, handed by a method of
the class to another object's method that captures it (issue 14, item 2).

ExecuTorch's test harness: `Tester.__init__` calls `module.eval()` and keeps the module in
`self.original_module`; a stage's `run(artifact, inputs)` captures what the tester hands it.
The stage's callers were found (`Quantize(q).run(self.original_module, ...)`), but what they
passed read as an attribute of unknown mode, because `__init__` touched the parameter before
storing it. `__init__`'s own unconditional switch is followed (`switched_params`): the
attribute holds the constructions' object in that mode. A switch in a branch, a second switch,
the parameter handed to a call there, the attribute switched or reassigned by a method, or a
subclass that may build its instances otherwise (`switched_subclasses`) leave it unknown, and
the capture stays reported.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from qlint.analysis.flow.model_attrs import Stored, attribute_sources
from qlint.analysis.flow.switched_params import Switched
from tests.conftest import check_file, lint, package_repository, rows_of
from tests.snippets import NET_BN2D, QUANTIZE_STAGE, QUANTIZE_STAGE_CAPTURE_ROW

STAGE = QUANTIZE_STAGE
CAPTURE_ROW = QUANTIZE_STAGE_CAPTURE_ROW

TESTER = """\
import torch

from pkg.stage import Net, Quantize


def prepare_model(module):
    return module


class Tester:
    def __init__(self, module, inputs, training={default}):
{init}
        self.original_module = module
        self.inputs = inputs
{after}
{more}
    def quantize(self, q):
        Quantize(q).run(self.original_module, self.inputs)
        return self
"""
USE = """\
from pkg.stage import Net
from pkg.tester import Tester


def test_quantize(q, x):
    Tester(Net(), (x,)).quantize(q)
"""


def _rows(
    tmp_path, init: str, more: str = "", after: str = "", tail: str = "", default: str = "False", **others: str
) -> list[int]:
    indented = {k: textwrap.indent(textwrap.dedent(v), " " * 8).rstrip() for k, v in (("init", init), ("after", after))}
    tester = TESTER.format(more=more, default=default, **indented) + tail
    modules = {"stage": STAGE, "tester": tester, "use": USE, **others}
    root = package_repository(tmp_path / "repo", **modules)
    return rows_of(check_file(root / "pkg" / "stage.py", ("QL201",)).diagnostics)


@pytest.mark.parametrize("switch", ["module.eval()", "module.train(False)"])
def test_a_constructor_that_evals_the_model_it_stores_vouches_for_the_stage(tmp_path, switch):
    assert _rows(tmp_path, switch) == []


LOUD = {
    "left_in_train_mode": "module.train()",
    "stored_as_it_came": "pass",
    "eval_on_another_parameter": "inputs.eval()",
    "eval_in_a_branch_on_something_else": """
        if torch.cuda.is_available():
            module.eval()
        """,
    "a_branch_with_more_than_a_switch": """
        if training:
            module.train()
        else:
            module.eval()
            print(training)
        """,
    "train_after_the_eval": """
        module.eval()
        module.train()
        """,
    "handed_to_a_call_after_the_eval": """
        module.eval()
        prepare_model(module)
        """,
}


BRANCHES = {
    "train_else_eval": """
        if training:
            module.train()
        else:
            module.eval()
        """,
    "eval_if_not_training": """
        if not training:
            module.eval()
        """,
}


@pytest.mark.parametrize("construction", ["Tester(Net(), (x,))", "Tester(Net(), (x,), training=False)"])
@pytest.mark.parametrize("branch", sorted(BRANCHES))
def test_a_branch_on_a_flag_every_construction_leaves_false_is_quiet(tmp_path, branch, construction):
    use = USE.replace("Tester(Net(), (x,))", construction)
    assert _rows(tmp_path, BRANCHES[branch], use=use) == []


OTHER_USE = """\
from pkg.stage import Net
from pkg.tester import Tester


def train_it(q, x, opts):
    {construction}
"""
LOUD_CONSTRUCTIONS = {
    "training_true": "Tester(Net(), (x,), training=True)",
    "training_positional": "Tester(Net(), (x,), 1)",
    "training_from_a_name": "Tester(Net(), (x,), training=bool(x))",
    "keywords_spread": "Tester(Net(), (x,), **opts)",
}


@pytest.mark.parametrize("construction", sorted(LOUD_CONSTRUCTIONS))
@pytest.mark.parametrize("branch", sorted(BRANCHES))
def test_a_construction_that_may_select_the_other_arm_keeps_the_finding(tmp_path, branch, construction):
    # A second construction elsewhere, beside the one that leaves the flag to its default.
    other = OTHER_USE.format(construction=LOUD_CONSTRUCTIONS[construction])
    assert _rows(tmp_path, BRANCHES[branch], other=other) == [CAPTURE_ROW]


@pytest.mark.parametrize("branch", sorted(BRANCHES))
def test_a_flag_that_defaults_to_the_other_arm_keeps_the_finding(tmp_path, branch):
    assert _rows(tmp_path, BRANCHES[branch], default="True") == [CAPTURE_ROW]


@pytest.mark.parametrize("name", sorted(LOUD))
def test_a_constructor_that_does_not_eval_on_every_path_keeps_the_finding(tmp_path, name):
    assert _rows(tmp_path, LOUD[name]) == [CAPTURE_ROW]


METHODS = {
    "switched_back_by_a_method": "\n    def fit(self):\n        self.original_module.train()\n",
    "reassigned_by_a_method": "\n    def reset(self, module):\n        self.original_module = module\n",
    "handed_to_a_call_by_a_method": "\n    def warm(self):\n        prepare_model(self.original_module)\n",
}


def test_the_attribute_reassigned_after_the_store_keeps_the_finding(tmp_path):
    assert _rows(tmp_path, "module.eval()", after="self.original_module = Net()") == [CAPTURE_ROW]


@pytest.mark.parametrize("name", sorted(METHODS))
def test_a_method_that_may_change_the_attribute_keeps_the_finding(tmp_path, name):
    assert _rows(tmp_path, "module.eval()", METHODS[name]) == [CAPTURE_ROW]


SUBCLASS = """\
from pkg.stage import Net
from pkg.tester import Tester


class PlainTester(Tester):
    def __init__(self, module, inputs):
        self.original_module = module
        self.inputs = inputs


def test_plain(q, x):
    PlainTester(Net(), (x,)).quantize(q)
"""


def test_a_subclass_elsewhere_building_its_instances_otherwise_keeps_the_finding(tmp_path):
    assert _rows(tmp_path, "module.eval()", plain=SUBCLASS) == [CAPTURE_ROW]


def test_a_subclass_in_the_same_module_keeps_the_finding(tmp_path):
    tail = SUBCLASS[SUBCLASS.index("\n\nclass") :]
    assert _rows(tmp_path, "module.eval()", tail=tail) == [CAPTURE_ROW]


def _sources(init: str) -> dict:
    body = textwrap.indent(textwrap.dedent(init).strip(), " " * 8)
    cls = ast.parse(f"class T:\n    def __init__(self, module, training=False):\n{body}\n")
    return attribute_sources(cls.body[0], lambda call: False)


def test_the_source_is_the_parameter_in_the_mode_init_switched_it_to():
    found = _sources("module.train()\nself.m = module")["self.m"]
    assert isinstance(found, Switched) and found.mode == "train" and found.param == "module"
    assert isinstance(_sources("self.m = module")["self.m"], Stored)
    assert "self.m" not in _sources("self.m = module\nmodule.eval()")
    assert "self.m" not in _sources("if module:\n    module.eval()\nself.m = module")
    assert "self.m" not in _sources("module.eval()\nother = module\nself.m = module")
    assert "self.m" not in _sources("module.eval()\nmodule.bn = None\nself.m = module")
    branch = _sources("if training:\n    module.train()\nelse:\n    module.eval()\nself.m = module")["self.m"].branch
    assert (branch.flag, branch.index, branch.evals_when) == ("training", 2, False)
    assert _sources("if not training:\n    module.eval()\nself.m = module")["self.m"].branch.evals_when is False
    assert _sources("if training:\n    module.eval()\nself.m = module")["self.m"].branch.evals_when is True
    assert "self.m" not in _sources("if training:\n    module.eval()\nelse:\n    module.eval()\nself.m = module")
    assert "self.m" not in _sources(
        "training = 1\nif training:\n    module.train()\nelse:\n    module.eval()\nself.m = module"
    )


QAT = (
    NET_BN2D.replace("import prepare_pt2e", "import prepare_pt2e, prepare_qat_pt2e")
    + """

class Trainer:
    def __init__(self, module, x):
        module.{mode}()
        self.model = module
        self.x = x

    def quantize_qat(self, q):
        captured = export(self.model, (self.x,)).module()
        return prepare_qat_pt2e(captured, q)


def main(q, x):
    return Trainer(Net(), x).quantize_qat(q)
"""
)


def test_qat_capture_of_a_model_init_evaled_is_reported_and_of_one_it_trained_is_not():
    # QL202 reads the same attribute: eval mode, from the constructor's switch.
    rows = [d.range.start.row for d in lint(QAT.format(mode="eval"), select=("QL202",))]
    assert rows == [
        QAT.format(mode="eval").splitlines().index("        captured = export(self.model, (self.x,)).module()") + 1
    ]
    assert lint(QAT.format(mode="train"), select=("QL202",)) == []
