"""`inert_attribute_chain`: a call through an attribute that holds no runnable part of the
model (`prepared.graph.print_tabular()`) runs nothing, for a name that holds a model only."""

from __future__ import annotations

import ast

from qlint.analysis.calibration_effects import inert_attribute_chain


def _func(code: str) -> ast.expr:
    return ast.parse(code, mode="eval").body.func


def test_an_inert_attribute_of_a_name_that_holds_tokens_is_inert():
    assert inert_attribute_chain(_func("prepared.graph.print_tabular()"), {"prepared": frozenset({"token"})})


def test_a_name_bound_to_no_tokens_is_not_tracked():
    # Names the walk has bound to nothing (a plain value) are not models.
    assert not inert_attribute_chain(_func("prepared.graph.print_tabular()"), {"prepared": frozenset()})
    assert not inert_attribute_chain(_func("prepared.graph.print_tabular()"), {})


def test_a_runnable_attribute_is_not_inert():
    assert not inert_attribute_chain(_func("prepared.forward(x)"), {"prepared": frozenset({"token"})})
    assert not inert_attribute_chain(_func("prepared()"), {"prepared": frozenset({"token"})})
