"""QL102 reports an inserted packet where a consumer downstream tells it from its overload, and
says which (`packet_distinguishers`); where the project runs the pass itself and none of its
code does, the packet runs as its overload would and QL102 stays quiet.

Each consumer has a loud test (the corpus site it stands for in brackets) and quiet look-alikes;
the quiet constructs are the corpus's harmless insertions: TensorRT's aten-tracer passes, XLA's
StableHLO exporter, QNN's annotation transform, Gaudi's name-reading backend passes."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.conftest import check_file, package_repository, rows_of


def _found(tmp_path: Path, target: str, **modules: str) -> list[tuple[int, str]]:
    """(row, message) of QL102's findings in `pkg/<target>.py` of a one-package repository."""
    root = package_repository(tmp_path, **{k: textwrap.dedent(v) for k, v in modules.items()})
    result = check_file(root / "pkg" / f"{target}.py", ("QL102",))
    return [(d.range.start.row, d.message) for d in result.diagnostics]


# -- the graph convert_pt2e returns (torchao's and torch's affine observers) ----------------------

OBSERVER = """
    import torch


    class AffineObserver(torch.nn.Module):
        def calculate_qparams(self):
            return self.scale, self.zero_point

        def convert(self, model, observer_node):
            with model.graph.inserting_before(observer_node):
                model.graph.call_function(torch.ops.torchao.quantize_affine, (observer_node.args[0],))
"""
# Module-level code of the project uses the class: the project runs it, so only the consumer
# below can make the insertion loud.
CONFIG = """
    from pkg.observers import AffineObserver

    register(AffineObserver)
"""


def test_an_observer_convert_is_loud_and_names_convert_pt2e(tmp_path):
    [(row, message)] = _found(tmp_path, "observers", observers=OBSERVER, config=CONFIG)
    assert row == 11
    assert "`AffineObserver.convert` hands it to `convert_pt2e`'s users" in message


def test_a_convert_method_of_a_class_that_is_no_observer_is_quiet(tmp_path):
    # No `calculate_qparams`: a converter of the project's own, which PT2E's convert never calls.
    plain = OBSERVER.replace("calculate_qparams", "parameters_of")
    assert _found(tmp_path, "observers", observers=plain, config=CONFIG) == []


# -- the forward graph of an AOT autograd partition function (pytorch-pfn-extras) ---------------

SPLITTER = """
    import torch


    class Splitter:
        def partition(self, joint_module, joint_inputs, *, num_fwd_outputs):
            graph = torch.fx.Graph()
            graph.call_function(torch.ops.aten.ones, ((2, 2),))
            for node in joint_module.graph.nodes:
                graph.node_copy(node)
            return graph
"""
COMPILE = """
    from torch._dynamo.backends.common import aot_autograd

    from pkg.splitter import Splitter

    register_backend(aot_autograd(partition_fn=Splitter().partition))
"""


def test_an_aot_partition_function_is_loud_and_names_the_forward_compiler(tmp_path):
    [(row, message)] = _found(tmp_path, "splitter", splitter=SPLITTER, compile=COMPILE)
    assert row == 8
    assert "`partition` hands it to a forward compiler keyed on overloads" in message


def test_a_graph_builder_the_project_runs_is_quiet(tmp_path):
    # The same graph built from another graph's nodes, by a function without the partition
    # signature that the project runs itself: nothing shows a consumer keyed on overloads.
    builder = SPLITTER.replace("joint_module, joint_inputs, *, num_fwd_outputs", "joint_module")
    assert _found(tmp_path, "splitter", splitter=builder, compile=COMPILE) == []


# -- an exported program's verifier (ExecuTorch's Arm passes) -------------------------------------

