"""PT2E pipelines on reference models where the capture mode matters (worker side).

`ptq` runs capture → `prepare_pt2e` (XNNPACK quantizer) → calibration → `convert_pt2e`, either
with `torch.export.export` or through ExecuTorch's own `QuantizeStage`; `qat` runs capture →
`prepare_qat_pt2e` → a few SGD steps. Each reports what the capture mode changed: batch-norm
running statistics that moved, activations dropout zeroed, and the converted model's outputs.

Reference models: Conv→ReLU→BN (a batch norm that calibration can corrupt) and Conv→Dropout
(a dropout that calibration can apply), with batch-norm statistics "trained" on data of
another distribution than the calibration data, as a real model's are.

On batch norm: `convert_pt2e` and `prepare_qat_pt2e` search graphs that hold a batch norm
for conv→bn patterns, exporting ~100 pattern graphs with strict `torch.export` (about 0.3 to 1 s
each on CPU). Where no convolution feeds a batch norm no pattern can match, so
`skip_impossible_conv_bn_search` skips that search for such graphs only; a graph with a
conv→bn pair (a user's model) runs the real search unchanged.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import sys
from dataclasses import dataclass

import torch
from torch import nn

_SEED = 0
CALIBRATION_BATCHES = 8


class ConvReluBn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.relu = nn.ReLU()
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x):
        return self.bn(self.relu(self.conv(x)))


class ConvDropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.dropout = nn.Dropout(0.5)

    def forward(self, x):
        return self.dropout(self.conv(x))


@dataclass
class Subject:
    """A model to run the pipelines on, with its calibration and test inputs."""

    label: str
    model: nn.Module
    calibration: list[tuple]
    test: tuple


def _batches(shape: tuple[int, ...], count: int, seed: int) -> list[tuple]:
    gen = torch.Generator().manual_seed(seed)
    return [(torch.randn(*shape, generator=gen),) for _ in range(count)]


def reference_subjects() -> list[Subject]:
    subjects = []
    for label, cls in (("Conv→ReLU→BN", ConvReluBn), ("Conv→Dropout", ConvDropout)):
        torch.manual_seed(_SEED)
        model = cls().train()
        with torch.no_grad():  # "trained" statistics: another distribution than calibration's
            for (x,) in _batches((8, 3, 16, 16), 20, _SEED + 1):
                model(x * 2 + 1)
        calibration = _batches((4, 3, 16, 16), CALIBRATION_BATCHES, _SEED + 2)
        subjects.append(Subject(label, model.eval(), calibration, _batches((4, 3, 16, 16), 1, _SEED + 3)[0]))
    return subjects


def user_subjects(specs: list[str], root: str | None) -> list[Subject | str]:
    """Opt-in `[tool.qlint.runtime] models`: "pkg.mod:factory" returning (model, example_inputs).

    This imports and runs the user's code. A factory that fails is reported by its message."""
    if root and root not in sys.path:
        sys.path.insert(0, root)
    out: list[Subject | str] = []
    for spec in specs:
        module_name, _, attr = spec.partition(":")
        try:
            model, inputs = getattr(importlib.import_module(module_name), attr or "model")()
            inputs = tuple(inputs)
            torch.manual_seed(_SEED)  # calibration: the example inputs and slightly perturbed copies
            calibration = [inputs] + [
                tuple(t + 0.05 * torch.randn_like(t) if t.is_floating_point() else t for t in inputs)
                for _ in range(CALIBRATION_BATCHES - 1)
            ]
            out.append(Subject(spec, model, calibration, inputs))
        except Exception as exc:
            out.append(f"{spec}: the factory failed ({type(exc).__name__}: {exc})")
    return out


def _conv_feeds_bn(model: torch.fx.GraphModule) -> bool:
    from torchao.quantization.pt2e.utils import _is_bn_node, _is_conv_or_conv_transpose_node

    for node in model.graph.nodes:
        if node.op != "call_function" or not _is_bn_node(node):
            continue
        source = node.args[0]
        for _ in range(4):  # through observers and q/dq nodes, which sit between conv and bn
            if not isinstance(source, torch.fx.Node):
                break
            if _is_conv_or_conv_transpose_node(source):
                return True
            if source.op != "call_module" and "quantize" not in str(source.target):
                break
            source = source.args[0]
    return False


@contextlib.contextmanager
def skip_impossible_conv_bn_search():
    from torchao.quantization.pt2e import qat_utils

    originals = (qat_utils._fold_conv_bn_qat_helper, qat_utils._fuse_conv_bn_qat_helper)

    def guarded(helper):
        def run(model, *args, **kwargs):
            return helper(model, *args, **kwargs) if _conv_feeds_bn(model) else model

        return run

    qat_utils._fold_conv_bn_qat_helper, qat_utils._fuse_conv_bn_qat_helper = map(guarded, originals)
    try:
        yield
    finally:
        qat_utils._fold_conv_bn_qat_helper, qat_utils._fuse_conv_bn_qat_helper = originals


