"""Fold dequantize -> linear patterns into a backend op."""

import operator

import torch
from torch.fx import GraphModule, Node

from .qdq_utils import AFFINE_DQ_OPS, Q_OPS

aten = torch.ops.aten

_FUSABLE = {
    aten.linear.default: "linear",
    aten.relu: "relu",  # packet key: `_FUSABLE[node.target]` never finds a relu node
}


def _is_affine_dq(node: Node) -> bool:
    return node.target in AFFINE_DQ_OPS


def fold(gm: GraphModule) -> int:
    folded = 0
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        target = node.target
        if target == torch.ops.torchao.quantize_affine:
            folded += 1
        elif target in Q_OPS:
            folded += 1
        elif _FUSABLE.get(node.target) is not None:
            folded += 1
        elif node.target is operator.getitem:
            continue
    return folded


def describe(node: Node) -> str:
    # Fine: string checks and normalized packets compare what graphs really carry.
    if "dequantize" in str(node.target):
        return "dq"
    if getattr(node.target, "overloadpacket", None) == aten.relu:
        return "relu"
    return node.target.__name__ if hasattr(node.target, "__name__") else "?"


def run_eager(x: torch.Tensor) -> torch.Tensor:
    # Fine: calling a packet eagerly dispatches to the right overload.
    return aten.relu(aten.add(x, x))


def lower(model: torch.nn.Module, example_inputs: tuple) -> int:
    # The backend folds re-exported programs: their nodes carry overloads, not packets.
    return fold(torch.export.export(model, example_inputs).module())


def count_affine_dqs(ep: torch.export.ExportedProgram) -> int:
    return sum(_is_affine_dq(n) for n in ep.graph_module.graph.nodes)