TABLE_PASS = """
    import torch
    from executorch.exir.pass_base import ExportPass, PassResult


    class InsertTablePass(ExportPass):
        def call(self, graph_module):
            for node in list(graph_module.graph.nodes):
                with graph_module.graph.inserting_before(node):
                    graph_module.graph.create_node("call_function", torch.ops.tosa._table, (node,))
            return PassResult(graph_module, True)
"""
MANAGER = """
    from torch.export import ExportedProgram

    from pkg.table_pass import InsertTablePass


    class Manager:
        def pipeline(self, exported_program: ExportedProgram):
            return self.run([InsertTablePass()], exported_program.graph_module)


    register(Manager)
"""


def test_an_export_pass_run_on_an_exported_program_is_loud_and_names_the_verifier(tmp_path):
    [(row, message)] = _found(tmp_path, "table_pass", table_pass=TABLE_PASS, manager=MANAGER)
    assert row == 10
    assert "`pipeline` runs this pass on an exported program" in message


def test_an_export_pass_constructed_by_a_helper_of_the_program_pipeline_is_loud(tmp_path):
    through_helper = MANAGER.replace(
        "            return self.run([InsertTablePass()], exported_program.graph_module)\n",
        "            return self.passes(exported_program.graph_module)\n\n"
        "        def passes(self, graph_module):\n"
        "            return self.run([InsertTablePass()], graph_module)\n",
    )
    [(_, message)] = _found(tmp_path, "table_pass", table_pass=TABLE_PASS, manager=through_helper)
    assert "`pipeline` runs this pass" in message


def test_an_export_pass_run_only_on_graph_modules_is_quiet(tmp_path):
    # QNN's DecomposeSilu: the quantizer runs it on the graph module prepare_pt2e annotates.
    annotation = MANAGER.replace(
        "def pipeline(self, exported_program: ExportedProgram):\n"
        "            return self.run([InsertTablePass()], exported_program.graph_module)",
        "def transform_for_annotation(self, model):\n            return InsertTablePass()(model).graph_module",
    )
    assert _found(tmp_path, "table_pass", table_pass=TABLE_PASS, manager=annotation) == []


# -- a matcher of the same package keyed on the overload (torchao's representation rewrite) -------

INSERTER = """
    import torch


    def insert_quantize(gm, node):
        with gm.graph.inserting_after(node):
            gm.graph.call_function(torch.ops.torchao.quantize_affine, (node,))
"""
FLOW = """
    from pkg.inserter import insert_quantize

    PASSES.append(insert_quantize)
"""
REWRITE = """
    import torch


    def rewrite(gm):
        for node in gm.graph.nodes:
            if node.target == torch.ops.torchao.quantize_affine.default:
                replace(node)
"""


def test_a_package_matcher_keyed_on_the_overload_is_loud_and_named(tmp_path):
    [(row, message)] = _found(tmp_path, "inserter", inserter=INSERTER, flow=FLOW, rewrite=REWRITE)
    assert row == 7
    assert "`rewrite.py` matches `.default` alone" in message


def test_a_package_matcher_keyed_on_both_forms_is_quiet(tmp_path):
    both = REWRITE.replace(
        "node.target == torch.ops.torchao.quantize_affine.default",
        "node.target in (torch.ops.torchao.quantize_affine, torch.ops.torchao.quantize_affine.default)",
    )
    assert _found(tmp_path, "inserter", inserter=INSERTER, flow=FLOW, rewrite=both) == []


def test_a_matcher_of_another_package_is_quiet(tmp_path):
    # TensorRT: the dynamo frontend's converters keyed on `reshape.default` never see the fx
    # frontend's aten-tracer graphs.
    root = package_repository(tmp_path, inserter=textwrap.dedent(INSERTER), flow=textwrap.dedent(FLOW))
    other = root / "other"
    other.mkdir()
    (other / "__init__.py").touch()
    (other / "rewrite.py").write_text(textwrap.dedent(REWRITE))
    assert check_file(root / "pkg" / "inserter.py", ("QL102",)).diagnostics == []


