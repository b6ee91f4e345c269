"""QL201: an attribute of a construction written as an element of a container
(`modules = [seq_conv, seq_conv.second]`, ExecuTorch's Qualcomm multi-graph tests;
`built_parts`).

The element was a value the walk did not follow, so a loop over the container bound its
items to an unknown model and the helper they were handed to was judged as if its callers
were unknown. The part's content is among the whole's: where the whole is known in full with
nothing mode-dependent, and given no parts after its build, so is the part.
"""

from __future__ import annotations

import pytest

from tests.conftest import check_file, package_repository, rows_of
from tests.snippets import QDQ_HELPERS, QDQ_HELPERS_CAPTURE_ROW

HELPERS = QDQ_HELPERS
HELPER_ROW = QDQ_HELPERS_CAPTURE_ROW
TESTS = """
import torch
from torch import nn

from pkg.helpers import get_qdq_module


class Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Conv2d(1, 3, 3)
        self.second = nn.Conv2d(3, 2, 3)

    def forward(self, x):
        return self.second(self.first(x))


class SeqBn(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Conv2d(1, 3, 3)
        self.second = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.second(self.first(x))


def test_graphs(q):
{body}
    inputs = [(torch.randn(1, 1, 3, 3),), (torch.randn(1, 3, 3, 3),)]
    return [get_qdq_module(module, inp, q) for module, inp in zip(modules, inputs)]
"""


def _rows(tmp_path, body: str) -> list[int]:
    tests = TESTS.replace("{body}", body)
    root = package_repository(tmp_path / "repo", helpers=HELPERS, test_it=tests)
    return rows_of(check_file(root / "pkg" / "helpers.py", ("QL201",)).diagnostics)


QUIET = {
    "the whole and its part": "    seq = Seq()\n    modules = [seq, seq.second]",
    "a part of a part": "    seq = Seq()\n    modules = [seq.first.weight, seq.second]",
}


@pytest.mark.parametrize("body", QUIET.values(), ids=QUIET.keys())
def test_parts_of_a_mode_free_construction_keep_the_helper_quiet(tmp_path, body):
    assert _rows(tmp_path, body) == []


LOUD = {
    "the whole holds batch norm": "    seq = SeqBn()\n    modules = [seq.first, seq.second]",
    "the whole given a part after its build": (
        "    seq = Seq()\n    seq.second = nn.BatchNorm2d(3)\n    modules = [seq.first, seq.second]"
    ),
    "a part bound to a name first": "    seq = Seq()\n    second = seq.second\n    modules = [seq, second]",
    "a part of a parameter's model": "    modules = [q.model, q.model.second]",
}


@pytest.mark.parametrize("body", LOUD.values(), ids=LOUD.keys())
def test_parts_that_may_depend_on_the_mode_or_are_not_followed_keep_the_finding(tmp_path, body):
    assert _rows(tmp_path, body) == [HELPER_ROW]


# A part its class's base binds (`super().__init__()` of a class storing `self.second`): the
# whole's content is read with its bases', so the part's verdict follows the base's content.
SUBCLASSES = """

class Sub(Seq):
    def __init__(self):
        super().__init__()
        self.n = 2


class SubBn(SeqBn):
    def __init__(self):
        super().__init__()
        self.n = 2
"""


def _subclass_rows(tmp_path, body: str) -> list[int]:
    tests = TESTS.replace("{body}", body).replace("\n\ndef test_graphs", SUBCLASSES + "\n\ndef test_graphs")
    root = package_repository(tmp_path / "repo", helpers=HELPERS, test_it=tests)
    return rows_of(check_file(root / "pkg" / "helpers.py", ("QL201",)).diagnostics)


def test_a_part_a_mode_free_base_class_binds_keeps_the_helper_quiet(tmp_path):
    assert _subclass_rows(tmp_path, "    seq = Sub()\n    modules = [seq, seq.second]") == []


def test_a_part_of_a_subclass_whose_base_holds_batch_norm_keeps_the_finding(tmp_path):
    assert _subclass_rows(tmp_path, "    seq = SubBn()\n    modules = [seq.first, seq.second]") == [HELPER_ROW]
