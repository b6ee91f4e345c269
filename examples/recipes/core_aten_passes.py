"""Graph passes a backend wrote for a quantizer that matches core ATen ops."""

import torch
from torch._decomp import core_aten_decompositions

from .shapes import EXAMPLE_INPUTS


def _lower_to_core_aten(gm, example_inputs):
    # Decomposition runs on an ExportedProgram: re-export the graph the recipe handed us.
    ep = torch.export.export(gm, example_inputs)
    return ep.run_decompositions(core_aten_decompositions()).module()


def decompose_for_quantizer(gm):
    gm.graph.eliminate_dead_code()
    gm.recompile()
    return _lower_to_core_aten(gm, EXAMPLE_INPUTS)


def functionalize(gm):
    # run_decompositions({}) only functionalizes: fine in a pre-prepare pass.
    return torch.export.export(gm, EXAMPLE_INPUTS).run_decompositions({}).module()
