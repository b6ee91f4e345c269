"""QL201: `quantizer.prepare(m)` on an instance of a class with bases or subclasses (issue 14,
item 2): a `Quantizer`/`TwoStepQuantizer` subclass, a base of the project in this module or
another one, a subclass overriding the method (`confined_instances.family_of`).

The method's calls are all known when the whole family is read: quiet when every call
passes an eval-mode model, loud when one does not; loud too when a base is not known, hands
`self` on, or calls on `self` a method a class below it overrides, and when an instance of a
subclass leaves the module.
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint

HEAD = """\
import torch
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
from torchao.quantization.qat import TwoStepQuantizer


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)
        self.drop = torch.nn.Dropout(0.5)
"""
CAPTURE_LINE = "        m = export(model, (torch.randn(1, 2),)).module()"

QUANTIZER = """

class MyQuantizer({base}):
    def prepare(self, model):
        m = export(model, (torch.randn(1, 2),)).module()
        return prepare_pt2e(m, make_quantizer())

    def convert(self, model):
        return model
"""
TEST = """

def test_prepare():
    quantizer = MyQuantizer()
    m = quantizer.prepare(Net(){mode})
"""


def _repo(tmp_path, overlay: dict[str, str] | None = None):
    root = tmp_path / f"repo{len(list(tmp_path.iterdir()))}"
    (root / ".git").mkdir(parents=True)
    for name, text in (overlay or {}).items():
        (root / name).write_text(textwrap.dedent(text))
    return root


def rows(src: str, tmp_path, overlay: dict[str, str] | None = None, head: str = HEAD) -> list[int]:
    path = str(_repo(tmp_path, overlay) / "test_quant.py")
    return [d.range.start.row for d in lint(head + textwrap.dedent(src), path=path, select=("QL201",))]


def capture_row(src: str, head: str = HEAD) -> int:
    return (head + textwrap.dedent(src)).splitlines().index(CAPTURE_LINE) + 1


def test_a_subclass_of_an_inert_library_quantizer_base(tmp_path):
    for base in ("TwoStepQuantizer", "Quantizer", "abc.ABC"):
        head = HEAD + "import abc\nfrom torchao.quantization.pt2e.quantizer import Quantizer\n"
        src = QUANTIZER.format(base=base)
        assert rows(src + TEST.format(mode=".eval()"), tmp_path, head=head) == [], base
        assert rows(src + TEST.format(mode=""), tmp_path, head=head) == [capture_row(src, head)], base


def test_an_unknown_base_may_call_the_method_unseen(tmp_path):
    src = QUANTIZER.format(base="somelib.Base") + TEST.format(mode=".eval()")
    head = HEAD + "import somelib\n"
    assert rows(src, tmp_path, head=head) == [capture_row(src, head)]


BASE = """

class Base:
    def __init__(self):
        self.calls = 0

    def run(self, model):
        return model
"""


def test_a_base_of_the_same_module(tmp_path):
    src = BASE + QUANTIZER.format(base="Base")
    assert rows(src + TEST.format(mode=".eval()"), tmp_path) == []
    assert rows(src + TEST.format(mode=""), tmp_path) == [capture_row(src)]


def test_a_base_that_runs_the_override_unseen_keeps_the_report(tmp_path):
    # `Base.run` calls `self.prepare`: on a `MyQuantizer` it runs the override, with any model.
    dispatch = BASE.replace("        return model\n", "        return self.prepare(model)\n")
    src = dispatch + QUANTIZER.format(base="Base")
    test = TEST.format(mode=".eval()") + "    quantizer.run(Net())\n"
    assert rows(src + test, tmp_path) == [capture_row(src)]
    # A base that hands `self` on.
    leaky = BASE.replace("        self.calls = 0\n", "        REGISTRY.append(self)\n")
    src = leaky + QUANTIZER.format(base="Base")
    assert rows(src + TEST.format(mode=".eval()"), tmp_path) == [capture_row(src)]


def test_a_base_in_another_module_of_the_project(tmp_path):
    head = HEAD + "from bases import Base\n"
    src = QUANTIZER.format(base="Base")
    good = {"bases.py": BASE}
    assert rows(src + TEST.format(mode=".eval()"), tmp_path, good, head) == []
    assert rows(src + TEST.format(mode=""), tmp_path, good, head) == [capture_row(src, head)]
    leaky = {"bases.py": BASE.replace("        self.calls = 0\n", "        REGISTRY.append(self)\n")}
    assert rows(src + TEST.format(mode=".eval()"), tmp_path, leaky, head) == [capture_row(src, head)]
    # Not a class of the project: unknown.
    assert rows(src + TEST.format(mode=".eval()"), tmp_path, {}, head) == [capture_row(src, head)]


SUB = """

class Tuned(MyQuantizer):
    def prepare(self, model):
        return super().prepare(model)
"""


def test_a_subclass_in_the_module(tmp_path):
    src = QUANTIZER.format(base="TwoStepQuantizer")
    # Never instantiated, or only as a receiver: its inherited methods run here only.
    assert rows(src + "\n\nclass Plain(MyQuantizer):\n    pass\n" + TEST.format(mode=".eval()"), tmp_path) == []
    used = "\n\ndef test_plain():\n    Plain().prepare(Net().eval())\n"
    plain = "\n\nclass Plain(MyQuantizer):\n    pass\n"
    assert rows(src + plain + TEST.format(mode=".eval()") + used, tmp_path) == []
    assert rows(src + plain + TEST.format(mode=".eval()") + used.replace(".eval()", ""), tmp_path) == [capture_row(src)]
    # An override that calls `super().prepare`: a call the flow does not read.
    tuned = src + SUB + TEST.format(mode=".eval()") + "\n\ndef test_tuned():\n    Tuned().prepare(Net().eval())\n"
    assert rows(tuned, tmp_path) == [capture_row(src)]
