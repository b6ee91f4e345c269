"""QL101/QL102 through the project's own insertion wrapper called as a function of an imported
module (issue 14.15): `gu.insert_op(graph, aten.relu, args)` after `import pkg.graph_utils as
gu` or `from pkg import graph_utils as gu`. Each case is checked alone (the exact search) and in
a run over the whole package (QL102's import trigger answered from the wrapper-name index)."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from qlint.engine import check_source
from qlint.rules.ql102_packet_insertion import PacketInsertion
from qlint.runner import run_check
from qlint.settings import Settings
from tests.conftest import old_file, settings_for, write_package

GRAPH_UTILS = """\
import torch


def insert_op(graph, op, args=()):
    return graph.call_function(op, args)


def insert_relu(graph, args):
    return graph.call_function(torch.ops.aten.relu.default, args)
"""

# The same function name in a module that inserts nothing.
LOG_UTILS = """\
def insert_op(graph, op, args=()):
    print(op)
"""

PASS = """\
import functools

import torch
{imports}


def rewrite(gm, node):
    {body}
"""


def _package(tmp_path: Path, imports: str, body: str, **modules: str) -> Path:
    others = {f"m{i}": f"import os\n\n\ndef f{i}(x):\n    return os.path.join(x)\n" for i in range(30)}
    pkg = write_package(
        tmp_path,
        "pkg",
        graph_utils=GRAPH_UTILS,
        log_utils=LOG_UTILS,
        **others,
        **{k: textwrap.dedent(v) for k, v in modules.items()},
    )
    (pkg / "passes.py").write_text(PASS.format(imports=imports, body=body))
    for path in pkg.iterdir():
        if path.suffix == ".py":
            old_file(path, path.read_text())
    return pkg


def _alone(pkg: Path, target: str = "passes.py", select=("QL102",)) -> list[tuple[str, int, int]]:
    path = pkg / target
    result = check_source(path.read_bytes(), str(path), settings_for(select))
    assert not result.errors, result.errors
    return [(d.code, d.range.start.row, d.range.start.col) for d in result.diagnostics]


def _in_a_run(tmp_path: Path, pkg: Path, target: str = "passes.py", select=("QL102",)) -> list[tuple[str, int, int]]:
    settings = Settings(select=select, root=tmp_path, cache_dir=tmp_path / "cache")
    run = run_check([str(pkg)], settings, use_cache=False, jobs=1)
    return [
        (d.code, d.range.start.row, d.range.start.col)
        for r in run.results
        if os.path.basename(r.path) == target
        for d in r.diagnostics
    ]


def _both(tmp_path, imports, body, **modules):
    pkg = _package(tmp_path, imports, body, **modules)
    alone = _alone(pkg)
    assert _in_a_run(tmp_path, pkg) == alone
    return alone


LOUD = {
    "import-as": ("import pkg.graph_utils as gu", "gu.insert_op(gm.graph, torch.ops.aten.relu, (node,))"),
    "from-import-as": ("from pkg import graph_utils as gu", "gu.insert_op(gm.graph, torch.ops.aten.relu, (node,))"),
    "from-import": ("from pkg import graph_utils", "graph_utils.insert_op(gm.graph, torch.ops.aten.relu, (node,))"),
    "dotted": ("import pkg.graph_utils", "pkg.graph_utils.insert_op(gm.graph, torch.ops.aten.relu, (node,))"),
    "relative": ("from . import graph_utils as gu", "gu.insert_op(gm.graph, torch.ops.aten.relu, (node,))"),
    "keyword-over-rows": (
        "import pkg.graph_utils as gu",
        "(gu  # the project's\n     .insert_op)(gm.graph, args=(node,), op=torch.ops.aten.relu)",
    ),
    "partial": (
        "import pkg.graph_utils as gu",
        "functools.partial(gu.insert_op, op=torch.ops.aten.relu)(gm.graph, args=(node,))",
    ),
}


@pytest.mark.parametrize("imports, body", LOUD.values(), ids=LOUD.keys())
def test_packet_passed_to_a_wrapper_of_an_imported_module_is_reported(tmp_path, imports, body):
    text = PASS.format(imports=imports, body=body)
    assert not PacketInsertion().triggered_by(text)  # only the import trigger keeps the file
    found = _both(tmp_path, imports, body)
    assert [code for code, _, _ in found] == ["QL102"]
    _, row, col = found[0]
    assert text.splitlines()[row - 1][col:].startswith("torch.ops.aten.relu")


QUIET = {
    # The wrapper is given the overload.
    "overload": ("import pkg.graph_utils as gu", "gu.insert_op(gm.graph, torch.ops.aten.relu.default, (node,))"),
    # The alias names another module with a function of the same name, which inserts nothing.
    "same-name-elsewhere": ("import pkg.log_utils as gu", "gu.insert_op(gm.graph, torch.ops.aten.relu, (node,))"),
    # The function of that module inserts a fixed overload, not its parameter.
    "fixed-target": ("import pkg.graph_utils as gu", "gu.insert_relu(gm.graph, (node,))"),
    # An attribute of something else named like the module.
    "not-the-module": (
        "import pkg.graph_utils as gu",
        "helpers = object()\n    helpers.insert_op(gm.graph, torch.ops.aten.relu, (node,))",
    ),
    # The packet is an argument the wrapper does not insert.
    "other-parameter": ("import pkg.graph_utils as gu", "gu.insert_op(gm.graph, print, (torch.ops.aten.relu,))"),
}


@pytest.mark.parametrize("imports, body", QUIET.values(), ids=QUIET.keys())
def test_look_alikes_stay_quiet(tmp_path, imports, body):
    assert _both(tmp_path, imports, body) == []


def test_a_parameter_named_like_the_module_is_no_module(tmp_path):
    body = "def put(gu, graph):\n        gu.insert_op(graph, torch.ops.aten.relu, ())\n    put(None, gm.graph)"
    assert _both(tmp_path, "import pkg.graph_utils as gu", body) == []
    body = body.replace("put(gu, graph)", "put(graph)").replace("put(None, gm.graph)", "put(gm.graph)")
    assert [c for c, _, _ in _both(tmp_path, "import pkg.graph_utils as gu", body)] == ["QL102"]


def test_own_function_handing_its_parameter_to_an_imported_wrapper(tmp_path):
    # A wrapper of this module around another module's wrapper, called by name or as `gu.f`.
    for imports, inner in [
        ("from pkg.graph_utils import insert_op", "insert_op(graph, op, ())"),
        ("import pkg.graph_utils as gu", "gu.insert_op(graph, op, ())"),
    ]:
        own = f"{imports}\n\n\ndef add(graph, op):\n    return {inner}\n"
        found = _both(tmp_path, own, "add(gm.graph, torch.ops.aten.relu)")
        assert [(c, row) for c, row, _ in found] == [("QL102", 13)]
        assert _both(tmp_path, own, "add(gm.graph, torch.ops.aten.relu.default)") == []


def test_the_wrapper_module_is_a_dependency(tmp_path):
    pkg = _package(tmp_path, "import pkg.graph_utils as gu", "gu.insert_op(gm.graph, torch.ops.aten.relu, (node,))")
    path = pkg / "passes.py"
    result = check_source(path.read_bytes(), str(path), settings_for(("QL102",)))
    assert str(pkg / "graph_utils.py") in result.dependencies
    # The wrapper edited to insert a fixed overload: the call is no insertion of the packet.
    old_file(pkg / "graph_utils.py", GRAPH_UTILS.replace("call_function(op, args)", "call_function(print, args)"))
    assert _alone(pkg) == []


# -- QL101: a packet the project inserts itself (legacy FX) through such a wrapper -----------

MATCHER = """
    import torch

    def count_relus(gm):
        return sum(n.target == torch.ops.aten.relu for n in gm.graph.nodes)
