"""QL202 through callers: a helper that captures its parameter for QAT, handed an eval-mode
model (issue 14, items 2, 6 and 7, the mirror of QL201's callers).

A call that passes a model in eval mode, whose arguments take the helper's QAT branch, runs
QAT on an eval-mode graph: reported at the helper's capture, naming the call. Calls in other
modules count (a package, a repository whose package maps onto its root), and so do calls up
through callers that hand on their own parameter and the instantiations of a class that
stores the model in `__init__`. A caller qlint cannot read neither adds a call nor hides one.
Quiet: train-mode callers, callers whose flags rule the QAT branch out, eval-mode models with
nothing mode-dependent, helpers that train the model or the prepared graph, QAT graphs only
rebuilt to convert.
"""

from __future__ import annotations

import textwrap

from qlint.diagnostic import Applicability
from tests.conftest import check_file, lint, mapped_repository, package_repository

HEAD = """\
import torch
from torch.export import export
from torchao.quantization.pt2e import move_exported_model_to_train
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e
from transformers import AutoModel


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 3)
        self.bn = torch.nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(self.conv(x))


class Lin(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(x)


def qat(model, q, x):
    return prepare_qat_pt2e(export(model, (x,)).module(), q)


def quant(model, q, x, is_qat=False):
    gm = export(model, (x,)).module()
    if is_qat:
        return prepare_qat_pt2e(gm, q)
    return prepare_pt2e(gm, q)


def wrap(model, q, x, qat=False):
    return quant(model, q, x, is_qat=qat)
"""
QAT_ROW = HEAD.splitlines().index("    return prepare_qat_pt2e(export(model, (x,)).module(), q)") + 1
QUANT_ROW = HEAD.splitlines().index("    gm = export(model, (x,)).module()") + 1


def ql202(src: str, tmp_path):
    root = tmp_path / f"repo{len(list(tmp_path.iterdir()))}"
    (root / ".git").mkdir(parents=True)
    return lint(HEAD + textwrap.dedent(src), path=str(root / "h.py"), select=("QL202",))


def test_a_caller_handing_over_an_eval_mode_model_is_reported_at_the_helper(tmp_path):
    src = """

    def main(q, x):
        m = Net()
        m.eval()
        return qat(m, q, x)
    """
    (d,) = ql202(src, tmp_path)
    row = len((HEAD + textwrap.dedent(src)).splitlines())
    assert d.range.start.row == QAT_ROW
    assert f"(the call at line {row} passes it after `m.eval()` at line {row - 1})" in d.message
    assert d.message.endswith("in `Net`, the mode changes BatchNorm2d")
    assert d.fix.applicability is Applicability.UNSAFE  # the callers' model


def test_inline_eval_from_pretrained_and_flags_that_take_the_qat_branch_are_reported(tmp_path):
    (d,) = ql202("\n\ndef main(q, x):\n    qat(Net().eval(), q, x)\n", tmp_path)
    assert "passes it after `Net().eval()`" in d.message
    (d,) = ql202("\n\ndef main(q, x, args):\n    quant(AutoModel.from_pretrained('m'), q, x, args.qat)\n", tmp_path)
    assert d.range.start.row == QUANT_ROW and "`from_pretrained`" in d.message
    (d,) = ql202("\n\ndef main(q, x):\n    quant(Net().eval(), q, x, is_qat=True)\n", tmp_path)
    assert d.range.start.row == QUANT_ROW


def test_a_caller_forwarding_its_own_parameter_hands_on_its_callers_eval_mode_model(tmp_path):
    (d,) = ql202("\n\ndef main(q, x):\n    wrap(Net().eval(), q, x, qat=True)\n", tmp_path)
    assert d.range.start.row == QUANT_ROW
    assert ql202("\n\ndef main(q, x):\n    wrap(Net().eval(), q, x)\n", tmp_path) == []


def test_a_local_class_handed_over_in_eval_mode_is_judged_by_its_content(tmp_path):
    local = """

    def main(q, x):
        class Local(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.drop = torch.nn.Dropout()

            def forward(self, x):
                return self.drop(x)

        qat(Local().eval(), q, x)
    """
    (d,) = ql202(local, tmp_path)
    assert "in `Local`, the mode changes Dropout" in d.message
    assert ql202(local.replace("torch.nn.Dropout()", "torch.nn.Linear(2, 2)"), tmp_path) == []


def test_a_caller_that_cannot_be_read_does_not_hide_the_one_that_can(tmp_path):
    src = """

    def main(q, x, run):
        run(lambda m: qat(m, q, x))
        qat(Net().eval(), q, x)
    """
    (d,) = ql202(src, tmp_path)
    assert "passes it after `Net().eval()`" in d.message


