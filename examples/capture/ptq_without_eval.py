"""PTQ recipes that capture a model still in train mode (QL201).

`torch.export` records batch norm and dropout as they behave in the model's current mode.
Both recipes below calibrate a graph whose batch norm keeps updating its running
statistics and whose dropout keeps dropping: the deployed model is not the one calibrated.
"""

import torch
from executorch.export import ExportRecipe, QuantizationRecipe, export
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config


class ConvBnReLU(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 16, 3)
        self.bn = torch.nn.BatchNorm2d(16)
        self.dropout = torch.nn.Dropout(0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(torch.relu(self.bn(self.conv(x))))


def quantize_for_xnnpack(calibration: list[torch.Tensor]) -> torch.fx.GraphModule:
    model = ConvBnReLU()
    model.load_state_dict(torch.load("conv_bn_relu.pt"))
    example_inputs = (calibration[0],)
    with torch.no_grad():  # turns off autograd, not training behaviour
        exported = torch.export.export(model, example_inputs)
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config())
    prepared = prepare_pt2e(exported.module(), quantizer)
    for batch in calibration:
        prepared(batch)
    return convert_pt2e(prepared)


def lower_with_executorch(model: torch.nn.Module, samples: list[tuple[torch.Tensor]]):
    """ExecuTorch's QuantizeStage (up to 1.5.1) captures the model as it gets it for PTQ."""
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config())
    recipe = ExportRecipe(quantization_recipe=QuantizationRecipe(quantizers=[quantizer]))
    return export(model, samples, export_recipe=recipe)
