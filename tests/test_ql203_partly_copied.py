"""QL203 on a value that is a copy of an exported graph on some paths only (`Env.partly_copied`).

`copy.deepcopy` / `copy.copy` of a graph from `.module()`, `prepare_pt2e`, `prepare_qat_pt2e`
or `convert_pt2e` drops the raising `train`/`eval` torch put on the instance (checked on torch
2.13 / torchao 0.18: `GraphModule.__deepcopy__` and `__copy__` build a new module from the
graph, and the override lived in the old one's `__dict__`). A copy merged with an eager model
(`m = copy.deepcopy(prepare_pt2e(gm, q)) if c else model`) was "may be the graph" all the same:
the merged value was no copy, so every graph it came from counted. The graphs it holds only
through copies now raise nothing; one it may hold uncopied still does, and is the one named.
QL204 and the other readers of the value's origins see them all, as before.
"""

from __future__ import annotations

import ast
import textwrap

from qlint.analysis.flow.model_env import Env, join, uncopied
from qlint.analysis.flow.model_values import PARAM, PREPARED, Obj, Origin
from tests.conftest import lint

HEAD = """\
import copy
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def calibrate(model, loader):
    model.eval()
    for x in loader:
        model(x)

"""  # the snippets' first `def` is on line 12


def found(src: str, select=("QL203",)):
    return lint(HEAD + textwrap.dedent(src), select=select)


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in found(src)]


def test_a_copy_on_one_branch_and_the_eager_model_on_the_other_is_quiet():
    # Issue 14's shape: the copy raises nothing, the eager model needs the switch.
    assert (
        rows(
            """
            def run(gm, quantizer, model, c):
                if c:
                    m = copy.deepcopy(prepare_pt2e(gm, quantizer))
                else:
                    m = model
                m.eval()
            def pick(gm, quantizer, model, c):
                m = copy.copy(prepare_pt2e(gm, quantizer)) if c else model
                m.train()
            """
        )
        == []
    )


def test_copies_of_two_graphs_and_the_eager_model_are_quiet():
    assert (
        rows(
            """
            def run(gm, q, model, a, b):
                if a:
                    m = copy.deepcopy(prepare_pt2e(gm, q))
                elif b:
                    if a is None:
                        m = copy.deepcopy(convert_pt2e(prepare_pt2e(gm, q)))
                    else:
                        m = torch.nn.Linear(2, 2)
                else:
                    m = model
                m.eval()
            """
        )
        == []
    )


def test_a_graph_one_branch_holds_uncopied_is_reported_and_named():
    diagnostics = found(
        """
        def run(gm, q, model, a, b):
            if a:
                m = copy.deepcopy(prepare_pt2e(gm, q))
            elif b:
                m = prepare_pt2e(gm, q)
            else:
                m = model
            m.eval()
        def both(gm, q, c):
            if c:
                m = copy.deepcopy(prepare_pt2e(gm, q))
            else:
                m = prepare_pt2e(gm, q)
            m.train()
        """
    )
    assert [d.range.start.row for d in diagnostics] == [19, 25]
    maybe, every = diagnostics
    assert "may be the graph from `prepare_pt2e` (line 16)" in maybe.message
    # A graph on every path, raising on one: named by the graph it holds uncopied, not the copy's.
    assert "comes from `prepare_pt2e` (line 24)" in every.message


def test_a_graph_copied_on_one_path_and_handed_on_as_it_is_on_the_other_is_reported():
    (d,) = found(
        """
        def run(gm, q, c):
            p = prepare_pt2e(gm, q)
            m = p if c else copy.deepcopy(p)
            m.eval()
        """
    )
    assert d.range.start.row == 15
    assert "comes from `prepare_pt2e` (line 13)" in d.message


def test_a_partly_copied_value_switched_in_a_loop_is_quiet():
    assert (
        rows(
            """
            def run(gm, q, model, c, loader):
                m = copy.deepcopy(prepare_pt2e(gm, q)) if c else model
                for x in loader:
                    m.train()
                    m(x)
                    m.eval()
            """
        )
        == []
    )


def test_a_helper_returning_a_partly_copied_value_hands_no_graph_path_back():
    assert (
        rows(
            """
            def pick(gm, q, model, c):
                m = copy.deepcopy(prepare_pt2e(gm, q)) if c else model
                return m
            def run(gm, q, model, c):
                m = pick(gm, q, model, c)
                m.eval()
            """
        )
        == []
    )


def test_a_partly_copied_value_handed_to_a_switching_helper():
    diagnostics = found(
        """
        def quiet(gm, q, model, c, loader):
            m = copy.deepcopy(prepare_pt2e(gm, q)) if c else model
            calibrate(m, loader)
        def loud(gm, q, c, loader):
            if c:
                m = copy.deepcopy(prepare_pt2e(gm, q))
            else:
                m = prepare_pt2e(gm, q)
            calibrate(m, loader)
        """
    )
    assert [d.range.start.row for d in diagnostics] == [20]
    assert "comes from `prepare_pt2e` (line 19)" in diagnostics[0].message


def test_ql204_still_sees_the_copied_graph():
    # The copy's origin stays on the merged value: converted uncalibrated, it is reported.
    (d,) = found(
        """
        def run(gm, q, model, c):
            m = copy.deepcopy(prepare_pt2e(gm, q)) if c else model
            return convert_pt2e(m)
        """,
        select=("QL204",),
    )
    assert d.range.start.row == 14
    assert "after `prepare_pt2e` (line 13)" in d.message


def _origin(line: int, kind: str = PREPARED) -> Origin:
    return Origin(kind, ast.Call(func=ast.Name("f"), args=[], keywords=[], lineno=line, col_offset=0))


def test_a_value_two_paths_know_different_copies_of_keeps_those_both_say():
    graph, other, eager = _origin(1), _origin(2), _origin(3, PARAM)
    value = Obj(ast.Pass(), "m", frozenset({graph, other, eager}))
    first = Env({"m": value}, partly_copied={value: frozenset({graph, other})})
    second = Env({"m": value}, partly_copied={value: frozenset({graph})})
    joined = join([first, second], ast.Pass())
    assert uncopied(value, joined) == frozenset({other, eager})
    # Each path's dict is left as it was: paths share them.
    assert first.partly_copied[value] == frozenset({graph, other})


def test_a_value_a_path_knows_with_no_copy_in_it_holds_its_graphs_uncopied():
    # The same merge met on a loop's two passes, a copy in it on one only: after the loop the
    # graph may be uncopied. A path that never met the value says nothing of it.
    graph, eager = _origin(1), _origin(3, PARAM)
    value = Obj(ast.Pass(), "m", frozenset({graph, eager}))
    copied = Env({"m": value}, {value: frozenset()}, partly_copied={value: frozenset({graph})})
    known = Env({"m": value}, {value: frozenset()})
    elsewhere = Env({})
    assert uncopied(value, join([copied, known], ast.Pass())) == frozenset({graph, eager})
    assert uncopied(value, join([copied, elsewhere], ast.Pass())) == frozenset({eager})