"""

LEGACY = """
    import torch
    from torch.fx import symbolic_trace
    import pkg.graph_utils as gu

    def add_relu(model, node):
        gm = symbolic_trace(model)
        gu.insert_op(gm.graph, OP, (node,))
        return gm
"""


@pytest.mark.parametrize(
    "op, capture, matcher, legacy",
    [
        # Inserted as the packet into the legacy graphs the project builds: the matcher is right.
        ("torch.ops.aten.relu", None, [], []),
        # The overload, or another op: nothing makes the packet matcher right.
        ("torch.ops.aten.relu.default", None, [("QL101", 5, 27)], []),
        ("torch.ops.aten.hardtanh", None, [("QL101", 5, 27)], []),
        # Into export graphs: QL102 reports the insertion through the wrapper, and the matcher
        # stays reported (once the insertion is fixed it would miss the node).
        ("torch.ops.aten.relu", "export", [("QL101", 5, 27)], [("QL102", 8, 27)]),
    ],
)
def test_packet_matcher_and_the_wrapper_module_call(tmp_path, op, capture, matcher, legacy):
    user = LEGACY.replace("OP", op)
    if capture:
        user = user.replace("from torch.fx import symbolic_trace", "from torch.export import export")
        user = user.replace("symbolic_trace(model)", "export(model, ()).module()")
    pkg = _package(tmp_path, "", "pass", legacy=user, matcher=MATCHER)
    assert _alone(pkg, "matcher.py", ("QL1",)) == matcher
    assert _alone(pkg, "legacy.py", ("QL1",)) == legacy
    assert _in_a_run(tmp_path, pkg, "legacy.py", ("QL1",)) == legacy


# -- wrapper chains through modules that insert nothing themselves --------------------------

CHAIN = {
    # b.py forwards to a function of graph_utils, called by name or as a module's function.
    "by-name": "from pkg.graph_utils import insert_op\n\n\ndef add_op(graph, op):\n    return insert_op(graph, op)\n",
    "by-module": "from pkg import graph_utils\n\n\ndef add_op(g, op):\n    return graph_utils.insert_op(g, op)\n",
    # Through a function of its own first.
    "own-step": (
        "import pkg.graph_utils as gu\n\n\ndef add_op(graph, op):\n    return _put(graph, op)\n\n\n"
        "def _put(graph, target):\n    return gu.insert_op(graph, target, ())\n"
    ),
}
MID = "from pkg.graph_utils import insert_op\n\n\ndef put(graph, op):\n    return insert_op(graph, op, ())\n"


@pytest.mark.parametrize("chain", CHAIN.values(), ids=CHAIN.keys())
@pytest.mark.parametrize("imports, call", [("from pkg.b import add_op", "add_op"), ("from pkg import b", "b.add_op")])
def test_packet_passed_along_a_wrapper_chain_is_reported(tmp_path, chain, imports, call):
    found = _both(tmp_path, imports, f"{call}(gm.graph, torch.ops.aten.relu)", b=chain, mid=MID)
    assert [(c, row) for c, row, _ in found] == [("QL102", 8)]
    assert _both(tmp_path, imports, f"{call}(gm.graph, torch.ops.aten.relu.default)", b=chain, mid=MID) == []


CHAIN_QUIET = {
    # The middle function does not pass its parameter on (it passes a fixed overload).
    "not-forwarded": (
        "from pkg.graph_utils import insert_op\n\n\n"
        "def add_op(graph, op):\n    return insert_op(graph, torch.ops.aten.relu.default, ())\n"
    ),
    # It rebinds it first.
    "rebound": (
        "from pkg.graph_utils import insert_op\n\n\n"
        "def add_op(graph, op):\n    op = lookup(op)\n    return insert_op(graph, op, ())\n"
    ),
    # It hands it on to the module of the same function name that inserts nothing.
    "look-alike-module": "from pkg import log_utils as gu\n\n\ndef add_op(g, op):\n    return gu.insert_op(g, op)\n",
    # A cycle of modules that never reaches an insertion.
    "cycle": "from pkg import mid\n\n\ndef add_op(graph, op):\n    return mid.put(graph, op)\n",
}
MID_CYCLE = "from pkg import b\n\n\ndef put(graph, op):\n    return b.add_op(graph, op)\n"


@pytest.mark.parametrize("chain", CHAIN_QUIET.values(), ids=CHAIN_QUIET.keys())
def test_chains_that_insert_no_parameter_stay_quiet(tmp_path, chain):
    # (Chains through several such modules: test_wrapper_chains.)
    assert _both(tmp_path, "from pkg import b", "b.add_op(gm.graph, torch.ops.aten.relu)", b=chain, mid=MID_CYCLE) == []


def test_chain_edited_to_stop_forwarding_is_followed(tmp_path):
    pkg = _package(tmp_path, "from pkg.b import add_op", "add_op(gm.graph, torch.ops.aten.relu)", b=CHAIN["by-name"])
    result = check_source((pkg / "passes.py").read_bytes(), str(pkg / "passes.py"), settings_for(("QL102",)))
    assert [d.range.start.row for d in result.diagnostics] == [8]
    # Both modules of the chain are dependencies of the check.
    assert {str(pkg / "b.py"), str(pkg / "graph_utils.py")} <= set(result.dependencies)
    old_file(pkg / "b.py", CHAIN_QUIET["not-forwarded"])
    assert _alone(pkg) == []


# -- 12: occurrence dicts reaching `checkGraphModuleNodes` through such helpers ----------------

TESTING = """\
import torch


