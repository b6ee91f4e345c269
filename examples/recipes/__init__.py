"""Example ExecuTorch recipes: one decomposes inside pre_prepare_passes (QL301), one still
imports PT2E from `torch.ao.quantization` (QL401)."""
