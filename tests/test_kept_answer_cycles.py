"""No answer kept on a syntax-tree node may hold a cycle through it (`node_memo`): the node's
tree would outlive its readers until the cyclic collector ran, which the checks pause.

The suite searches every answer computed (`tests/kept_answer_cycles.py`, wired through
`node_memo.WITNESS` for every test by `conftest._no_kept_cycles`); these tests pin what that
search calls a cycle and what it does not, that both memo functions tell it of every answer
they compute (and of no answer they read back), and, through the engine, that a checked
module's tree is freed by reference counting alone, the collector off: QL201's index of a
module's attribute uses (`attribute_content._uses`, asked when an attribute capture is
judged for its fix) named the module among a top-level attribute's parents, and held it."""

from __future__ import annotations

import ast
import gc
import weakref

import pytest

from qlint.analysis import node_memo
from qlint.analysis.graphs import call_statements, compiled_next
from qlint.analysis.names import live_trees
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source, checked_once
from qlint.fixes import fix_text
from tests import kept_answer_cycles
from tests.conftest import alone, settings_for

FUNCTION = """\
def run(model, x):
    y = model(x)
    return [v for v in y]
"""


def _function():
    tree = ast.parse(FUNCTION)
    return tree, tree.body[0]


class _Holder:
    __slots__ = ("held",)

    def __init__(self, held):
        self.held = held


class _Plain:
    def __init__(self, held):
        self.held = held

    def ask(self):
        return self.held


# --- what the search calls a cycle ---


@pytest.mark.parametrize(
    "make",
    [
        lambda tree, fn: [fn],
        lambda tree, fn: {"run": (fn, 1)},
        lambda tree, fn: _Holder(fn),
        lambda tree, fn: _Plain({fn.name: fn}),
        lambda tree, fn: lambda: fn,
        lambda tree, fn: _Plain(fn).ask,
        lambda tree, fn: frozenset({fn}),
    ],
    ids=["list", "dict-tuple", "slots", "object-dict", "closure", "bound-method", "frozenset"],
)
def test_an_answer_holding_its_own_node_is_a_cycle(make):
    tree, fn = _function()
    assert kept_answer_cycles.cycle_through(fn, make(tree, fn)) == "holds its own node"


def test_an_answer_holding_a_node_above_its_own_is_a_cycle():
    tree, fn = _function()
    call = next(n for n in ast.walk(fn) if isinstance(n, ast.Call))
    # Kept on the call: the statement it is in, its function and its module all hold it.
    assign = fn.body[0]
    assert kept_answer_cycles.cycle_through(call, [assign]) == "holds a Assign above its node"
    assert kept_answer_cycles.cycle_through(call, (1, fn)) == "holds a FunctionDef above its node"
    assert kept_answer_cycles.cycle_through(call, {"m": tree}) == "holds a Module above its node"


@pytest.mark.parametrize(
    "make",
    [
        lambda tree, fn: None,
        lambda tree, fn: frozenset({"x", "y"}),
        lambda tree, fn: [n for n in ast.walk(fn) if isinstance(n, ast.Call)],  # nodes below it
        lambda tree, fn: {id(fn.body[0]): fn.body[0]},
        lambda tree, fn: weakref.ref(fn),  # held weakly (`tree_walk.Parents`'s root)
        lambda tree, fn: [ast.parse(FUNCTION).body[0]],  # an equal node of another tree
        lambda tree, fn: _Holder(fn.body[-1]),
        lambda tree, fn: lambda statement=fn.body[0]: statement,  # a default below it
        lambda tree, fn: ast.walk,  # a function holding no node
        lambda tree, fn: [tree.body[0].args],  # the parameters, below the function
    ],
    ids=[
        "none",
        "names",
        "below",
        "below-by-id",
        "weakref",
        "other-tree",
        "last-statement",
        "default",
        "function",
        "args",
    ],
)
def test_an_answer_holding_nothing_above_it_is_no_cycle(make):
    tree, fn = _function()
    assert kept_answer_cycles.cycle_through(fn, make(tree, fn)) is None


# --- the memo functions tell the search of every answer they compute ---


def test_both_memo_functions_tell_the_witness_of_each_answer_they_compute(monkeypatch):
    told = []
    monkeypatch.setattr(node_memo, "WITNESS", lambda node, attr, answer: told.append((node, attr, answer)))
    _, fn = _function()
    for _ in range(2):  # computed, then read back: told once
        node_memo.kept_on_node(fn, "_qlint_test_names", lambda f: frozenset({f.name}))
        node_memo.kept_on_node_by(fn, "_qlint_test_rows", 3, 4, lambda: (3,))
    assert told == [(fn, "_qlint_test_names", frozenset({"run"})), (fn, "_qlint_test_rows", (3, (3,)))]


