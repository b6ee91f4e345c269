"""QL203 on torch containers holding an exported graph (`graph_holders`): `nn.Sequential(gm).eval()`
switches every submodule, and the graph's override raises (measured on torch 2.13/torchao 0.18
for `nn.Sequential`, `nn.ModuleList`, `nn.ModuleDict` and `torch.compile`)."""

from __future__ import annotations

import textwrap

import pytest

from qlint.diagnostic import Applicability
from tests.conftest import lint

HEAD = """\
import copy
import torch
from torch import nn
from torchao.quantization.pt2e import allow_exported_model_train_eval
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def calibrate(model):
    model.eval()

"""  # `calibrate`'s switch is on line 9; the snippets start on line 11


def found(src: str):
    return lint(HEAD + textwrap.dedent(src), select=("QL203",))


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in found(src)]


def test_a_sequential_around_a_prepared_graph():
    (d,) = found(
        """
        def f(model, q, x):
            gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            wrapped = nn.Sequential(gm, nn.Softmax(dim=1))
            wrapped.eval()
        """
    )
    assert d.range.start.row == 15
    assert "`wrapped` holds the graph from `prepare_pt2e` (line 13)" in d.message
    # `move_exported_model_to_eval(wrapped)` fails: the container has no `.graph`.
    assert d.fix.applicability is Applicability.DISPLAY_ONLY


def test_module_lists_dicts_and_filled_containers():
    assert rows(
        """
        def f(model, q, x):
            gm = torch.export.export(model.eval(), (x,)).module()
            nn.ModuleList([gm]).train()
            graphs = nn.ModuleDict({"q": convert_pt2e(prepare_pt2e(gm, q))})
            graphs.eval()
            later = nn.ModuleList()
            later.append(gm)
            later.train(False)
            nn.Sequential(nn.ModuleList([gm])).eval()
        """
    ) == [14, 16, 19, 20]


def test_a_container_handed_to_a_switching_helper():
    (d,) = found(
        """
        def f(model, q, x):
            gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            calibrate(nn.Sequential(gm))
        """
    )
    assert d.range.start.row == 14
    assert "holds the graph from `prepare_pt2e` (line 13)" in d.message and "(line 9)" in d.message
    assert d.fix.applicability is Applicability.DISPLAY_ONLY


def test_torch_compile_of_a_graph_is_the_graph():
    # `torch.compile(gm).eval()` raises too, and `move_exported_model_to_eval` takes the compiled module.
    (d,) = found(
        """
        def f(model, q, x):
            compiled = torch.compile(prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q))
            compiled.eval()
        """
    )
    assert d.range.start.row == 14 and d.fix.applicability is Applicability.SAFE


@pytest.mark.parametrize(
    "src",
    [
        # the graph allowed, before or after it is put in the container
        """
        def f(model, q, x):
            gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            wrapped = nn.Sequential(gm)
            allow_exported_model_train_eval(gm)
            wrapped.eval()
            calibrate(wrapped)
        """,
        # a copy of the graph, its children, an eager module
        """
        def f(model, q, x):
            gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            nn.Sequential(copy.deepcopy(gm)).eval()
            nn.Sequential(*gm.children()).eval()
            nn.ModuleList([model, nn.ReLU()]).train()
            calibrate(nn.Sequential(model))
        """,
        # a plain list or tuple holds no submodule: it has no mode to switch
        """
        def f(model, q, x):
            gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            pair = (gm, model)
            pair[1].eval()
        """,
        # inside a test that expects the error
        """
        import pytest

        def test_raises(model, q, x):
            gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            with pytest.raises(NotImplementedError):
                nn.Sequential(gm).eval()
        """,
    ],
)
def test_quiet_containers(src):
    assert rows(src) == []
