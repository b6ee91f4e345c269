"""QL101/QL102 through the project's own insertion wrappers reached along longer chains (issue
14.15): chains through several modules that insert nothing (c -> b -> mid -> graph_utils),
classes as links (`GraphBuilder(graph).insert(op)`, `self.builder.insert(op)` where the
class's method calls `graph.call_function(op, ...)`), and methods mid-chain (a method of a
module that inserts nothing, handing its parameter to another module's wrapper). Each case
is checked alone (the exact search) and in a run over the package (QL102's import trigger
answered from the wrapper-name index)."""

from __future__ import annotations

import pytest

from tests.test_wrapper_module_calls import _alone, _both, _in_a_run, _package

RELU = "torch.ops.aten.relu"


def _sub(tmp_path, name: str):
    (tmp_path / name).mkdir()
    return tmp_path / name


# -- chains through several modules that insert nothing ----------------------------------

# b -> mid -> graph_utils.insert_op, each link by name or as a function of the module.
B = "from pkg import mid\n\n\ndef add_op(graph, op):\n    return mid.put(graph, op)\n"
MID = "from pkg.graph_utils import insert_op\n\n\ndef put(graph, op):\n    return insert_op(graph, op, ())\n"
MID_TO_MID2 = "from pkg.mid2 import put2\n\n\ndef put(graph, target):\n    return put2(graph, target)\n"
MID2 = "import pkg.graph_utils as gu\n\n\ndef put2(g, o):\n    return gu.insert_op(g, o)\n"


MID2_TO_MID3 = "from pkg.mid3 import put3\n\n\ndef put2(g, o):\n    return put3(g, o)\n"
MID3 = MID2.replace("def put2", "def put3")

DEEP = {
    "two-deep": {"b": B, "mid": MID},  # two modules that insert nothing
    "three-deep": {"b": B, "mid": MID_TO_MID2, "mid2": MID2},  # three
    # The link's own module defines a helper in between (found as the search finds it).
    "helper-in-a-link": {
        "b": B,
        "mid": (
            "from pkg.graph_utils import insert_op\n\n\ndef _put(graph, op):\n    return insert_op(graph, op)\n\n\n"
            "def put(graph, op):\n    return _put(graph, op)\n"
        ),
    },
    # A class of the last module as the wrapper (`GraphBuilder(graph).insert(op)`).
    "builder-at-the-end": {
        "b": B,
        "mid": (
            "from pkg.builders import GraphBuilder\n\n\n"
            "def put(graph, op):\n    return GraphBuilder(graph).insert(op)\n"
        ),
        "builders": "class GraphBuilder:\n    def __init__(self, g):\n        self.g = g\n\n"
        "    def insert(self, op, args=()):\n        return self.g.call_function(op, args)\n",
    },
}


@pytest.mark.parametrize("modules", DEEP.values(), ids=DEEP.keys())
def test_chains_through_several_modules_that_insert_nothing(tmp_path, modules):
    # Up to `wrapper_chains.CHAIN_LINKS` (three) such modules, in a check of the file alone as
    # in a run over the package (the wrapper-name index): the depth is the root's, not the index's.
    found = _both(tmp_path, "from pkg import b", f"b.add_op(gm.graph, {RELU})", **modules)
    assert [(c, row) for c, row, _ in found] == [("QL102", 8)]
    assert _both(_sub(tmp_path, "d"), "from pkg import b", f"b.add_op(gm.graph, {RELU}.default)", **modules) == []


def test_a_chain_through_four_modules_that_insert_nothing_is_not_followed(tmp_path):
    # One more than `wrapper_chains.CHAIN_LINKS`.
    modules = {"b": B, "mid": MID_TO_MID2, "mid2": MID2_TO_MID3, "mid3": MID3}
    assert _both(tmp_path, "from pkg import b", f"b.add_op(gm.graph, {RELU})", **modules) == []
    # The same chain entered one module further down is followed.
    found = _both(_sub(tmp_path, "m"), "from pkg import mid", f"mid.put(gm.graph, {RELU})", **modules)
    assert [(c, row) for c, row, _ in found] == [("QL102", 8)]


DEEP_QUIET = {
    # The last link hands the op to the look-alike that prints it.
    "look-alike-end": {
        "b": B,
        "mid": "from pkg import log_utils\n\n\ndef put(graph, op):\n    log_utils.insert_op(graph, op)\n",
    },
    # A link in the middle rebinds the parameter (normalises it to an overload) first.
    "rebound-mid": {
        "b": B,
        "mid": (
            "from pkg.graph_utils import insert_op\n\n\n"
            "def put(graph, op):\n    op = getattr(op, 'default', op)\n    return insert_op(graph, op, ())\n"
        ),
    },
    # A link passes a fixed overload, not its parameter.
    "fixed-mid": {
        "b": B,
        "mid": (
            "import torch\nfrom pkg.graph_utils import insert_op\n\n\n"
            "def put(graph, op):\n    return insert_op(graph, torch.ops.aten.relu.default, (op,))\n"
        ),
    },
    # A cycle of modules that never reaches an insertion.
    "cycle": {"b": B, "mid": "from pkg import b\n\n\ndef put(graph, op):\n    return b.add_op(graph, op)\n"},
}


