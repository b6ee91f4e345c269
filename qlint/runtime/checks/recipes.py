"""QL301: decomposition in `pre_prepare_passes`, against decomposing the ExportedProgram.

Runs a reference model through ExecuTorch's own `QuantizeStage` (XNNPACK quantizer) three
ways and counts the q/dq nodes and the ops that run quantized in the converted graph:
- as written: a pre-prepare pass that decomposes the way the finding's pass does
  (`run_decompositions` with the core ATen table on a re-export, or `make_fx` with it);
- without the pass: what the quantizer would see from the capture;
- as `QuantizationRecipe.preserve_ops` does it (upstream): the capture decomposed on the
  ExportedProgram before `.module()`, keeping the ops the fix names.
The user's pass is never imported: the evidence says which kind of decomposition it runs.
"""

from __future__ import annotations

import copy
import functools
from collections import Counter
from typing import Any

import torch
from torch import nn

from qlint.evidence.decomposition import DecompositionEvidence
from qlint.runtime.ops import UnknownOp, resolve


class _ConvMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.fc1 = nn.Linear(8 * 6 * 6, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(torch.relu(self.conv(x)).flatten(1))))


def _subject() -> tuple[nn.Module, tuple]:
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    return _ConvMLP().eval(), (torch.randn(2, 3, 8, 8, generator=gen),)


def _table(keep: tuple):
    from torch._decomp import core_aten_decompositions

    table = core_aten_decompositions()
    for op in keep:
        table.pop(op, None)
    return table


def _decomposing_pass(kind: str, inputs: tuple, keep: tuple):
    """The pass as the finding describes it: it must re-export with inputs from a closure."""
    if "make_fx" in kind:
        from torch.fx.experimental.proxy_tensor import make_fx

        return lambda gm: make_fx(gm, decomposition_table=_table(keep))(*inputs)
    return lambda gm: torch.export.export(gm, inputs).run_decompositions(_table(keep)).module()


def _quantizer():
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )

    return XNNPACKQuantizer().set_global(get_symmetric_quantization_config())


def _through_stage(model: nn.Module, inputs: tuple, passes: list) -> torch.fx.GraphModule:
    from executorch.export.recipe import QuantizationRecipe
    from executorch.export.stages import PipelineArtifact, QuantizeStage

    stage = QuantizeStage(QuantizationRecipe(quantizers=[_quantizer()], pre_prepare_passes=passes))
    context = {"example_inputs": {"forward": [inputs]}}
    stage.run(PipelineArtifact(data={"forward": copy.deepcopy(model)}, context=context))
    return stage.get_artifacts().data["forward"]


def _preserving(model: nn.Module, inputs: tuple, keep: tuple) -> tuple[torch.fx.GraphModule, Counter]:
    """Upstream `preserve_ops`: core ATen table minus `keep`, on the ExportedProgram."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    decomposed = torch.export.export(copy.deepcopy(model).eval(), inputs).run_decompositions(_table(keep)).module()
    kept = Counter(str(n.target) for n in decomposed.graph.nodes if n.op == "call_function" and n.target in keep)
    prepared = prepare_pt2e(decomposed, _quantizer())
    prepared(*inputs)
    return convert_pt2e(prepared), kept


@functools.cache
def _stage_summary(kind: str | None, keep: tuple = ()) -> tuple[int, str]:
    """QuantizeStage with the decomposing pass of `kind` (None: no pass), once per process."""
    model, inputs = _subject()
    passes = [_decomposing_pass(kind, inputs, keep)] if kind else []
    return _summary(_through_stage(model, inputs, passes))


def _summary(gm: torch.fx.GraphModule) -> tuple[int, str]:
    """q/dq node count, and the ops that take a dequantized input (they run quantized)."""
    qdq, quantized = 0, Counter()
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        name = str(node.target)
        if name.startswith("quantized_decomposed."):
            qdq += 1
        elif any(isinstance(a, torch.fx.Node) and "dequantize" in str(a.target) for a in node.args):
            quantized[name.removeprefix("aten.")] += 1
    ops = ", ".join(f"{op}" + (f" x{n}" if n > 1 else "") for op, n in sorted(quantized.items())) or "none"
    return qdq, ops


def _keep_ops(spelled: tuple[str, ...] | None) -> tuple[tuple, list[str]]:
    """The fix's `preserve_ops`, spelled as written (`aten.linear.default`, `torch.ops...`)."""
    ops, unknown = [], []
    for text in spelled or []:
        parts = text.removeprefix("torch.ops.").split(".")
        try:
            if len(parts) < 3:
                raise UnknownOp(text)
            ops.append(resolve(parts[-3], parts[-2], parts[-1]))
        except UnknownOp:
            unknown.append(text)
    return tuple(ops), unknown


def run(params: dict[str, Any]) -> dict[str, Any]:
    try:
        import executorch.export  # noqa: F401
    except Exception:
        return {"verdict": "skipped", "evidence": "executorch is not installed", "fix_verified": None}
    evidence = DecompositionEvidence.from_json(params.get("evidence"))
    kind = "make_fx(decomposition_table=...)" if "make_fx" in evidence.decomposition else "run_decompositions"
    keep, unknown = _keep_ops(evidence.preserve_ops)
    if unknown:
        text = f"preserve_ops names ops unknown to the installed registry: {', '.join(unknown)}"
        return {"verdict": "skipped", "evidence": text, "fix_verified": False if params.get("verify_fix") else None}
    kept_names = ", ".join(f"`{op}`" for op in map(str, keep))
    written_qdq, written_ops = _stage_summary(kind, keep)
    plain_qdq, plain_ops = _stage_summary(None)
    text = (
        "Conv→Linear→Linear through ExecuTorch's QuantizeStage (XNNPACK quantizer): with a pre-prepare pass that "
        f"decomposes to core ATen{f' keeping {kept_names}' if keep else ''} ({kind}, re-exporting the "
        f"GraphModule): {written_qdq} q/dq nodes, quantized ops: {written_ops}; without the pass: {plain_qdq} "
        f"q/dq nodes, quantized ops: {plain_ops}"
    )
    fix_verified = None
    if keep:  # the fix moves the decomposition to `preserve_ops`: it must quantize what the pass did
        converted, kept = _preserving(*_subject(), keep)
        fixed = _summary(converted)
        survived = ", ".join(f"{op} x{n}" for op, n in kept.items()) or "none"
        text += (
            f"; with preserve_ops=({kept_names}) instead, decomposing the ExportedProgram before `.module()`: "
            f"{fixed[0]} q/dq nodes, quantized ops: {fixed[1]}; kept in the graph: {survived}"
        )
        fix_verified = bool(kept) and fixed == (written_qdq, written_ops)
    changed = (written_qdq, written_ops) != (plain_qdq, plain_ops)
    return {
        "verdict": "confirmed" if changed else "refuted",
        "evidence": text,
        "fix_verified": fix_verified if params.get("verify_fix") else None,
    }
