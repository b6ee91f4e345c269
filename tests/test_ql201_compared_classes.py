"""QL201: a class a comparison only tests (`type(m) in (nn.BatchNorm2d,)`, `type(m) is nn.Dropout`,
or a literal bound to a name read in comparisons only) is not a part the model holds
(`content_syntax._compared`).

The content reading took every torch.nn class a body names and does not call for one handed on
and built later (`norm=nn.BatchNorm2d`). torch's `GraphModule.to_folder` tests
`type(module) in safe_reprs` against a list naming BatchNorm1d/2d/3d, so every capture of a
`torch.fx.GraphModule(root, graph)` said "in `torch.fx.GraphModule`, the mode changes
BatchNorm1d, BatchNorm2d and BatchNorm3d" (ProtoFX's emitted graphs, whose batch norm is
`F.batch_norm(training=False)`). A class a test names is built from nothing there.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import lint

NET = """
import torch
from torch import nn
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.relu = nn.ReLU()
{init}
    def forward(self, x):
        return self.relu(self.conv(x))

    def summary(self):
{summary}


def quantize(quantizer, x):
    model = Net()
    return prepare_pt2e(export(model, (x,)).module(), quantizer)
"""


def _messages(init: str = "", summary: str = "return None") -> list[str]:
    src = NET.format(init=textwrap.indent(textwrap.dedent(init), " " * 8), summary=textwrap.indent(summary, " " * 8))
    return [d.message for d in lint(src, select=("QL201",))]


# -- quiet: conv and relu only, the classes named in tests alone --------------------------------
@pytest.mark.parametrize(
    "summary",
    [
        "return [m for m in self.modules() if type(m) in (nn.BatchNorm2d, nn.Dropout)]",
        "return [m for m in self.modules() if type(m) not in [nn.BatchNorm2d]]",
        "return any(type(m) is nn.BatchNorm2d for m in self.modules())",
        "return [m for m in self.modules() if nn.Dropout == type(m)]",
        # torch's `to_folder` shape: a local list read in a test only.
        "safe = [nn.Conv2d, nn.BatchNorm2d]\nreturn [m for m in self.modules() if type(m) in safe]",
    ],
)
def test_a_class_only_tested_is_no_part(summary):
    assert _messages(summary=summary) == []


def test_the_same_class_without_the_test_is_quiet_too():
    assert _messages() == []


# -- loud: a class the body may build -----------------------------------------------------------
def test_a_listed_class_read_elsewhere_may_be_built():
    """`norms` is tested, and its first class is also built: BatchNorm2d is a part."""
    (message,) = _messages(
        init="norms = [nn.BatchNorm2d]\nif type(self.conv) in norms:\n    pass\nself.norm = norms[0](8)\n"
    )
    assert message.endswith("in `Net`, the mode changes BatchNorm2d")


def test_a_class_tested_and_built_is_a_part():
    (message,) = _messages(
        init="self.bn = nn.BatchNorm2d(8)\n",
        summary="return [m for m in self.modules() if type(m) in (nn.BatchNorm2d,)]",
    )
    assert message.endswith("in `Net`, the mode changes BatchNorm2d")


def test_a_list_assigned_twice_is_read_as_written():
    """Only a name bound once per store to a literal is followed; a second value it is given
    (here not a literal) keeps its classes as references."""
    (message,) = _messages(
        init="norms = [nn.BatchNorm2d]\nnorms = norms + extra\nif type(self.conv) in norms:\n    pass\n"
    )
    assert "BatchNorm2d" in message


# -- torch.fx.GraphModule: its content is the root's, not what `to_folder` tests ---------------
def test_a_graph_module_built_here_is_not_said_to_hold_batch_norm():
    (message,) = [
        d.message
        for d in lint(
            """
            import torch
            from torch.export import export
            from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

            def quantize(quantizer, x, graph):
                gm = torch.fx.GraphModule(torch.nn.Module(), graph)
                return prepare_pt2e(export(gm, (x,)).module(), quantizer)
            """,
            select=("QL201",),
        )
    ]
    # Still reported: the root and the graph are not read, so the mode may matter.
    assert message == "`gm` is captured for PTQ in train mode (built at line 7, and modules start in train mode)"
