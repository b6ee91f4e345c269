"""The helper search asks about an imported name only where the file may call it
(`analysis/graphs/called_names`): every way of writing a call still finds the helper."""

from __future__ import annotations

import sys
import textwrap

import pytest

from qlint.analysis.graphs import forwarding_memos, helper_lookup
from qlint.analysis.graphs.called_names import may_call
from qlint.engine import check_source
from tests.conftest import settings_for, write_package


@pytest.mark.parametrize(
    "text",
    [
        "helper(x)",
        "obj.helper(x)",
        "self.helper (x)",
        "(helper)(x)",
        "((obj.helper\n))(x)",
        "y = [helper  # why\n    (x)]",
        "y = [helper  # why (not this)\n    (x)]",
        "helper \\\n(x)",
        "a = 1; helper\t(x)",
        "helper_x = 1\nhelper(x)",
        "functools.partial(helper, op=o)",
        "partial( \\\n helper, o)",
    ],
)
def test_every_spelling_of_a_call_counts(text):
    assert may_call(text, "helper")


@pytest.mark.parametrize(
    "text",
    [
        "from pkg import helper",
        "x = helper\ny = f(x)",
        "def f(a: helper) -> helper: ...",
        "helper_x(1)\nmy_helper(2)\nhelpers(3)",
        "x = helper  # see helper_x (1)\n",
        "x = [helper]\n(y)",
        "x = helper[int](y)",
        "impartial(helper)",
        "partial(f, helper)",
    ],
)
def test_names_written_otherwise_do_not(text):
    assert not may_call(text, "helper")


def test_text_outside_ascii_counts_every_name_as_called():
    # The parser NFKC-normalises identifiers: a fullwidth h spells `h`.
    assert may_call("x = 'é'\n", "helper")


TESTING = """
def check_nodes(m, occurrence):
    m.checkGraphModuleNodes(m, expected_node_occurrence=occurrence)

def insert_op(graph, op, args):
    return graph.call_function(op, args)

OCC = {}
"""


def _check(tmp_path, select, body, imports="from pkg.testing import check_nodes, insert_op, OCC"):
    # `.target_dtype` passes QL101's prefilter (`.target`) without being a node target, as in
    # real files that call a test helper: the helper's calls are what the rule must find.
    # The overload inserted last passes QL102's (and is no finding).
    text = (
        f"import torch\n{imports}\n\ndef test(m, gm, node):\n    dtype = m.target_dtype\n"
        + textwrap.indent(textwrap.dedent(body), "    ")
        + "\n    gm.graph.call_function(torch.ops.aten.relu.default, (node,))\n"
    )
    pkg = write_package(tmp_path, "pkg", testing=TESTING, passes=text)
    path = pkg / "passes.py"
    result = check_source(path.read_bytes(), str(path), settings_for(select))
    assert not result.errors, result.errors
    return [d.range.start.row for d in result.diagnostics]


@pytest.mark.parametrize(
    "body",
    [
        "check_nodes(m, {torch.ops.aten.relu: 1})",
        "(check_nodes)(m, {torch.ops.aten.relu: 1})",
        "x = [check_nodes  # why\n    (m, {torch.ops.aten.relu: 1})]",
        "check_nodes \\\n(m, {torch.ops.aten.relu: 1})",
    ],
)
def test_imported_helper_called_any_way_is_still_a_sink(tmp_path, body):
    assert _check(tmp_path, ("QL101",), body) == [6 + body.count("\n")]


def test_imported_helper_under_another_name(tmp_path):
    rows = _check(tmp_path, ("QL101",), "cn(m, {torch.ops.aten.relu: 1})", "from pkg.testing import check_nodes as cn")
    assert rows == [6]


def test_imported_helper_called_with_a_non_ascii_spelling(tmp_path):
    # A fullwidth c spells `check_nodes` to the parser. Its row is read for the node target
    # there: the rows of helper calls are found by the helper's name as written.
    body = "\uff43heck_nodes(m, {torch.ops.aten.relu: 1}); t = node.target"
    assert _check(tmp_path, ("QL101",), body) == [6]


@pytest.mark.parametrize(
    "body", ["insert_op(gm.graph, torch.ops.aten.relu, (node,))", "(insert_op)(gm.graph, torch.ops.aten.relu, (node,))"]
)
def test_imported_insertion_wrapper_called_any_way_still_inserts(tmp_path, body):
    assert _check(tmp_path, ("QL102",), body) == [6]


def _patch_everywhere(monkeypatch, name: str, real, replacement) -> None:
    """Replace `real` in every module of the helper search that imported it as `name` (the
    search is split over several modules), so the test does not depend on which one asks."""
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("qlint.") and getattr(module, name, None) is real:
            monkeypatch.setattr(module, name, replacement)


def test_names_the_file_never_calls_are_not_asked_about(tmp_path, monkeypatch):
    asked = []
    real = helper_lookup.module_function

    def recording(fw, resolver, scope, name, depth):
        if depth == 0:
            asked.append(name)
        return real(fw, resolver, scope, name, depth)

    _patch_everywhere(monkeypatch, "module_function", real, recording)
    _patch_everywhere(monkeypatch, "IMPORTED", forwarding_memos.IMPORTED, {})  # nothing known from earlier tests
    body = "expected = OCC\ncheck_nodes(m, {torch.ops.aten.relu: 1})\nn = node.target == torch.ops.aten.add"
    assert _check(tmp_path, ("QL101",), body) == [7, 8]
    assert "check_nodes" in asked
    assert "OCC" not in asked and "insert_op" not in asked


