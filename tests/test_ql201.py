"""QL201 ptq-capture-without-eval: findings, quiet idioms and the `eval()` insertion."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from qlint.diagnostic import Applicability
from tests.conftest import codes, fix, lint

HEAD = """\
import torch
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e
"""


def ql201(src: str, head: str = HEAD):
    return lint(head + textwrap.dedent(src), select=("QL201",))


def fixed(src: str, head: str = HEAD, unsafe: bool = False, select=("QL201",)) -> str:
    out = fix(head + textwrap.dedent(src), select=select, unsafe=unsafe)
    return out[len(head) :]


# -- findings --------------------------------------------------------------------------------
def test_constructed_model_captured_without_eval():
    (d,) = ql201(
        """
        def quantize(quantizer, x):
            model = torch.nn.Sequential(torch.nn.Conv2d(3, 3, 3), torch.nn.BatchNorm2d(3))
            ep = export(model, (x,))
            prepared = prepare_pt2e(ep.module(), quantizer)
            return convert_pt2e(prepared)
        """
    )
    assert d.code == "QL201" and d.name == "ptq-capture-without-eval"
    assert (d.range.start.row, d.range.start.col) == (7, 9)  # the capture call
    assert "in train mode (built at line 6, and modules start in train mode)" in d.message
    assert d.fix.applicability is Applicability.SAFE
    assert d.evidence["flow"] == "ptq" and d.evidence["model"] == "model"
    assert d.evidence["reasons"] == ["constructed"] and d.evidence["sinks"] == [{"path": d.path, "row": 8}]
    assert d.related[0].message == "the captured graph is prepared for PTQ"


def test_explicit_train_before_capture_is_definite():
    (d,) = ql201(
        """
        def quantize(model, quantizer, x):
            model.train()
            prepare_pt2e(export(model, (x,)).module(), quantizer)
        """
    )
    assert "in train mode (after `model.train()` at line 6)" in d.message


def test_parameter_with_nothing_setting_its_mode():
    (d,) = ql201(
        """
        def quantize(model, quantizer, x):
            with torch.no_grad():
                gm = export(model, (x,)).module()
            return prepare_pt2e(gm, quantizer)
        """
    )
    assert "without `eval()` (as parameter `model`, in whatever mode the caller left it)" in d.message
    assert d.help.startswith("`no_grad()` only turns off autograd, it does not switch to eval mode.")


def test_inference_mode_is_not_eval():
    (d,) = ql201(
        """
        def quantize(quantizer, x):
            model = torch.nn.Dropout(0.5)
            with torch.inference_mode():
                gm = export(model, (x,)).module()
            prepare_pt2e(gm, quantizer)
        """
    )
    assert "`inference_mode()` only turns off autograd" in d.help


def test_eval_on_one_branch_only():
    (d,) = ql201(
        """
        def quantize(model, quantizer, x, calibrated):
            if calibrated:
                model.eval()
            prepare_pt2e(export(model, (x,)).module(), quantizer)
        """
    )
    assert "`model.eval()` at line 7 runs on some paths only" in d.message


def test_the_call_of_a_capturing_helper_is_reported_with_the_inner_capture_related():
    (d,) = ql201(
        """
        def capture(model, x):
            return export(model, (x,)).module()

        def main(quantizer, x):
            model = torch.nn.Dropout()
            prepare_pt2e(capture(model, x), quantizer)
        """
    )
    assert d.range.start.row == 10 and d.evidence["api"] == "torch.export.export"
    assert d.related[0].message == "the helper captures the model here" and d.related[0].range.start.row == 6


def test_callers_in_the_module_decide_for_a_parameter():
    src = """
    def quantize(model, quantizer, x):
        prepare_pt2e(export(model, (x,)).module(), quantizer)

    def main(quantizer, x):
        quantize(torch.nn.Dropout(0.5).eval(), quantizer, x)
        quantize(torch.nn.Dropout(0.5), quantizer, x)
    """
    (d,) = ql201(src)
    assert "the call at line 10 passes it built at line 10, and modules start in train mode" in d.message
    assert ql201(src.replace("quantize(torch.nn.Dropout(0.5), quantizer, x)", "pass")) == []
    # A train-mode caller whose model has no mode-dependent part harms nothing either.
    assert ql201(src.replace("quantize(torch.nn.Dropout(0.5), q", "quantize(torch.nn.Linear(3, 3), q")) == []


def test_qat_only_train_in_a_stage_that_does_both():
    (d,) = ql201(
        """
        def run(artifact, recipe, quantizer, x):
            for name, model in artifact.data.items():
                if recipe.is_qat:
                    model.train()
                gm = export(model, (x,)).module()
                if recipe.is_qat:
                    prepared = prepare_qat_pt2e(gm, quantizer)
                else:
                    prepared = prepare_pt2e(gm, quantizer)
        """
    )
    assert "as a loop item of parameter `artifact`" in d.message
    assert "`model.train()` at line 8 runs for QAT only" in d.message
    assert d.fix is None  # one capture feeds both flows: no single mode is right


def test_executorch_export_with_a_ptq_recipe():
    head = "import torch\nfrom executorch.export import ExportRecipe, QuantizationRecipe, export\n"
    (d,) = ql201(
        """
        def lower(quantizer, inputs):
            model = torch.nn.Dropout()
            recipe = ExportRecipe(quantization_recipe=QuantizationRecipe(quantizers=[quantizer]))
            return export(model, inputs, export_recipe=recipe)
        """,
        head=head,
    )
    assert d.evidence["api"] == "executorch.export.export"
    assert "quantized with this recipe by ExecuTorch's QuantizeStage" in d.related[0].message


# -- quiet ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "src",
    [
        # eval in the same function
        """
        def quantize(model, quantizer, x):
            model.eval()
            gm = export(model, (x,)).module()
            return convert_pt2e(prepare_pt2e(gm, quantizer))
        """,
        # eval inline, also on a fresh module
        """
        def quantize(model, quantizer, x):
            prepare_pt2e(export(model.eval(), (x,)).module(), quantizer)
            prepare_pt2e(export(torch.nn.Linear(2, 2).eval(), (x,)).module(), quantizer)
        """,
        # `model = model.eval()`, then other self-returning calls
        """
        def quantize(model, quantizer, x):
            model = model.eval().to("cpu")
            prepare_pt2e(export(model, (x,)).module(), quantizer)
        """,
        # train(False) and eval on both branches
        """
        def quantize(model, quantizer, x, flag):
            if flag:
                model.train(False)
            else:
                model.eval()
            prepare_pt2e(export(model, (x,)).module(), quantizer)
        """,
        # from_pretrained returns eval mode
        """
        from transformers import AutoModelForCausalLM

        def quantize(quantizer, x):
            model = AutoModelForCausalLM.from_pretrained("m")
            prepare_pt2e(export(model, (x,)).module(), quantizer)
        """,
        # QAT flow in train mode
        """
        def quantize(quantizer, x):
            model = torch.nn.Linear(2, 2)
            model.train()
            prepare_qat_pt2e(export(model, (x,)).module(), quantizer)
        """,
        # a model whose mode this function cannot know: a factory of another package
        """
        from models import load_model

        def quantize(quantizer, x):
            model = load_model()
            prepare_pt2e(export(model, (x,)).module(), quantizer)
        """,
        # capture that never reaches prepare_pt2e
        """
        def save(model, x):
            torch.export.save(export(model, (x,)), "m.pt2")
        """,
        # a same-module helper puts the model in eval mode
        """
        def build():
            model = torch.nn.Linear(2, 2)
            model.eval()
            return model

        def quantize(quantizer, x):
            prepare_pt2e(export(build(), (x,)).module(), quantizer)
        """,
        # every caller passes an eval-mode model
        """
        def quantize(model, quantizer, x):
            prepare_pt2e(export(model, (x,)).module(), quantizer)

        def main(quantizer, x):
            quantize(torch.nn.Linear(2, 2).eval(), quantizer, x)
        """,
        # a QAT quantizer through prepare_pt2e simulates QAT on purpose
        """
        from backend import FusedQuantizer

        def simulate(model, x):
            model.train()
            prepare_pt2e(export(model, (x,)).module(), FusedQuantizer(is_qat=True))
        """,
    ],
)
def test_quiet(src):
    assert ql201(src) == []


def test_the_trigger_keeps_other_files_unparsed():
    from qlint.rules.ql201_ptq_capture_without_eval import PtqCaptureWithoutEval

    rule = PtqCaptureWithoutEval()
    assert not rule.triggered_by("import torch\nmodel.eval()\ntorch.export.export(model, x)\n")
    assert rule.triggered_by("from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\n")


# -- fixes ---------------------------------------------------------------------------------
def test_fix_inserts_eval_on_its_own_line_with_the_statement_indentation():
    src = """
    def quantize(quantizer, x):
        model = torch.nn.Dropout()
        if x is not None:
            # capture
            ep = export(model, (x,))  # keep me
        return prepare_pt2e(ep.module(), quantizer)
    """
    assert fixed(src) == textwrap.dedent(
        """
        def quantize(quantizer, x):
            model = torch.nn.Dropout()
            if x is not None:
                # capture
                model.eval()
                ep = export(model, (x,))  # keep me
            return prepare_pt2e(ep.module(), quantizer)
        """
    )


def test_fix_is_idempotent_and_reparses():
    src = """
    def quantize(model, quantizer, x):
        prepare_pt2e(export(model, (x,)).module(), quantizer)
    """
    once = fixed(src, unsafe=True)  # the caller's model: unsafe
    assert "    model.eval()\n    prepare_pt2e(" in once
    assert fixed(once, unsafe=True) == once
    assert ql201(once) == []


def test_attribute_fix_is_unsafe():
    src = """
    class Exporter:
        def __init__(self):
            self.model = torch.nn.BatchNorm1d(3)

        def run(self, quantizer, x):
            prepare_pt2e(export(self.model, (x,)).module(), quantizer)
    """
    (d,) = ql201(src)
    assert d.fix.applicability is Applicability.UNSAFE
    assert fixed(src) == textwrap.dedent(src)
    assert "        self.model.eval()\n        prepare_pt2e(" in fixed(src, unsafe=True)


def test_call_fix_goes_on_the_argument_and_inline_train_flips():
    src = """
    def quantize(model, quantizer, x):
        prepare_pt2e(export(torch.nn.Dropout(), (x,)).module(), quantizer)
        prepare_pt2e(export(model.train(), (x,)).module(), quantizer)
    """
    out = fixed(src, unsafe=True)
    assert "export(torch.nn.Dropout().eval(), (x,))" in out
    assert "export(model.eval(), (x,))" in out


def test_fix_on_a_compound_line_and_in_an_elif():
    src = """
    def quantize(model, quantizer, x, fast):
        if fast: gm = prepare_pt2e(export(model, (x,)).module(), quantizer)
        elif prepare_pt2e(export(model, (x,)).module(), quantizer):
            pass
    """
    out = fixed(src, unsafe=True)
    assert "if fast: model.eval(); gm = prepare_pt2e(export(model, (x,)).module(), quantizer)" in out
    assert "elif prepare_pt2e(export(model.eval(), (x,)).module(), quantizer):" in out


def test_ql201_and_ql101_fixes_apply_in_one_run():
    src = """
    def is_relu(node):
        return node.target == torch.ops.aten.relu

    def quantize(quantizer, x):
        model = torch.nn.Dropout()
        return prepare_pt2e(export(model, (x,)).module(), quantizer)
    """
    head_and_src = HEAD + textwrap.dedent(src)
    assert sorted(codes(lint(head_and_src))) == ["QL101", "QL201"]
    out = fix(head_and_src, unsafe=False)
    assert "node.target == torch.ops.aten.relu.default" in out
    assert "    model.eval()\n    return prepare_pt2e(" in out
    assert lint(out) == []


def test_no_fix_for_a_model_holding_an_exported_submodule():
    # `model.eval()` recurses into the exported GraphModule, which raises on torch 2.13.
    (d,) = ql201(
        """
        def requantize(quantizer, x):
            model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Dropout())
            model[0] = export(model[0], (x,)).module()
            model.block = export(torch.nn.Linear(3, 3).eval(), (x,)).module()
            prepare_pt2e(export(model, (x,)).module(), quantizer)
        """
    )
    assert d.fix is None


def test_a_caller_that_leaves_the_mode_to_a_flag_does_not_silence_the_helper():
    # Issue 14 item 7: `.train(training)` vouches for nothing; the helper is judged as if its
    # callers were unknown.
    src = """
    def quantize(model, quantizer, x):
        prepare_pt2e(export(model, (x,)).module(), quantizer)

    def main(quantizer, x, training):
        model = torch.nn.Linear(2, 2).eval()
        model.train(training)
        quantize(model, quantizer, x)
    """
    (d,) = ql201(src)
    assert d.range.start.row == 6
    assert "without `eval()` (as parameter `model`, in whatever mode the caller left it)" in d.message
    # One classifiable caller beside it is named as well.
    (d,) = ql201(src + "    quantize(torch.nn.Linear(2, 2), quantizer, x)\n")
    assert "passes it built at line" in d.message
    assert "as parameter `model`, in whatever mode the caller left it" in d.message


def test_a_helper_called_here_with_a_model_qlint_cannot_follow_is_quiet():
    # ExecuTorch's Arm super-resolution example: `bundle.model` is `from_pretrained(...).eval()`
    # in another module; MediaTek's chunks come from `load_weights()`, which ends in `self.eval()`.
    src = """
    def quantize(model, quantizer, x):
        prepare_pt2e(export(model, (x,)).module(), quantizer)

    def main(quantizer, x, state):
        from assets import create_bundle

        bundle = create_bundle()
        quantize(bundle.models["fp32"], quantizer, x)
        models = []
        for i in range(2):
            models.append(make_chunk(i).load_weights(state))
        for chunk in models:
            quantize(chunk, quantizer, x)
    """
    assert ql201(src) == []


@pytest.mark.parametrize(
    "call",
    [
        'quantize(bundle.models["fp32"].eval(), quantizer, x)',  # eval on the item itself
        # a graph of an eval-mode capture, re-exported by the helper (ExecuTorch's Arm Cortex-M path)
        "model = load().eval()\n    quantize(export(model, (x,)).module(), quantizer, x)",
        "quantize(load().eval(), quantizer, x)",
        "model = load()\n    model.eval()\n    quantize(model, quantizer, x)",
    ],
)
def test_callers_that_all_pass_an_eval_mode_model_keep_the_helper_quiet(call):
    src = f"""
