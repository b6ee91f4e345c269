"""QL101/QL102 and a front end that renames every node's target to the packet of its own
name (EVT's `GTLFrontend`: `node.target = getattr(torch.ops.aten, op_name)` with the name read
off `str(node.target)`): the project's passes see packets of that namespace (issue 14,
item 14). Each quiet case has loud look-alikes that say nothing about the graphs."""

from __future__ import annotations

import textwrap

import pytest

# The front end as EVT writes it: a pass class whose `visit` reads the op's name off the
# node and rewrites the target through a local bound to the lookup; the module is a pass of
# its own too (it inserts nodes), as the project scan's kept modules are.
FRONT_END = """
    import torch

    class FrontEnd:
        def __call__(self, gm):
            for node in gm.graph.nodes:
                self.visit(node)
            return gm

        def scalar(self, gm, node, value):
            return gm.graph.call_function(node.target, (node, value))

        def visit(self, node):
            parts = str(node.target).split(".")
            if parts[0] != "aten":
                return
            try:
                packet = getattr(torch.ops.aten, parts[-2])
                node.target = packet
            except AttributeError:
                pass
"""

MATCHER = """
    import torch

    def count_relus(gm):
        return sum(n.target == torch.ops.aten.relu for n in gm.graph.nodes)
"""

INSERTER = """
    import torch

    def add_relu(gm, node):
        return gm.graph.call_function(torch.ops.aten.relu, (node,))
"""


def _check(tmp_path, select, target, **modules):
    from qlint.engine import check_source
    from tests.conftest import settings_for, write_package

    pkg = write_package(tmp_path, "pkg", **{k: textwrap.dedent(v) for k, v in modules.items()})
    path = pkg / f"{target}.py"
    return [d.range.start.row for d in check_source(path.read_bytes(), str(path), settings_for(select)).diagnostics]


def test_matcher_of_a_project_whose_front_end_renames_to_packets_is_quiet(tmp_path):
    assert _check(tmp_path, ("QL101",), "matcher", frontend=FRONT_END, matcher=MATCHER) == []


def test_insertion_into_a_project_whose_front_end_renames_to_packets_is_quiet(tmp_path):
    assert _check(tmp_path, ("QL102",), "inserter", frontend=FRONT_END, inserter=INSERTER) == []


def test_front_end_module_that_neither_inserts_nor_normalises_is_not_read(tmp_path):
    # Only the modules the project scan keeps are read for a front end (reading every other
    # module of torch cost ~0.4 s a run): a renaming module with no pass of its own is not.
    front = FRONT_END.replace(
        "        def scalar(self, gm, node, value):\n"
        "            return gm.graph.call_function(node.target, (node, value))\n",
        "",
    )
    assert "call_function" not in front
    assert _check(tmp_path, ("QL101",), "matcher", frontend=front, matcher=MATCHER) == [5]


def test_direct_lookup_named_after_the_target_is_a_front_end(tmp_path):
    front = """
        import torch
        aten = torch.ops.aten

        def strip(gm):
            for n in gm.graph.nodes:
                if n.op == "call_function":
                    n.target = getattr(aten, n.target.__name__.split(".")[0])
    """
    assert _check(tmp_path, ("QL101",), "matcher", frontend=front, matcher=MATCHER) == []


def test_pass_of_the_front_end_module_after_the_rename_is_quiet(tmp_path):
    # EVT's `pass_suffix_elimination_`, called by the front end once every node is renamed.
    own = FRONT_END + textwrap.dedent("""
        def fold_scalars(gm):
            return [n for n in gm.graph.nodes if n.target in [torch.ops.aten.mul, torch.ops.aten.add]]
    """).replace("\n", "\n    ")
    assert _check(tmp_path, ("QL101",), "frontend", frontend=own) == []


def test_comparison_inside_the_renaming_function_is_still_reported(tmp_path):
    # EVT's `visit` drops `aten.detach` packets before it renames the node: on graphs that
    # still carry `detach.default` that never fires.
    front = FRONT_END.replace(
        "        def visit(self, node):\n",
        "        def visit(self, node):\n"
        "            if node.target in [torch.ops.aten.detach]:\n"
        "                return\n",
    )
    assert _check(tmp_path, ("QL101",), "frontend", frontend=front) == [14]


@pytest.mark.parametrize(
    "rename",
    [
        # One literal op: an insertion of that packet, not a rename of every node.
        'node.target = getattr(torch.ops.aten, "relu")',
        # A name not read off the node: any op at all.
        "node.target = getattr(torch.ops.aten, config.op_name)",
        # A namespace looked up by name, not an op.
        "node.target = getattr(torch.ops, parts[0])",
        # A local also bound to an overload.
        "packet = getattr(torch.ops.aten, parts[-2]) if parts else torch.ops.aten.relu.default\n"
        "                node.target = packet",
    ],
)
def test_look_alikes_of_a_front_end_leave_the_matcher_reported(tmp_path, rename):
    front = FRONT_END.replace(
        "packet = getattr(torch.ops.aten, parts[-2])\n                node.target = packet", rename
    )
    if "config" in rename:
        front = front.replace('parts = str(node.target).split(".")', 'parts = ["aten", "x"]')
    assert rename in front
    assert _check(tmp_path, ("QL101",), "matcher", frontend=front, matcher=MATCHER) == [5]


def test_rename_in_another_namespace_leaves_the_matcher_reported(tmp_path):
    matcher = """
        import torch

        def count_dequants(gm):
            return sum(n.target == torch.ops.quantized_decomposed.dequantize_per_channel for n in gm.graph.nodes)
    """
    assert _check(tmp_path, ("QL101",), "matcher", frontend=FRONT_END, matcher=matcher) == [5]


def test_front_end_in_another_project_leaves_the_matcher_reported(tmp_path):
    from qlint.engine import check_source
    from tests.conftest import settings_for, write_package

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    write_package(tmp_path / "a", "frontpkg", frontend=textwrap.dedent(FRONT_END))
    pkg = write_package(tmp_path / "b", "pkg", matcher=textwrap.dedent(MATCHER))
    path = pkg / "matcher.py"
    result = check_source(path.read_bytes(), str(path), settings_for(("QL101",)))
    assert [d.range.start.row for d in result.diagnostics] == [5]


def test_the_project_is_asked_for_front_ends_once_per_check(tmp_path, monkeypatch):
    """Each reported insertion asks whether a front end renames its namespace; the project
    scan's answer is read once per check (taken again for each of torch's observer.py's three
    insertions), and it still decides: a front end of another namespace leaves all reported."""
    from qlint.rules import normalised_graphs

    asked = []
    real = normalised_graphs.module_facts
    monkeypatch.setattr(normalised_graphs, "module_facts", lambda *a, **k: asked.append(a[0]) or real(*a, **k))
    three = INSERTER.replace(
        "return gm.graph.call_function(torch.ops.aten.relu, (node,))",
        "a = gm.graph.call_function(torch.ops.aten.relu, (node,))\n"
        "        b = gm.graph.call_function(torch.ops.aten.sigmoid, (a,))\n"
        "        return gm.graph.call_function(torch.ops.aten.tanh, (b,))",
    )
    other = FRONT_END.replace("torch.ops.aten", "torch.ops.mine").replace('!= "aten"', '!= "mine"')
    assert _check(tmp_path, ("QL102",), "inserter", frontend=other, inserter=three) == [5, 6, 7]
    assert len(asked) == 1
    asked.clear()
    (tmp_path / "renamed").mkdir()
    assert _check(tmp_path / "renamed", ("QL102",), "inserter", frontend=FRONT_END, inserter=three) == []
    assert len(asked) == 1