@pytest.mark.parametrize("modules", DEEP_QUIET.values(), ids=DEEP_QUIET.keys())
def test_chains_that_insert_no_parameter_stay_quiet(tmp_path, modules):
    assert _both(tmp_path, "from pkg import mid", f"mid.put(gm.graph, {RELU})", **modules) == []
    # The same one link further up (b -> mid -> ...).
    assert _both(_sub(tmp_path, "b"), "from pkg import b", f"b.add_op(gm.graph, {RELU})", **modules) == []


LONGER_QUIET = {
    # The last module inserts, but the function called passes a fixed overload, not its parameter.
    "fixed-at-the-end": {"b": B, "mid": MID.replace("insert_op", "insert_relu").replace("op, ())", "(op,))")},
    # A middle link calls the wrapper with something else than its parameter.
    "other-argument-mid": {
        "b": B,
        "mid": MID_TO_MID2.replace("put2(graph, target)", "put2(graph, torch.ops.aten.relu.default)").replace(
            "from pkg.mid2", "import torch\nfrom pkg.mid2"
        ),
        "mid2": MID2,
    },
    # A middle link's own helper prints instead (same name as the wrapper in another module).
    "look-alike-mid": {
        "b": B,
        "mid": "from pkg.log_utils import insert_op\n\n\ndef put(graph, op):\n    return insert_op(graph, op)\n",
    },
}


@pytest.mark.parametrize("modules", LONGER_QUIET.values(), ids=LONGER_QUIET.keys())
def test_longer_chains_that_insert_no_parameter_stay_quiet(tmp_path, modules):
    assert _both(tmp_path, "from pkg import b", f"b.add_op(gm.graph, {RELU})", **modules) == []


def test_a_cycle_with_an_exit_reaches_the_insertion(tmp_path):
    # b -> mid -> b is a cycle, but mid also hands the op on to the wrapper (one link).
    mid = (
        "from pkg import b\nfrom pkg.graph_utils import insert_op\n\n\n"
        "def put(graph, op, again=False):\n    if again:\n        return b.add_op(graph, op)\n"
        "    return insert_op(graph, op, ())\n"
    )
    found = _both(tmp_path, "from pkg import mid", f"mid.put(gm.graph, {RELU})", b=B, mid=mid)
    assert [(c, row) for c, row, _ in found] == [("QL102", 8)]


# -- classes as links ----------------------------------------------------------------------

BUILDERS = """\
import torch


class GraphBuilder:
    def __init__(self, graph):
        self.graph = graph

    def insert(self, op, args=()):
        return self.graph.call_function(op, args)

    def describe(self, op):
        return str(op)


class Normalising:
    def __init__(self, graph):
        self.graph = graph

    def insert(self, op, args=()):
        if isinstance(op, torch._ops.OpOverloadPacket):
            op = op.default
        return self.graph.call_function(op, args)


class Printer:
    def __init__(self, graph=None):
        self.graph = graph

    def insert(self, op, args=()):
        print(op, args)
"""

# A pass class whose builder is an instance attribute (`{cls}`: the class it builds).
OWNER = """
class Pass:
    def __init__(self, gm):
        self.builder = {cls}(gm.graph)

    def run(self, node):
        self.builder.insert(OP, (node,))
"""

CLASS_LOUD = {
    "constructed": ("from pkg.builders import GraphBuilder", "GraphBuilder(gm.graph).insert(OP, (node,))"),
    "module-attribute": ("import pkg.builders as bl", "bl.GraphBuilder(gm.graph).insert(OP, (node,))"),
    "keyword": ("from pkg.builders import GraphBuilder", "GraphBuilder(gm.graph).insert(args=(node,), op=OP)"),
    "local": ("from pkg.builders import GraphBuilder", "b = GraphBuilder(gm.graph)\n    b.insert(OP, (node,))"),
    "instance-attribute": ("from pkg.builders import GraphBuilder" + OWNER.format(cls="GraphBuilder"), "pass"),
    "subclass": (
        "from pkg.builders import GraphBuilder\n\n\nclass Mine(GraphBuilder):\n    pass\n",
        "Mine(gm.graph).insert(OP, (node,))",
    ),
    # A method of this module's class that hands its parameter to the builder's method.
    "own-method": (
        "from pkg.builders import GraphBuilder"
        + OWNER.format(cls="GraphBuilder").replace("self.builder.insert(OP, (node,))", "self.put(OP, node)")
        + "\n    def put(self, op, node):\n        return self.builder.insert(op, (node,))\n",
        "pass",
    ),
    "own-function": (
        "from pkg.builders import GraphBuilder\n\n\ndef add(graph, op):\n    return GraphBuilder(graph).insert(op)\n",
        "add(gm.graph, OP)",
    ),
}


