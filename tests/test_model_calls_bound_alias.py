"""Calls whose callee is a method reached through `self` but not called as `self.m(...)`:
a local bound to a bound method (`fn = self.m; fn(x)`) and a property's value
(`self.prop(x)`). Found on TI's edgeai-tensorlab (a transformers test that binds a
`@cached_property` image processor to a local and calls it): the flow analysis handed the
call's missing `.value` to the method as `self` and QL201-QL203 stopped with an internal error."""

from __future__ import annotations

import pytest

from tests.conftest import lint

HEAD = """\
import functools

import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


class Case:
"""


def rows(body: str, rule: str) -> list[int]:
    return [d.range.start.row for d in lint(HEAD + body, select=(rule,))]


@pytest.mark.parametrize("decorator", ["functools.cached_property", "property"])
@pytest.mark.parametrize("rule", ["QL201", "QL203"])
def test_a_property_bound_to_a_local_and_called_is_no_crash(decorator, rule):
    body = f"""\
    @{decorator}
    def processor(self):
        return lambda image: image * 2

    def test_export(self, model, q, x):
        model = model.eval()
        process = self.processor
        inputs = process(x)
        gm = prepare_pt2e(torch.export.export(model, (inputs,)).module(), q)
        gm(inputs)
        return convert_pt2e(gm)
"""
    assert rows(body, rule) == []


@pytest.mark.parametrize("rule", ["QL201", "QL203"])
def test_a_bound_method_bound_to_a_local_and_called_is_no_crash(rule):
    body = """\
    def scale(self, image):
        return image * 2

    def test_export(self, model, q, x):
        model = model.eval()
        scale = self.scale
        gm = prepare_pt2e(torch.export.export(model, (scale(x),)).module(), q)
        gm(x)
        return convert_pt2e(gm)
"""
    assert rows(body, rule) == []


def test_a_graph_switched_beside_such_a_call_is_still_reported():
    body = """\
    @functools.cached_property
    def processor(self):
        return lambda image: image * 2

    def test_export(self, model, q, x):
        process = self.processor
        gm = prepare_pt2e(torch.export.export(model.eval(), (process(x),)).module(), q)
        gm(x)
        gm.eval()
"""
    assert rows(body, "QL203") == [HEAD.count("\n") + 9]
