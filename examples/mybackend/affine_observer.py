"""An observer that lowers itself to torchao's affine quantize ops at convert time."""

import torch
from torch.fx import GraphModule, Node


def insert_qdq(model: GraphModule, observer_node: Node, scale, zero_point, block_size) -> Node:
    with model.graph.inserting_before(observer_node):
        q = model.graph.call_function(
            torch.ops.torchao.quantize_affine,
            (observer_node.args[0], block_size, scale, zero_point, torch.int8),
        )
        dq = model.graph.call_function(
            torch.ops.torchao.dequantize_affine.default,
            (q, block_size, scale, zero_point, torch.int8),
        )
    return dq


def retarget(node: Node) -> None:
    node.target = torch.ops.aten.relu
