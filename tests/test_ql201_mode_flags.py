"""QL201/QL202: a flag the caller passes decides whether the helper or method switches the
model's mode before it captures (issue 14, item 16, for flags passed at the call).

`if calibrate: model.eval()` in a helper called with `calibrate=True` captures an eval-mode
model; called with `calibrate=False` it captures the model as the caller built it. The same
in a method of a builder that holds the model (`Quantizer(model).prepare(is_qat=False)`): the
method's own switch on `self.model` is read by the method (a switch in another method leaves
the attribute unknown, since that method may have run first), and a path that never touched
`self.model` holds it as stored.
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint

HEAD = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(x)
"""


def rows(src: str, tmp_path, code: str = "QL201") -> list[int]:
    """The rows `code` reports in `src`, checked as the one module of a repository."""
    root = tmp_path / f"repo{len(list(tmp_path.iterdir()))}"
    (root / ".git").mkdir(parents=True)
    path = str(root / "helpers.py")
    return [d.range.start.row for d in lint(HEAD + textwrap.dedent(src), path=path, select=(code,))]


def row(src: str, text: str) -> int:
    lines = (HEAD + textwrap.dedent(src)).splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


HELPER = """
def run(model, quantizer, example, calibrate):
    if calibrate:
        model.eval()
    graph = torch.export.export(model, example).module()
    return prepare_pt2e(graph, quantizer)


def main(quantizer, example):
    run(Net(), quantizer, example, calibrate=FLAG)
"""


def test_a_helper_called_with_the_flag_that_skips_eval_is_reported(tmp_path):
    src = HELPER.replace("FLAG", "False")
    assert rows(src, tmp_path) == [row(src, "torch.export.export")]


def test_a_helper_called_with_the_flag_that_runs_eval_is_quiet(tmp_path):
    assert rows(HELPER.replace("FLAG", "True"), tmp_path) == []


def test_a_negated_flag_is_read_the_same_way(tmp_path):
    src = HELPER.replace("if calibrate:", "if not calibrate:")
    assert rows(src.replace("FLAG", "False"), tmp_path) == []
    assert rows(src.replace("FLAG", "True"), tmp_path) == [row(src, "torch.export.export")]


def test_one_caller_of_two_skipping_eval_keeps_the_finding(tmp_path):
    src = HELPER.replace("FLAG", "True") + "    run(Net(), quantizer, example, calibrate=False)\n"
    assert rows(src, tmp_path) == [row(src, "torch.export.export")]


def test_a_flag_the_caller_does_not_know_keeps_the_finding(tmp_path):
    src = HELPER.replace("FLAG", "example is None")
    assert rows(src, tmp_path) == [row(src, "torch.export.export")]


BUILDER = """
class Quantizer:
    def __init__(self, model, quantizer):
        self.model = model
        self.quantizer = quantizer

    def prepare(self, example, calibrate):
        if calibrate:
            self.model.eval()
        graph = torch.export.export(self.model, example).module()
        return prepare_pt2e(graph, self.quantizer)


def main(quantizer, example):
    q = Quantizer(Net(), quantizer)
    q.prepare(example, calibrate=FLAG)
"""


def test_a_method_called_with_the_flag_that_skips_eval_is_reported(tmp_path):
    src = BUILDER.replace("FLAG", "False")
    assert rows(src, tmp_path) == [row(src, "torch.export.export")]


def test_a_method_called_with_the_flag_that_runs_eval_is_quiet(tmp_path):
    assert rows(BUILDER.replace("FLAG", "True"), tmp_path) == []


def test_a_builder_given_an_eval_mode_model_is_quiet_whatever_the_flag(tmp_path):
    src = BUILDER.replace("FLAG", "False").replace("Quantizer(Net(), quantizer)", "Quantizer(Net().eval(), quantizer)")
    assert rows(src, tmp_path) == []


def test_a_switch_in_another_method_leaves_the_attribute_unknown(tmp_path):
    # `calibrate()` may run before `prepare()`: nothing says which mode the model is in there.
    src = BUILDER.replace("FLAG", "False").replace(
        "    def prepare(", "    def calibrate(self):\n        self.model.eval()\n\n    def prepare("
    )
    assert rows(src, tmp_path) == []


QAT_BUILDER = """
class Quantizer:
    def __init__(self, model, quantizer):
        self.model = model
        self.quantizer = quantizer

    def prepare(self, example, is_qat):
        if is_qat:
            self.model.train()
        graph = torch.export.export(self.model, example).module()
        if is_qat:
            return prepare_qat_pt2e(graph, self.quantizer)
        return prepare_pt2e(graph, self.quantizer)


def main(quantizer, example):
    q = Quantizer(Net(), quantizer)
    q.prepare(example, is_qat=FLAG)
"""


def test_a_ptq_call_of_a_method_that_switches_to_train_for_qat_only_is_reported(tmp_path):
    # The path that never reads `self.model` before the capture holds it as it was built.
    src = QAT_BUILDER.replace("FLAG", "False")
    assert rows(src, tmp_path) == [row(src, "torch.export.export")]


def test_a_qat_call_of_that_method_is_quiet(tmp_path):
    src = QAT_BUILDER.replace("FLAG", "True")
    assert rows(src, tmp_path) == []
    assert rows(src, tmp_path, "QL202") == []


def test_a_method_that_evals_for_ptq_on_its_own_branch_is_quiet(tmp_path):
    both = "            self.model.train()\n        else:\n            self.model.eval()\n"
    src = QAT_BUILDER.replace("FLAG", "False").replace("            self.model.train()\n", both)
    assert rows(src, tmp_path) == []
    assert rows(src, tmp_path, "QL202") == []
