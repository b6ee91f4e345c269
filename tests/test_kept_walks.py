"""Walks of a function's syntax that an editor's next check asks again, kept on the function's
node: `statement_reuse` hands the next check the very nodes of every function the keystroke
did not touch, so a walk kept there answers it (issue 13: the in-process check of a large
module). What is checked: the kept answer is the fresh walk's, whatever rows the rules ask
with; an edited function (a new node) is walked again; and the findings after an edit are a
fresh check's."""

from __future__ import annotations

import ast
import collections
import textwrap

import pytest

from qlint.analysis.graphs import graph_parameter_passes, hand_built_graphs, returned_graph_uses
from qlint.analysis.names import functions
from qlint.analysis.names.functions import bodies
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.scope import ModuleScope
from tests.keystroke_support import findings, package, steps

MATCHERS = textwrap.dedent(
    """\
    import torch

    DQ = torch.ops.quantized_decomposed.dequantize_per_tensor


    def unchanged(gm):
        for n in gm.graph.nodes:
            if n.target == DQ:
                print(n)


    class Pass:
        def match(self, gm):
            return [n for n in gm.graph.nodes if n.target == DQ]

        def edited(self, x):
            return x
    """
)


def _walked_rows(monkeypatch) -> list[int]:
    """The rows of the expressions `Body.nodes` walks (its statements' expressions)."""
    rows: list[int] = []
    real_kinds, real_walk = functions.walk_kinds, functions.walk

    def kinds(node, wanted):
        rows.append(getattr(node, "lineno", 0))
        return real_kinds(node, wanted)

    def walk(node):
        rows.append(getattr(node, "lineno", 0))
        return real_walk(node)

    monkeypatch.setattr(functions, "walk_kinds", kinds)
    monkeypatch.setattr(functions, "walk", walk)
    return rows


def test_an_unchanged_function_is_not_walked_again_after_a_keystroke(tmp_path, monkeypatch):
    path = str(package(tmp_path) / "checked.py")
    project = ProjectIndex()
    first = findings(project, path, MATCHERS, ("QL101",))
    assert [row for _, row, _, _ in first] == [8, 14]
    walked = _walked_rows(monkeypatch)
    typed = MATCHERS.replace("return x\n", "return x; y = 1\n")
    assert findings(project, path, typed, ("QL101",)) == first
    # The method beside the edited one too: its class is a new node, the method is reused.
    unchanged = {*range(6, 10), 13, 14}
    assert not [row for row in walked if row in unchanged]
    # And the findings follow an edit of a walked function, as a fresh check's.
    texts = [
        MATCHERS,
        MATCHERS.replace("return x\n", "return [n for n in x.graph.nodes if n.target == DQ]\n"),
        MATCHERS.replace("        if n.target == DQ:\n", "        if n.target == DQ.default:\n"),
        MATCHERS,
    ]
    (tmp_path / "steps").mkdir()
    seen = steps(tmp_path / "steps", texts, ("QL101",))
    assert [[row for _, row, _, _ in found] for found in seen] == [[8, 14], [8, 14, 17], [14], [8, 14]]


NESTED = textwrap.dedent(
    """\
    def outer(gm, model=make()):
        f = lambda n: n.target == OP
        class Inner:
            x = call_inside_class(OP)
            def method(self):
                return OP(self)
        for n in gm.graph.nodes:
            if n.target in {a: b for a, b in pairs}:
                gm.graph.call_function(
                    OP, (n,)
                )
        return [y for y in f(n)]


    x = OP(1)
    """
)

_KINDS = (None, frozenset({ast.Call}), frozenset({ast.Compare, ast.Name}))


def _where(node: ast.AST) -> tuple:
    return type(node).__name__, *(getattr(node, f, None) for f in ("lineno", "col_offset", "end_col_offset"))


