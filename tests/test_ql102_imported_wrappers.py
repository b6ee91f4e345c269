"""QL102 through the project's own insertion wrapper imported from another module (issue 14.15).

A module that inserts only through `insert_op(gm.graph, aten.relu, args)`, imported from the
module that calls `graph.call_function`, holds none of QL102's triggers: the prefilter asks
the wrapper module's summary (through the names the file imports) instead of skipping it.
"""

from __future__ import annotations

import os

import pytest

from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from qlint.rules.ql102_packet_insertion import PacketInsertion
from tests.conftest import settings_for, write_package

GRAPH_UTILS = """\
import torch


def insert_op(graph, op, args):
    return graph.call_function(op, args)


def first_user(node):
    return next(iter(node.users))


class Rewriter:
    def insert(self, graph, op, args):
        with graph.inserting_after(args[0]):
            return graph.create_node("call_function", op, args)


def is_op_node(node, target_op):
    return node.op == "call_function" and node.target == target_op
"""

# `{imports}` and `{body}` are filled per case: nothing here spells call_function or target.
PASS = """\
import functools
from functools import partial

import torch
{imports}


def rewrite(gm, node):
    {body}
"""


def _flagged(tmp_path, imports, body, **modules):
    pkg = write_package(tmp_path, "pkg", graph_utils=GRAPH_UTILS, **modules)
    text = PASS.format(imports=imports, body=body)
    (pkg / "passes.py").write_text(text)
    path = str(pkg / "passes.py")
    result = check_source(text, path, settings_for(("QL102",)), ProjectIndex())
    assert not result.errors, result.errors
    return [(d.range.start.row, d.range.start.col) for d in result.diagnostics], result


LOUD = {
    "imported-function": ("from pkg.graph_utils import insert_op", "insert_op(gm.graph, torch.ops.aten.relu, (node,))"),
    "imported-under-alias": (
        "from pkg.graph_utils import insert_op as add",
        "add(gm.graph, torch.ops.aten.relu, (node,))",
    ),
    "relative-import": ("from .graph_utils import insert_op", "insert_op(gm.graph, torch.ops.aten.relu, (node,))"),
    "keyword": ("from pkg.graph_utils import insert_op", "insert_op(gm.graph, args=(node,), op=torch.ops.aten.relu)"),
    "partial-keyword": (
        "from pkg.graph_utils import insert_op",
        "functools.partial(insert_op, op=torch.ops.aten.relu)(gm.graph, args=(node,))",
    ),
    "partial-position": (
        "from pkg.graph_utils import insert_op",
        "relu = partial(insert_op, gm.graph, torch.ops.aten.relu)\n    relu((node,))",
    ),
}


@pytest.mark.parametrize("imports, body", LOUD.values(), ids=LOUD.keys())
def test_packet_passed_to_an_imported_wrapper_is_reported(tmp_path, imports, body):
    text = PASS.format(imports=imports, body=body)
    assert not PacketInsertion().triggered_by(text)  # the file's own text holds no trigger
    found, _ = _flagged(tmp_path, imports, body)
    assert len(found) == 1
    row, col = found[0]
    assert text.splitlines()[row - 1][col:].startswith("torch.ops.aten.relu")


@pytest.mark.parametrize(
    "init",
    [
        "from .graph_utils import insert_op\n",
        "from pkg.graph_utils import (  # the helpers (re-exported)\n    first_user,\n    insert_op,\n)\n",
    ],
)
def test_wrapper_re_exported_by_the_package_is_followed(tmp_path, init):
    pkg = write_package(tmp_path, "pkg")
    (pkg / "__init__.py").write_text(init)
    found, result = _flagged(tmp_path, "from pkg import insert_op", "insert_op(gm.graph, torch.ops.aten.relu, (node,))")
    assert found == [(9, 24)]
    # The re-exporting module is a dependency: it may stop re-exporting the wrapper.
    assert str(pkg / "__init__.py") in result.dependencies


def test_wrapper_re_exported_under_another_name(tmp_path):
    pkg = write_package(tmp_path, "pkg")
    (pkg / "__init__.py").write_text("from .graph_utils import insert_op as add_node\n")
    found, _ = _flagged(tmp_path, "from pkg import add_node", "add_node(gm.graph, torch.ops.aten.relu, (node,))")
    assert found == [(9, 23)]


