"""QL201/QL202: a mode switch in a `try` whose handler catches the error an exported graph raises.

`model = model.eval()` inside `try:` with `except NotImplementedError:` (AmbiqAI nsx-executorch's
export entry point): the handler runs only when the model is an exported graph, which refuses
`.eval()`/`.train()` on torch 2.13 and whose mode was fixed when it was captured. Both paths
leave the model as the switch meant it; any other shape of `try` keeps the path without it."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import lint

HEAD = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e
"""

PTQ = """\
def export(model, quantizer, x):
    try:
        {switch}
    {handler}:
        {then}
    exported = torch.export.export(model, (x,))
    return prepare_pt2e(exported.module(), quantizer)

export(torch.nn.Sequential(torch.nn.Conv2d(3, 3, 1), torch.nn.BatchNorm2d(3)), None, None)
"""


def rows(src: str, code: str) -> list[int]:
    return [d.range.start.row for d in lint(HEAD + textwrap.dedent(src), select=(code,)) if d.code == code]


@pytest.mark.parametrize(
    ("switch", "handler", "then"),
    [
        ("model = model.eval()", "except NotImplementedError", "pass"),
        ("model.eval()", "except NotImplementedError", "pass"),
        ("model.eval()", "except (NotImplementedError, AttributeError)", "pass"),
        ("model = model.train(False)", "except builtins.NotImplementedError", "pass"),
    ],
)
def test_switch_refused_by_an_exported_graph_counts_on_the_handler_path(switch, handler, then):
    assert rows(PTQ.format(switch=switch, handler=handler, then=then), "QL201") == []


@pytest.mark.parametrize(
    ("switch", "handler", "then", "why"),
    [
        ("model.eval()", "except Exception", "pass", "a broader handler catches other errors"),
        ("model.eval()", "except AttributeError", "pass", "not the error a refused switch raises"),
        ("model = load(model).eval()", "except NotImplementedError", "pass", "the call can raise first"),
        ("model.eval(); log(model)", "except NotImplementedError", "pass", "more than the switch"),
        ("model.eval()", "except NotImplementedError", "model.train()", "the handler switches back"),
    ],
)
def test_other_tries_keep_the_path_without_the_switch(switch, handler, then, why):
    assert rows(PTQ.format(switch=switch, handler=handler, then=then), "QL201") == [8], why


def test_a_train_switch_refused_for_qat_counts_too():
    src = """\
        def export(model, quantizer, x):
            model.eval()
            try:
                model.train()
            except NotImplementedError:
                pass
            return prepare_qat_pt2e(torch.export.export(model, (x,)).module(), quantizer)

        export(torch.nn.Sequential(torch.nn.Conv2d(3, 3, 1), torch.nn.BatchNorm2d(3)), None, None)
        """
    assert rows(src, "QL202") == []
    assert rows(src.replace("model.train()", "model.eval()"), "QL202") == [9]