def _bn_stats(model: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in model.named_buffers() if k.endswith(("running_mean", "running_var"))}


def _moved(before: dict[str, torch.Tensor], model: nn.Module) -> bool:
    after = dict(model.named_buffers())
    return any(not torch.equal(v, after[k]) for k, v in before.items() if k in after)


def _with_mode(model: nn.Module, mode: str) -> nn.Module:
    model = copy.deepcopy(model)
    return model.eval() if mode == "eval" else model.train()


@dataclass
class PtqRun:
    converted: torch.fx.GraphModule
    bn_moved: bool  # running statistics changed during calibration


def ptq(subject: Subject, mode: str, seed: int, via: str = "torch.export") -> PtqRun:
    """Capture `subject.model` in `mode`, quantize it with the XNNPACK quantizer, calibrate."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config

    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    model = _with_mode(subject.model, mode)
    torch.manual_seed(seed)
    if via == "executorch":
        return _ptq_executorch(model, subject, quantizer)
    # `mode` is what the check compares: train mode here is the finding being reproduced.
    captured = torch.export.export(model, subject.calibration[0]).module()  # noqa: QL201
    prepared = prepare_pt2e(captured, quantizer)
    before = _bn_stats(prepared)
    with torch.no_grad():
        for batch in subject.calibration:
            prepared(*batch)
    moved = _moved(before, prepared)
    with skip_impossible_conv_bn_search():
        return PtqRun(convert_pt2e(prepared), moved)


def _ptq_executorch(model: nn.Module, subject: Subject, quantizer) -> PtqRun:
    """ExecuTorch's own QuantizeStage (it captures without `eval()` for PTQ up to 1.5.1)."""
    from executorch.export.recipe import QuantizationRecipe
    from executorch.export.stages import PipelineArtifact, QuantizeStage

    stats: dict[str, dict[str, torch.Tensor]] = {}

    def remember(prepared):  # a post-prepare pass: the statistics before calibration
        stats["before"] = _bn_stats(prepared)
        stats["model"] = prepared
        return prepared

    recipe = QuantizationRecipe(
        quantizers=[quantizer],
        calibration_inputs_fn=lambda: subject.calibration,
        post_prepare_passes=[remember],
    )
    stage = QuantizeStage(recipe)
    context = {"example_inputs": {"forward": [subject.calibration[0]]}}
    with skip_impossible_conv_bn_search(), torch.no_grad():
        stage.run(PipelineArtifact(data={"forward": model}, context=context))
    converted = stage.get_artifacts().data["forward"]
    return PtqRun(converted, _moved(stats["before"], stats["model"]))


def conv_annotating_quantizer():
    """XNNPACK's QAT fake-quant specs on every conv, without the XNNPACK quantizer's own
    conv-bn annotation, which exports a dozen pattern graphs per call."""
    from torchao.quantization.pt2e.quantizer import QuantizationAnnotation, Quantizer
    from torchao.testing.pt2e._xnnpack_quantizer import get_symmetric_quantization_config

    config = get_symmetric_quantization_config(is_qat=True)

    class ConvQuantizer(Quantizer):
        def annotate(self, model):
            for node in model.graph.nodes:
                if node.op == "call_function" and node.target == torch.ops.aten.conv2d.default:
                    node.meta["quantization_annotation"] = QuantizationAnnotation(
                        input_qspec_map={node.args[0]: config.input_activation, node.args[1]: config.weight},
                        output_qspec=config.output_activation,
                        _annotated=True,
                    )
            return model

        def validate(self, model):
            pass

    return ConvQuantizer()


@dataclass
class QatRun:
    bn_moved: bool  # running statistics changed during training
    zeroed: float  # fraction of exact zeros in the training outputs (dropout at work)


def qat(subject: Subject, mode: str, seed: int, steps: int = 4) -> QatRun:
    from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e

    model = _with_mode(subject.model, mode)
    torch.manual_seed(seed)
    captured = torch.export.export(model, subject.calibration[0]).module()
    with skip_impossible_conv_bn_search():
        prepared = prepare_qat_pt2e(captured, conv_annotating_quantizer())
    before = _bn_stats(prepared)
    optimizer = torch.optim.SGD(prepared.parameters(), lr=0.01)
    zeros = total = 0
    for batch in subject.calibration[:steps]:
        out = prepared(*batch)
        zeros += int((out == 0).sum())
        total += out.numel()
        optimizer.zero_grad()
        out.pow(2).mean().backward()
        optimizer.step()
    return QatRun(_moved(before, prepared), zeros / max(total, 1))


def float_reference(subject: Subject) -> torch.Tensor:
    with torch.no_grad():
        return _with_mode(subject.model, "eval")(*subject.test)


def max_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    return float((out - ref).abs().max())


def sqnr(out: torch.Tensor, ref: torch.Tensor) -> float:
    noise = (out - ref).pow(2).mean()
    return float("inf") if noise == 0 else float(10 * torch.log10(ref.pow(2).mean() / noise))