def test_a_matcher_on_an_overload_graphs_do_not_carry_for_the_node_is_quiet(tmp_path):
    # QNN: `mul.Scalar` keyed passes next to a pass inserting the tensor-tensor `mul` packet.
    mul = INSERTER.replace("torchao.quantize_affine", "aten.mul")
    scalar = REWRITE.replace("torchao.quantize_affine.default", "aten.mul.Scalar")
    assert _found(tmp_path, "inserter", inserter=mul, flow=FLOW, rewrite=scalar) == []
    tensor = REWRITE.replace("torchao.quantize_affine.default", "aten.mul.Tensor")
    (tmp_path / "again").mkdir()
    assert [r for r, _ in _found(tmp_path / "again", "inserter", inserter=mul, flow=FLOW, rewrite=tensor)] == [7]


def test_the_inserting_module_own_overload_matcher_is_quiet(tmp_path):
    # XLA's exporter: its `slice.Tensor` matcher removes only no-op slices it did not insert.
    own = INSERTER + REWRITE.replace("import torch\n", "")
    assert _found(tmp_path, "inserter", inserter=own, flow=FLOW) == []


# -- callers outside the project ------------------------------------------------------------------


def test_a_pass_nothing_in_the_project_runs_is_loud(tmp_path):
    [(row, message)] = _found(tmp_path, "inserter", inserter=INSERTER)
    assert row == 7
    assert "nothing in the project runs `insert_quantize`" in message


def test_a_pass_only_imported_or_listed_in_all_is_loud(tmp_path):
    init = "from pkg.inserter import insert_quantize\n\n__all__ = ['insert_quantize']\n"
    root = package_repository(tmp_path, inserter=textwrap.dedent(INSERTER))
    (root / "pkg" / "__init__.py").write_text(init)
    [found] = check_file(root / "pkg" / "inserter.py", ("QL102",)).diagnostics
    assert found.range.start.row == 7
    assert "nothing in the project runs `insert_quantize`" in found.message


def test_a_pass_run_from_a_function_nothing_runs_is_loud_and_names_it(tmp_path):
    lower = (
        "from pkg.inserter import insert_quantize\n\n\ndef lower(gm):\n    insert_quantize(gm, None)\n    return gm\n"
    )
    [(_, message)] = _found(tmp_path, "inserter", inserter=INSERTER, lower=lower)
    assert "nothing in the project runs `lower`" in message


def test_a_pass_the_project_runs_itself_is_quiet(tmp_path):
    # TensorRT's aten-tracer passes, Gaudi's backend passes: the project's own pipeline takes the
    # graph next (a lowering, passes reading op names, a strip), and nothing there is keyed on
    # the overload alone.
    assert _found(tmp_path, "inserter", inserter=INSERTER, flow=FLOW) == []


def test_a_pass_listed_at_module_level_of_its_own_module_is_followed(tmp_path):
    # The list is a name users may take: nothing in the project reads it.
    listed = textwrap.dedent(INSERTER) + "\n\nPASSES = [insert_quantize]\n"
    assert [r for r, _ in _found(tmp_path, "inserter", inserter=listed)] == [7]
    run = "from pkg.inserter import PASSES\n\nfor p in PASSES:\n    register(p)\n"
    (tmp_path / "again").mkdir()
    assert _found(tmp_path / "again", "inserter", inserter=listed, run=run) == []


# -- the project's packet-keyed consumer reached after a re-export; Inductor's post-grad passes -----


def test_a_packet_keyed_consumer_after_a_re_export_is_named(tmp_path):
    from tests.test_ql102_consumers import ADD, PIPELINE, REMOVE

    pipeline = PIPELINE.format(between="m = export(m, (x,)).module()") + "\n\nregister(quantize)\n"
    [(_, message)] = _found(tmp_path, "add", add=ADD, remove=REMOVE, pipeline=pipeline)
    assert "`remove.py` meets it as `.default`" in message
    # Without the export in between the paired pass erases the packet nodes first: quiet.
    (tmp_path / "again").mkdir()
    paired = PIPELINE.format(between="pass") + "\n\nregister(quantize)\n"
    assert _found(tmp_path / "again", "add", add=ADD, remove=REMOVE, pipeline=paired) == []