def _case(imports: str, body: str, op: str) -> tuple[str, str]:
    return imports.replace("OP", op), body.replace("OP", op)


@pytest.mark.parametrize("imports, body", CLASS_LOUD.values(), ids=CLASS_LOUD.keys())
def test_packet_passed_to_a_wrapper_method_of_a_constructed_class_is_reported(tmp_path, imports, body):
    found = _both(tmp_path, *_case(imports, body, RELU), builders=BUILDERS)
    assert [c for c, _, _ in found] == ["QL102"]
    text = (tmp_path / "pkg" / "passes.py").read_text()
    _, row, col = found[0]
    assert text.splitlines()[row - 1][col:].startswith(RELU)
    assert _both(tmp_path, *_case(imports, body, RELU + ".default"), builders=BUILDERS) == []


CLASS_QUIET = {
    # Another class with a method of the same name, which prints.
    "other-class": ("from pkg.builders import Printer", "Printer(gm.graph).insert(OP, (node,))"),
    # A wrapper that normalises the op to its overload before inserting it.
    "normalising": ("from pkg.builders import Normalising", "Normalising(gm.graph).insert(OP, (node,))"),
    # A method of the builder that inserts nothing.
    "other-method": ("from pkg.builders import GraphBuilder", "GraphBuilder(gm.graph).describe(OP)"),
    # The local is bound again, to the look-alike, before the call.
    "rebound-local": (
        "from pkg.builders import GraphBuilder, Printer",
        "b = GraphBuilder(gm.graph)\n    b = Printer()\n    b.insert(OP, (node,))",
    ),
    # The instance attribute is given another class's instance in another method.
    "rebound-attribute": (
        "from pkg.builders import GraphBuilder, Printer"
        + OWNER.format(cls="GraphBuilder")
        + "\n    def reset(self):\n        self.builder = Printer()\n",
        "pass",
    ),
    # A receiver the code does not build (a parameter).
    "parameter": ("from pkg.builders import GraphBuilder", "def put(b):\n        b.insert(OP, (node,))"),
    # Same name, another module's class that inserts nothing.
    "same-name-elsewhere": ("from pkg.log_builders import GraphBuilder", "GraphBuilder(gm.graph).insert(OP, (node,))"),
}


@pytest.mark.parametrize("imports, body", CLASS_QUIET.values(), ids=CLASS_QUIET.keys())
def test_look_alike_receivers_stay_quiet(tmp_path, imports, body):
    log_utils = "class GraphBuilder:\n    def insert(self, op, args=()):\n        print(op)\n"
    assert _both(tmp_path, *_case(imports, body, RELU), builders=BUILDERS, log_builders=log_utils) == []


def test_a_builder_class_in_the_same_module(tmp_path):
    own = BUILDERS.replace("import torch\n", "") + OWNER.format(cls="GraphBuilder").replace("OP", RELU)
    found = _both(tmp_path, own, "Normalising(gm.graph).insert(torch.ops.aten.relu)")
    text = (tmp_path / "pkg" / "passes.py").read_text()
    assert [text.splitlines()[row - 1][col:].startswith(RELU) for _, row, col in found] == [True]
    assert len(found) == 1 and text.splitlines()[found[0][1] - 1].strip().startswith("self.builder.insert")


# -- methods mid-chain: a class of a module that inserts nothing ---------------------------

LINK_CLASS = """\
from pkg import graph_utils as gu


class Rewriter:
    def __init__(self, graph):
        self.graph = graph

    def add(self, op, args=()):
        return gu.insert_op(self.graph, op, args)

    def note(self, op):
        return gu.insert_op(self.graph, print, (op,))
"""
# A module that inserts nothing, using a builder class of another module.
LINK_BUILDER = """\
from pkg.builders import GraphBuilder


def add_op(graph, op):
    return GraphBuilder(graph).insert(op)


class Holder:
    def __init__(self, graph):
        self.builder = GraphBuilder(graph)

    def put(self, op):
        self.builder.insert(op)
"""

MID_CLASS_LOUD = {
    "method": ("from pkg.link import Rewriter", "Rewriter(gm.graph).add(OP)"),
    "inherited": (
        "from pkg.link import Rewriter\n\n\nclass P(Rewriter):\n    def run(self):\n        self.add(OP)\n",
        "pass",
    ),
    "function-using-a-builder": ("from pkg import link2", "link2.add_op(gm.graph, OP)"),
    "method-using-a-builder": ("from pkg.link2 import Holder", "Holder(gm.graph).put(OP)"),
}


