"""An ExecuTorch export recipe whose pre-prepare pass decomposes the captured graph."""

from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
    XNNPACKQuantizer,
    get_symmetric_quantization_config,
)
from executorch.export import ExportRecipe, QuantizationRecipe

from .core_aten_passes import decompose_for_quantizer, functionalize


def int8_recipe() -> ExportRecipe:
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config())
    return ExportRecipe(
        name="xnnpack_int8_core_aten",
        quantization_recipe=QuantizationRecipe(
            quantizers=[quantizer],
            pre_prepare_passes=[functionalize, decompose_for_quantizer],
        ),
    )
