"""The PTQ recipe done right: eval mode first, then capture, prepare, calibrate, convert.

qlint stays quiet here: `.eval()` runs on every path before the capture (inline or
earlier in the same function), and the converted graph is switched with torchao's
`move_exported_model_to_eval`, never with `.eval()`.
"""

import torch
from torchao.quantization.pt2e import move_exported_model_to_eval
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config


class ConvBnReLU(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 16, 3)
        self.bn = torch.nn.BatchNorm2d(16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.conv(x)))


def quantize(model: torch.nn.Module, calibration: list[torch.Tensor]) -> torch.fx.GraphModule:
    model.eval()
    exported = torch.export.export(model, (calibration[0],))
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config())
    prepared = prepare_pt2e(exported.module(), quantizer)
    for batch in calibration:
        prepared(batch)
    converted = convert_pt2e(prepared)
    return move_exported_model_to_eval(converted)


def quantize_inline(calibration: list[torch.Tensor]) -> torch.fx.GraphModule:
    graph = torch.export.export(ConvBnReLU().eval(), (calibration[0],)).module()
    prepared = prepare_pt2e(graph, XNNPACKQuantizer().set_global(get_symmetric_quantization_config()))
    for batch in calibration:
        prepared(batch)
    return convert_pt2e(prepared)
