"""The gate in front of QL102's import trigger in a run over many files (`helper_gate`):
a file is turned away only where no way of the helper search can reach a wrapper the
project's index names. Each way is tried here with the index, as a run asks it, and must
find what the exact search of a single check finds."""

from __future__ import annotations

import pytest

from qlint.analysis.graphs import wrapper_index
from qlint.analysis.graphs.helper_gate import may_lead_to_helper
from qlint.analysis.graphs.wrapper_names import WrapperIndex
from qlint.rules.ql102_packet_insertion import PacketInsertion
from tests.test_ql102_imported_wrappers import PASS, _flagged

RELU = "torch.ops.aten.relu"

# Ways to a wrapper that spell no import of the wrapper's own name.
THROUGH_ATTRIBUTES = {
    "module-alias-call": ("import pkg.graph_utils as gu", f"gu.insert_op(gm.graph, {RELU}, (node,))"),
    "module-from-package": ("from pkg import graph_utils", f"graph_utils.insert_op(gm.graph, {RELU}, (node,))"),
    "dotted-module-call": ("import pkg.graph_utils", f"pkg.graph_utils.insert_op(gm.graph, {RELU}, (node,))"),
    "blanks-around-the-dot": ("import pkg.graph_utils as gu", f"(gu .\n        insert_op)(gm.graph, {RELU}, (node,))"),
    "comment-after-the-dot": (
        "import pkg.graph_utils as gu",
        f"(gu.  # the wrapper\n        insert_op)(gm.graph, {RELU}, ())",
    ),
    # The dotted name read back from the dot over rows: comments, comment rows, continuations.
    "dot-leading-its-row-after-a-comment": (
        "import pkg.graph_utils as gu",
        f"(gu  # the module\n        .insert_op)(gm.graph, {RELU}, (node,))",
    ),
    "head-rows-above-past-a-comment-row": (
        "import pkg",
        f"(pkg.  # the package\n        # its module\n\n        graph_utils.insert_op)(gm.graph, {RELU}, (node,))",
    ),
    "continued-row": ("import pkg", f"pkg.\\\n        graph_utils.insert_op(gm.graph, {RELU}, (node,))"),
    "comment-holding-a-hash": (
        "import pkg.graph_utils as gu",
        f"(gu.  # '#' marks it\n        insert_op)(gm.graph, {RELU}, (node,))",
    ),
    "constructed-through-the-module": (
        "import pkg.graph_utils as gu",
        f"gu.Rewriter().insert(gm.graph, {RELU}, (node,))",
    ),
    "constructed-by-name": ("from pkg.graph_utils import Rewriter", f"Rewriter().insert(gm.graph, {RELU}, (node,))"),
}
SUBCLASS = (
    "\n\nclass P({base}):\n    def run(self, gm, node):\n        self.insert(gm.graph, torch.ops.aten.relu, (node,))"
)


@pytest.fixture(params=["exact search", "wrapper index"])
def kind(request):
    if request.param == "wrapper index":
        wrapper_index.enable(None)
    yield request.param
    wrapper_index.disable()


@pytest.mark.parametrize("imports, body", THROUGH_ATTRIBUTES.values(), ids=THROUGH_ATTRIBUTES.keys())
def test_a_wrapper_reached_through_an_attribute_is_found(tmp_path, kind, imports, body):
    assert not PacketInsertion().triggered_by(PASS.format(imports=imports, body=body))
    found, result = _flagged(tmp_path, imports, body)
    assert result.parsed and len(found) == 1


@pytest.mark.parametrize(
    "imports, base",
    [
        ("import pkg.graph_utils as gu", "gu . Rewriter"),
        ("from pkg import graph_utils", "graph_utils.Rewriter"),
        # A line outside ASCII: the class name is looked for as written too.
        ("import pkg.graph_utils as gu  # réécriture", "gu.Rewriter"),
        ("from pkg.graph_utils import Rewriter as Base", "Base"),
    ],
)
def test_a_base_class_with_a_wrapper_method_is_found(tmp_path, kind, imports, base):
    found, result = _flagged(tmp_path, imports + SUBCLASS.format(base=base), "pass")
    assert result.parsed and len(found) == 1


LOOK_ALIKES = {
    # the wrapper's name written, but not after a dot nor imported: nothing reaches it
    "name-in-prose": ("import pkg.graph_utils as gu", "return 'insert_op and Rewriter', gu.first_user(node)"),
    # a function of the wrapper module that inserts nothing, called through the module
    "other-function": ("import pkg.graph_utils as gu", f"gu.first_user({RELU})"),
    # an attribute named like the wrapper, of something the module does not import
    "foreign-attribute": ("import os", f"node.graph.insert_op_like({RELU})"),
}


@pytest.mark.parametrize("imports, body", LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())
def test_look_alikes_stay_quiet_and_unparsed_where_the_index_answers(tmp_path, kind, imports, body):
    found, result = _flagged(tmp_path, imports, body)
    assert found == [] and not result.parsed


INDEX = WrapperIndex("/p", frozenset({"insert_op"}), frozenset({"Rewriter"}), "digest")


