"""Flows of functions written in other functions (and of methods of classes written there)
carried across an editor's confined edit (`nested_carry`, issue 13): the findings are a fresh
check's at every step, a nested body is read again when what it reads changed or when it
stands in the function the edit changed, and is carried otherwise (the count tests fail when
the carry stops working)."""

from __future__ import annotations

import textwrap

import pytest

from qlint.analysis.flow import model_interp
from qlint.analysis.names.project import ProjectIndex
from tests.keystroke_support import counted_runs, findings, package, steps

TEXT = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
""" + textwrap.dedent(
    """

    def prep(model):
        model.eval()
        return model


    def outer(quantizer, data):
        def inner():
            model = prep(torch.nn.Dropout(0.5))
            exported = torch.export.export(model, (data,))
            prepared = prepare_pt2e(exported.module(), quantizer)
            prepared(data)
            return convert_pt2e(prepared)

        class Q:
            def transform(self, model):
                return torch.export.export(model, (data,)).module()

        return inner()


    def other(model, data):
        return torch.export.export(model, (data,))
    """
)
# Each edit keeps every row where it was (a confined edit).
OTHER = TEXT.replace(
    "    return torch.export.export(model, (data,))\n", "    return torch.export.export(model, (data,)); edited = 1\n"
)
OUTER = TEXT.replace("    return inner()\n", "    return inner(); edited = 1\n")
TRAIN = TEXT.replace("    model.eval()\n    return model", "    model.train()\n    return model")


assert len({TEXT, OTHER, OUTER, TRAIN}) == 4


@pytest.fixture
def interpreted(monkeypatch):
    return counted_runs(monkeypatch, model_interp.Interpreter)


def _checks(tmp_path, texts, interpreted) -> list[list[str]]:
    """The bodies interpreted at each check of `texts` by one project (an editor's)."""
    path = str(package(tmp_path) / "checked.py")
    project = ProjectIndex()
    out = []
    for text in texts:
        interpreted.clear()
        findings(project, path, text, ("QL",))
        out.append(list(interpreted))
    return out


def test_nested_bodies_outside_the_edit_are_carried(tmp_path, interpreted):
    first, second = _checks(tmp_path, [TEXT, OTHER], interpreted)
    assert {"inner", "transform", "other"} <= set(first)
    assert "other" in second and "inner" not in second and "transform" not in second


def test_nested_bodies_in_the_edited_function_are_read_again(tmp_path, interpreted):
    # The reuse of unchanged statements hands `outer`'s nested definitions over as the same
    # nodes: they are read again all the same, as what surrounds them changed.
    _, second = _checks(tmp_path, [TEXT, OUTER], interpreted)
    assert "inner" in second and "transform" in second


def test_a_nested_body_reads_an_edited_helper_again(tmp_path, interpreted):
    _, second = _checks(tmp_path, [TEXT, TRAIN], interpreted)
    assert "inner" in second and "transform" not in second


def test_every_step_gives_a_fresh_check_s_findings(tmp_path):
    seen = steps(tmp_path, [TEXT, OTHER, TRAIN, OTHER, OUTER, TEXT, TRAIN], ("QL",))
    # `prep` switching to train mode is reported at the nested capture, and gone again after.
    assert seen[0] == seen[1] != seen[2] and seen[2] != seen[3] and seen[3] == seen[4] == seen[5]
