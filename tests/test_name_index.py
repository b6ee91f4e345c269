"""The module's names by identifier (`tree_walk.names_by_id`) and its call statements by
callee (`call_statements.call_statements`), each made by one walk kept on the tree, and the
per-finding verdicts that read them instead of walking the whole module again for every
function they ask about (ao's cold run, issue 13): the same answers as the walks they
replace, and no walk where the index settles the question."""

from __future__ import annotations

import ast
import textwrap

import pytest

from qlint.analysis import tree_walk
from qlint.analysis.context import FileContext
from qlint.analysis.graphs import call_statements, compiled_next, dead_code, dynamo_graph_passes, never_called
from qlint.analysis.names.functions import Body
from qlint.source import LineIndex

MODULE = textwrap.dedent(
    """
    import torch

    def _pass(gm):
        gm.graph.call_function(OP, ())

    def caller(gm):
        _pass(gm)
        if gm:
            _pass(gm.sub)
        try:
            pass
        except ValueError:
            _pass(gm)
        match gm:
            case 1:
                _pass(self.gm)
        def inner(g):
            _pass(g)
            other(g, _pass)
        return inner

    class Holder:
        x = _pass
        def method(self, gm):
            _pass(self.gm)
            del gm
            _pass = 1

    lam = lambda g: _pass(g)
    exit_now = [a for a in _pass]
    """
)


def _naive_names(tree: ast.AST, name: str, load: bool) -> list[ast.Name]:
    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Name) and n.id == name and (not load or isinstance(n.ctx, ast.Load))
    ]


def _naive_calls_of(tree: ast.AST, name: str):
    """`call_statements.calls_of` as it walked before the index."""
    found = []
    for owner in ast.walk(tree):
        if not isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for stmts in call_statements.statement_lists(owner):
            for index, stmt in enumerate(stmts):
                if call_statements.call_statement(stmt, name) is not None:
                    found.append((owner, stmts, index))
    uses = len(_naive_names(tree, name, True))
    return found if found and uses == len(found) else None


def _naive_call_sites(tree: ast.AST, name: str):
    """`compiled_next._call_sites` as it walked before the index."""
    found = []
    for owner in ast.walk(tree):
        if not isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for stmt in (s for stmts in call_statements.statement_lists(owner) for s in stmts):
            graph = compiled_next._pass_statement(stmt, name)
            if graph is not None:
                found.append((owner, stmt, graph))
    uses = len(_naive_names(tree, name, True))
    return found if found and uses == len(found) else None


def _ctx(text: str, path: str = "m.py") -> FileContext:
    return FileContext(path, text, ast.parse(text), LineIndex(text), None, None)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["_pass", "gm", "g", "inner", "other", "missing", "torch", "a"])
def test_names_by_id_are_the_walks_names(name):
    tree = ast.parse(MODULE)
    assert tree_walk.names_by_id(tree).get(name, []) == _naive_names(tree, name, False)
    assert tree_walk.name_loads(tree, name) == _naive_names(tree, name, True)


def test_the_module_is_walked_once_for_every_name(monkeypatch):
    tree = ast.parse(MODULE)
    walks = []
    real = tree_walk.walk_kinds
    monkeypatch.setattr(tree_walk, "walk_kinds", lambda node, kinds: walks.append(node) or real(node, kinds))
    for name in ("_pass", "gm", "missing", "_pass"):
        tree_walk.name_loads(tree, name)
    assert walks == [tree]


@pytest.mark.parametrize("name", ["_pass", "inner", "other", "missing"])
def test_calls_and_sites_are_those_of_the_walks(name):
    text = MODULE + "\n\ndef only(gm):\n    helper(gm)\n    helper(self.gm)\n"
    for source, asked in ((MODULE, name), (text, "helper")):
        tree = ast.parse(source)
        assert call_statements.calls_of(tree, asked) == _naive_calls_of(tree, asked)
        assert compiled_next._call_sites(tree, asked) == _naive_call_sites(tree, asked)
        outer = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in ("caller", "only"))
        assert call_statements.calls_of(outer, asked) == _naive_calls_of(outer, asked)


def test_a_pass_only_called_as_statements_is_found_from_the_index():
    text = "def _p(gm):\n    pass\n\ndef a(gm):\n    _p(gm)\n\ndef b(g):\n    x = 1\n    _p(g)\n"
    tree = ast.parse(text)
    calls = call_statements.calls_of(tree, "_p")
    assert [(owner.name, index) for owner, _, index in calls] == [("a", 0), ("b", 1)]
    sites = compiled_next._call_sites(tree, "_p")
    assert [(owner.name, graph) for owner, _, graph in sites] == [("a", "gm"), ("b", "g")]