@pytest.mark.parametrize("imports, body", MID_CLASS_LOUD.values(), ids=MID_CLASS_LOUD.keys())
def test_methods_mid_chain_forward_to_another_modules_wrapper(tmp_path, imports, body):
    modules = {"builders": BUILDERS, "link": LINK_CLASS, "link2": LINK_BUILDER}
    found = _both(tmp_path, *_case(imports, body, RELU), **modules)
    assert [c for c, _, _ in found] == ["QL102"]
    assert _both(tmp_path, *_case(imports, body, RELU + ".default"), **modules) == []


def test_a_method_mid_chain_that_forwards_no_parameter_is_quiet(tmp_path):
    assert _both(tmp_path, "from pkg.link import Rewriter", f"Rewriter(gm.graph).note({RELU})", link=LINK_CLASS) == []


# -- QL101: packets the project inserts itself through such wrappers (item 15) --------------

MATCHER = """
    import torch

    def count_relus(gm):
        return sum(n.target == torch.ops.aten.relu for n in gm.graph.nodes)
"""

LEGACY = """
    import torch
    from torch.fx import symbolic_trace
    IMPORTS

    def add_relu(model, node):
        gm = symbolic_trace(model)
        CALL
        return gm
"""

LEGACY_CALLS = {
    "builder": ("from pkg.builders import GraphBuilder", "GraphBuilder(gm.graph).insert(OP, (node,))"),
    "chain": ("from pkg import mid", "mid.put(gm.graph, OP)"),
    "method-mid-chain": ("from pkg.link import Rewriter", "Rewriter(gm.graph).add(OP, (node,))"),
}


@pytest.mark.parametrize("imports, call", LEGACY_CALLS.values(), ids=LEGACY_CALLS.keys())
@pytest.mark.parametrize(
    "op, capture, matcher, legacy",
    [
        # Inserted as the packet into the legacy graphs the project builds: the matcher is right.
        (RELU, None, [], []),
        # The overload: nothing makes the packet matcher right.
        (RELU + ".default", None, [("QL101", 5, 27)], []),
        # Into export graphs: QL102 reports the insertion through the wrapper, and the matcher
        # stays reported.
        (RELU, "export", [("QL101", 5, 27)], [("QL102", 8, None)]),
    ],
)
def test_packet_matcher_and_the_projects_wrapper(tmp_path, imports, call, op, capture, matcher, legacy):
    user = LEGACY.replace("IMPORTS", imports).replace("CALL", call.replace("OP", op))
    if capture:
        user = user.replace("from torch.fx import symbolic_trace", "from torch.export import export")
        user = user.replace("symbolic_trace(model)", "export(model, ()).module()")
    modules = {"builders": BUILDERS, "link": LINK_CLASS, "b": B, "mid": MID}
    pkg = _package(tmp_path, "", "pass", legacy=user, matcher=MATCHER, **modules)
    assert _alone(pkg, "matcher.py", ("QL1",)) == matcher
    found = _alone(pkg, "legacy.py", ("QL1",))
    assert [(c, row) for c, row, _ in found] == [(c, row) for c, row, _ in legacy]
    assert _in_a_run(tmp_path, pkg, "legacy.py", ("QL1",)) == found
    assert _in_a_run(tmp_path, pkg, "matcher.py", ("QL1",)) == matcher


def test_a_chain_link_is_parsed_once_for_its_summary_and_its_chain_fact(tmp_path, monkeypatch):
    # `mid` names no sink: its summary and the fact saying where it hands its parameters on
    # come from one parse (the fact was computed from a second one, asked right after).
    from tests.test_caller_search_work import _parsed

    pkg = _package(tmp_path, "from pkg.mid import put", f"put(gm.graph, {RELU})", mid=MID)
    parsed = _parsed(monkeypatch)
    assert _alone(pkg)  # reported through the chain
    assert parsed.count("mid.py") == 1


def test_a_chain_in_a_directory_the_listing_skips_is_followed_one_module_deep(tmp_path):
    # No index can cover a file under `build/` (`index_roots`): alone and in a run alike, the
    # chain is followed through one module that inserts nothing (`mid`), not two (`b`, `mid`).
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    build = _sub(tmp_path, "build")
    assert _both(build, "from pkg import b", f"b.add_op(gm.graph, {RELU})", **DEEP["two-deep"]) == []
    found = _both(_sub(build, "m"), "from pkg import mid", f"mid.put(gm.graph, {RELU})", **DEEP["two-deep"])
    assert [(c, row) for c, row, _ in found] == [("QL102", 8)]
