"""QL202 through a caller that evals the model and forwards the QAT flag it is given
(`def run(model, is_qat): model.eval(); quant(model, is_qat)`): the calls above it decide the
flag (`call_paths._taken_above`). Reported at the helper's capture, naming both calls; quiet
when every call above rules the QAT branch out or nothing calls the forwarding caller."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import lint

HEAD = """\
import torch
from torch.export import export
from torchao.quantization.pt2e import move_exported_model_to_eval
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 3)
        self.bn = torch.nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(self.conv(x))


def quant(model, q, x, is_qat):
    gm = export(model, (x,)).module()
    if is_qat:
        return prepare_qat_pt2e(gm, q)
    return prepare_pt2e(gm, q)


def run(model, q, x, is_qat):
    model.eval()
    return quant(model, q, x, is_qat)


def relay(model, q, x, qat=False):
    return run(model, q, x, is_qat=qat)

"""  # `quant`'s capture on line 18, `run`'s call of it on line 26; the snippets start on line 32
CAPTURE_ROW = 18


def ql202(src: str, tmp_path):
    root = tmp_path / f"repo{len(list(tmp_path.iterdir()))}"
    (root / ".git").mkdir(parents=True)
    return lint(HEAD + textwrap.dedent(src), path=str(root / "h.py"), select=("QL202",))


def test_a_forwarded_flag_set_by_the_call_above(tmp_path):
    (d,) = ql202(
        """
        def main(q, x):
            run(Net(), q, x, True)
            run(Net(), q, x, is_qat=False)
        """,
        tmp_path,
    )
    assert d.range.start.row == CAPTURE_ROW
    assert "the call at line 26 passes it after `model.eval()` at line 25" in d.message
    assert "the call at line 34 takes the QAT branch" in d.message


def test_a_flag_forwarded_through_two_levels(tmp_path):
    (d,) = ql202("\ndef main(q, x):\n    relay(Net(), q, x, qat=True)\n", tmp_path)
    assert d.range.start.row == CAPTURE_ROW and "the call at line 34 takes the QAT branch" in d.message


@pytest.mark.parametrize(
    "src",
    [
        # every call above rules the QAT branch out, by its argument or the default it leaves
        "\ndef main(q, x):\n    run(Net(), q, x, False)\n    relay(Net(), q, x)\n    relay(Net(), q, x, qat=False)\n",
        # nothing calls the forwarding caller
        "\ndef main(q, x):\n    pass\n",
    ],
)
def test_quiet_forwarded_flags(src, tmp_path):
    assert ql202(src, tmp_path) == []


# torchao's `_generate_ref_quantized_model`: QAT or PTQ in one expression, calibrated once, moved
# to eval and converted. The QAT graph is only rebuilt to convert (never trained): eval mode is
# right there, whether the flag comes from the call or from a call above it.
REFERENCE = """
def reference(model, q, x, is_qat=False):
    gm = export(model, (x,)).module()
    prepared = prepare_qat_pt2e(gm, q) if is_qat else prepare_pt2e(gm, q)
    prepared(x)
    move_exported_model_to_eval(prepared)
    return convert_pt2e(prepared)


def run_reference(model, q, x, is_qat):
    model.eval()
    return reference(model, q, x, is_qat)


def main(q, x):
    run_reference(Net(), q, x, True)
    reference(Net().eval(), q, x, is_qat=True)
"""


def test_a_qat_graph_chosen_in_one_expression_and_only_rebuilt_to_convert_is_quiet(tmp_path):
    assert ql202(REFERENCE, tmp_path) == []
    trained = REFERENCE.replace(
        "    move_exported_model_to_eval(prepared)\n    return convert_pt2e(prepared)", "    return prepared"
    )
    assert [d.range.start.row for d in ql202(trained, tmp_path)] == [34]
