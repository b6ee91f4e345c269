"""QL102 reads an op inserted through an item of a tuple or list (`item_targets`; issue 14,
pytorch-shir's rewriter: `relu_op = (aten.relu, (), {})` or `(shin.sra_leaky_relu, (3,), {})`
in exclusive branches of its match method, returned first in a tuple, unpacked by the rewrite
method, which inserts `graph.call_function(relu_op[0], ...)`). Each op the item may be is an
insertion, reported where it is inserted, and its fix edits the item. Quiet where the item is
not known: an index that is not a constant, a tuple bound again after another, a list changed
after it is written, a parameter, a loop target, a method the module overrides."""

from __future__ import annotations

import pytest

from tests.conftest import fix, lint

PASS = """\
import torch

aten = torch.ops.aten


def rewrite(gm, leaky, i):
{bind}
    for n in list(gm.graph.nodes):
        with gm.graph.inserting_after(n):
            gm.graph.call_function({target}, (n,))
    gm.recompile()
    return gm
"""

BRANCHES = """\
    act = None
    if leaky:
        act = (aten.leaky_relu, (0.1,))
    elif i:
        act = (aten.hardtanh, ())
    else:
        act = (aten.relu, ())"""

MATCH = """\
import torch

aten = torch.ops.aten


class Rewrite:
    def __init__(self, gm):
        self.gm = gm

    def _match(self, n):
        act = None
        if n.target == aten.relu.default:
            act = (aten.relu, ())
        elif n.target == aten.sigmoid.default:
            act = (aten.sigmoid, ())
        else:
            return None
        return (act, n.args[0])

    def rewrite(self):
        for n in list(self.gm.graph.nodes):
            {unpack}
            with self.gm.graph.inserting_after(n):
                self.gm.graph.call_function(act[0], (x,))
{extra}
"""

UNPACK = """\
found = self._match(n)
            if found is None:
                continue
            [act, x] = found"""


def _ops(source: str) -> list[str]:
    return sorted(d.message.split("`")[3] for d in lint(source, select=("QL102",)))


@pytest.mark.parametrize(
    ("bind", "target", "ops"),
    [
        (BRANCHES, "act[0]", ["aten.hardtanh", "aten.leaky_relu", "aten.relu"]),
        ("    ops = (aten.relu, aten.sigmoid)", "ops[1]", ["aten.sigmoid"]),
        ("    ops = (aten.relu, aten.sigmoid)", "ops[-2]", ["aten.relu"]),
        ("    ops = [aten.relu.default, aten.sigmoid]\n    print(ops[0])", "ops[1]", ["aten.sigmoid"]),
    ],
    ids=["exclusive-branches", "tuple", "negative-index", "list-read-by-subscripts"],
)
def test_an_item_of_a_literal_is_inserted(bind, target, ops):
    assert _ops(PASS.format(bind=bind, target=target)) == ops


@pytest.mark.parametrize("unpack", [UNPACK, "act, x = self._match(n)"], ids=["through-a-name", "direct"])
def test_an_item_a_method_of_the_class_returns_is_inserted(unpack):
    source = MATCH.replace("{unpack}", unpack).replace("{extra}", "")
    assert _ops(source) == ["aten.relu", "aten.sigmoid"]


def test_the_fix_edits_the_item():
    source = PASS.format(bind="    ops = (aten.relu, aten.sigmoid)", target="ops[1]")
    assert "ops = (aten.relu, aten.sigmoid.default)" in fix(source, select=("QL102",))


@pytest.mark.parametrize(
    ("bind", "target"),
    [
        ("    ops = (aten.relu, aten.sigmoid)", "ops[i]"),
        ("    ops = (aten.relu,)\n    ops = (aten.relu.default,)", "ops[0]"),
        ("    ops = (aten.relu,)\n    if leaky:\n        ops = (aten.relu.default,)", "ops[0]"),
        ("    ops = [aten.relu]\n    ops[0] = aten.relu.default", "ops[0]"),
        ("    ops = [aten.relu]\n    ops.clear()\n    ops.append(aten.relu.default)", "ops[-1]"),
        ("    ops = [aten.relu]\n    _fill(ops)", "ops[0]"),
        ("    leaky = (aten.relu,)", "leaky[0]"),
        ("    for ops in TABLE:\n        pass", "ops[0]"),
        ("    ops = (aten.relu,)\n    ops += (aten.sigmoid,)", "ops[0]"),
        ("    ops = (aten.relu,)", "ops[1]"),
        ("    ops = _table()", "ops[0]"),
    ],
    ids=[
        "index-not-constant",
        "tuple-bound-again",
        "bound-again-in-a-branch",
        "list-item-stored",
        "list-changed-by-a-method",
        "list-handed-on",
        "a-parameter-bound-too",
        "a-loop-target",
        "augmented",
        "index-out-of-range",
        "a-call-not-unpacked",
    ],
)
def test_quiet_where_the_item_is_not_known(bind, target):
    source = PASS.format(bind=bind, target=target) + "\n\nTABLE = ((aten.relu,),)\n"
    assert _ops(source) == []


def test_quiet_when_the_module_overrides_the_method():
    override = """

class Other(Rewrite):
    def _match(self, n):
        return ((aten.relu.default, ()), n.args[0])
"""
    source = MATCH.replace("{unpack}", "act, x = self._match(n)").replace("{extra}", override)
    assert _ops(source) == []


@pytest.mark.parametrize(
    "returned",
    ["return [act, n.args[0]]", "return (n.args[0], act)", "return self._other(n)"],
    ids=["a-list-unpacked", "another-position", "not-a-literal"],
)
def test_quiet_when_the_return_does_not_say(returned):
    source = MATCH.replace("{unpack}", "act, x = self._match(n)").replace("{extra}", "")
    source = source.replace("return (act, n.args[0])", returned)
    assert _ops(source) == (["aten.relu", "aten.sigmoid"] if returned.startswith("return [") else [])
