"""QL201: a model of a list handed to a helper from a loop, and parts given to it through the
loop's target (issue 14, item 7; `loop_aliases`).

ExecuTorch's Qualcomm tests write `modules = [Conv2dSingle(...), ...]`, then `for i, module in
enumerate(modules): module = self.get_qdq_module(module, x)`. `enumerate(modules)` handed the
list to a call, which was read as one that may give its models parts, so shape-only models kept
the helper's finding; builtins that only hand items on (`enumerate`, `zip`, `reversed`, `iter`)
give none. The mirror image: a part given through a loop's target (`for m in models: m.bn =
nn.BatchNorm1d(4)`) changes a model the list holds, which no name bound to its construction
spells, and was not seen: the loop's targets hold the list's items, up to the statement that
hands the item to the capture.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from qlint.analysis.flow.loop_aliases import item_targets, literal_rows, loop_aliases
from tests.test_ql201_loop_items import CAPTURE_ROW, ql201

QUIET = {
    "enumerated": """
        def main(x, q):
            modules = [Shuffle(), Shuffle()]
            for i, m in enumerate(modules):
                quantize(m, (x,), q)
        """,
    "ExecuTorch's form: rebound to the result, handed on after the capture": """
        def lower(m, x):
            m.extra = nn.Dropout(0.5)

        def main(x, q):
            modules = [Shuffle(), Shuffle()]
            for i, module in enumerate(modules):
                with torch.no_grad():
                    module = quantize(module, (x,), q)
                    lower(module, x)
        """,
    "rebound to the result in an inner loop over inputs, handed on after (ExecuTorch's test_comb)": """
        def lower(m, x):
            m.extra = nn.Dropout(0.5)

        def main(x, q):
            modules = [Shuffle(), Shuffle()]
            inputs = [(x,), (x, x)]
            for module in modules:
                for sample_input in inputs:
                    with torch.no_grad():
                        module = quantize(module, sample_input, q)
                        lower(module, sample_input)
        """,
    "the name of each case handed to a call (ExecuTorch's `self.subTest(name=name)`)": """
        def main(x, q, log):
            cases = [("a", Shuffle(), (x,)), ("b", Shuffle(), (x, x))]
            for i, (name, m, sample) in enumerate(cases):
                log(name)
                quantize(m, sample, q)
        """,
    "the index handed to a call": """
        def main(x, q, log):
            modules = [Shuffle(), Shuffle()]
            for i, m in enumerate(modules):
                log(i)
                quantize(m, (x,), q)
        """,
}


@pytest.mark.parametrize("caller", QUIET.values(), ids=QUIET.keys())
def test_models_only_iterated_keep_the_helper_quiet(caller):
    assert ql201(caller) == []


LOUD = {
    "a part given in an earlier loop": """
        def main(x, q):
            modules = [Shuffle(), Shuffle()]
            for m in modules:
                m.bn = nn.BatchNorm1d(4)
            for m in modules:
                quantize(m, (x,), q)
        """,
    "an inner loop over inputs that does not rebind the item: its next capture sees the part": """
        def lower(m, x):
            m.extra = nn.Dropout(0.5)

        def main(x, q):
            modules = [Shuffle(), Shuffle()]
            inputs = [(x,), (x, x)]
            for module in modules:
                for sample_input in inputs:
                    qdq = quantize(module, sample_input, q)
                    lower(module, sample_input)
        """,
    "an inner loop rebinding the item on some inputs only": """
        def lower(m, x):
            m.extra = nn.Dropout(0.5)

        def main(x, q, flag):
            modules = [Shuffle(), Shuffle()]
            inputs = [(x,), (x, x)]
            for module in modules:
                for sample_input in inputs:
                    if flag:
                        module = quantize(module, sample_input, q)
                    lower(module, sample_input)
        """,
    "a part given to the values of a dict": """
        def main(x, q):
            table = {"a": Shuffle()}
            for name, m in table.items():
                m.add_module("drop", nn.Dropout(0.5))
            for m in table.values():
                quantize(m, (x,), q)
        """,
}


@pytest.mark.parametrize("caller", LOUD.values(), ids=LOUD.keys())
def test_parts_given_through_a_loop_target_are_the_finding(caller):
    (d,) = ql201(caller)
    assert d.range.start.row == CAPTURE_ROW


def _targets(loop: str) -> list[tuple[str, list[str]]]:
    node = ast.parse(loop).body[0]
    return [(ast.unparse(t), sorted(roots)) for t, roots in item_targets(node.target, node.iter)]


def test_item_targets_follow_what_each_part_of_the_target_is_bound_to():
    assert _targets("for i, m in enumerate(ms): pass") == [("m", ["ms"])]
    assert _targets("for m, x in zip(ms, xs): pass") == [("m", ["ms"]), ("x", ["xs"])]
    assert _targets("for k, m in d.items(): pass") == [("m", ["d"])]
    assert _targets("for m in comb[KEY]: pass") == [("m", ["comb"])]
    # A shape that does not match: every name of the target may hold an item.
    assert _targets("for t in enumerate(ms): pass") == [("t", ["ms"])]
    assert _targets("for m in self.zip(ms): pass") == []


def test_a_nested_loop_over_a_target_holds_items_too_up_to_the_capture():
    fn = ast.parse(
        textwrap.dedent(
            """
            def main(combs, x):
                for comb in combs:
                    for m in comb[KEY]:
                        with torch.no_grad():
                            m = capture(m)
                            lower(m)
                for name in names:
                    pass
            """
        )
    ).body[0]
    loops = [n for n in ast.walk(fn) if isinstance(n, ast.For)]
    point = next(n for n in ast.walk(fn) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "capture")
    found = loop_aliases(loops, lambda name, row: name == "combs", frozenset({id(point)}))
    # The inner loop is the outer one's statement holding the capture: `comb` holds items to
    # its end; `m` up to the capture (after it, `m` is the capture's result); `name` none.
    assert sorted(found) == [("comb", 3, 7), ("m", 4, 6)]


def _rows(body: str) -> dict[str, list[str]]:
    fn = ast.parse(textwrap.dedent(body)).body[0]
    return {name: [ast.unparse(e) for e in rows] for name, rows in literal_rows(list(ast.walk(fn))).items()}


def test_a_place_holding_a_constant_in_every_row_of_a_literal_holds_no_item():
    # ExecuTorch's share-qparams test: `for name, module, sample_input, target in test_cases:
    # with self.subTest(name=name)` hands the case's name, not its model, to `subTest`.
    body = """
        def test(x):
            cases = [("a", Net(), (x,), f"t{x}"), ("b", Shuffle(), (x,), t.op)]
            for name, module, sample, target in cases:
                pass
        """
    fn = ast.parse(textwrap.dedent(body)).body[0]
    rows = literal_rows(list(ast.walk(fn)))
    assert list(rows) == ["cases"]
    loop = next(n for n in ast.walk(fn) if isinstance(n, ast.For))
    found = [(ast.unparse(t), sorted(r)) for t, r in item_targets(loop.target, loop.iter, rows)]
    assert found == [("module", ["cases"]), ("sample", ["cases"]), ("target", ["cases"])]


def test_literals_that_may_hold_other_rows_are_not_read_by_place():
    assert (
        _rows("def f(x):\n    cases = [('a', Net())]\n    cases.append((Net(), 'b'))\n    for n, m in cases: pass")
        == {}
    )
    assert _rows("def f(x):\n    cases = [('a', Net())]\n    cases = cases + more\n    for n, m in cases: pass") == {}
    assert _rows("def f(x):\n    cases = [('a', Net())]\n    for cases in x: pass") == {}
    assert _rows("def f(x):\n    cases = build()\n    for n, m in cases: pass") == {}
