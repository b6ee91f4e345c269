"""A PT2E flow written for torch <= 2.9: every PT2E import here is gone in torch 2.13."""

import torch
import torch.ao.quantization.quantize_pt2e as qp
from torch.ao.quantization import MinMaxObserver, move_exported_model_to_eval
from torch.ao.quantization.quantizer import (
    QuantizationSpec,  # per-tensor int8
    XNNPACKQuantizer,
)
from torch.ao.quantization.quantizer.xnnpack_quantizer import get_symmetric_quantization_config

ACT_SPEC = QuantizationSpec(
    dtype=torch.int8,
    quant_min=-128,
    quant_max=127,
    qscheme=torch.per_tensor_affine,
    observer_or_fake_quant_ctr=MinMaxObserver,
)


def quantize(model, example_inputs):
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config())
    graph = torch.export.export(model.eval(), example_inputs).module()
    prepared = qp.prepare_pt2e(graph, quantizer)
    prepared(*example_inputs)
    converted = qp.convert_pt2e(prepared)
    torch.ao.quantization.allow_exported_model_train_eval(converted)
    return move_exported_model_to_eval(converted)