def _fresh(text: str, rows, kinds) -> list[list[tuple]]:
    """What each body's walk yields on a tree parsed now, as (type, row, column) triples."""
    tree = ast.parse(text)
    out = []
    for body in bodies(tree, ModuleScope.build(tree, None, "m.py")):
        out.append([_where(n) for n in body.nodes(rows, kinds)])
    return out


@pytest.mark.parametrize("kinds", _KINDS)
def test_a_kept_walk_is_the_fresh_walk_for_every_row_set(kinds):
    tree = ast.parse(NESTED)
    split = bodies(tree, ModuleScope.build(tree, None, "m.py"))
    row_sets = [
        frozenset({2}),
        frozenset({2, 15}),  # the same rows inside the function, another outside: the kept answer
        frozenset({4, 6}),
        frozenset({9, 10}),
        frozenset({10}),  # a row inside a call split over three
        frozenset({14}),  # between the function and the module's statement
        frozenset(range(1, 16)),
        frozenset(),
    ]
    first = {rows: [body.nodes(rows, kinds) for body in split[1:]] for rows in row_sets}
    for rows in row_sets:  # the second round reads what the first kept
        kept = [[_where(n) for n in body.nodes(rows, kinds)] for body in split]
        assert kept == _fresh(NESTED, rows, kinds), sorted(rows)
        for body, walked in zip(split[1:], first[rows], strict=True):
            assert body.nodes(rows, kinds) is walked or not walked, (body, sorted(rows))


def test_a_walk_is_kept_only_for_rows_and_only_on_functions_and_classes():
    tree = ast.parse(NESTED)
    module, outer, _inner, method = bodies(tree, ModuleScope.build(tree, None, "m.py"))
    list(module.nodes(frozenset({15})))
    list(outer.nodes())
    assert not hasattr(tree, functions._WALKS) and not hasattr(outer.node, functions._WALKS)
    assert outer.nodes(frozenset({2})) is outer.nodes(frozenset({2, 15}))
    assert method.nodes(frozenset({2})) == ()  # rows outside it: nothing walked, nothing kept
    assert not hasattr(method.node, functions._WALKS)


def test_the_kept_walks_of_a_function_stay_few():
    tree = ast.parse(NESTED)
    outer = bodies(tree, ModuleScope.build(tree, None, "m.py"))[1]
    for row in range(1, 13):
        for extra in range(3):
            outer.nodes(frozenset({row, row + extra}))
    assert len(getattr(outer.node, functions._WALKS)) <= functions._WALKS_KEPT


INSERTS = textwrap.dedent(
    """\
    import torch


    def _insert(gm, node):
        with gm.graph.inserting_before(node):
            gm.graph.call_function(torch.ops.aten.relu, (node,))
            gm.graph.call_function(torch.ops.aten.sigmoid, (node,))


    def run(gm):
        for n in gm.graph.nodes:
            _insert(gm, n)
        return gm


    def other(x):
        return x
    """
)


def test_qL102_s_verdicts_walk_an_inserting_function_once(tmp_path, monkeypatch):
    """Each reported insertion asks whether its function inserts into its parameter's graph,
    builds the graph it inserts into, or got it stripped from a call: one walk of the
    function for every insertion of every check while the function is unchanged."""
    walked: collections.Counter = collections.Counter()
    for module, name in (
        (graph_parameter_passes, "walk"),
        (hand_built_graphs, "walk_kinds"),
        (returned_graph_uses, "own_nodes"),
    ):
        real = getattr(module, name)

        def spy(node, *args, real=real, name=name, **kwargs):
            walked[(name, getattr(node, "name", "<module>"))] += 1
            return real(node, *args, **kwargs)

        monkeypatch.setattr(module, name, spy)
    path = str(package(tmp_path) / "checked.py")
    project = ProjectIndex()
    first = findings(project, path, INSERTS, ("QL102",))
    assert [row for _, row, _, _ in first] == [6, 7]
    assert {key: n for key, n in walked.items() if key[1] == "_insert"} == {
        ("walk", "_insert"): 1,
        ("walk_kinds", "_insert"): 1,
        ("own_nodes", "_insert"): 1,
    }
    walked.clear()
    assert findings(project, path, INSERTS.replace("return x\n", "return x; y = 1\n"), ("QL102",)) == first
    assert not [key for key in walked if key[1] == "_insert"]


