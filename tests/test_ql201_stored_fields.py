"""QL201: `bundle.model` of an object built from a project class that stores what it is given
(issue 14, item 7).

A caller passing `bundle.model` (a dataclass field, or an attribute `__init__` stores from its
parameter) passes the model the bundle was built with, in its mode, also when the bundle
comes from a helper of another module (ExecuTorch's Arm super-resolution example: the bundle
holds a wrapper of a `from_pretrained(...).eval()` model). A class that may change the
attribute (`__post_init__`, a method that reassigns or hands it on, `bundle.model = other`)
is not followed.
"""

from __future__ import annotations

import textwrap

import pytest

from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from tests.conftest import lint, settings_for

HEAD = """\
from dataclasses import dataclass

import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn(x)


@dataclass(frozen=True)
class Bundle:
    name: str
    model: nn.Module
    inputs: tuple


class Holder:
    def __init__(self, model, inputs):
        self.model = model
        self.inputs = inputs


def quantize(model, x, q):
    return prepare_pt2e(torch.export.export(model, x).module(), q)
"""
CAPTURE_ROW = HEAD.count("\n")


def ql201(caller: str, head: str = HEAD):
    return lint(head + "\n\n" + textwrap.dedent(caller), select=("QL201",))


@pytest.mark.parametrize(
    "build",
    [
        'Bundle("a", Net().eval(), (x,))',
        'Bundle(name="a", model=Net().eval(), inputs=(x,))',
        "Holder(Net().eval(), (x,))",
        "Holder(inputs=(x,), model=Net().eval())",
    ],
)
def test_an_attribute_holding_an_eval_mode_model_keeps_the_helper_quiet(build):
    caller = f"""
        def main(x, q):
            bundle = {build}
            quantize(bundle.model, bundle.inputs, q)
        """
    assert ql201(caller) == []


@pytest.mark.parametrize("build", ['Bundle("a", Net(), (x,))', "Holder(model=Net(), inputs=(x,))"])
def test_an_attribute_holding_a_train_mode_model_is_the_finding(build):
    caller = f"""
        def main(x, q):
            bundle = {build}
            quantize(bundle.model, bundle.inputs, q)
        """
    (d,) = ql201(caller)
    assert d.range.start.row == CAPTURE_ROW and "modules start in train mode" in d.message


def test_the_mode_set_on_the_attribute_is_the_models():
    caller = """
        def main(x, q):
            bundle = Bundle("a", Net(), (x,))
            bundle.model.eval()
            quantize(bundle.model, bundle.inputs, q)
        """
    assert ql201(caller) == []


def test_an_attribute_that_may_change_is_not_followed():
    # Not followed, the caller's model is one qlint does not read, which keeps the helper quiet
    # (the measured silence, `capture_common._mode_left_open`): the train-mode model written in
    # the construction shows the attribute was not read as holding it.
    caller = (
        "def main(x, q, make):\n    bundle = Bundle('a', Net(), (x,))\n{}    quantize(bundle.model, bundle.inputs, q)\n"
    )
    assert len(ql201(caller.format(""))) == 1
    assert ql201(caller.format("    bundle.model = make()\n")) == []  # the caller puts another model there
    post_init = "    inputs: tuple\n\n    def __post_init__(self):\n        reset(self)\n"
    assert ql201(caller.format(""), HEAD.replace("    inputs: tuple\n", post_init, 1)) == []


def test_a_holder_whose_method_hands_the_model_on_is_not_followed():
    head = HEAD.replace(
        "        self.inputs = inputs\n",
        "        self.inputs = inputs\n\n    def fit(self):\n        train(self.model)\n",
    )
    caller = "def main(x, q):\n    holder = Holder(Net(), (x,))\n    quantize(holder.model, holder.inputs, q)\n"
    assert ql201(caller, head) == []
    assert len(ql201(caller)) == 1  # without the method it is followed, and train mode is the finding


def test_a_bundle_built_by_a_helper_of_another_module(tmp_path):
    # ExecuTorch's Arm super-resolution example, in small: the script imports the helper from
    # a sibling module (a directory without `__init__.py`), which wraps an eval-mode model.
    common = HEAD + textwrap.dedent(
        """

        class Wrapper(nn.Module):
            def __init__(self, model):
                super().__init__()
                self.model = model

            def forward(self, x):
                return self.model(x)


        def create_bundle(x, train):
            model = MODEL
            return Bundle("a", Wrapper(model), (x,))
        """
    )
    script = textwrap.dedent(
        """
        import torch
        from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

        from common import create_bundle


        def quantize(model, x, q):
            return prepare_pt2e(torch.export.export(model, x).module(), q)


        def main(x, q):
            bundle = create_bundle(x, False)
            quantize(bundle.model, bundle.inputs, q)
        """
    )
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "example").mkdir()

    def check(text: str):
        path = root / "example" / "export.py"
        path.write_text(text)
        result = check_source(text, str(path), settings_for(("QL201",)), ProjectIndex())
        return [d for d in result.diagnostics if d.code == "QL201"]

    (root / "example" / "common.py").write_text(common.replace("MODEL", "Net().eval()"))
    assert check(script) == []
    (root / "example" / "common.py").write_text(common.replace("MODEL", "Net()"))
    (d,) = check(script)
    assert "modules start in train mode" in d.message


HOLDERS = """\
class Holder:
    def __init__(self, model, inputs):
        self.model = model
        self.inputs = inputs
"""

BUILDS_A_HOLDER = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from lib.holders import Holder


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4)


def main(x, q):
    net = Net()
    holder = Holder(net, (x,))
    return prepare_pt2e(torch.export.export(holder.model, holder.inputs).module(), q)
"""


def test_a_project_class_is_read_once_for_every_file_that_builds_it(tmp_path, monkeypatch):
    # What a class stores depends on its own statements alone: a class of another module that
    # many files construct (ExecuTorch's `SimpleADB`, from 48 of them) is walked once per
    # process, and each file still gets the finding a fresh analysis gives.
    from qlint.analysis.flow import stored_fields

    walks: list[tuple[str, bool]] = []
    walk = stored_fields._changed_by_methods

    def counted(cls, changes):
        walks.append((cls.name, "train" in changes))
        return walk(cls, changes)

    monkeypatch.setattr(stored_fields, "_changed_by_methods", counted)
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    for name, text in {
        "lib/__init__.py": "",
        "lib/holders.py": HOLDERS,
        "a.py": BUILDS_A_HOLDER,
        "b.py": BUILDS_A_HOLDER,
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    project = ProjectIndex()
    row = BUILDS_A_HOLDER.count("\n")
    for name in ("a.py", "b.py"):
        result = check_source(BUILDS_A_HOLDER, str(root / name), settings_for(("QL201",)), project)
        assert [d.range.start.row for d in result.diagnostics] == [row]
    # Once for what its constructions hold (`holder.model`), once for what stays the object
    # given (`Holder(net, ...)`, `held_parts`): not again for the second file.
    assert sorted(walks) == [("Holder", False), ("Holder", True)]
