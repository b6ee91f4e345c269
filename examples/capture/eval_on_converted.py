"""`.eval()` on a converted GraphModule (QL203).

torch 2.13 raises NotImplementedError for `.eval()`/`.train()` on exported, prepared and
converted GraphModules (older releases silently left batch norm and dropout as captured).
"""

import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config


def quantize_and_benchmark(model: torch.nn.Module, sample: torch.Tensor) -> float:
    model.eval()
    graph = torch.export.export(model, (sample,)).module()
    prepared = prepare_pt2e(graph, XNNPACKQuantizer().set_global(get_symmetric_quantization_config()))
    prepared(sample)
    quantized = convert_pt2e(prepared)
    quantized.eval()
    with torch.no_grad():
        return float(quantized(sample).abs().mean())
