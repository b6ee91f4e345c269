"""A method of another module's class that hands the model to a helper of a third module
(`method_words.names_a_step`, `inherited_methods.imported_class_methods`): `Runner().run(Net(),
x)` where `pkg/wrapper.py`'s `Runner.run` returns `grab(model, x)` of `pkg/helpers.py`, which
captures it (QL201 at the caller, whose `prepare_pt2e` the capture reaches); `Runner().warm(gm)`
whose `helpers.settle(model)` runs `.eval()` (QL203). The method's own body names no step:
before, it was left unread."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import lint, write_package

HELPERS = """\
import torch


def grab(model, x):
    return torch.export.export(model, (x,)).module()


def settle(model, loader):
    model.eval()
    for x in loader:
        model(x)


def feed(model, loader):
    for x in loader:
        model(x)
"""

WRAPPER = """\
from pkg import helpers
from pkg.helpers import grab


class Runner:
    def run(self, model, x):
        return grab(model, x)

    def warm(self, model, loader):
        helpers.settle(model, loader)

    def fill(self, model, loader):
        helpers.feed(model, loader)
"""

MAIN = """\
import copy
import torch
from torchao.quantization.pt2e import allow_exported_model_train_eval
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
from pkg.wrapper import Runner


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(x)


def run(x, q, loader):
    gm = Runner().run(Net(), x)
    prepared = prepare_pt2e(gm, q)
    Runner().warm(prepared, loader)
"""  # the capture is on line 18, the hand-over on line 20


def _found(tmp_path, main: str, select=("QL201", "QL203")):
    (tmp_path / ".git").mkdir(exist_ok=True)
    write_package(tmp_path, "pkg", helpers=HELPERS, wrapper=WRAPPER)
    path = tmp_path / "pkg" / "main.py"
    path.write_text(textwrap.dedent(main))
    return [(d.code, d.range.start.row, d.message) for d in lint(path.read_text(), path=str(path), select=select)]


def test_a_method_of_another_module_handing_the_model_to_a_helper_of_a_third(tmp_path):
    found = _found(tmp_path, MAIN)
    assert [(code, row) for code, row, _ in found] == [("QL201", 18), ("QL203", 20)]
    assert "`Net()` is captured for PTQ in train mode" in found[0][2]
    assert "`prepared` comes from `prepare_pt2e` (line 19)" in found[1][2]
    assert "this call runs `.eval()` on it (helpers.py:9)" in found[1][2]
    # Every rule running: the same.
    assert [(c, r) for c, r, _ in _found(tmp_path, MAIN, select=("QL",)) if c in ("QL201", "QL203")] == [
        ("QL201", 18),
        ("QL203", 20),
    ]


@pytest.mark.parametrize(
    "change",
    [
        # evaluated before it is handed over to be captured; the graph allowed before the hand-over
        (
            "    gm = Runner().run(Net(), x)\n    prepared = prepare_pt2e(gm, q)\n",
            "    gm = Runner().run(Net().eval(), x)\n    prepared = prepare_pt2e(gm, q)\n"
            "    allow_exported_model_train_eval(prepared)\n",
        ),
        # a copy has the plain module's `eval` again; the helper then switches nothing
        ("    Runner().warm(prepared, loader)\n", "    Runner().warm(copy.deepcopy(prepared), loader)\n"),
        ("    Runner().warm(prepared, loader)\n", "    Runner().fill(prepared, loader)\n"),
    ],
)
def test_quiet_hand_overs(tmp_path, change):
    main = MAIN.replace(*change)
    assert main != MAIN
    found = _found(tmp_path, main)
    assert [c for c, _, _ in found if c == "QL203"] == []
    if "eval()" in change[1]:
        assert found == []