@pytest.mark.parametrize(
    "text, imports",
    [
        ("from pkg.graph_utils import insert_op", [("insert_op", "pkg.graph_utils.insert_op")]),
        ("from pkg.graph_utils import Rewriter as R", [("R", "pkg.graph_utils.Rewriter")]),
        ("import pkg.graph_utils as gu\ngu.insert_op(g)", [("gu", "pkg.graph_utils")]),
        ("import pkg.graph_utils as gu\nx = gu.\\\n  Rewriter", [("gu", "pkg.graph_utils")]),
        # A directory the listing skips: its modules are not in the index.
        ("from pkg.build.gen import helper", [("helper", "pkg.build.gen.helper")]),
        ("import pkg as p\np.build.gen.helper(g)", [("p", "pkg")]),
        # Where the dotted name starts is read back over blanks, rows and comments.
        ("import pkg.graph_utils as gu\n(gu\n  .insert_op)(g)", [("gu", "pkg.graph_utils")]),
        ("import pkg\n(pkg . graph_utils .\n  # why\n  insert_op)(g)", [("pkg", "pkg")]),
        ("import pkg\n(pkg.graph_utils.  # a # b\n  Rewriter)()", [("pkg", "pkg")]),
        ("import pkg\nx = (pkg.  # c\n\n  # d\n  graph_utils.insert_op)(g)", [("pkg", "pkg")]),
        # The search reads the raw text, comments' dots too: `gu.` then `x.insert_op(` below.
        ("import pkg.graph_utils as gu\n# gu.\nx.insert_op(n)", [("gu", "pkg.graph_utils")]),
        ("import pkg.graph_utils as gu\nclass P(gu . Rewriter):\n    pass", [("gu", "pkg.graph_utils")]),
    ],
)
def test_the_gate_opens_for_every_way_to_a_name_of_the_index(text, imports):
    assert may_lead_to_helper(text, imports, INDEX)


@pytest.mark.parametrize(
    "text, imports",
    [
        ("import pkg.graph_utils as gu\ngu.first_user(n)", [("gu", "pkg.graph_utils")]),
        ("from pkg.graph_utils import first_user  # not insert_op", [("first_user", "pkg.graph_utils.first_user")]),
        ("import pkg.graph_utils as gu\ngu.insert_op_now(n)  # a longer name", [("gu", "pkg.graph_utils")]),
        # A name of the index after a dot, on what no import names (a method of a wrapper
        # class called `run` let most of ExecuTorch's files through).
        ("import pkg.graph_utils as gu\nbuilder.insert_op(n)", [("gu", "pkg.graph_utils")]),
        ("import pkg.graph_utils as gu\nself.builder.Rewriter()", [("gu", "pkg.graph_utils")]),
        ("import pkg.graph_utils as gu\ngu.make().insert_op(n)", [("gu", "pkg.graph_utils")]),
        ("import pkg.graph_utils as gu\n# see gu\nx.insert_op(n)", [("gu", "pkg.graph_utils")]),
        ("import pkg.graph_utils as gu\nx = [  # gu\n  y.insert_op(n)]", [("gu", "pkg.graph_utils")]),
    ],
)
def test_the_gate_stays_shut_where_no_name_of_the_index_can_be_reached(text, imports):
    assert not may_lead_to_helper(text, imports, INDEX)


@pytest.mark.parametrize(
    "imports, base", [("import pkg.graph_utils as gu", "gu.Rewriter"), ("import pkg", "pkg.graph_utils.Rewriter")]
)
def test_a_subclass_that_calls_nothing_itself_is_read_as_the_exact_search_reads_it(tmp_path, kind, imports, base):
    # Its instances insert through the inherited method wherever they are used: the file is
    # checked (the class name after a dot is what opens the gate), and holds nothing to report.
    # A packet spelled here: the packet gate (`packet_text`) lets the file on to this one.
    text = imports + f"\nimport torch\n\nRELU = torch.ops.aten.relu\n\n\nclass P({base}):\n    pass"
    found, result = _flagged(tmp_path, text, "pass")
    assert found == [] and result.parsed


@pytest.mark.parametrize(
    "full", ["pkg.graph_utils.insert_op", "pkg.Rewriter", "pkg.build.gen.x", "pkg.first_user", "insert_op", "Rewriter"]
)
def test_one_lookup_answers_for_a_function_or_a_class(full):
    assert INDEX.may_lead_to_helper(full) == (INDEX.may_lead_to_function(full) or INDEX.may_lead_to_class(full))


def test_the_gate_asks_each_import_once(monkeypatch):
    asked = []
    real = WrapperIndex.may_lead_to_helper
    monkeypatch.setattr(WrapperIndex, "may_lead_to_helper", lambda s, f: asked.append(f) or real(s, f))
    monkeypatch.setattr(WrapperIndex, "may_lead_to_function", lambda s, f: pytest.fail("asked twice"))
    imports = [("a", "pkg.a"), ("R", "pkg.graph_utils.Rewriter")]
    assert may_lead_to_helper("import pkg.a as a\nfrom pkg.graph_utils import Rewriter as R", imports, INDEX)
    assert asked == ["pkg.a", "pkg.graph_utils.Rewriter"]
