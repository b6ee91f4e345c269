"""QL201: a helper whose one train-mode caller passes a model holding a part from a library
qlint cannot read (issue 14, items 1, 6, 7).

ExecuTorch's Cadence examples (`backends/cadence/aot/export_example.py` at 2024-06,
`compiler.py`'s `convert_pt2` in early 2025, reached through `export_model`) hand their models
to a helper that captures its parameter for PTQ. Every caller but one evals first or passes a
model whose content is known and mode-free; the RNNT encoder example passes, in train mode, a
class it defines inside its function around torchaudio's `ConvEmformer`, built with dropout 0.0.
torchaudio is not installed here, so what that part holds cannot be read: the caller cannot be
classified, and it must not silence the helper (item 7), even though the part is harmless at
run time. The same class without the library part is read in full (a class defined in the
function, item 1) and vouches; with a dropout that drops, it is reported.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import check_file, package_repository, rows_of

HELPER = """\
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def export_model(model, inputs, quantizer):
    captured = export(model, inputs).module()
    prepared = prepare_pt2e(captured, quantizer)
    prepared(*inputs)
    return convert_pt2e(prepared)
"""
CAPTURE_ROW = HELPER.splitlines().index("    captured = export(model, inputs).module()") + 1

# A caller that evals its model with batch norm first.
EVALED = """\
import torch

from pkg.helper import export_model


class ConvBn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(4, 4, 3)
        self.bn = torch.nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn(self.conv(x))


def main(q, x):
    model = ConvBn()
    model.eval()
    export_model(model, (x,), q)
"""

# The encoder example: classes defined in the function, the model left in train mode.
ENCODER = """\
import torch
from torchaudio.prototype.models import ConvEmformer

from pkg.helper import export_model


def main(q, x):
    class Reduce(torch.nn.Module):
        def forward(self, x):
            return x[:, ::4]

    class Encoder(torch.nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.reduce = Reduce()
            self.linear = torch.nn.Linear(dim, dim)
{part}
            self.norm = torch.nn.LayerNorm(dim)

        def forward(self, x):
            return self.norm({body})

    encoder = Encoder(8)
    export_model(encoder, (x,), q)
"""
PARTS = {
    "library": (
        "            self.transformer = ConvEmformer(dim, 2, 16, 1, 4, dropout=0.0)",
        "self.transformer(self.linear(self.reduce(x)))[0]",
    ),
    "dropping": ("            self.drop = torch.nn.Dropout(0.1)", "self.drop(self.linear(self.reduce(x)))"),
    "plain": ("", "self.linear(self.reduce(x))"),
    "dropout_zero": ("            self.drop = torch.nn.Dropout(0.0)", "self.drop(self.linear(self.reduce(x)))"),
}

# `convert_pt2`'s shape: the examples call a function of another module that hands its
# parameter on to the capturing helper.
RELAY = """\
from pkg.helper import export_model


def export_and_run(model, inputs, quantizer):
    return export_model(model, inputs, quantizer)
"""


def _encoder(part: str, relay: bool = False) -> str:
    line, body = PARTS[part]
    text = ENCODER.replace("{part}\n", f"{line}\n" if line else "").replace("{body}", body)
    if relay:
        text = text.replace("pkg.helper import export_model", "pkg.relay import export_and_run")
        text = text.replace("export_model(encoder", "export_and_run(encoder")
    return text


def _rows(tmp_path: Path, **modules: str) -> list[int]:
    root = package_repository(tmp_path / "repo", helper=HELPER, evaled=EVALED, **modules)
    return rows_of(check_file(root / "pkg" / "helper.py", ("QL201",)).diagnostics)


@pytest.mark.parametrize("part", ["library", "dropping"])
def test_one_caller_the_analysis_cannot_clear_keeps_the_finding(tmp_path, part):
    assert _rows(tmp_path, encoder=_encoder(part)) == [CAPTURE_ROW]


@pytest.mark.parametrize("part", ["plain", "dropout_zero"])
def test_a_class_defined_in_the_caller_read_in_full_vouches(tmp_path, part):
    assert _rows(tmp_path, encoder=_encoder(part)) == []


def test_the_caller_reached_through_a_relay_decides_the_same(tmp_path):
    assert _rows(tmp_path / "library", relay=RELAY, encoder=_encoder("library", relay=True)) == [CAPTURE_ROW]
    assert _rows(tmp_path / "plain", relay=RELAY, encoder=_encoder("plain", relay=True)) == []