DERIVED = textwrap.dedent(
    """\
    import torch
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


    class Holder:
        def __init__(self, model, quantizer):
            self.gm = prepare_pt2e(torch.export.export(model, ()).module(), quantizer)

        def calibrate(self):
            self.gm.eval()


    def test_other():
        class Unrelated(torch.nn.Module):
            pass
        print(Holder)
        return Unrelated


    class Suite:
        def test_a(self):
            class A(torch.nn.Module):
                pass

        def test_b(self):
            return 1
    """
)


def test_qL203_s_derived_classes_are_read_per_statement(tmp_path, monkeypatch):
    """A class another class of the module derives from is left alone (the subclass may store
    an eager module in the field). The base names of each top-level statement are kept on it:
    after a keystroke only the edited statement's classes are looked for again, and a subclass
    typed in a test's body is seen at once."""
    from qlint.analysis.flow import graph_fields

    looked: list[int] = []  # the statements whose blocks are looked into for classes
    real = graph_fields.statement_lists

    def spy(stmt):
        looked.append(stmt.lineno)
        return real(stmt)

    monkeypatch.setattr(graph_fields, "statement_lists", spy)
    derived = DERIVED.replace("class Unrelated(torch.nn.Module):", "class Unrelated(Holder):")
    typed = DERIVED.replace("return Unrelated", "return Unrelated  # x")
    seen = steps(tmp_path, [DERIVED, typed, derived, DERIVED], ("QL203",))
    assert [[row for _, row, _, _ in found] for found in seen] == [[10], [10], [], [10]]
    looked.clear()
    path = str(package(tmp_path) / "checked.py")
    project = ProjectIndex()
    findings(project, path, DERIVED, ("QL203",))
    looked.clear()
    typed = DERIVED.replace("return Unrelated", "return Unrelated  # y")
    findings(project, path, typed, ("QL203",))
    assert 5 not in looked and 13 in looked  # the class statement is reused, the test's is new
    looked.clear()
    findings(project, path, typed.replace("return 1", "return 1  # z"), ("QL203",))
    # The suite holding the edit is a new node, its other test is reused: not looked into.
    assert 20 in looked and 21 not in looked and 22 not in looked


WRAPPER = textwrap.dedent(
    """\
    import torch


    def insert(gm, op, node):
        return gm.graph.call_function(op, (node,))


    def run(gm):
        for n in gm.graph.nodes:
            insert(gm, torch.ops.aten.relu, n)


    def other(x):
        return x
    """
)


def test_the_wrapper_search_walks_an_unchanged_function_once(tmp_path, monkeypatch):
    """The module's own wrappers are found by walking the calls of each function on the rows
    of its needles: kept on the function, under those rows, for the checks after a keystroke."""
    from qlint.analysis.graphs import own_calls

    walked: list[str] = []
    real = own_calls.own_nodes

    def spy(owner, *args, **kwargs):
        walked.append(getattr(owner, "name", "<module>"))
        return real(owner, *args, **kwargs)

    monkeypatch.setattr(own_calls, "own_nodes", spy)
    path = str(package(tmp_path) / "checked.py")
    project = ProjectIndex()
    first = findings(project, path, WRAPPER, ("QL102",))
    assert [row for _, row, _, _ in first] == [10]
    assert "insert" in walked
    walked.clear()
    assert findings(project, path, WRAPPER.replace("return x\n", "return x; y = 1\n"), ("QL102",)) == first
    assert "insert" not in walked
    # An edit of the wrapper itself is read again: it no longer inserts what it is handed.
    fixed = WRAPPER.replace("call_function(op, (node,))", "call_function(torch.ops.aten.relu.default, (node,))")
    assert findings(project, path, fixed, ("QL102",)) == []
    assert "insert" in walked
