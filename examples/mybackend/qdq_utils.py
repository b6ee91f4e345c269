import torch

aten = torch.ops.aten
qd = torch.ops.quantized_decomposed

# Quantize ops a convert_pt2e graph can carry (per-tensor and per-channel).
Q_OPS = {
    qd.quantize_per_tensor,  # packet: a graph never carries this
    qd.quantize_per_channel.default,
}

DQ_OPS = (
    torch.ops.quantized_decomposed.dequantize_per_tensor.default,
    torch.ops.quantized_decomposed.dequantize_per_tensor.tensor,
    torch.ops.quantized_decomposed.dequantize_per_channel,
)

AFFINE_DQ_OPS = [torch.ops.torchao.dequantize_affine]


def is_dequant(node) -> bool:
    return node.op == "call_function" and node.target in DQ_OPS