def test_an_inductor_post_grad_pass_is_named(tmp_path):
    init = "import torch._inductor.config as config\n\nfrom pkg.inserter import insert_quantize\n\n"
    posted = init + "config.post_grad_custom_post_pass = insert_quantize\n"
    [(_, message)] = _found(tmp_path, "inserter", inserter=INSERTER, hooks=posted)
    assert "`insert_quantize` is an Inductor post-grad pass" in message
    # Any other setting of a config field is the project running it: quiet.
    (tmp_path / "again").mkdir()
    other = init + "config.some_other_hook = insert_quantize\n"
    assert _found(tmp_path / "again", "inserter", inserter=INSERTER, hooks=other) == []


def test_a_module_outside_any_package_says_its_callers_are_unknown(tmp_path):
    # ExecuTorch's tree before its package mapping: no other module is seen, every pass is loud.
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(INSERTER))
    [found] = check_file(path, ("QL102",)).diagnostics
    assert "`insert_quantize`'s callers are unknown" in found.message


# -- a test the runner collects (coreai-torch's `TestRound`) --------------------------------------

# A regression test turns an exported `round` node into the packet on purpose and hands the
# program to the project's own converter: no user imports a test to give it their graph.
TEST_MODULE = """
    import unittest

    import torch

    from pkg.convert import to_ir


    class TestRound:
        @staticmethod
        def _to_packet(program):
            for node in program.graph_module.graph.nodes:
                node.target = torch.ops.aten.round

        def test_lowers(self):
            program = torch.export.export(torch.nn.Identity(), (torch.ones(2),))
            self._to_packet(program)
            assert to_ir(program)


    class RoundCase(unittest.TestCase):
        def test_packet(self):
            program = torch.export.export(torch.nn.Identity(), (torch.ones(2),))
            program.graph_module.graph.call_function(torch.ops.aten.round, ())


    def test_function():
        program = torch.export.export(torch.nn.Identity(), (torch.ones(2),))
        program.graph_module.graph.call_function(torch.ops.aten.round, ())
"""
CONVERT = "def to_ir(program):\n    return [str(n.target) for n in program.graph_module.graph.nodes]\n"


def test_an_insertion_in_a_test_the_runner_collects_is_quiet(tmp_path):
    root = package_repository(tmp_path, convert=CONVERT)
    (root / "tests").mkdir()
    for init in (False, True):  # a `tests` folder qlint cannot map as a package, and one it can
        if init:
            (root / "tests" / "__init__.py").write_text("")
        path = root / "tests" / "test_round.py"
        path.write_text(textwrap.dedent(TEST_MODULE))
        assert check_file(path, ("QL102",)).diagnostics == []


def test_an_uncollected_helper_of_a_test_module_and_a_test_named_class_elsewhere_are_loud(tmp_path):
    # Helper classes of the test module the runner does not collect are judged by their callers
    # (none here; an uncalled helper function of a test module is dead code, `dead_code`); the
    # same tests in a module no runner collects are a package's API like any other.
    helper = TEST_MODULE.replace("class TestRound:", "class RoundRewriter:").replace(
        "class RoundCase(unittest.TestCase):", "class RoundCase:"
    )
    root = package_repository(tmp_path, convert=CONVERT, rewrite=textwrap.dedent(TEST_MODULE))
    (root / "tests").mkdir()
    path = root / "tests" / "test_round.py"
    path.write_text(textwrap.dedent(helper))
    assert rows_of(check_file(path, ("QL102",)).diagnostics) == [13, 24]
    assert rows_of(check_file(root / "pkg" / "rewrite.py", ("QL102",)).diagnostics) == [13, 24, 29]
