"""Source text several QL201 test modules start their snippets with."""

# The imports a capture needs and a module with batch norm: `Net()` is the train-mode model
# whose capture QL201 reports, `Net().eval()` the one it does not.
NET_BN2D = """\
import torch
from torch import nn
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(x)
"""
