"""Source text several test modules start their snippets with."""

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

# The imports of a PTQ capture and a model with batch norm over vectors (`torch.randn(2, 4)`).
NET_BN1D = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn(x)
"""

# A PTQ helper beside a batch-norm model and a mode-free one, for callers written after it.
PTQ_HELPER_HEAD = (
    NET_BN1D
    + """

class Shuffle(nn.Module):
    def forward(self, x):
        return x.flip(0)


def quantize(model, x, q):
    return prepare_pt2e(torch.export.export(model, x).module(), q)
"""
)
PTQ_HELPER_HEAD_CAPTURE_ROW = PTQ_HELPER_HEAD.count("\n")  # the `return prepare_pt2e(...)` line

# Qualcomm's get_qdq_module shape: a helper capturing its parameter for PTQ, in its own module.
QDQ_HELPERS = """
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


def get_qdq_module(module, inputs, q):
    m = torch.export.export(module, inputs).module()
    return prepare_pt2e(m, q)
"""
QDQ_HELPERS_CAPTURE_ROW = QDQ_HELPERS.splitlines().index("    m = torch.export.export(module, inputs).module()") + 1


# Two modules of a package (`pkg/quant.py`, `pkg/net.py`): a module-level helper that captures its
# parameter for PTQ, and a model with batch norm (the QL201 tests of methods storing `self.model`).
PTQ_QUANTIZE_MODULE = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def quantize(model, example):
    exported = torch.export.export(model, example).module()
    prepared = prepare_pt2e(exported, None)
    prepared(*example)
    return convert_pt2e(prepared)
"""
PTQ_QUANTIZE_MODULE_CAPTURE_ROW = (
    PTQ_QUANTIZE_MODULE.splitlines().index("    exported = torch.export.export(model, example).module()") + 1
)

BN_NET_MODULE = """\
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(x)
"""

# A batch-norm model (after `from torch import nn`) and the builder that returns it in train mode
# when asked, else in eval mode: the module other modules import their model from.
NET_AND_BUILD = """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x):
        return self.bn(self.conv(x))


def build(train_mode=False):
    model = Net()
    if train_mode:
        model.train()
    else:
        model.eval()
    return model
"""

# A QAT model (after `import torch`) whose batch norm and dropout both depend on its mode: the
# graph captured from `Net().eval()` trains neither until it is moved to train mode (QL202).
BN_DROPOUT_NET = """\
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.bn = torch.nn.BatchNorm1d(4)
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.bn(self.fc(x)))
"""

# A conv and batch-norm model without forward (after `from torch import nn`), at the head of
# the QL201 tests of casts and self-returning methods.
CONV_BN_NET = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
        self.bn = nn.BatchNorm2d(3)

"""


# A project decorator that is no pass-through (`pass_through`): a method under it is not read
# as written.
CATCHING_TRACED = """\
def traced(f):
    # Catches and returns something else: no pass-through (`pass_through`), so not read.
    def inner(*args, **kwargs):
        try:
            return f(*args, **kwargs)
        except RuntimeError:
            return None

    return inner
"""

# A QL101 finding, fixed by writing `.default`: the smallest module a run, a fix or a cache test
# has something to report in.
PACKET_MATCHER = "import torch\n\n\ndef f(n):\n    return n.target == torch.ops.aten.relu\n"

# The same, as an editor's buffer (the language-server tests).
LSP_FINDING = "import torch\n\n\ndef is_relu(node):\n    return node.target == torch.ops.aten.relu\n"

# A collection of overloads in one module and its packet matcher in another (`pkg/qdq_utils.py`,
# `pkg/passes.py`): a fix written across modules.
QDQ_UTILS = "import torch\n\nDQ_OPS = [torch.ops.quantized_decomposed.dequantize_per_channel]\n"
QDQ_USER = "from .qdq_utils import DQ_OPS\n\n\ndef is_dq(n):\n    return n.target in DQ_OPS\n"

# A capture of a model built of parts on one line (`nn.Sequential` of a conv and a batch norm),
# each part in train mode: one QL201 finding.
SEQUENTIAL_CAPTURE = """\
from torch import nn
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


def capture(x, quantizer):
    model = nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3))
    ep = export(model, (x,)).module()
    return prepare_pt2e(ep, quantizer)
"""

# `pkg/models.py` of the registry tests: a conv and batch norm block other modules import.
CONV_BN_MODULE = """\
from torch import nn


class ConvBn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(self.conv(x))
"""
