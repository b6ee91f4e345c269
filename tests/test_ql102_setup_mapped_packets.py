"""QL102 in a tree whose package only `setup.py`'s `package_dir` maps, by subpackage keys
(issue 14 items 14/15, 7).

ExecuTorch before its `src/executorch` links (57ef8348) installed `backends/` as
`executorch.backends` through `package_dir={"executorch/backends": "backends", ...}`, and its
directories had no `__init__.py`. qlint read no package there, so QNN's `DecomposeSilu` (run by
the quantizer's `transform_for_annotation`) had callers it called unknown, and its sigmoid/mul
packets were reported although they meet only the annotator table, which registers each packet
beside its overloads. Read as setuptools installs it, the project is the repository, and the
table is the packet's consumer (`packet_consumers`).

Loud look-alikes: the table keyed on the overload alone, the pass also run on an exported
program (its verifier rejects a packet), the graph exported again between the pass and the
annotator, and the tree without the mapping (callers unknown, as before).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import codes, lint

SETUP = """\
from setuptools import setup

setup(
    package_dir={
        "proj/backends": "backends",
        "proj/exir": "exir",
    },
)
"""

DECOMPOSE = """\
import torch
from proj.exir.pass_base import ExportPass, PassResult


class DecomposeSilu(ExportPass):
    def call(self, graph_module):
        graph = graph_module.graph
        for node in list(graph.nodes):
            if node.target != torch.ops.aten.silu.default:
                continue
            with graph.inserting_after(node):
                sigmoid = graph.create_node("call_function", torch.ops.aten.sigmoid, (node.args[0],))
                mul = graph.create_node("call_function", torch.ops.aten.mul, (node.args[0], sigmoid))
            node.replace_all_uses_with(mul)
        graph.eliminate_dead_code()
        return PassResult(graph_module, True)
"""

ANNOTATORS = """\
import torch

OP_ANNOTATOR = {}


def register_annotator(ops):
    def register(fn):
        for op in ops:
            OP_ANNOTATOR[op] = fn
        return fn

    return register


@register_annotator([torch.ops.aten.sigmoid, torch.ops.aten.sigmoid.default])
def annotate_sigmoid(node, config):
    node.meta["annotated"] = config


@register_annotator([torch.ops.aten.mul, torch.ops.aten.mul.Tensor, torch.ops.aten.mul.Scalar])
def annotate_mul(node, config):
    node.meta["annotated"] = config
"""

QUANTIZER = """\
from proj.backends.qnn._passes.decompose_silu import DecomposeSilu

from .annotators import OP_ANNOTATOR


class QnnQuantizer:
    def transform_for_annotation(self, model):
        {between}
        return model

    def annotate(self, model):
        for node in model.graph.nodes:
            if node.target in OP_ANNOTATOR:
                OP_ANNOTATOR[node.target](node, None)
        return model
"""
_RUN = "model = DecomposeSilu()(model).graph_module"

LOWERING = """\
from torch.export import ExportedProgram

from proj.backends.qnn._passes.decompose_silu import DecomposeSilu


def _transform(edge_program: ExportedProgram):
    graph_module = edge_program.graph_module
    DecomposeSilu()(graph_module)
    return edge_program
