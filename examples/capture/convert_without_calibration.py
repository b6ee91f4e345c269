"""Calibration forgotten on one of two paths (QL204).

`quantize_dynamic` assumes a dynamic configuration needs no data: with torchao 0.18 the
weight observers still fill only during a forward pass, so `convert_pt2e` gives the weights
scale 1.0 and zero point 0. `quantize_static` hands the prepared model to `calibrate`, which
runs it: qlint follows the helper and stays quiet there.
"""

import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config


def capture_and_prepare(model: torch.nn.Module, sample: torch.Tensor, dynamic: bool) -> torch.fx.GraphModule:
    config = get_symmetric_quantization_config(is_per_channel=True, is_dynamic=dynamic)
    graph = torch.export.export(model.eval(), (sample,)).module()
    return prepare_pt2e(graph, XNNPACKQuantizer().set_global(config))


def calibrate(prepared: torch.fx.GraphModule, batches: list[torch.Tensor]) -> None:
    with torch.no_grad():
        for batch in batches:
            prepared(batch)


def quantize_static(model: torch.nn.Module, batches: list[torch.Tensor]) -> torch.fx.GraphModule:
    prepared = capture_and_prepare(model, batches[0], dynamic=False)
    calibrate(prepared, batches)
    return convert_pt2e(prepared)


def quantize_dynamic(model: torch.nn.Module, sample: torch.Tensor) -> torch.fx.GraphModule:
    prepared = capture_and_prepare(model, sample, dynamic=True)
    return convert_pt2e(prepared)