@pytest.mark.parametrize(
    "imports, cls",
    [
        ("from pkg.graph_utils import Rewriter", "Rewriter"),
        ("import pkg.graph_utils as gu", "gu.Rewriter"),
    ],
)
def test_method_inherited_from_a_base_in_another_module(tmp_path, imports, cls):
    run = "    def run(self, gm, node):\n        self.insert(gm.graph, torch.ops.aten.relu, (node,))"
    cls = f"\n\nclass P({cls}):\n{run}"
    found, _ = _flagged(tmp_path, imports + cls, "pass")
    assert found == [(9, 30)]


QUIET = {
    # the overload the graphs carry
    "overload": ("from pkg.graph_utils import insert_op", "insert_op(gm.graph, torch.ops.aten.relu.default, (node,))"),
    # a function of the wrapper module that inserts nothing
    "not-a-wrapper": ("from pkg.graph_utils import first_user", "first_user(torch.ops.aten.relu)"),
    # the packet bound by `partial` to a matcher, not to an insertion
    "partial-of-a-matcher": (
        "from pkg.graph_utils import is_op_node",
        "return partial(is_op_node, target_op=torch.ops.aten.relu)(node)",
    ),
    # the class with an inserting method is used, not subclassed: its callers pass the op
    "class-not-subclassed": ("from pkg.graph_utils import Rewriter", "Rewriter().run(torch.ops.aten.relu)"),
    # the wrapper's module is not the project's
    "foreign-module": ("from other_pkg.graph_utils import insert_op", "insert_op(gm.graph, torch.ops.aten.relu, ())"),
}


@pytest.mark.parametrize("imports, body", QUIET.values(), ids=QUIET.keys())
def test_look_alikes_stay_quiet(tmp_path, imports, body):
    assert _flagged(tmp_path, imports, body)[0] == []


@pytest.mark.parametrize("name", ["not-a-wrapper", "class-not-subclassed", "foreign-module"])
def test_files_that_cannot_insert_through_an_import_are_not_parsed(tmp_path, name):
    _, result = _flagged(tmp_path, *QUIET[name])
    assert not result.parsed


def test_module_that_only_names_call_function_is_not_read_for_wrappers(tmp_path):
    # Matchers spell "call_function" on every row: such a module holds no wrapper.
    matchers = "def first(node):\n    return node.op == 'call_function'\n"
    _, result = _flagged(tmp_path, "from pkg.matchers import first", "first(torch.ops.aten.relu)", matchers=matchers)
    assert not result.parsed


def test_legacy_fx_graph_of_the_calling_module_is_quiet(tmp_path):
    body = "gm = symbolic_trace(gm)\n    insert_op(gm.graph, torch.ops.aten.relu, (node,))"
    imports = "from torch.fx import symbolic_trace\nfrom pkg.graph_utils import insert_op"
    assert _flagged(tmp_path, imports, body)[0] == []


def test_packet_nodes_erased_by_a_paired_pass_of_the_project_are_quiet(tmp_path):
    remove = (
        "import torch\n\nfrom pkg.passes import rewrite\n\n\ndef remove(gm):\n"
        "    for n in list(gm.graph.nodes):\n        if n.target == torch.ops.aten.relu:\n"
        "            n.replace_all_uses_with(n.args[0])\n            gm.graph.erase_node(n)\n"
    )
    imports, body = LOUD["imported-function"]
    assert _flagged(tmp_path, imports, body, remove=remove)[0] == []


def test_a_wrapper_added_later_reaches_the_calling_module(tmp_path):
    # The language server (and the results cache) recheck a file when a module its
    # prefilter read changes: the file was turned away, but its imports were read.
    pkg = write_package(tmp_path, "pkg")
    utils = str(pkg / "graph_utils.py")
    path = str(pkg / "passes.py")
    imports, body = LOUD["imported-function"]
    text = PASS.format(imports=imports, body=body)
    plain = "def insert_op(graph, op, args):\n    return None\n"
    project = ProjectIndex({utils: plain, path: text})
    first = check_source(text, path, settings_for(("QL102",)), project)
    assert first.diagnostics == [] and not first.parsed
    assert os.path.abspath(utils) in first.dependencies
    assert path in project.update(utils, GRAPH_UTILS)
    again = check_source(text, path, settings_for(("QL102",)), project)
    assert [d.code for d in again.diagnostics] == ["QL102"]


@pytest.fixture(autouse=True, params=["exact search", "wrapper index"])
def _trigger_kind(request):
    """Every case twice: as the language server and one-file runs ask (each import resolved),
    and as a run over many files does (`wrapper_index`: only the names the project's index of
    wrapper names holds are resolved), which must find exactly the same."""
    from qlint.analysis.graphs import wrapper_index

    if request.param == "wrapper index":
        wrapper_index.enable(None)
    yield
    wrapper_index.disable()