def test_a_class_storing_the_model_in_init_is_judged_at_its_instantiations(tmp_path):
    src = """

    class Holder:
        def __init__(self, model, q):
            self.model = model
            self.q = q

        def quantize(self, x):
            return prepare_qat_pt2e(export(self.model, (x,)).module(), self.q)


    def main(q, x):
        return Holder(Net().eval(), q).quantize(x)
    """
    (d,) = ql202(src, tmp_path)
    assert "`self.model` is captured for QAT in eval mode (the call at line" in d.message
    assert ql202(src.replace("Net().eval()", "Net()"), tmp_path) == []


def test_quiet_callers(tmp_path):
    helpers = """

    def retrains(model, q, x):
        prepared = prepare_qat_pt2e(export(model, (x,)).module(), q)
        move_exported_model_to_train(prepared)
        return prepared


    def trains(model, q, x):
        model.train()
        return prepare_qat_pt2e(export(model, (x,)).module(), q)


    def rebuild(model, q, x):
        return convert_pt2e(prepare_qat_pt2e(export(model, (x,)).module(), q))


    def ptq(model, q, x):
        return prepare_pt2e(export(model, (x,)).module(), q)


    def main(q, x):
        m = Net()
        m.eval()
        ptq(m, q, x)
        quant(m, q, x)
        quant(m, q, x, is_qat=False)
        wrap(m, q, x, qat=False)
        retrains(m, q, x)
        trains(m, q, x)
        rebuild(m, q, x)
        qat(Lin().eval(), q, x)
        n = Net()
        n.eval()
        n.train()
        qat(n, q, x)
        qat(Net(), q, x)
    """
    assert ql202(helpers, tmp_path) == []


def test_a_helper_nobody_calls_stays_quiet(tmp_path):
    assert ql202("", tmp_path) == []


IMPORTS = "import torch\n\n\nclass Local(torch.nn.Module):\n"
LOCAL = """
    def __init__(self):
        super().__init__()
        self.part = {part}

    def forward(self, x):
        return self.part(x)


def main(q, x):
    return {helper}(Local().eval(), q, x)
"""
HELPER = """\
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e


def {helper}(model, q, x):
    return prepare_qat_pt2e(export(model, (x,)).module(), q)
"""


def _check(path):
    return check_file(path, ("QL202",)).diagnostics


def test_callers_in_other_modules_of_a_package(tmp_path):
    root = package_repository(tmp_path / "repo")
    (root / "pkg" / "helpers.py").write_text(HELPER.format(helper="qat"))
    caller = IMPORTS.replace("import torch\n", "import torch\nfrom pkg.helpers import qat\n")
    (root / "pkg" / "main.py").write_text(caller + LOCAL.format(part="torch.nn.Dropout()", helper="qat"))
    (d,) = _check(root / "pkg" / "helpers.py")
    assert "the call at main.py:" in d.message and "passes it after `Local().eval()`" in d.message
    assert "in `Local`, the mode changes Dropout" in d.message
    (root / "pkg" / "main.py").write_text(caller + LOCAL.format(part="torch.nn.Linear(2, 2)", helper="qat"))
    assert _check(root / "pkg" / "helpers.py") == []


def test_callers_in_a_repository_whose_package_maps_onto_its_root(tmp_path):
    passes = mapped_repository(tmp_path)
    (passes / "quant.py").write_text(HELPER.format(helper="qat_x"))
    caller = IMPORTS.replace(
        "import torch\n", "import torch\nfrom executorch.backends.nxp.aten_passes.fusion.quant import qat_x\n"
    )
    (passes / "run.py").write_text(caller + LOCAL.format(part="torch.nn.Dropout()", helper="qat_x"))
    (d,) = _check(passes / "quant.py")
    assert "the call at run.py:" in d.message
    (passes / "run.py").write_text(caller + LOCAL.format(part="torch.nn.Linear(2, 2)", helper="qat_x"))
    assert _check(passes / "quant.py") == []


def test_loop_items_and_relayed_functions_hand_over_their_eval_mode_models(tmp_path):
    looped = "\n\ndef main(q, x):\n    for m in [Lin().eval(), Net().eval()]:\n        qat(m, q, x)\n"
    (d,) = ql202(looped, tmp_path)
    assert d.range.start.row == QAT_ROW and "in `Net`, the mode changes BatchNorm2d" in d.message
    assert ql202(looped.replace("Net().eval()", "Net()"), tmp_path) == []
    relayed = (
        "\n\ndef relay(model, fn, q, x):\n    return fn(model, q, x)\n\n\n"
        "def main(q, x):\n    relay(Net().eval(), qat, q, x)\n"
    )
    (d,) = ql202(relayed, tmp_path)
    assert d.range.start.row == QAT_ROW
    assert ql202(relayed.replace("Net().eval()", "Net()"), tmp_path) == []