def quantize(model, quantizer, x):
    prepare_pt2e(export(model, (x,)).module(), quantizer)

def main(quantizer, x, bundle):
    from assets import load

    {call}
    quantize(torch.nn.Linear(2, 2).eval(), quantizer, x)
"""
    assert lint(HEAD + src, select=("QL201",)) == []


# -- fix safety: whose object `.eval()` changes ---------------------------------------------
def _fix_of(src: str):
    (d,) = ql201(src)
    return d.fix


def test_fix_on_a_parameter_is_unsafe_the_callers_model_changes():
    src = """
    def quantize(model, quantizer, x):
        ep = export(model, (x,))
        return convert_pt2e(prepare_pt2e(ep.module(), quantizer))
    """
    fix = _fix_of(src)
    assert fix.applicability is Applicability.UNSAFE and fix.message == "Call `model.eval()` before the capture"
    assert fixed(src) == textwrap.dedent(src)  # not applied without --unsafe-fixes
    assert "    model.eval()\n    ep = export(model" in fixed(src, unsafe=True)


def test_fix_on_a_parameter_put_in_train_mode_here_is_still_unsafe():
    fix = _fix_of(
        """
        def quantize(model, quantizer, x):
            model.train()
            return prepare_pt2e(export(model, (x,)).module(), quantizer)
        """
    )
    assert fix.applicability is Applicability.UNSAFE


@pytest.mark.parametrize(
    "build",
    [
        "torch.nn.Sequential(torch.nn.Conv2d(3, 3, 3), torch.nn.BatchNorm2d(3))",
        "Net()",
        "Net(channels=3)",
    ],
)
def test_fix_on_a_model_built_here_from_a_known_class_is_safe(build):
    fix = _fix_of(
        f"""
        class Net(torch.nn.Module):
            def __init__(self, channels=3):
                super().__init__()
                self.drop = torch.nn.Dropout()

        def quantize(quantizer, x):
            model = {build}
            return prepare_pt2e(export(model, (x,)).module(), quantizer)
        """
    )
    assert fix.applicability is Applicability.SAFE


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("model = torch.nn.Sequential(backbone)", "wraps the caller's module"),
        ("model = Net(backbone=backbone)", "wraps the caller's module"),
        ("model = build()", "a helper's result may be shared"),
    ],
)
def test_fix_on_a_model_that_is_not_only_ours_is_unsafe(body, why):
    fix = _fix_of(
        f"""
        class Net(torch.nn.Module):
            def __init__(self, backbone=None):
                super().__init__()
                self.backbone = backbone

        def build():
            return torch.nn.Dropout()

        def quantize(backbone, quantizer, x):
            {body}
            return prepare_pt2e(export(model, (x,)).module(), quantizer)
        """
    )
    assert fix.applicability is Applicability.UNSAFE, why


def test_re_export_of_a_graph_module_uses_move_exported_model_to_eval():
    # `.eval()` on the GraphModule of `ep.module()` raises NotImplementedError on torch 2.13.
    src = """
    def quantize(quantizer, x):
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 3, 3))
        model.eval()
        gm = export(model, (x,)).module()
        gm.train()
        ep = export(gm, (x,))
        return convert_pt2e(prepare_pt2e(ep.module(), quantizer))
    """
    (d,) = ql201(src)
    assert "call `move_exported_model_to_eval(gm)` before capturing" in d.help
    assert d.fix.applicability is Applicability.SAFE
    assert d.fix.message == "Call `move_exported_model_to_eval(gm)` before the capture"
    out = fixed(src, select=("QL201",))
    assert "    gm.train()\n    move_exported_model_to_eval(gm)\n    ep = export(gm, (x,))" in out
    assert ".eval()" not in out.split("gm = export")[1]
    full = HEAD + out
    assert "from torchao.quantization.pt2e import move_exported_model_to_eval\n" in full or (
        "move_exported_model_to_eval" in full.split("def quantize")[0]
    )
    assert ql201(out) == []


def test_the_rule_pages_example_fix_is_unsafe_as_the_page_says():
    from tests.test_rule_pages import python_block, sections

    sec = sections("QL201")
    (d,) = lint(python_block(sec["Example"]), select=("QL201",))
    assert d.fix.applicability is Applicability.UNSAFE
    assert "A parameter (the Example above): **unsafe**" in sec["Fix safety"]
    page = (Path(__file__).resolve().parents[1] / "qlint" / "rule_pages" / "QL201.md").read_text()
    assert page == (Path(__file__).resolve().parents[1] / "rules" / "QL201.md").read_text()
