"""QL201: a class whose `__init__` stores one attribute of what it is given (`self.head =
full.head`, the parameter read nowhere else) holds that part, not the module it came from
(`given_modes.attribute_arguments`): `HeadOnly(Full())`, `Full` holding a batch norm in its
backbone and a Linear head, was reported naming the backbone's BatchNorm1d (fresh36c's probe,
dinusha94's `EmbeddingExtractor`). The part is what `Full.__init__` builds under that name
(once, touched otherwise only by calls: `init_parts`), read for the content and the message.

Still reported: a head holding a Dropout (named alone), a class storing `full` itself, and
whatever the function does to the module that may change the part (`full.head = ...`,
`setattr`, `add_module`, an item stored, before or after the construction): the whole module
is read then, as before. An attribute `Full.__init__` does not build once is read so too.
"""

from __future__ import annotations

import pytest

from tests.conftest import lint

HEAD = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Full(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
        self.head = nn.Linear(4, 4)

    def forward(self, x):
        return self.head(self.backbone(x))


class DropHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
        self.head = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.2))

    def forward(self, x):
        return self.head(self.backbone(x))


class Rebuilt(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
        self.head = nn.Linear(4, 4)
        self.reset()

    def reset(self):
        self.head = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))

    def forward(self, x):
        return self.head(self.backbone(x))


class HeadOnly(nn.Module):
    def __init__(self, full):
        super().__init__()
        INIT

    def forward(self, x):
        return self.head(x)


def main(q, x):
    BODY
    return prepare_pt2e(torch.export.export(m, (x,)).module(), q)
"""

TAKE = "self.head = full.head"


def messages(body: str, init: str = TAKE) -> list[str]:
    src = HEAD.replace("INIT", init).replace("BODY", body.replace("\n", "\n    "))
    return [d.message for d in lint(src, select=("QL201",))]


@pytest.mark.parametrize(
    "body",
    [
        "m = HeadOnly(Full())",
        "m = HeadOnly(full=Full())",
        "full = Full()\nm = HeadOnly(full)",
        "full = Full()\nfull.eval()\nm = HeadOnly(full)",
    ],
)
def test_a_class_holding_one_part_of_what_it_is_given_is_judged_by_that_part(body):
    assert messages(body) == []


def test_the_part_with_a_dropout_is_named_alone():
    (message,) = messages("m = HeadOnly(DropHead())")
    assert message.endswith("in `HeadOnly`, the mode changes Dropout")


@pytest.mark.parametrize(
    ("body", "init"),
    [
        ("m = HeadOnly(Full())", "self.full = full\n        self.head = full.head"),
        ("m = HeadOnly(Full())", "self.head = full.head\n        self.full = full"),
        ("m = HeadOnly(Rebuilt())", TAKE),
        ("full = Full()\nfull.head = nn.Dropout(0.1)\nm = HeadOnly(full)", TAKE),
        ("full = Full()\nsetattr(full, 'head', nn.Dropout(0.1))\nm = HeadOnly(full)", TAKE),
        ("full = Full()\nfull.add_module('head', nn.Dropout(0.1))\nm = HeadOnly(full)", TAKE),
        ("full = Full()\nm = HeadOnly(full)\nfull.head.add_module('d', nn.Dropout(0.1))", TAKE),
        ("full = Full()\nm = HeadOnly(full)\nfull.head = nn.Dropout(0.1)", TAKE),
        ("full = Full()\nfull.head[0] = nn.Dropout(0.1)\nm = HeadOnly(full)", TAKE),
    ],
)
def test_the_whole_module_is_read_where_the_part_may_be_another(body, init):
    (message,) = messages(body, init)
    assert "captured for PTQ in train mode" in message and "BatchNorm1d" in message
