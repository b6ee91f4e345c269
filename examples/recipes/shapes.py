import torch

EXAMPLE_INPUTS = (torch.randn(1, 3, 32, 32),)