"""


# The same tree mapped by `pyproject.toml` onto the repository root, which qlint read before.
PYPROJECT = '[tool.setuptools.package-dir]\nproj = "."\n'


def _tree(root: Path, setup: str | None = SETUP, pyproject: str | None = None, **texts: str) -> Path:
    """The QNN layout of ExecuTorch at 57ef8348: no `__init__.py` anywhere, the package mapped
    by `setup.py` alone. `texts`: module name -> source, replacing the defaults."""
    (root / ".git").mkdir()
    if setup is not None:
        (root / "setup.py").write_text(setup)
    if pyproject is not None:
        (root / "pyproject.toml").write_text(pyproject)
    modules = {
        "backends/qnn/_passes/decompose_silu.py": DECOMPOSE,
        "backends/qnn/quantizer/annotators.py": ANNOTATORS,
        "backends/qnn/quantizer/quantizer.py": QUANTIZER.format(between=_RUN),
        "exir/pass_base.py": "class ExportPass:\n    pass\n\n\nclass PassResult:\n    pass\n",
        **texts,
    }
    for rel, text in modules.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root / "backends/qnn/_passes/decompose_silu.py"


def _ql102(path: Path):
    return lint(path.read_text(), path=str(path), select=("QL102",))


def test_packets_meeting_only_an_annotator_table_of_both_forms_are_quiet(tmp_path):
    # The table registers each packet beside its overloads: the node is annotated either way.
    assert _ql102(_tree(tmp_path)) == []


def test_the_same_key_spelled_with_dots_maps_the_subpackage_too(tmp_path):
    assert _ql102(_tree(tmp_path, setup=SETUP.replace("proj/", "proj."))) == []


def test_without_the_mapping_the_callers_are_unknown(tmp_path):
    found = _ql102(_tree(tmp_path, setup=None))
    assert codes(found) == ["QL102", "QL102"]
    assert all("callers are unknown" in d.message for d in found)


def test_a_table_keyed_on_the_overload_alone_misses_the_packet_nodes(tmp_path):
    only = ANNOTATORS.replace(
        "torch.ops.aten.sigmoid, torch.ops.aten.sigmoid.default", "torch.ops.aten.sigmoid.default"
    )
    found = _ql102(_tree(tmp_path, **{"backends/qnn/quantizer/annotators.py": only}))
    assert codes(found) == ["QL102"]
    assert "torch.ops.aten.sigmoid" in found[0].message


def test_the_root_mapped_by_pyproject_reads_the_table_as_before(tmp_path):
    assert _ql102(_tree(tmp_path, setup=None, pyproject=PYPROJECT)) == []


@pytest.mark.parametrize("layout", [{}, {"setup": None, "pyproject": PYPROJECT}])
def test_the_pass_also_run_on_an_exported_program_is_reported(tmp_path, layout):
    # The program's verifier rejects a packet as a node target, whatever else consumes it.
    found = _ql102(_tree(tmp_path, **layout, **{"backends/qnn/utils/utils.py": LOWERING}))
    assert codes(found) == ["QL102", "QL102"]
    assert all("`_transform` runs this pass on an exported program" in d.message for d in found)


@pytest.mark.parametrize(
    "between",
    [
        # exported again after the pass and before the annotator: the node is `.default` by then
        _RUN + "\n        model = export(model, ()).module()\n        model = self.annotate(model)",
    ],
)
def test_the_graph_exported_again_before_the_annotator_is_reported(tmp_path, between):
    quantizer = "from torch.export import export\n" + QUANTIZER.format(between=between)
    found = _ql102(_tree(tmp_path, **{"backends/qnn/quantizer/quantizer.py": quantizer}))
    assert codes(found) == ["QL102", "QL102"]


# ExecuTorch at b2fafe9d (mid-2024): the table registers `mul.Tensor` and `mul.Scalar` alone,
# sigmoid beside its packet; the quantizer's annotator is a module beside the runner, its table
# built by a decorator in another module of that directory.
MID_2024 = ANNOTATORS.replace("torch.ops.aten.mul, torch.ops.aten.mul.Tensor", "torch.ops.aten.mul.Tensor")


# A script of the project runs the quantizer: the pass's graph goes on to the project's own code.
SCRIPT = (
    "from proj.backends.qnn.quantizer.quantizer import QnnQuantizer\n\nQnnQuantizer().transform_for_annotation(None)\n"
)


def test_an_annotator_beside_the_runner_keyed_on_the_overloads_alone_misses_the_mul_node(tmp_path):
    tree = {"backends/qnn/quantizer/annotators.py": MID_2024, "examples/run_qnn.py": SCRIPT}
    found = _ql102(_tree(tmp_path, **tree))
    assert [(d.code, d.range.start.row) for d in found] == [("QL102", 13)]
    assert "`annotators.py` matches `.Tensor` alone" in found[0].message
    assert "`quantizer.py` runs this pass" in found[0].help


def test_an_overload_keyed_module_beside_a_module_that_does_not_run_the_pass_is_not_its_consumer(tmp_path):
    # The same table, but the quantizer only imports the pass's module and never runs the pass.
    idle = QUANTIZER.format(between="pass").replace(
        "from proj.backends.qnn._passes.decompose_silu import DecomposeSilu",
        "from proj.backends.qnn._passes import decompose_silu  # noqa: F401",
    )
    runner = "from proj.backends.qnn._passes.decompose_silu import DecomposeSilu\n\nDecomposeSilu()(None)\n"
    found = _ql102(
        _tree(
            tmp_path,
            **{
                "backends/qnn/quantizer/annotators.py": MID_2024,
                "backends/qnn/quantizer/quantizer.py": idle,
                "backends/qnn/tools/run.py": runner,
                "examples/run_qnn.py": SCRIPT,
            },
        )
    )
    assert found == []
