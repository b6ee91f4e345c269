"""QL402 and QL103 on the real pipeline (worker side; imports torch and torchao, never user code).

QL402: resolve the removed name on the installed torch (confirmed when it does not resolve),
then run the reference model through the replacement (`torch.export.export(...)`, plus
`.module()`) → `prepare_pt2e` (XNNPACK quantizer) → calibration → `convert_pt2e`. The fix is
verified when the replacement gives a GraphModule that prepare_pt2e accepts and the converted
model tracks the float model.

QL103: convert reference models with `fold_quantize=True` (the default) and `False`, and
count quantize nodes fed by a weight and dequantize nodes fed by an int8 constant. Confirmed
when the default leaves no quantize node on a weight while `fold_quantize=False` keeps them.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from qlint.runtime import pipelines
from qlint.runtime.checks.imports import resolve

_CLOSE = 0.5  # max error against the float model a converted int8 model stays under here


class _Linear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 8)

    def forward(self, x):
        return torch.relu(self.fc(x))


def _quantizer():
    from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config

    return XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))


def _convert(graph: torch.fx.GraphModule, calibration, fold: bool | None) -> torch.fx.GraphModule:
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    prepared = prepare_pt2e(graph, _quantizer())
    with torch.no_grad():
        for batch in calibration:
            prepared(*batch)
    with pipelines.skip_impossible_conv_bn_search():
        return convert_pt2e(prepared) if fold is None else convert_pt2e(prepared, fold_quantize=fold)


def _qdq_count(gm: torch.fx.GraphModule) -> int:
    return sum(1 for n in gm.graph.nodes if n.op == "call_function" and "quantize" in str(n.target))


# -- QL402 -------------------------------------------------------------------------------------
def check_removed_api(params: dict[str, Any]) -> dict[str, Any]:
    evidence = params.get("evidence") or {}
    api = evidence.get("api")
    if not api:
        return {"verdict": "skipped", "evidence": "the finding names no API", "fix_verified": None}
    _, error = resolve(api)
    parts = [f"`{api}` does not resolve ({error})" if error else f"`{api}` still resolves on the installed torch"]
    (subject,) = pipelines.reference_subjects()[:1]
    module_call = evidence.get("returns") == "GraphModule"
    replacement = "torch.export.export(model, args)" + (".module()" if module_call else "")
    ok = False
    try:
        result = torch.export.export(subject.model.eval(), subject.calibration[0])
        graph = result.module() if module_call else result
        if not module_call:
            # export_for_training's callers add `.module()` themselves; what they get is the same.
            kind = type(graph).__name__
            graph = graph.module()
            parts.append(f"`{replacement}` gave an {kind}; its `.module()` a {type(graph).__name__}")
        else:
            parts.append(f"`{replacement}` gave a {type(graph).__name__}")
        converted = _convert(graph, subject.calibration, None)
        with torch.no_grad():
            err = pipelines.max_error(converted(*subject.test), pipelines.float_reference(subject))
        ok = isinstance(graph, torch.fx.GraphModule) and err < _CLOSE
        parts.append(
            f"prepare_pt2e (XNNPACK) → {len(subject.calibration)} calibration batches → convert_pt2e: "
            f"{_qdq_count(converted)} quantize/dequantize nodes, max error {err:.3g} against the float model"
        )
    except Exception as exc:  # the replacement failing is the finding's news, not a crash
        parts.append(f"the replacement failed: {type(exc).__name__}: {exc}")
    verify = bool(params.get("verify_fix") and params.get("fix") and params["fix"].get("edits"))
    return {
        "verdict": "confirmed" if error else "refuted",
        "evidence": "; ".join(parts),
        "fix_verified": ok if verify else None,
    }


# -- QL103 -------------------------------------------------------------------------------------
def _weight_counts(gm: torch.fx.GraphModule) -> tuple[int, int]:
    """(quantize nodes fed by a weight, dequantize nodes fed by an int8 constant)."""
    on_weight = on_constant = 0
    for node in gm.graph.nodes:
        if node.op != "call_function" or not node.args or not isinstance(node.args[0], torch.fx.Node):
            continue
        source, name = node.args[0], str(node.target)
        if source.op != "get_attr":
            continue
        value = getattr(gm, str(source.target), None)
        if "dequantize" in name:
            if isinstance(value, torch.Tensor) and value.dtype == torch.int8:
                on_constant += 1
        elif "quantize" in name:
            on_weight += 1
    return on_weight, on_constant


def check_weight_fold(params: dict[str, Any]) -> dict[str, Any]:
    subjects = [pipelines.reference_subjects()[0]]
    torch.manual_seed(0)
    linear = _Linear().eval()
    gen = torch.Generator().manual_seed(1)
    batches = [(torch.randn(4, 16, generator=gen),) for _ in range(pipelines.CALIBRATION_BATCHES)]
    subjects.append(pipelines.Subject("Linear", linear, batches, batches[0]))
    counts = {True: [0, 0], False: [0, 0]}
    for subject in subjects:
        for fold in (True, False):
            graph = torch.export.export(subject.model.eval(), subject.calibration[0]).module()
            on_weight, on_constant = _weight_counts(_convert(graph, subject.calibration, None if fold else False))
            counts[fold][0] += on_weight
            counts[fold][1] += on_constant
    (fw, fc), (uw, uc) = counts[True], counts[False]
    text = (
        f"convert_pt2e(fold_quantize=True): {fw} quantize nodes on a weight, {fc} dequantize nodes on an int8 "
        f"constant; fold_quantize=False: {uw} quantize nodes on a weight, {uc} dequantize nodes on an int8 "
        f"constant ({', '.join(s.label for s in subjects)}; XNNPACK per-channel)"
    )
    confirmed = fw == 0 and uw > 0
    return {"verdict": "confirmed" if confirmed else "refuted", "evidence": text, "fix_verified": None}


def run(params: dict[str, Any]) -> dict[str, Any]:
    if params.get("code") == "QL103":
        return check_weight_fold(params)
    return check_removed_api(params)
