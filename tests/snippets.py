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

# A stage whose run() captures its artifact for PTQ (ExecuTorch's harness Quantize stage).
QUANTIZE_STAGE = (
    NET_BN2D
    + """

class Quantize:
    def __init__(self, quantizer):
        self.quantizer = quantizer

    def run(self, artifact, inputs):
        captured = export(artifact, inputs).module()
        prepared = prepare_pt2e(captured, self.quantizer)
        prepared(*inputs)
        return prepared
"""
)
QUANTIZE_STAGE_CAPTURE_ROW = (
    QUANTIZE_STAGE.splitlines().index("        captured = export(artifact, inputs).module()") + 1
)