def _count_module_walks(monkeypatch, tree: ast.AST) -> list[ast.AST]:
    seen: list[ast.AST] = []
    real = ast.walk

    def counted(node):
        if node is tree:
            seen.append(node)
        return real(node)

    monkeypatch.setattr(ast, "walk", counted)
    return seen


def test_a_pass_the_module_never_names_needs_no_walk(monkeypatch):
    tree = ast.parse("def _p(gm):\n    gm.graph.call_function(OP, ())\n\ndef b(g):\n    other(g)\n")
    walks = _count_module_walks(monkeypatch, tree)
    assert call_statements.calls_of(tree, "_p") is None
    assert compiled_next._call_sites(tree, "_p") is None
    assert walks == []
    assert not hasattr(tree, "_qlint_call_statements")  # nor the index of its call statements


def test_call_statements_are_indexed_once_for_every_pass(monkeypatch):
    tree = ast.parse(MODULE)
    walks = []
    real = call_statements.walk_kinds
    monkeypatch.setattr(call_statements, "walk_kinds", lambda node, kinds: walks.append(node) or real(node, kinds))
    for name in ("_pass", "inner", "_pass"):
        call_statements.calls_of(tree, name)
        compiled_next._call_sites(tree, name)
    assert walks == [tree]


EXIT = "import sys\n\ndef _helper(m):\n    return m\n\ndef main():\n    sys.exit(0)\n    _helper(1)\n"


@pytest.mark.parametrize(
    ("text", "dead"),
    [
        (EXIT, True),  # its only call follows an exit
        (EXIT + "\n_helper(2)\n", False),  # called on a live row too
        (EXIT.replace("    _helper(1)\n", ""), False),  # never named
        (EXIT + "\nx = obj._helper\n", False),  # spelled otherwise: an attribute
        (EXIT + '\n__all__ = ["_helper"]\n', False),  # a string naming it
    ],
)
def test_called_only_where_dead_answers_as_before(text, dead):
    ctx = _ctx(text)
    func = next(n for n in ctx.tree.body if isinstance(n, ast.FunctionDef) and n.name == "_helper")
    assert dead_code._called_only_where_dead(ctx, func) is dead


@pytest.mark.parametrize("rest", ["\n_helper(2)\n", "\nclass C:\n    pass\n"])
def test_a_live_call_or_none_settles_dead_code_without_walking_the_module(monkeypatch, rest):
    ctx = _ctx(EXIT.replace("    _helper(1)\n", "") + rest)
    func = next(n for n in ctx.tree.body if isinstance(n, ast.FunctionDef) and n.name == "_helper")
    walks = _count_module_walks(monkeypatch, ctx.tree)
    assert dead_code._called_only_where_dead(ctx, func) is False
    assert walks == []


def test_computed_getattr_is_looked_for_once_per_check(monkeypatch):
    ctx = _ctx("def f(m, name):\n    return getattr(m, 'x' + name)\n")
    walks = []
    real = never_called._spanning
    monkeypatch.setattr(never_called, "_spanning", lambda tree, rows: walks.append(tree) or real(tree, rows))
    monkeypatch.setattr(ast, "walk", lambda node: walks.append(node) or tree_walk.walk(node))
    assert never_called.computed_getattr(ctx) and never_called.computed_getattr(ctx)
    assert walks == [ctx.tree]
    assert not never_called.computed_getattr(_ctx("def f(m):\n    return getattr(m, 'x')\n"))


def test_dynamo_callers_walk_only_the_rows_naming_the_helper(monkeypatch):
    text = textwrap.dedent(
        """
        def _helper(gm):
            return gm

        def backend(gm, inputs):
            _helper(gm)
            return gm

        def unrelated(gm):
            for n in gm.graph.nodes:
                print(n)
        """
    )
    ctx = _ctx(text)
    walked = []
    real = Body.nodes

    def nodes(self, lines=None, kinds=None):
        walked.append((getattr(self.node, "name", "<module>"), lines))
        return real(self, lines, kinds)

    monkeypatch.setattr(Body, "nodes", nodes)
    callers = dynamo_graph_passes._callers(ctx, "_helper")
    assert [c.name for c in callers] == ["backend"]
    assert walked == [("<module>", frozenset({6})), ("backend", frozenset({6}))]
    walked.clear()
    assert dynamo_graph_passes._callers(ctx, "missing") == []
    assert walked == []