def check_nodes(case, m, occurrence):
    case.checkGraphModuleNodes(m, None, None, occurrence)


def summary(case, m, occurrence):
    print(occurrence)
"""
# A module naming no sink that hands the dict on to the helper of `testing`.
EXPECT = "from pkg import testing as t\n\n\ndef expect(case, m, occ):\n    return t.check_nodes(case, m, occ)\n"
TEST = """\
import torch
{imports}


class TestConv:
    def test_conv(self, m):
        self.checkGraphModuleNodes(m, expected_node_list=[])
        occ = {{torch.ops.aten.hardtanh{overload}: 1}}
        {call}
"""


@pytest.mark.parametrize(
    "imports, call, overload, expected",
    [
        ("import pkg.testing as t", "t.check_nodes(self, m, occ)", "", [8]),
        (
            "from pkg import testing",
            "testing.check_nodes(\n            self,\n            m,\n            occ,\n        )",
            "",
            [8],
        ),
        ("from pkg import expect as e", "e.expect(self, m, occ)", "", [8]),
        ("from pkg.expect import expect", "expect(self, m, occ)", "", [8]),
        # The overload; a position the helper does not forward; a function that prints it.
        ("import pkg.testing as t", "t.check_nodes(self, m, occ)", ".default", []),
        ("import pkg.testing as t", "t.check_nodes(self, occ, None)", "", []),
        ("import pkg.testing as t", "t.summary(self, m, occ)", "", []),
    ],
)
def test_occurrence_dict_handed_to_a_helper_of_an_imported_module(tmp_path, imports, call, overload, expected):
    pkg = _package(tmp_path, "", "pass", testing=TESTING, expect=EXPECT)
    text = TEST.format(imports=imports, call=call, overload=overload)
    old_file(pkg / "test_conv.py", text)
    assert [row for _, row, _ in _alone(pkg, "test_conv.py", ("QL101",))] == expected
