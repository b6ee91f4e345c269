"""QL204 on a QAT graph that no path trains: `prepare_qat_pt2e` made in the function and
converted (directly, through an alias or a copy, or by a helper) before anything runs it. Its
fake-quantize observers are as empty as a PTQ model's (measured on torch 2.13 / torchao 0.18:
every q/dq of the converted copy at scale 1.0); a QAT graph prepared elsewhere, or run,
trained or given a trained state dict on some path, stays quiet."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import lint

HEAD = """\
import copy
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e
from torchao.quantization.pt2e import move_exported_model_to_eval, move_exported_model_to_train
"""
ROWS = HEAD.count("\n")


def ql204(src: str, path: str = "snippet.py"):
    return lint(HEAD + textwrap.dedent(src), path=path, select=("QL204",))


def test_a_qat_graph_converted_straight_away_is_flagged_as_untrained():
    (d,) = ql204("def f(m, q):\n    p = prepare_qat_pt2e(m, q)\n    return convert_pt2e(p)\n")
    assert d.range.start.row == ROWS + 3
    assert d.message == f"`p` is converted without training after `prepare_qat_pt2e` (line {ROWS + 2})"
    assert "train the prepared model (or load the state dict of a trained one)" in d.help


def test_the_baseline_copy_converted_before_the_training_loop_is_flagged():
    # The 'test before training' of a QAT script: a deepcopy of the fresh graph is converted,
    # then the loop trains the original and converts copies of it again.
    src = """
    def main(model, quantizer, data, epochs):
        prepared = prepare_qat_pt2e(torch.export.export(model, (data[0],)).module(), quantizer)
        baseline = convert_pt2e(copy.deepcopy(prepared))
        evaluate(baseline, data)
        for epoch in range(epochs):
            move_exported_model_to_train(prepared)
            for x in data:
                prepared(x).sum().backward()
            evaluate(convert_pt2e(copy.deepcopy(prepared)), data)
        return convert_pt2e(prepared)
    """
    (d,) = ql204(src)
    assert d.range.start.row == ROWS + 4
    assert d.message.startswith("`copy.deepcopy(prepared)` is converted without training")


def test_a_helper_converting_the_untrained_graph_is_flagged_at_the_call():
    src = """
    def finish(graph):
        move_exported_model_to_eval(graph)
        return convert_pt2e(graph)

    def main(model, quantizer):
        return finish(prepare_qat_pt2e(model, quantizer))
    """
    (d,) = ql204(src)
    assert d.range.start.row == ROWS + 7
    assert d.message.startswith("`finish` converts `prepare_qat_pt2e(model, quantizer)` without training after")


@pytest.mark.parametrize(
    "between",
    [
        "for x in data:\n    p(x).sum().backward()\n",
        "train(p, data)\n",
        "move_exported_model_to_train(p)\ntrain_one_epoch(p, data)\n",
        "p.load_state_dict(torch.load(path))\n",
        "copy_fake_quant_state(p, path)\n",
        "trainer.fit(p)\n",
        "self_model = p\nself_model(data[0])\n",
    ],
)
def test_a_qat_graph_trained_run_or_given_state_on_some_path_stays_quiet(between):
    lines = textwrap.indent(between, "    ")
    src = f"def f(m, q, data, path, trainer):\n    p = prepare_qat_pt2e(m, q)\n{lines}    return convert_pt2e(p)\n"
    assert ql204(src) == []


def test_training_in_one_branch_is_enough():
    src = """
    def f(m, q, data, pretrained):
        p = prepare_qat_pt2e(m, q)
        if not pretrained:
            for x in data:
                p(x)
        return convert_pt2e(p)
    """
    assert ql204(src) == []


def test_a_copy_taken_after_training_stays_quiet():
    src = """
    def f(m, q, data):
        p = prepare_qat_pt2e(m, q)
        for x in data:
            p(x).sum().backward()
        return convert_pt2e(copy.deepcopy(p))
    """
    assert ql204(src) == []


def test_a_qat_graph_prepared_by_a_helper_is_left_to_its_maker():
    # The helper that prepares may be one whose caller trains elsewhere; only a graph prepared
    # in the converting function is judged.
    src = """
    def build(m, q):
        return prepare_qat_pt2e(m, q)

    def f(m, q):
        return convert_pt2e(build(m, q))
    """
    assert ql204(src) == []


def test_a_structural_test_of_the_untrained_qat_graph_stays_quiet():
    src = """
    def test_qat_graph_has_quantize_nodes(m, q):
        p = prepare_qat_pt2e(m, q)
        c = convert_pt2e(p)
        assert any("quantize" in str(n.target) for n in c.graph.nodes)
    """
    assert ql204(src, path="test_qat.py") == []


def test_a_test_that_runs_the_untrained_conversion_is_flagged():
    src = """
    def test_qat_numerics(m, q, x):
        p = prepare_qat_pt2e(m, q)
        c = convert_pt2e(p)
        assert c(x).shape == (1, 4)
    """
    assert [d.code for d in ql204(src, path="test_qat.py")] == ["QL204"]


INSPECT = """
def dump(model, q, directory):
    student = prepare_qat_pt2e(torch.export.export(model, (torch.rand(1, 3),)).module(), q)
    converted = convert_pt2e(student)
{after}"""


@pytest.mark.parametrize(
    "after",
    [
        "    with open(directory + '/graph.txt', 'w') as f:\n        f.write(str(converted.graph))\n",
        "    with open(directory + '/code.txt', 'w') as f:\n        f.write(converted.code)\n",
        "    print(converted)\n    converted.print_readable()\n",
    ],
)
def test_an_untrained_qat_conversion_only_looked_at_stays_quiet(after):
    # Only the graph's text is written out: the quantization parameters never matter.
    assert ql204(INSPECT.format(after=after)) == []


@pytest.mark.parametrize(
    "after",
    [
        "    program = torch.export.export(converted, (torch.rand(1, 3),))\n    save(program, directory)\n",
        "    torch.save(converted, directory + '/model.pt')\n",
        "    dynamo_export(converted, directory)\n",
        "    return converted\n",
        "    print(converted(torch.rand(1, 3)))\n",
    ],
)
def test_an_untrained_qat_conversion_that_is_exported_saved_or_run_is_flagged(after):
    assert [d.code for d in ql204(INSPECT.format(after=after))] == ["QL204"]
