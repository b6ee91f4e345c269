"""QL204: convert with and without a calibration pass, on the real PT2E pipeline (worker side).

A Conv→ReLU→Linear model (and each opt-in user model) is captured in eval mode, prepared
with the XNNPACK quantizer, and converted twice: once straight after `prepare_pt2e`, as the
flagged code does, and once after running the calibration batches, as the fix does. Both
with the static per-tensor configuration and with the dynamic per-channel one (whose
activation observers need no data; its weight observers do). Reported for each: how many
observers are still empty (min=+inf, max=-inf) at convert, the scale and zero point the
converted graph carries, and the max error against the float model.

Confirmed when the uncalibrated convert carries the default parameters (scale 1.0, zero
point 0) and its error is clearly larger than the calibrated one; refuted when convert
without data is as good as with it (what observers that need no data would give).
"""

from __future__ import annotations

import copy
import math
from typing import Any

import torch
from torch import nn

from qlint.runtime import pipelines

_WORSE = 5.0  # "uncalibrated" is broken when its error is this many times the calibrated one
_CONFIGS = {"static per-tensor": {}, "dynamic per-channel": {"is_dynamic": True, "is_per_channel": True}}


class ConvReluLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.linear = nn.Linear(8 * 14 * 14, 10)

    def forward(self, x):
        return self.linear(torch.relu(self.conv(x)).flatten(1))


def reference_subject() -> pipelines.Subject:
    torch.manual_seed(0)
    model = ConvReluLinear().eval()
    gen = torch.Generator().manual_seed(2)
    # Inputs far from the unit range, as images and activations are: defaults cannot fit them.
    batches = [(torch.randn(4, 3, 16, 16, generator=gen) * 3 + 1,) for _ in range(pipelines.CALIBRATION_BATCHES + 1)]
    return pipelines.Subject("Conv→ReLU→Linear", model, batches[:-1], batches[-1])


def _observer_state(prepared: torch.fx.GraphModule) -> tuple[int, int, int]:
    """(observers holding statistics, observers still empty, observers that keep none)."""
    filled = empty = stateless = 0
    for module in prepared.modules():
        if not type(module).__name__.endswith("Observer"):
            continue
        low = getattr(module, "min_val", None)
        if low is None:
            stateless += 1  # PlaceholderObserver of dynamic quantization: qparams at run time
        elif low.numel() == 0 or bool(torch.isinf(low).all()):
            empty += 1
        else:
            filled += 1
    return filled, empty, stateless


def _qparams(converted: torch.fx.GraphModule) -> list[tuple[float, float]]:
    """(smallest scale, its zero point) of each quantize/dequantize node with constant parameters."""
    out = []
    for node in converted.graph.nodes:
        if node.op != "call_function" or "quantize_per" not in str(node.target) or len(node.args) < 3:
            continue
        scale, zero = node.args[1], node.args[2]
        if isinstance(scale, torch.fx.Node) and scale.op == "get_attr":  # per-channel: tensors
            scale = getattr(converted, scale.target)
            zero = getattr(converted, zero.target) if isinstance(zero, torch.fx.Node) else zero
            index = int(torch.argmin(scale))
            scale, zero = float(scale[index]), float(zero[index]) if torch.is_tensor(zero) else zero
        if isinstance(scale, (int, float)):
            out.append((float(scale), float(zero)))
    return out


def _convert(subject: pipelines.Subject, config: dict, calibrate: bool) -> dict[str, Any]:
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config

    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(**config))
    captured = torch.export.export(copy.deepcopy(subject.model).eval(), subject.calibration[0]).module()
    prepared = prepare_pt2e(captured, quantizer)
    with torch.no_grad():
        for batch in subject.calibration if calibrate else ():
            prepared(*batch)
    filled, empty, stateless = _observer_state(prepared)
    with pipelines.skip_impossible_conv_bn_search():
        converted = convert_pt2e(prepared)
    with torch.no_grad():
        out = converted(*subject.test)
    params = _qparams(converted)
    return {
        "filled": filled,
        "empty": empty,
        "stateless": stateless,
        "defaults": sum(1 for s, z in params if s == 1.0 and z == 0.0),
        "qparams": len(params),
        "scales": (min((s for s, _ in params), default=math.nan), max((s for s, _ in params), default=math.nan)),
        "zeros": sorted({int(z) for _, z in params}),
        "error": pipelines.max_error(out, pipelines.float_reference(subject)),
    }


def _row(subject: pipelines.Subject, label: str, config: dict) -> tuple[str, bool]:
    bare, calibrated = _convert(subject, config, False), _convert(subject, config, True)
    low, high = calibrated["scales"]
    text = (
        f"{subject.label}, {label}: observers empty (min=+inf, max=-inf) at convert"
        f" {bare['empty']} of {bare['empty'] + bare['filled']} uncalibrated vs {calibrated['empty']} calibrated"
        + (f" ({bare['stateless']} keep no statistics)" if bare["stateless"] else "")
        + f"; quantize/dequantize nodes with scale 1.0 and zero point 0: {bare['defaults']} of {bare['qparams']}"
        f" vs {calibrated['defaults']} of {calibrated['qparams']} (calibrated scales {low:.3g} to {high:.3g},"
        f" zero points {_span(calibrated['zeros'])}); max error against the float model"
        f" {bare['error']:.3g} vs {calibrated['error']:.3g}"
    )
    return text, bare["defaults"] > 0 and bare["error"] > _WORSE * calibrated["error"] + 1e-6


def _span(values: list[int]) -> str:
    if not values:
        return "none"
    return str(values[0]) if len(values) == 1 else f"{values[0]} to {values[-1]}"


def run(params: dict[str, Any]) -> dict[str, Any]:
    subjects: list[pipelines.Subject] = [reference_subject()]
    problems: list[str] = []
    for item in pipelines.user_subjects(params.get("models") or [], params.get("root")):
        (problems if isinstance(item, str) else subjects).append(item)
    rows = [_row(s, label, config) for s in subjects for label, config in _CONFIGS.items()]
    text = (
        f"XNNPACK quantizer, torch.export.export → prepare_pt2e → convert_pt2e without calibration vs after"
        f" {pipelines.CALIBRATION_BATCHES} calibration batches: " + "; ".join(r[0] for r in rows)
    )
    if problems:
        text += ". Not run: " + "; ".join(problems)
    return {
        "verdict": "confirmed" if any(r[1] for r in rows) else "refuted",
        "evidence": text,
        # The fix is display-only (no edits): as for every unfixable finding, nothing to verify.
        # What calibrating does is in the evidence, calibrated column.
        "fix_verified": None,
        "transient": bool(params.get("models")),
    }