def test_the_suite_s_witness_records_a_kept_cycle_and_only_that(monkeypatch):
    monkeypatch.setattr(kept_answer_cycles, "found", [])
    monkeypatch.setattr(node_memo, "WITNESS", kept_answer_cycles.witness)
    tree, fn = _function()
    node_memo.kept_on_node(fn, "_qlint_test_calls", lambda f: [n for n in ast.walk(f) if isinstance(n, ast.Call)])
    node_memo.kept_on_node_by(fn, "_qlint_test_loops", "y", 4, lambda: fn.body[-1])
    assert kept_answer_cycles.found == []
    node_memo.kept_on_node(fn, "_qlint_test_self", lambda f: (f,))
    node_memo.kept_on_node_by(fn.body[0], "_qlint_test_up", "x", 4, lambda: tree)
    assert kept_answer_cycles.found == [
        "_qlint_test_self kept on a FunctionDef (line 1) holds its own node",
        "_qlint_test_up kept on a Assign (line 2) holds a Module above its node",
    ]


# --- a checked module's tree is freed by reference counting alone ---

# An attribute capture judged for its fix (QL201, unsafe: the attribute may have been replaced
# elsewhere in the module, `attribute_content.kept_source`), with a top-level attribute read.
EXPORTER = """\
import torch
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

DEFAULT = torch.nn.BatchNorm1d


class Exporter:
    def __init__(self):
        self.model = torch.nn.BatchNorm1d(3)

    def run(self, quantizer, x):
        prepare_pt2e(export(self.model, (x,)).module(), quantizer)
"""

# The same capture, its attribute also stored in another method: judged replaced, still reported.
REPLACED = EXPORTER.replace("    def run(", "    def swap(self):\n        self.model = torch.nn.ReLU()\n\n    def run(")


def _trees_left(monkeypatch, check) -> tuple[list, int]:
    """What `check()` returns, and how many of the whole trees parsed for it are still alive
    once its objects went, the cyclic collector off throughout."""
    parsed: list[weakref.ref] = []
    add = live_trees.LIVE.add

    def registered(path, text, tree):
        parsed.append(weakref.ref(tree))
        add(path, text, tree)

    monkeypatch.setattr(live_trees.LIVE, "add", registered)
    gc.collect()
    gc.disable()
    try:
        out = check()
        assert parsed, "the check parsed no whole tree"
        return out, sum(ref() is not None for ref in parsed)
    finally:
        gc.enable()


def _check(text: str, fix: bool = False):
    def run():
        path = alone("exporter.py")
        project = ProjectIndex(track_dependents=False)
        try:
            if fix:
                return fix_text(text, path, settings_for(("QL201",)), unsafe=True).fixed
            result = check_source(text, path, settings_for(("QL201",)), project)
            return [
                (d.code, d.range.start.row, d.fix.applicability.name if d.fix else None) for d in result.diagnostics
            ]
        finally:
            checked_once(path)

    return run


def test_a_checked_module_judging_an_attribute_capture_is_freed_by_reference_counting(monkeypatch):
    found, alive = _trees_left(monkeypatch, _check(EXPORTER))
    assert found == [("QL201", 13, "UNSAFE")]
    assert alive == 0


def test_a_fixed_module_judging_an_attribute_capture_is_freed_by_reference_counting(monkeypatch):
    fixed, alive = _trees_left(monkeypatch, _check(EXPORTER, fix=True))
    assert "        self.model.eval()\n        prepare_pt2e(" in fixed
    assert alive == 0


def test_an_attribute_replaced_elsewhere_keeps_its_verdict_and_frees_its_tree(monkeypatch):
    found, alive = _trees_left(monkeypatch, _check(REPLACED))
    assert alive == 0
    assert found == [("QL201", 16, "UNSAFE")]


# --- a function's index of its call statements (QL102's strips after a pass) ---

OUTER = """\
def outer(gm):
    _pass(gm)
    if gm:
        _pass(gm)

    def inner(g):
        _pass(g)
"""


def test_a_function_s_own_call_statements_name_it_and_free_it_by_reference_counting():
    gc.collect()
    gc.disable()
    try:
        outer = ast.parse(OUTER).body[0]
        inner = outer.body[-1]
        for _ in range(2):  # indexed, then read back
            sites = call_statements.calls_of(outer, "_pass")
            assert [(owner.name, stmts[i].lineno) for owner, stmts, i in sites] == [
                ("outer", 2),
                ("outer", 4),
                ("inner", 7),
            ]
            assert sites[0][0] is outer and sites[2][0] is inner
            assert [owner is outer for owner, _, _ in compiled_next._call_sites(outer, "_pass")] == [True, True, False]
        gone = weakref.ref(outer)
        del outer, inner, sites
        assert gone() is None
    finally:
        gc.enable()


def test_a_module_s_call_statements_name_their_functions():
    tree = ast.parse(OUTER)
    sites = call_statements.call_sites(tree, "_pass")
    assert [owner.name for owner, _, _ in sites] == ["outer", "outer", "inner"]
    assert sites is call_statements.call_statements(tree)["_pass"]  # no copy for a module's