def test_the_text_is_not_searched_for_names_that_cannot_be_helpers(tmp_path, monkeypatch):
    # `import torch` and names imported from torch* are never helpers: the search for calls
    # of them is skipped, the project's own names are still searched for.
    from qlint.analysis.graphs import called_names

    searched = []
    real = called_names.may_call

    def recording(text, name):
        searched.append(name)
        return real(text, name)

    monkeypatch.setattr(called_names, "may_call", recording)
    # QL101's import trigger asks first (the file writes no node target) and shares its
    # answers with the check (`calls_memo`).
    _patch_everywhere(monkeypatch, "may_call", real, recording)
    _patch_everywhere(monkeypatch, "IMPORTED", forwarding_memos.IMPORTED, {})
    imports = "from pkg.testing import check_nodes, OCC\nfrom torch.fx import GraphModule"
    assert _check(tmp_path, ("QL101",), "check_nodes(m, {torch.ops.aten.relu: 1})", imports) == [7]
    assert {"check_nodes", "OCC"} <= set(searched)
    assert "torch" not in searched and "GraphModule" not in searched


def test_the_memo_in_the_check_cache_keeps_no_cycle_through_the_context():
    # A cycle would keep every checked file's tree alive until the cyclic GC ran.
    import ast
    import gc
    import weakref

    from qlint.analysis.context import FileContext
    from qlint.analysis.graphs.called_names import called_in
    from qlint.source import LineIndex

    text = "from pkg import helper\nhelper(1)\n"
    ctx = FileContext("m.py", text, ast.parse(text), LineIndex(text), None, None)  # type: ignore[arg-type]
    assert called_in(ctx)("helper") and not called_in(ctx)("other")
    alive = weakref.ref(ctx)
    gc.disable()
    try:
        del ctx
        assert alive() is None
    finally:
        gc.enable()


def test_attributes_called_on_an_imported_module():
    from qlint.analysis.graphs.called_names import attributes_called

    text = (
        "gu.insert_op(g, op)\n"
        "x.gu.skipped(1)\n"  # `gu` is not the head
        "gu . sub .\\\n  deep (x)\n"
        "gu.not_called\n"
        "functools.partial(gu.bound, 1)\n"
        "(gu.wrapped)(1)\n"
        "gux.other()\n"
        "(gu  # why\n .commented  # more\n (1))\n"
    )
    assert attributes_called(text, "gu") == {("insert_op",), ("sub", "deep"), ("bound",), ("wrapped",), ("commented",)}
    # Identifiers are read as the parser reads them (NFKC).
    assert attributes_called("\uff47u.insert_op(x)\n", "gu") == {("insert_op",)}


def test_attributes_called_past_a_row_of_hashes_in_linear_time():
    import time

    from qlint.analysis.graphs.called_names import attributes_called

    start = time.process_time()  # CPU time: a loaded machine does not stretch it
    assert attributes_called("gu " + "#" * 60 + "\nx = 1\n", "gu") == set()
    assert time.process_time() - start < 1.0  # an ambiguous comment pattern took minutes


def test_attributes_called_only_where_the_whole_name_heads_a_dotted_call():
    from qlint.analysis.graphs.called_names import attributes_called

    text = (
        "pos.x(1)\n"  # inside a longer word, on the left
        "osx.y(1)\n"  # and on the right
        "os(1).z(2)\n"  # a call of the name, then an attribute of its result
        "os\\\n  .path.join(a)\n"  # a continuation before the dot
        "os  # why\n"  # a comment before it (inside brackets)
    )
    assert attributes_called(text, "os") == {("path", "join")}
    assert attributes_called(text + "  .getcwd()\n", "os") == {("path", "join"), ("getcwd",)}


def test_attributes_called_answers_each_text_apart():
    from qlint.analysis.graphs.called_names import attributes_called

    # Equal names, different texts (asked in turn, as a check reads other modules between).
    first, second = "gu.a(x)\n", "gu.b(x)\n"
    for _ in range(2):
        assert attributes_called(first, "gu") == {("a",)}
        assert attributes_called(second, "gu") == {("b",)}
        assert attributes_called("".join(["gu.", "c(x)\n"]), "gu") == {("c",)}


def test_an_attribute_named_anywhere_after_a_dot_is_found_for_any_head():
    from qlint.analysis.graphs.called_names import attributes_called, may_call_attribute

    names = frozenset({"insert_op", "call", "call_function"})
    for text in (
        "gu.insert_op(g, op)\n",
        "x = (gu .  # why\n  insert_op)(g, op)\n",
        "pkg.graph_utils.\\\n    call(g)\n",
        "functools.partial(gu.call_function, op=op)\n",
        "\uff47u.\uff49nsert_op(x)\n",  # read NFKC-normalised, as the parser reads it
    ):
        assert may_call_attribute(text, names), text
        assert any(tail[-1] in names for head in ("gu", "pkg") for tail in attributes_called(text, head))
    for text in ("insert_op(g, op)\n", "gu.insert_ops(g)\n", "gu.caller(g)\n", "# gu.cal(g)\n", "gu.calls\n"):
        assert not may_call_attribute(text, names), text
    assert not may_call_attribute("gu.x(1)\n", frozenset())


def test_every_attribute_path_ends_where_the_search_for_names_finds_one():
    """Exactness on this repository's own modules: every dotted call `attributes_called` reads
    ends in a name `may_call_attribute` finds after a dot."""
    import pathlib

    from qlint.analysis.graphs.called_names import attributes_called, may_call_attribute
    from qlint.analysis.names.text_imports import text_imports

    root = pathlib.Path(__file__).resolve().parent.parent / "qlint"
    for path in sorted(root.rglob("*.py"))[:150]:
        text = path.read_text()
        for name, _ in text_imports(text, "a.b", "a/b.py"):
            for tail in attributes_called(text, name):
                assert may_call_attribute(text, frozenset({tail[-1]})), (path, name, tail)
